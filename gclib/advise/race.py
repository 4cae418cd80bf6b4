"""The screening race of the advice: with many candidates (large ``K``), a race comes first, per model, on common
random numbers.

Rounds of :data:`~gclib.advise.designs.SCREEN_ROUNDS` trials (a few hundred in all); after each, a design is dropped
when another that receives no more messages and gradient units on average, and runs if it does, is faster by more
than the Bonferroni-corrected Student-t quantile of :data:`~gclib.advise.designs.RACE_ALPHA` over the paired trials
(in the master's queue: the lower bound of its time against the other's upper bound,
:func:`gclib.shared_draws.queue_bounds`). Of the designs left, the :data:`~gclib.advise.designs.SCREEN_KEEP` fastest
(designs with the same numbers in every trial counted once, the lightest kept), those on the fronts of time against
messages and against gradient units, and the fastest of every family are then simulated in full
(:mod:`gclib.advise.simulation`).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from gclib import shared_draws
from gclib.advise.designs import DRAW_BUDGET, FAMILIES, RACE_ALPHA, SCREEN_KEEP, SCREEN_ROUNDS
from gclib.simulator import chunks_of
from gclib.stats import t_quantile
from gclib.stragglers import ComputeModel


def _front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both ``x`` and ``y`` (both minimized), sorted by ``x``."""
    keep, best = [], math.inf
    for i in np.lexsort((y, x)):
        if np.isfinite(y[i]) and y[i] < best:
            keep.append(int(i))
            best = y[i]
    return np.array(keep, dtype=np.int64)


def chunks(trials: int, K: int, R: int) -> list:
    """``trials`` cut into chunks of :class:`gclib.shared_draws.Draws` that fit :data:`DRAW_BUDGET`."""
    return chunks_of(int(trials), shared_draws.chunk_trials(K, R, DRAW_BUDGET))


def _elimination_level(n: int, candidates: int) -> float:
    """The Student-t quantile a paired difference of ``n`` trials must exceed, in standard errors, for the race to
    drop a design: one-sided at :data:`RACE_ALPHA` over every candidate (Bonferroni)."""
    return t_quantile(1 - RACE_ALPHA / max(1, candidates), max(1, n - 1))


def _dominated(lo: np.ndarray, hi: np.ndarray, msgs: np.ndarray, units: np.ndarray, runnable: np.ndarray,
               level: float) -> np.ndarray:
    """Which designs of a race are dominated: some design ``b`` that receives no more messages and no more
    gradient units on average, and can run if the design can, is faster in every sense the trials allow (the
    paired differences ``lo[d] - hi[b]`` exceed ``level`` standard errors, or the design fails to decode in a
    trial where ``b`` never does). ``lo``, ``hi``: ``(designs, trials)`` bounds of the completion time (equal
    without the master's queue)."""
    n = lo.shape[1]
    fails = ~np.isfinite(lo).all(axis=1)
    sure = np.isfinite(hi).all(axis=1)
    m_hi = np.where(sure, hi.mean(axis=1), np.inf)
    m_msg, m_units = msgs.mean(axis=1), units.mean(axis=1)
    refs = set(_front(m_msg, m_hi).tolist()) | set(_front(m_units, m_hi).tolist())
    if np.isfinite(m_hi).any():
        refs.add(int(np.argmin(m_hi)))
    out = np.zeros(lo.shape[0], dtype=bool)
    for b in sorted(refs):
        if not sure[b]:
            continue
        cand = (m_msg[b] <= m_msg) & (m_units[b] <= m_units) & (runnable[b] | ~runnable) & ~out
        cand[b] = False
        idx = np.flatnonzero(cand)
        if not idx.size:
            continue
        worse = fails[idx].copy()
        ok = idx[~worse]
        if ok.size:
            d = lo[ok] - hi[b]
            mean = d.mean(axis=1)
            sd = d.std(axis=1, ddof=1) if n > 1 else np.zeros(ok.size)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(sd > 0, mean / (sd / math.sqrt(n)), np.where(mean > 0, np.inf, 0.0))
            worse[~worse] = (mean > 0) & (z > level)
        out[idx[worse]] = True
    return out


