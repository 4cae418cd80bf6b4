"""The full simulation of the advice: every design kept under every model on common random numbers (every design of
one model sees the same sampled compute times, so differences and speed-ups are paired), from its family's structure
(:mod:`gclib.shared_draws`: the simulator's numbers without its schedule or an array of every message), in chunks of
draws that never exceed :data:`~gclib.advise.designs.DRAW_BUDGET`; ``trials`` per model, or by default until every mean
time is known within :data:`~gclib.advise.designs.PRECISION`. Also the numerical-stability margin of a code
(:func:`stability_margin`) and the per-trial times of a few named designs (:func:`trial_times`).
"""
from __future__ import annotations

import copy
import math
from typing import Mapping

import numpy as np
import pandas as pd

from gclib import checks, shared_draws
from gclib.advise.designs import (DRAW_BUDGET, MIN_TRIALS, PRECISION, STABILITY_PATTERNS, TRIALS, candidates,
                                  default_max_load)
from gclib.advise.race import chunks
from gclib.codes.conditioning import decoding_amplification, unit_roundoff
from gclib.simulator import TRIAL_KEYS, Schedule, arrival_times, chunks_of, draws_per_worker, simulate_trials
from gclib.simulator import chunk_trials as sim_chunk_trials
from gclib.stats import mean_ci, paired_change
from gclib.stragglers import ComputeModel


def _stats(results: list, labels: list) -> pd.DataFrame:
    """Per design under one model: means and intervals from the per-trial results
    (:func:`gclib.simulator.simulate_trials`); a design that fails to decode in some trial has an infinite expected
    time."""
    rows = []
    base = results[0]["time"]  # uncoded is the first design
    for lab, res in zip(labels, results):
        t = res["time"]
        done = np.isfinite(t)
        failed = int((~done).sum())
        m, c = mean_ci(t)
        if failed:
            m, c = math.inf, math.nan
        if failed or not np.isfinite(base).all():  # an expected time is infinite: no interval
            unc = math.inf if not np.isfinite(base).all() else 1.0
            sp = math.nan if failed and math.isinf(unc) else (0.0 if failed else math.inf)
            slo = shi = math.nan
        else:
            ch, lo, hi, _ = paired_change(base, t)
            sp, slo, shi = ch + 1, lo + 1, hi + 1
        rows.append({"label": lab, "mean_time": m, "ci95_time": c, "speedup": sp, "speedup_lo": slo,
                     "speedup_hi": shi, "messages": float(res["messages"][done].mean()) if done.any() else math.nan,
                     "gradient_units": float(res["volume"][done].mean()) if done.any() else math.nan,
                     "computations": float(res["computations"][done].mean()) if done.any() else math.nan,
                     "failed": failed / t.size})
    out = pd.DataFrame(rows)
    # best under this model, and the designs statistically tied with it (paired interval of the ratio holds 1)
    finite = np.isfinite(out["mean_time"].to_numpy())
    tied = np.zeros(len(out), dtype=bool)
    if finite.any():
        b = int(np.nanargmin(np.where(finite, out["mean_time"], np.inf)))
        for i, res in enumerate(results):
            if finite[i]:
                _, lo, _, _ = paired_change(res["time"], results[b]["time"])
                tied[i] = i == b or not lo > 0
        best = float(out["mean_time"].iloc[b])
        out["ratio"] = out["mean_time"] / best
    else:
        out["ratio"] = math.nan
    out["tied"] = tied
    return out


def _precise(res: list) -> bool:
    """Every design's mean time known within :data:`PRECISION` of itself (95% half-width), over the finite
    times (a design that fails in some trial has an infinite mean whatever the rest)."""
    for r in res:
        t = np.concatenate(r) if isinstance(r, list) else r
        t = t[np.isfinite(t)]
        if t.size < 2:
            continue
        m, half = mean_ci(t)
        if m > 0 and half > PRECISION * m:
            return False
    return True


def schedule_trials(designs: list, model: ComputeModel, K: int, trials: int, seed, keys, comm, *, again=None,
                     schedules: list | None = None) -> list:
    """:func:`gclib.simulator.simulate_trials` of the designs' schedules, with a protocol's design
    (:attr:`gclib.shared_draws.Spec.protocol`: its schedule sends the progress reports, not its round trip) replaced by
    :func:`gclib.shared_draws.protocol_outputs` on the same draws: drawn again, in the same chunks, from a copy of the
    stream taken before, from ``again`` (a second copy of ``model`` where drawing changes the model) or ``model``.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    schedules = [d.schedule() for d in designs] if schedules is None else schedules
    idx = [i for i, d in enumerate(designs) if d.spec is not None and d.spec.protocol is not None]
    twin = copy.deepcopy(rng) if idx else None
    res = simulate_trials(schedules, model, K, trials, rng, keys=keys, comm=comm)
    if not idx:
        return res
    sch = [Schedule.of(x) for x in schedules]
    R = max(x.load for x in sch)
    per_worker = draws_per_worker(model)
    size = min(sim_chunk_trials(K, R, x.n_messages, per_worker=per_worker) for x in sch)
    parts = {i: [] for i in idx}
    source = model if again is None else again
    for c in chunks_of(int(trials), size):
        D = shared_draws.Draws(source, twin, c, K, R)
        for i in idx:
            parts[i].append(shared_draws.protocol_outputs(designs[i].spec, D, comm))
        del D
    for i in idx:
        got = {k: np.concatenate([p[k] for p in parts[i]]) for k in shared_draws.OUTPUTS}
        got["cluster_messages"] = got["messages"]  # one cluster
        res[i] = {k: got[k] for k in keys}
    return res


def simulate(designs: list, models: Mapping, K: int, trials: int | None, seed: int, comm, bar) -> tuple:
    """Per-design stats (:func:`_stats`) of ``designs`` under every model on common random numbers (the same seed
    for every model), from their families' structure (:mod:`gclib.shared_draws`), or from their schedules in the
    master's queue. ``trials`` per model; ``None``: chunk by chunk, from :data:`MIN_TRIALS` until every mean time is
    known within :data:`PRECISION` (:func:`_precise`), at most :data:`TRIALS`.

    Returns:
        ``({model name: stats}, {model name: trials simulated})``.
    """
    labels = [d.label for d in designs]
    R = max(d.load for d in designs)
    out, used = {}, {}
    queue = comm is not None and comm.queue
    schedules = [d.schedule() for d in designs] if queue else None
    specs = [d.spec for d in designs]
    most = TRIALS if trials is None else trials
    for name, model in models.items():
        bar.set_description(f"simulate {len(designs)} designs under '{name}'")
        rng = np.random.default_rng(seed)
        parts = [[] for _ in designs]
        n = 0
        size = shared_draws.chunk_trials(K, R, DRAW_BUDGET)
        for c in chunks_of(most, size if trials is not None else min(size, MIN_TRIALS)):
            if queue:
                res = schedule_trials(designs, model, K, c, rng, TRIAL_KEYS, comm, schedules=schedules)
            else:
                D = shared_draws.Draws(model, rng, c, K, R)
                res = shared_draws.evaluate(specs, D, comm=comm)
                del D
            for acc, r in zip(parts, res):
                acc.append(r)
            n += c
            bar.update(c * len(designs))
            if trials is None and n >= MIN_TRIALS and _precise([[p["time"] for p in acc] for acc in parts]):
                break
        res = [{k: np.concatenate([p[k] for p in acc]) for k in shared_draws.OUTPUTS} for acc in parts]
        out[name], used[name] = _stats(res, labels), n
    return out, used


def stability_margin(code, model: ComputeModel, patterns: int = STABILITY_PATTERNS, seed=0) -> dict:
    """Digits of float64 left after the worst decode of ``code`` over ``patterns`` iterations sampled from
    ``model``: in each, the messages received when the code completes are decoded (``code.try_decode``) and
    the decode's error amplification ``kappa`` (:func:`gclib.codes.conditioning.decoding_amplification`) taken;
    the margin is ``-log10(u * max kappa)``, ``u`` the unit roundoff of float64 (about 15.95 digits at
    ``kappa = 1``; negative: nothing left).

    Returns:
        ``{"digits", "worst_amplification", "patterns", "distinct"}`` (``distinct``: distinct received sets);
        ``digits`` NaN when no sampled iteration completes or the decoder refuses a set.
    """
    patterns = checks.integer("patterns", patterns, low=1)
    sch = Schedule.of(code)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    finish = model.sample(rng, patterns, code.n_workers, sch.load)
    arr = arrival_times(sch, finish)
    t = sch.rule.cluster_times(arr).max(axis=1)
    got = (arr <= t[:, None]) & np.isfinite(t)[:, None]
    sets = {tuple(np.flatnonzero(g)) for g in got[np.isfinite(t)]}
    worst = -math.inf
    for idx in sets:
        idx = np.array(idx, dtype=np.int64)
        A = code.try_decode(idx)
        if A is None:
            worst = math.inf
            break
        with np.errstate(all="ignore"):
            worst = max(worst, decoding_amplification(code.B[idx], A, code.target))
    if not sets or not math.isfinite(worst) or worst <= 0:
        digits = math.nan if (not sets or math.isinf(worst)) else -math.log10(unit_roundoff(np.float64))
    else:
        digits = -math.log10(unit_roundoff(np.float64) * worst)
    return {"digits": digits, "worst_amplification": worst if sets else math.nan, "patterns": int(patterns),
            "distinct": len(sets)}


def trial_times(labels, model: ComputeModel, K: int, max_load: int | None = None, trials: int = TRIALS, seed=0,
                network=None) -> dict:
    """``{label: (trials,) completion times}`` of the designs of :func:`~gclib.advise.designs.candidates` named by
    ``labels``, every one on the same draws (common random numbers): for paired comparisons of a few designs, e.g.
    the screened recommendation against the exhaustive search's (:func:`gclib.stats.paired_change`)."""
    R = default_max_load(K) if max_load is None else max_load
    by = {d.label: d for d in candidates(K, R, network=network)}
    missing = [lab for lab in labels if lab not in by]
    if missing:
        raise ValueError(f"labels {missing} are not designs of the candidates for K = {K}, load <= {R}")
    designs = [by[lab] for lab in labels]
    if network is not None and network.queue:
        res = schedule_trials(designs, model, K, trials, seed, ("time",), network)
        return {lab: r["time"] for lab, r in zip(labels, res)}
    rng = np.random.default_rng(seed)
    acc = [[] for _ in designs]
    RR = max(d.load for d in designs)
    for c in chunks(trials, K, RR):
        D = shared_draws.Draws(model, rng, c, K, RR)
        for a, r in zip(acc, shared_draws.evaluate([d.spec for d in designs], D, outputs=("time",), comm=network)):
            a.append(r["time"])
    return {lab: np.concatenate(a) for lab, a in zip(labels, acc)}


def design_times(labels, model, K, R, trials, seed, network=None) -> dict:
    """``{label: mean time}`` of the designs of ``candidates(K, R)`` named by ``labels`` under ``model`` (common
    random numbers)."""
    by = {d.label: d for d in candidates(K, R, network=network)}
    res = schedule_trials([by[lab] for lab in labels], model, K, trials, seed, ("time",), network)
    return {lab: float(np.mean(r["time"])) for lab, r in zip(labels, res)}