def _race(designs: list, model: ComputeModel, K: int, R: int, seed: int, comm, bar) -> tuple:
    """The screening race of every design under ``model`` (see the module docstring).

    Returns ``(alive, means)``: indices of the designs never dominated, and every design's mean time over the
    trials it ran (the lower bound in the master's queue)."""
    specs = [d.spec for d in designs]
    runnable = np.array([d.scheme is not None for d in designs])
    N = len(designs)
    alive = np.arange(N)
    data = {k: np.empty((N, 0)) for k in ("lo", "hi", "msgs", "units")}
    means = np.full(N, np.nan)
    rng = np.random.default_rng(seed)
    for n_round in SCREEN_ROUNDS:
        parts = {k: [] for k in data}
        for c in chunks(n_round, K, R):
            D = shared_draws.Draws(model, rng, c, K, R)
            res = shared_draws.evaluate([specs[i] for i in alive], D, outputs=("time", "messages", "volume"), comm=comm)
            parts["lo"].append(np.stack([r["time"] for r in res]))
            parts["hi"].append(np.stack([r.get("time_high", r["time"]) for r in res]))
            parts["msgs"].append(np.stack([r["messages"] for r in res]).astype(np.float64))
            parts["units"].append(np.stack([r["volume"] for r in res]))
            del D
            bar.update(c * len(alive))
        data = {k: np.concatenate([v[alive]] + parts[k], axis=1) if v.shape[0] == N else
                np.concatenate([v] + parts[k], axis=1) for k, v in data.items()}
        with np.errstate(invalid="ignore"):
            means[alive] = np.where(np.isfinite(data["lo"]).all(axis=1), data["lo"].mean(axis=1), np.inf)
        out = _dominated(data["lo"], data["hi"], data["msgs"], data["units"], runnable[alive],
                         _elimination_level(data["lo"].shape[1], N))
        keep = ~out
        alive = alive[keep]
        data = {k: v[keep] for k, v in data.items()}
    return alive, means, data


def screen(designs: list, models: Mapping, K: int, R: int, seed: int, comm, bar) -> list:
    """Indices of the designs kept by the screening race, uncoded first: per model, of the designs no other
    design dominates, the :data:`SCREEN_KEEP` fastest and those on the fronts of time against messages and against
    gradient units; and the fastest of every family."""
    fam = np.array([d.family for d in designs])
    keep = {0}
    for name, model in models.items():
        bar.set_description(f"screen {len(designs)} designs under '{name}'")
        alive, means, data = _race(designs, model, K, R, seed, comm, bar)
        t = means[alive]
        # designs with the same numbers in every trial of the race (a load whose last tasks never count) are
        # one: the lightest of them (lowest load, then the order of the candidates) stands for all
        loads = np.array([designs[i].load for i in alive])
        order = np.lexsort((alive, loads, t))
        seen, first = set(), []
        for i in order:
            key = (data["lo"][i].tobytes(), data["msgs"][i].tobytes())
            if key not in seen and np.isfinite(t[i]):
                seen.add(key)
                first.append(i)
        keep.update(int(alive[i]) for i in first[:SCREEN_KEEP])
        m_hi = np.where(np.isfinite(data["hi"]).all(axis=1), data["hi"].mean(axis=1), np.inf)
        keep.update(int(alive[i]) for i in _front(data["msgs"].mean(axis=1), m_hi))
        keep.update(int(alive[i]) for i in _front(data["units"].mean(axis=1), m_hi))
        for f in FAMILIES:
            idx = np.flatnonzero((fam == f) & np.isfinite(means))
            if idx.size:
                keep.add(int(idx[np.argmin(means[idx])]))
    return sorted(keep)
