"""From compute-time models of a cluster to a ranked recommendation of the code to run on it.

:func:`advise` builds every candidate design for ``K`` workers with computation load at most ``max_load``
(:func:`candidates`), simulates each under every model on common random numbers (every design of one model sees
the same sampled compute times, so differences and speed-ups are paired), and ranks them under the ``primary``
model. The result, :class:`Advice`, holds:

* ``ranked``: one row per design (:data:`COLUMNS`): expected iteration time with its 95% interval, the speed-up
  over uncoded with its paired 95% interval, messages and gradient-length units received per iteration, the
  computation load, the numerical-stability margin (digits of float64 left after the worst decode over sampled
  straggler patterns, for the first :data:`STABILITY_ROWS` runnable rows), how robust the design is across the
  models, whether it fits the message ``budget``, and ``command``: the ``gclib run`` options that run it;
* ``table``: every design under every model (the numbers behind the robustness columns and the figure);
* ``best``: the first row that fits the budget and can run over MPI (``None`` when none does).

Candidates (:data:`FAMILIES`, drawn from the table of families of :mod:`gclib.space` that the design search of
:mod:`gclib.design` draws from too): uncoded; Tandon's cyclic (``crc``) and fractional (``frc``) repetition and
Reed-Solomon (``rs``) for every load ``r``; the communication-efficient codes of Ye-Abbe and Kadhe et al. (load
``s + m``, messages of ``1/m`` gradient); GC in clusters; UC-MMC; correlated and uncorrelated GC-MMC (orders and
cluster counts) and the hybrid design at every load; the partial-straggler protocol of Ramamoorthy, Meng and
Girimaji (``rmg``, one cluster, the cyclic assignment in its natural order) at every load where communication is
charged (``network``: its coverage is UC-MMC's in one cluster, its round trip after it charged by
:func:`gclib.bulk.protocol`, and its command runs that exchange, ``--exchange two-phase``; where messages cost nothing
it is UC-MMC in one cluster and is not listed twice); LCC
where its threshold fits (a simulator stand-in that cannot run over MPI: it is ranked but never recommended, and its
``command`` is empty).

Every design is simulated from its family's structure (:mod:`gclib.bulk`: the simulator's numbers without its
schedule or an array of every message), in chunks of draws that never exceed :data:`DRAW_BUDGET`. Loads and orders
are tried one by one up to :data:`GRID_DENSE` and on a geometric grid above (:func:`grid`).

With many candidates (large ``K``) a screening race comes first, per model, on common random numbers: rounds of
:data:`SCREEN_ROUNDS` trials (a few hundred in all); after each, a design is dropped when another that receives no
more messages and gradient units on average, and runs if it does, is faster by more than the Bonferroni-corrected
Student-t quantile of :data:`RACE_ALPHA` over the paired trials (in the master's queue: the lower bound of its
time against the other's upper bound, :func:`gclib.bulk.queue_bounds`). Of the designs left, the
:data:`SCREEN_KEEP` fastest (designs with the same numbers in every trial counted once, the lightest kept), those
on the fronts of time against messages and against gradient units, and the fastest of every family are then
simulated in full: ``trials`` per model, or by default until every mean time is known within :data:`PRECISION`.
``screen=False`` simulates every candidate in full (the exhaustive search).
"""
from __future__ import annotations

import copy
import json
import math
import shlex
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from gclib import advice_report, bulk, checks, effects, fit, space
from gclib.advice_report import reliance_text  # noqa: F401 - the sentence of reliance(), where it was
from gclib.space import GRID_DENSE, GRID_RATIO, MAX_CLUSTER_COUNTS, grid  # noqa: F401 - the advice's grids
from gclib.codes.base import matrix_bytes
from gclib.codes.conditioning import decoding_amplification, unit_roundoff
from gclib.design import TRIAL_KEYS, evaluate_trials
from gclib.effects import IterationReplay, PREFERENCE, WorkerEffects, paces, slowest_worker, without_slowest
from gclib.jsonable import jsonable
from gclib.progress import bar as _bar
from gclib.simulate import CANDIDATE_TRIAL_BYTES, Communication, Schedule, _per_worker, arrival_times, chunks_of
from gclib.simulate import chunk_trials as sim_chunk_trials
from gclib.stats import Estimate, mean_ci, paired_change, t_quantile
from gclib.stragglers import ComputeModel, filled, whole_rows
from gclib.timings import MIN_SAMPLES, Timings, check_complete

#: Scheme families of :func:`candidates`, in the order they are built (ties in the ranking keep this order): those
#: of :data:`gclib.space.FAMILIES` that the advice takes, in the table's order.
FAMILIES = space.names("advise")
#: Trials per model of :func:`advise` at most by default: the designs kept are simulated chunk by chunk, from
#: :data:`MIN_TRIALS` on, until every mean time is known within :data:`PRECISION` of itself (95% half-width); at
#: large ``K``, where an iteration's time varies little, a few hundred trials do.
TRIALS = 4000
MIN_TRIALS = 400
PRECISION = 0.01
#: Above this many candidates, :func:`advise` screens them first (the race of :data:`SCREEN_ROUNDS`).
SCREEN_ABOVE = 80
#: Trials of each round of the screening race (cumulative: 256 in all).
SCREEN_ROUNDS = (16, 16, 32, 64, 128)
SCREEN_TRIALS = sum(SCREEN_ROUNDS)
#: The race drops a design when a paired difference exceeds the Student-t quantile of this one-sided level
#: divided by the number of candidates (Bonferroni: over a whole race, about this chance of dropping a design
#: that no other beats).
RACE_ALPHA = 0.01
#: Designs kept per model by the screen (besides those on the fronts and the fastest of each family).
SCREEN_KEEP = 16
#: Bytes a chunk of draws (:class:`gclib.bulk.Draws`) may take: the simulation never holds more of the
#: ``trials x workers x load`` finish times than this.
DRAW_BUDGET = 128 * 2 ** 20
#: Rows of the ranked table whose stability margin is computed, and the straggler patterns sampled for each
#: (up to ``K = 100``; above, ``STABILITY_PATTERNS * 100 / K`` and at least 10: a decode's work grows with ``K``).
STABILITY_ROWS = 5
STABILITY_PATTERNS = 100
#: The stability margin is computed only for codes whose encoding matrix (built three times over) takes at most
#: this many bytes (at ``K`` in the thousands it is not: ``digits`` is then unknown).
STABILITY_BYTES = 256 * 2 ** 20
#: Fitted models whose bootstrap goodness-of-fit test rejects them at this level are left out of the advice (their
#: tails, e.g. a Pareto fitted to exponential data, would otherwise dominate the robustness columns).
REJECT_LEVEL = 0.05
#: Rows :meth:`Advice.text` shows.
TEXT_ROWS = 8
#: The most workers :func:`advise` takes: the candidates of 10,000 workers take seconds to list, and the number of
#: them grows with ``K``.
MAX_WORKERS = 10_000
#: The most task times :func:`advise` draws in all (over every model, the race included; every design reads the
#: same draws; in the master's queue, with every message of the designs kept: see :func:`workload`): some minutes on
#: one core of a laptop. A request beyond it is refused before the work, naming what to lower.
MAX_CELLS = 2e10
#: Designs that the full trials simulate after a screening race, at most as :func:`workload` counts them (the kept
#: ones of :func:`_screen`: the fastest ``SCREEN_KEEP`` per model, the fronts and the fastest of each family).
KEPT_AT_MOST = 4 * SCREEN_KEEP + len(FAMILIES)
#: Columns of :attr:`Advice.ranked`.
COLUMNS = ["rank", "label", "scheme", "family", "load", "mean_time", "ci95_time", "speedup", "speedup_lo",
           "speedup_hi", "messages", "gradient_units", "computations", "failed", "digits", "worst_ratio",
           "best_under", "feasible", "runnable", "command"]


def default_max_load(K: int) -> int:
    """The computation load :func:`advise` allows when none is given: ``ceil(sqrt(K))``, at least 2 and at most
    ``K`` (3 at ``K = 8``, 10 at ``K = 100``). Every extra part a worker holds costs computation in every
    iteration while the time it can save is bounded by the stragglers' tail; loads of a few parts (Fig. 1 of the
    GC-MMC paper: 10 of 40) capture most of the gain."""
    K = checks.integer("K", K, low=1)
    return int(min(K, max(2, math.isqrt(K - 1) + 1)))


@dataclass(frozen=True)
class Design:
    """One candidate: its family, label, computation ``load``, the ``gclib run`` scheme and options that build
    it (``scheme`` ``None``: it cannot run over MPI), its schedule (what the simulator reads), its real code, and
    ``spec``: what :mod:`gclib.bulk` reads of it (its family's structure, without the schedule)."""

    family: str
    label: str
    load: int
    scheme: str | None
    options: dict
    schedule: Callable[[], Schedule]
    build: Callable
    spec: bulk.Spec | None = None
    run: dict = field(default_factory=dict)

    @property
    def command(self) -> str:
        """The options of ``gclib run`` that run this design (empty when it cannot run): the scheme's, then the
        runtime's (``run``: how the design is run, e.g. the two-phase exchange the advice charges the
        partial-straggler protocol for)."""
        if self.scheme is None:
            return ""
        parts = ["--scheme", self.scheme]
        for k, v in {**self.options, **self.run}.items():
            parts += ["--" + k.replace("_", "-"), ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)]
        return shlex.join(parts)


def candidates(K: int, max_load: int | None = None, *, max_orders: int = 2, network=None) -> list:
    """Every design :func:`advise` compares (see the module docstring), as :class:`Design`, drawn from the table of
    families (:func:`gclib.space.points` on an ``"advise"`` space: uncoded at load 1, then every load of
    :func:`grid` up to ``max_load``).

    Args:
        K: workers. max_load: the largest computation load (default :func:`default_max_load`).
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
        network: the :class:`gclib.simulate.Communication` the advice charges (``None`` or free: messages cost
            nothing, and the partial-straggler protocol, then UC-MMC in one cluster, is not listed).
    """
    K = checks.integer("K", K, low=2)
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    max_orders = checks.integer("max_orders", max_orders, low=1)
    if network is not None and not isinstance(network, Communication):
        raise checks.ParameterTypeError(f"network must be a gclib.simulate.Communication or None, got "
                                        f"{type(network).__name__}")
    sp = space.Space("advise", K, (1, *grid(2, R)), max_orders, comm=network is not None and not network.free)
    out = []
    for p in space.points(sp):
        f = p.family
        out.append(Design(f.name, p.label, p.load, f.scheme if f.runnable else None,
                          p.parameters if f.runnable else {}, p.schedule, p.build, p.spec(),
                          dict(f.run) if f.runnable else {}))
    return out


def network_text(net: dict | None) -> str:
    """What the advice charges for communication, in words (:meth:`gclib.simulate.Communication.describe`)."""
    if not net:
        return "communication not charged (messages cost nothing)"
    bw = "no bandwidth limit" if math.isinf(net["bandwidth"]) else f"{net['bandwidth']:.4g} gradients per unit"
    where = "the master takes messages in one at a time" if net.get("queue") else "independent delays"
    return (f"communication charged: latency {net['latency']:.3g}, {net.get('overhead', 0.0):.3g} per message and "
            f"{bw} ({where})")


def stability_patterns(K: int) -> int:
    """Straggler patterns the stability margin samples for ``K`` workers (see :data:`STABILITY_PATTERNS`)."""
    return int(STABILITY_PATTERNS if K <= 100 else max(10, STABILITY_PATTERNS * 100 // K))


def _code_bytes(d: Design) -> int:
    """What building the real code of ``d`` takes: its dense encoding matrix (messages x parts x pieces, float64)
    three times over (:func:`gclib.codes.base.matrix_bytes`, as :func:`gclib.codes.base.reserve_code` counts it)."""
    s = d.spec
    pieces = max(1, int(round(1 / s.size)))
    return matrix_bytes(s.workers * len(s.columns), s.workers * pieces)


def _advise_bytes(K: int, R: int, n: int, trials: int, race: bool) -> int:
    """Memory :func:`advise` needs at most: a chunk of draws, the race's per-trial times, messages and units of
    every candidate (``8`` bytes each, four arrays), and the full simulation's results of the designs kept."""
    keep = KEPT_AT_MOST if race else n
    race_bytes = CANDIDATE_TRIAL_BYTES * n * SCREEN_TRIALS if race else 0
    return DRAW_BUDGET + race_bytes + CANDIDATE_TRIAL_BYTES * keep * trials + 2 * 8 * K * R * 4


def workload(K: int, max_load: int | None = None, trials: int | None = None, models: int = 1, *,
             queue: bool = False, screen: bool | None = None, designs: list | None = None) -> dict:
    """What :func:`advise` would simulate for ``K`` workers, loads up to ``max_load``, ``trials`` trials (``None``:
    the default's most, :data:`TRIALS`) and ``models`` models, known before the work: ``{"candidates", "cells",
    "bytes"}``: the candidate designs; an upper bound on the task times drawn (every design reads the same draws,
    ``K x load`` per trial: the race's :data:`SCREEN_TRIALS` when there are more than :data:`SCREEN_ABOVE`
    candidates, then ``trials``), with, in the master's queue (``queue``), every message of the designs kept (at
    most :data:`KEPT_AT_MOST`, each simulated from its schedule); and the bytes held at once
    (:func:`_advise_bytes`). ``screen``, ``designs``: as :func:`advise` (``designs``: the candidates, when listed
    already)."""
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (advise lists every candidate design for K workers)")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    most = TRIALS if trials is None else checks.integer("trials", trials, low=2)
    designs = candidates(K, R) if designs is None else designs
    n = len(designs)
    race = n > SCREEN_ABOVE if screen is None else bool(screen)
    per_model = ((SCREEN_TRIALS if race else 0) + most) * K * R
    if queue:
        loads = sorted((d.load for d in designs), reverse=True)
        per_model += most * K * sum(loads[:KEPT_AT_MOST] if race else loads)
    return {"candidates": n, "cells": float(models) * per_model, "bytes": _advise_bytes(K, R, n, most, race)}


def check_workload(K: int, max_load: int | None = None, trials: int | None = None, models: int = 1, *,
                   queue: bool = False, screen: bool | None = None, designs: list | None = None) -> dict:
    """:func:`workload`, refused (``ValueError`` naming what to lower) beyond :data:`MAX_CELLS` task times or the
    memory budget of :func:`gclib.checks.need_memory`."""
    w = workload(K, max_load, trials, models, queue=queue, screen=screen, designs=designs)
    sizes = (f"{K} workers, {w['candidates']} candidate designs (loads up to "
             f"{default_max_load(K) if max_load is None else max_load}), trials = "
             f"{TRIALS if trials is None else trials}, {models} model{'s' * (models != 1)}")
    if w["cells"] > MAX_CELLS:
        raise ValueError(f"advise of {sizes} would simulate about {w['cells']:.2g} task times, more than "
                         f"{MAX_CELLS:.0g} (hours of work); lower the workers, the largest load (--max-load) or "
                         f"the trials (--trials)")
    checks.need_memory("advise", w["bytes"], sizes=sizes, lower="trials (--trials) or the largest load (--max-load)")
    return w


# ---------------------------------------------------------------------------------------------- evaluation
def _stats(results: list, labels: list) -> pd.DataFrame:
    """Per design under one model: means and intervals from the per-trial results (:func:`design.evaluate_trials`);
    a design that fails to decode in some trial has an infinite expected time."""
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


def _front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both ``x`` and ``y`` (both minimized), sorted by ``x``."""
    keep, best = [], math.inf
    for i in np.lexsort((y, x)):
        if np.isfinite(y[i]) and y[i] < best:
            keep.append(int(i))
            best = y[i]
    return np.array(keep, dtype=np.int64)


def _chunks(trials: int, K: int, R: int) -> list:
    """``trials`` cut into chunks of :class:`gclib.bulk.Draws` that fit :data:`DRAW_BUDGET`."""
    return chunks_of(int(trials), bulk.chunk_trials(K, R, DRAW_BUDGET))


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
        for c in _chunks(n_round, K, R):
            D = bulk.Draws(model, rng, c, K, R)
            res = bulk.evaluate([specs[i] for i in alive], D, outputs=("time", "messages", "volume"), comm=comm)
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


def _screen(designs: list, models: Mapping, K: int, R: int, seed: int, comm, bar) -> list:
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


def _schedule_trials(designs: list, model: ComputeModel, K: int, trials: int, seed, keys, comm, *, again=None,
                     schedules: list | None = None) -> list:
    """:func:`gclib.design.evaluate_trials` of the designs' schedules, with a protocol's design
    (:attr:`gclib.bulk.Spec.protocol`: its schedule sends the progress reports, not its round trip) replaced by
    :func:`gclib.bulk.protocol_outputs` on the same draws: drawn again, in the same chunks, from a copy of the
    stream taken before, from ``again`` (a second copy of ``model`` where drawing changes the model) or ``model``.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    schedules = [d.schedule() for d in designs] if schedules is None else schedules
    idx = [i for i, d in enumerate(designs) if d.spec is not None and d.spec.protocol is not None]
    twin = copy.deepcopy(rng) if idx else None
    res = evaluate_trials(schedules, model, K, trials, rng, keys=keys, comm=comm)
    if not idx:
        return res
    sch = [Schedule.of(x) for x in schedules]
    R = max(x.load for x in sch)
    per_worker = _per_worker(model)
    size = min(sim_chunk_trials(K, R, x.n_messages, per_worker=per_worker) for x in sch)
    parts = {i: [] for i in idx}
    source = model if again is None else again
    for c in chunks_of(int(trials), size):
        D = bulk.Draws(source, twin, c, K, R)
        for i in idx:
            parts[i].append(bulk.protocol_outputs(designs[i].spec, D, comm))
        del D
    for i in idx:
        got = {k: np.concatenate([p[k] for p in parts[i]]) for k in bulk.OUTPUTS}
        got["cluster_messages"] = got["messages"]  # one cluster
        res[i] = {k: got[k] for k in keys}
    return res


def _simulate(designs: list, models: Mapping, K: int, trials: int | None, seed: int, comm, bar) -> tuple:
    """Per-design stats (:func:`_stats`) of ``designs`` under every model on common random numbers (the same seed
    for every model), from their families' structure (:mod:`gclib.bulk`), or from their schedules in the master's
    queue. ``trials`` per model; ``None``: chunk by chunk, from :data:`MIN_TRIALS` until every mean time is known
    within :data:`PRECISION` (:func:`_precise`), at most :data:`TRIALS`.

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
        size = bulk.chunk_trials(K, R, DRAW_BUDGET)
        for c in chunks_of(most, size if trials is not None else min(size, MIN_TRIALS)):
            if queue:
                res = _schedule_trials(designs, model, K, c, rng, TRIAL_KEYS, comm, schedules=schedules)
            else:
                D = bulk.Draws(model, rng, c, K, R)
                res = bulk.evaluate(specs, D, comm=comm)
                del D
            for acc, r in zip(parts, res):
                acc.append(r)
            n += c
            bar.update(c * len(designs))
            if trials is None and n >= MIN_TRIALS and _precise([[p["time"] for p in acc] for acc in parts]):
                break
        res = [{k: np.concatenate([p[k] for p in acc]) for k in bulk.OUTPUTS} for acc in parts]
        out[name], used[name] = _stats(res, labels), n
    return out, used


# ---------------------------------------------------------------------------------------------- stability
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


# ---------------------------------------------------------------------------------------------- the advice
@dataclass
class Advice:
    """The outcome of :func:`advise`.

    Attributes:
        ranked: one row per design (:data:`COLUMNS`), best first under ``primary``: designs within the budget
            before the others, then by expected time (a design that fails to decode in some trial last), fewer
            messages, lower load.
        table: one row per design and model: ``model, label, family, load, mean_time, ci95_time, speedup,
            speedup_lo, speedup_hi, messages, gradient_units, computations, failed, ratio`` (to the model's best)
            and ``tied`` (best or statistically tied with it).
        best: the recommended row (a dict), ``None`` when no runnable design fits the budget.
        settings: ``K, max_load, budget, trials`` (the most per model), ``trials_by_model``, ``precision`` (of
            the default trials; ``None`` when ``trials`` was given), ``seed, primary, models`` (their descriptions),
            ``candidates``, ``screened`` (designs given the full trials), ``screen`` (the race's rounds, level and
            keep; ``None`` without a race), ``network`` (:meth:`gclib.simulate.Communication.describe`, ``None``:
            messages cost nothing), ``stability_rows``, ``stability_patterns``.
    """

    ranked: pd.DataFrame
    table: pd.DataFrame
    best: dict | None
    settings: dict = field(default_factory=dict)

    def sentence(self) -> str:
        """One sentence naming the recommendation and its saving, with the model and the intervals."""
        s = self.settings
        if self.best is None:
            why = f" within a budget of {s['budget']:g} messages per iteration" if s.get("budget") else ""
            return f"No design that runs over MPI completes{why} under '{s['primary']}'."
        b = self.best
        sp = b["speedup"]
        if math.isfinite(sp):
            save = (f"{sp:.3g}x the speed of uncoded (95% CI {b['speedup_lo']:.3g}-{b['speedup_hi']:.3g}), "
                    f"saving {100 * (1 - 1 / sp):.1f}% of the iteration time")
        else:
            save = "where uncoded never completes (a worker never answers)"
        return (f"Recommended: {b['label']} (gclib run {b['command']}): expected iteration time "
                f"{b['mean_time']:.4g} +/- {b['ci95_time']:.2g} under '{s['primary']}', {save}; "
                f"{b['messages']:.3g} messages and {b['gradient_units']:.3g} gradients received per iteration, "
                f"best or tied under {b['best_under']} of {len(s['models'])} models.")

    def text(self, rows: int = TEXT_ROWS) -> str:
        """A short table of the first ``rows`` designs (and uncoded's row, when it ranks lower) and the
        recommendation, for a person."""
        s = self.settings
        raced = " (the others dropped by a screening race)" if s.get("screen") else ""
        head = (f"gclib advise: K = {s['K']} workers, load <= {s['max_load']}, {s['screened']} of {s['candidates']} "
                f"designs simulated{raced} with {s['trials']} trials under each of {len(s['models'])} models; ranked "
                f"under '{s['primary']}' (times in the models' unit: seconds for a measured trace)")
        if s.get("budget") is not None:
            head += f"; budget {s['budget']:g} messages per iteration"
        head += "; " + network_text(s.get("network"))
        lines = [head, "", *advice_report.table_text(self.ranked, len(s["models"]), rows)]
        lines += ["", f"digits: float64 digits left after the worst decode over {s['stability_patterns']} sampled "
                      f"iterations (first {s['stability_rows']} runnable rows); worst: largest ratio of its time to "
                      f"the best design's over the models; best: models under which it is best or tied.",
                  self.sentence()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready: ``settings``, ``ranked`` (rows), ``best``, ``recommendation`` (:meth:`sentence`),
        ``warnings`` (:meth:`warnings`) and ``models`` (every design under every model)."""
        return jsonable({"settings": self.settings, "best": self.best, "recommendation": self.sentence(),
                         "warnings": self.warnings(),
                         "ranked": self.ranked.to_dict(orient="records"),
                         "models": self.table.to_dict(orient="records")})

    def to_json(self) -> str:
        """:meth:`to_dict` as one line of JSON."""
        return json.dumps(self.to_dict())

    def plot(self, path=None):
        """The front of expected time against communication per model, uncoded marked and the recommendation
        circled (:func:`gclib.advice_report.plot`); writes ``path`` (PNG) when given, and returns the figure."""
        return advice_report.plot(self, path)

    def warnings(self) -> list:
        """What the ranking calls for a warning about: messages that cost nothing deciding it
        (:func:`gclib.advice_report.free_messages_text`)."""
        free = advice_report.free_messages_text(self)
        return [] if free is None else [free]


def advise(models: Mapping[str, ComputeModel], K: int, *, max_load: int | None = None, budget: float | None = None,
           trials: int | None = None, seed=0, primary: str | None = None, progress: bool = False,
           max_orders: int = 2, network=None, screen: bool | None = None) -> Advice:
    """Rank every candidate design (:func:`candidates`) for ``K`` workers under compute-time ``models``.

    Args:
        models: ``{name: ComputeModel}`` (e.g. ``gclib.fit.fit(trace).models()``), at least one.
        K: workers. max_load: largest computation load (default :func:`default_max_load`).
        budget: largest mean number of messages received per iteration (under ``primary``); ``None``: no limit.
        trials: simulated iterations per model (and per design, on common random numbers); ``None``: until every
            kept design's mean time is known within :data:`PRECISION` (at least :data:`MIN_TRIALS`, at most
            :data:`TRIALS`).
        seed: seed of the sampled times (the same for every model). primary: the model that ranks (default
            ``"replay"`` when present, else the first). progress: a progress bar on stderr, with the time left.
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
        network: a :class:`gclib.simulate.Communication` (e.g. :func:`gclib.network.read` of a measured network,
            in the models' time unit): every message is charged; ``None``: messages cost nothing.
        screen: race the candidates before the full simulation (see the module docstring); ``None``: when there
            are more than :data:`SCREEN_ABOVE`; ``False``: simulate every candidate with ``trials`` (the
            exhaustive search).
    Returns:
        :class:`Advice`.
    """
    if not isinstance(models, Mapping) or not models:
        raise ValueError(f"models must be a non-empty mapping of names to compute-time models, got {models!r}")
    for name, m in models.items():
        if not isinstance(m, ComputeModel):
            raise checks.ParameterTypeError(f"models[{name!r}] must be a gclib.stragglers.ComputeModel, got "
                                            f"{type(m).__name__}")
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (advise lists every candidate design for K workers)")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    if budget is not None:
        budget = checks.real("budget", budget, above=0)
    if trials is not None:
        trials = checks.integer("trials", trials, low=2)
    most = TRIALS if trials is None else trials
    seed = checks.integer("seed", seed, low=0)
    if network is not None and not isinstance(network, Communication):
        raise checks.ParameterTypeError(f"network must be a gclib.simulate.Communication or None, got "
                                        f"{type(network).__name__}")
    if network is not None and network.free:
        network = None
    if primary is None:
        primary = "replay" if "replay" in models else next(iter(models))
    elif primary not in models:
        raise ValueError(f"primary must be one of the models {list(models)}, got {primary!r}")
    designs = candidates(K, R, max_orders=max_orders, network=network)
    n_all = len(designs)
    race = n_all > SCREEN_ABOVE if screen is None else bool(screen)
    # before the work: a request of hours, or beyond the memory, is refused
    check_workload(K, R, trials, len(models), queue=network is not None and network.queue, screen=race,
                   designs=designs)
    M = len(models)
    guess = M * ((n_all * SCREEN_ROUNDS[0] + min(n_all, 4 * SCREEN_KEEP) * (SCREEN_TRIALS - SCREEN_ROUNDS[0]))
                 if race else 0) + M * min(n_all, 2 * SCREEN_KEEP if race else n_all) * most
    with _bar(guess, "advise", progress, unit=" design-trials", unit_scale=True) as b:
        if race:
            keep = _screen(designs, models, K, R, seed + 1, network, b)
            designs = [designs[i] for i in keep]
            b.total = b.n + M * len(designs) * most  # what is left is known now (at most)
            b.refresh()
        stats, used = _simulate(designs, models, K, trials, seed, network, b)
    frames = []
    for name, df in stats.items():
        frames.append(df.assign(model=name, family=[d.family for d in designs], load=[d.load for d in designs]))
    table = pd.concat(frames, ignore_index=True)[["model", "label", "family", "load", "mean_time", "ci95_time",
                                                  "speedup", "speedup_lo", "speedup_hi", "messages",
                                                  "gradient_units", "computations", "failed", "ratio", "tied"]]
    p = stats[primary].copy()
    p["family"] = [d.family for d in designs]
    p["scheme"] = [d.scheme or "" for d in designs]
    p["load"] = [d.load for d in designs]
    p["command"] = [d.command for d in designs]
    p["runnable"] = [d.scheme is not None for d in designs]
    p["worst_ratio"] = np.max(np.vstack([df["ratio"].to_numpy() for df in stats.values()]), axis=0)
    p["best_under"] = np.sum(np.vstack([df["tied"].to_numpy() for df in stats.values()]), axis=0)
    p["feasible"] = True if budget is None else (p["messages"] <= budget) & np.isfinite(p["mean_time"])
    p["_family"] = [FAMILIES.index(d.family) for d in designs]
    p["_infeasible"] = ~p["feasible"].astype(bool)
    p = p.sort_values(["_infeasible", "mean_time", "messages", "load", "_family"], kind="stable")
    p = p.reset_index(drop=True)
    p["rank"] = np.arange(1, len(p) + 1)
    p["digits"] = math.nan
    patterns = stability_patterns(K)
    by_label = {d.label: d for d in designs}
    done = 0
    for i in p.index:
        if done >= STABILITY_ROWS:
            break
        d = by_label[p.at[i, "label"]]
        if d.scheme is None or not math.isfinite(p.at[i, "mean_time"]):
            continue
        if _code_bytes(d) <= STABILITY_BYTES:  # else the code's matrix is too large to build: digits unknown
            p.at[i, "digits"] = stability_margin(d.build(), models[primary], patterns, seed)["digits"]
        done += 1
    ranked = p[COLUMNS]
    ok = ranked[ranked["feasible"].astype(bool) & ranked["runnable"] & np.isfinite(ranked["mean_time"])]
    best = None if ok.empty else jsonable(ok.iloc[0].to_dict())
    if best is not None:  # keep the numbers finite-typed for the sentence
        best = {k: (math.nan if v is None and k in ("digits", "speedup_lo", "speedup_hi", "ci95_time") else v)
                for k, v in best.items()}
        best["speedup"] = float(ok.iloc[0]["speedup"])
    settings = {"K": K, "max_load": R, "budget": budget, "trials": max(used.values()), "trials_by_model": used,
                "precision": PRECISION if trials is None else None, "seed": seed, "primary": primary,
                "models": {n: m.describe() for n, m in models.items()}, "candidates": n_all,
                "screened": len(designs), "screen": {"rounds": list(SCREEN_ROUNDS), "alpha": RACE_ALPHA,
                                                     "keep": SCREEN_KEEP} if race else None,
                "network": None if network is None else network.describe(),
                "stability_rows": STABILITY_ROWS, "stability_patterns": patterns}
    return Advice(ranked, table, best, settings)


# ------------------------------------------------------------------------------------------- from a trace
#: The targets of :func:`backtest`: the largest relative error of the prediction on the fitted iterations (uncoded
#: and the advised design), on the held-out ones (the advised design), and the largest regret.
TARGETS = {"in_sample": 0.05, "held_out": 0.07, "regret": 0.03}
#: The fewest iterations each part of a back-test holds.
MIN_PART = 5


@dataclass
class TraceAdvice:
    """The outcome of :func:`from_trace`.

    Attributes:
        advice: the :class:`Advice`, ranked under ``primary``. report: the fits (:func:`gclib.fit.fit`).
        split: :func:`gclib.effects.split` of the trace (``None`` when the trace cannot have it). support: the
            goodness of fit of every model on the trace's whole iterations (:func:`gclib.effects.support`; empty
            when the trace cannot be judged). primary: the model the advice ranks under; reason: why (a sentence);
            primary_model: that model.
        left_out: the fits the bootstrap KS test rejects (left out of the advice unless ``all_models``).
        skipped: models the trace cannot have, ``{name: why}``. reliance: how much of the recommendation's
            speed-up rests on the slowest worker (:func:`reliance`; ``None`` when not computed). iteration: what one
            iteration of the advice is in the trace's terms (:func:`gclib.advice_report.iteration_numbers`).
    """

    advice: Advice
    report: object
    split: object
    support: pd.DataFrame
    primary: str
    reason: str
    left_out: list
    skipped: dict
    reliance: dict | None = None
    primary_model: object = None
    iteration: dict | None = None

    def text(self) -> str:
        """The variance split, the models judged on whole iterations, then the advice with the model it ranks
        under and why, and the slowest worker's share in the speed-up."""
        lines = []
        if self.split is not None:
            s = self.split.slowest
            lines.append(f"variance of the log paces (pace: a worker's mean task time in an iteration; 95% bootstrap "
                         f"intervals over iterations and workers): {self.split.text()}; worker {s['worker']} is the "
                         f"slowest on average ({s['ratio']:.3g}x the median worker's pace) and in "
                         f"{100 * s['share']:.0f}% of the iterations")
        if len(self.support):
            lines.append("models judged on whole iterations (mean k-th fastest pace, k = 1 .. workers; bootstrap "
                         "p-value; slowest: the model's mean slowest pace against the trace's):")
            for r in self.support.itertuples():
                if r.note:
                    lines.append(f"  {r.model:24s} not judged: {r.note}")
                else:
                    lines.append(f"  {r.model:24s} p {r.p_value:<6.3g} slowest {100 * r.slowest_error:+.1f}%  "
                                 f"{'supported' if r.supported else 'not supported'}")
        for n, why in self.skipped.items():
            lines.append(f"  {n:24s} not fitted: {why}")
        lines += ["", self.advice.text(), f"Ranked under {self.reason}."]
        if self.iteration is not None:
            lines.append(advice_report.iteration_text(self.iteration, self.advice))
        if self.reliance is not None:
            lines.append(reliance_text(self.reliance))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = self.advice.to_dict()
        out.update(jsonable({"primary_reason": self.reason, "support": self.support.to_dict(orient="records"),
                             "variance_split": None if self.split is None else {
                                 "parts": self.split.table().to_dict(orient="records"),
                                 "slowest": self.split.slowest},
                             "not_fitted": self.skipped, "reliance": self.reliance,
                             "iteration": self.iteration}))
        return out


def _order(report) -> list:
    """The preference order of :func:`gclib.effects.choose`: the models that keep a trace, then the fits, the
    best first and the others by AIC."""
    fits = sorted(report.fits, key=lambda f: (f.name != report.best.name, f.aic)) if report.fits else []
    return list(PREFERENCE) + [f.name for f in fits]


#: The range a trace's positive task times must lie in (seconds; 0 and inf apart) to be fitted and simulated: the
#: fits take squares, logarithms and ratios of them and the simulator sums them, which overflow or underflow
#: float64 outside it (times of 1e300 s make every design's time inf; of 1e-320 s, denormal, ratios of 0 / 0).
TIME_RANGE = (1e-100, 1e100)


def check_trace(t) -> Timings:
    """``t`` when its task times can be fitted and simulated: positive finite times within :data:`TIME_RANGE`, at
    least two distinct ones; else a ``ValueError`` naming the trace and what it holds instead, before any fit or
    simulation (a trace of zeros, of one repeated time, of times near 1e300 or of denormal times)."""
    if not isinstance(t, Timings):
        raise checks.ParameterTypeError(f"t must be a gclib.timings.Timings, got {type(t).__name__}")
    x = t.durations[np.isfinite(t.durations)]
    pos = x[x > 0]
    if pos.size == 0:
        raise ValueError(f"{t.source}: every finite task time is 0 s; a compute-time model needs positive times")
    lo, hi = float(pos.min()), float(pos.max())
    if lo < TIME_RANGE[0] or hi > TIME_RANGE[1]:
        raise ValueError(f"{t.source}: task times must lie within {TIME_RANGE[0]:g} to {TIME_RANGE[1]:g} s (or be 0 "
                         f"or inf) to be fitted and simulated in float64 (gclib.advise.TIME_RANGE), got {lo:.3g} to "
                         f"{hi:.3g} s; write the trace in seconds")
    if np.unique(x).size < 2:
        raise ValueError(f"{t.source}: every finite task time is the same ({lo:.6g} s); fitting a compute-time model "
                         f"needs at least 2 distinct times")
    return t


def from_trace(t, K: int | None = None, *, seed=0, bootstrap: int = 200, trials: int | None = None,
               max_load: int | None = None, budget: float | None = None, all_models: bool = False,
               progress: bool = False, network=None, screen: bool | None = None) -> TraceAdvice:
    """Fit every model to a trace and advise under the best supported one.

    The fits of :func:`gclib.fit.fit` (those the bootstrap KS test does not reject, or all with ``all_models``),
    the replay of independent rows, and the models that keep worker identity and whole iterations
    (:func:`gclib.effects.models`) are judged on the trace's whole iterations (:func:`gclib.effects.support`); the
    advice (:func:`advise`, every model that simulates ``K`` workers) ranks under the first supported one of
    :func:`gclib.effects.choose`'s order. When the ranking model keeps the trace's workers, :func:`reliance` says
    how much of the recommendation's speed-up rests on the slowest worker.

    Args:
        t: a :class:`gclib.timings.Timings`. K: workers to advise (default: the trace's). seed: the fits'
            bootstrap, the tests and the simulation. bootstrap: replicates of the fits and of the tests.
            trials, max_load, budget, progress, network, screen: as :func:`advise`.
    """
    check_trace(t)
    K = t.workers if K is None else checks.integer("K", K, low=2)
    seed = checks.integer("seed", seed, low=0)
    report = fit.fit(t, seed=seed, bootstrap=bootstrap)
    level = None if all_models else REJECT_LEVEL
    left_out = [] if level is None else report.rejected(level)
    extra, skipped = effects.models(t)
    judged = {**report.models(), **extra}
    split, sup = None, pd.DataFrame(columns=["model", "distance", "p_value", "supported", "slowest_model",
                                             "slowest_trace", "slowest_error", "fastest_error", "note"])
    try:
        split = effects.split(t, bootstrap=bootstrap, seed=seed)
        sup = effects.support(judged, t, bootstrap=max(bootstrap, 1), seed=seed)
        primary, reason = effects.choose(sup, judged, K, order=_order(report))
    except ValueError as e:  # a trace with workers missing from iterations, or that never answered
        primary = "replay"
        reason = f"'replay': the trace's whole iterations cannot be judged ({e})"
    models = {n: m for n, m in {**report.models(level=level), **extra}.items() if effects.can_simulate(m, K)}
    if primary not in models:
        models[primary] = judged[primary]
    adv = advise(models, K, max_load=max_load, budget=budget, trials=trials, seed=seed, primary=primary,
                 progress=progress, network=network, screen=screen)
    adv.settings["primary_reason"] = reason
    adv.settings["unit"] = "s"  # a measured trace's times are seconds
    rel = None
    if primary in extra and adv.best is not None and K == t.workers:
        rel = reliance(t, adv.best["label"], primary, max_load=adv.settings["max_load"],
                       trials=adv.settings["trials"], seed=seed, network=network)
    return TraceAdvice(adv, report, split, sup, primary, reason, left_out, skipped, rel, models[primary],
                       advice_report.iteration_numbers(t.durations, adv))


def trial_times(labels, model: ComputeModel, K: int, max_load: int | None = None, trials: int = TRIALS, seed=0,
                network=None) -> dict:
    """``{label: (trials,) completion times}`` of the designs of :func:`candidates` named by ``labels``, every one on
    the same draws (common random numbers): for paired comparisons of a few designs, e.g. the screened
    recommendation against the exhaustive search's (:func:`gclib.stats.paired_change`)."""
    R = default_max_load(K) if max_load is None else max_load
    by = {d.label: d for d in candidates(K, R, network=network)}
    missing = [lab for lab in labels if lab not in by]
    if missing:
        raise ValueError(f"labels {missing} are not designs of the candidates for K = {K}, load <= {R}")
    designs = [by[lab] for lab in labels]
    if network is not None and network.queue:
        res = _schedule_trials(designs, model, K, trials, seed, ("time",), network)
        return {lab: r["time"] for lab, r in zip(labels, res)}
    rng = np.random.default_rng(seed)
    acc = [[] for _ in designs]
    RR = max(d.load for d in designs)
    for c in _chunks(trials, K, RR):
        D = bulk.Draws(model, rng, c, K, RR)
        for a, r in zip(acc, bulk.evaluate([d.spec for d in designs], D, outputs=("time",), comm=network)):
            a.append(r["time"])
    return {lab: np.concatenate(a) for lab, a in zip(labels, acc)}


def _design_times(labels, model, K, R, trials, seed, network=None) -> dict:
    """``{label: mean time}`` of the designs of ``candidates(K, R)`` named by ``labels`` under ``model`` (common
    random numbers)."""
    by = {d.label: d for d in candidates(K, R, network=network)}
    res = _schedule_trials([by[lab] for lab in labels], model, K, trials, seed, ("time",), network)
    return {lab: float(np.mean(r["time"])) for lab, r in zip(labels, res)}


def reliance(t, label: str, model_name: str, *, max_load: int | None = None, trials: int = TRIALS,
             seed=0, network=None) -> dict:
    """How much of a design's predicted speed-up over uncoded rests on the trace's slowest worker: the speed-up
    under ``model_name`` (``"replay by iteration"`` or ``"worker effects"``) fitted to the trace, and fitted to the
    trace with that worker's pace brought to the median worker's (:func:`gclib.effects.without_slowest`); with
    ``network`` charged as :func:`advise` charges it.

    Returns:
        ``worker, share_slowest`` (fraction of iterations it is the slowest), ``ratio`` (its mean pace over the
        median worker's), ``speedup``, ``speedup_without``, ``share``: ``(speedup - speedup_without) / (speedup -
        1)``, the part of the saving that rests on it (NaN without a saving).
    """
    cls = {"replay by iteration": IterationReplay, "worker effects": WorkerEffects}
    if model_name not in cls:
        raise ValueError(f"model_name must be one of {sorted(cls)}, got {model_name!r}")
    d = t.durations
    K = d.shape[1]
    R = default_max_load(K) if max_load is None else max_load
    s = slowest_worker(t)
    out = {"worker": s["worker"], "share_slowest": s["share"], "ratio": s["ratio"]}
    for key, dd in (("speedup", d), ("speedup_without", without_slowest(t))):
        times = _design_times(["uncoded", label], cls[model_name](dd), K, R, trials, seed, network)
        out[key] = times["uncoded"] / times[label]
    sp, sw = out["speedup"], out["speedup_without"]
    out["share"] = (sp - sw) / (sp - 1) if sp > 1 and math.isfinite(sp) else math.nan
    return out


class _InOrder(ComputeModel):
    """Recorded iterations in their order, one per trial, continuing across calls: the iterations themselves,
    replayed with every worker kept, for the observed times of :func:`observed`."""

    per_task = True
    name = "recorded"

    def __init__(self, rows: np.ndarray):
        self.rows = rows
        self.next = 0

    def sample(self, rng, trials, workers, n_tasks):
        idx = (self.next + np.arange(trials)) % len(self.rows)
        self.next += trials
        return np.cumsum(self.rows[idx][:, :, :n_tasks], axis=2)

    def describe(self):
        return {"model": "recorded", "shape": list(self.rows.shape)}


def observed(durations, K: int | None = None, max_load: int | None = None, *, max_orders: int = 2,
             network=None, per_iteration: bool = False) -> pd.DataFrame:
    """The mean iteration time of every candidate design on recorded iterations, each iteration once, every worker
    keeping its recorded task times (worker ``w`` of the trace is worker ``w`` of the code; tasks beyond the record
    at the row's pace: :func:`gclib.stragglers.filled`).

    Args:
        durations: ``(iterations, workers, tasks)`` with every worker observed in every iteration.
        network: a :class:`gclib.simulate.Communication` charged on every message (as :func:`advise` charges it).
        per_iteration: also return each design's ``(iterations,)`` times (column ``times``), for paired comparisons.
    Returns:
        one row per design of :func:`candidates`: ``label, family, load, runnable, mean_time, ci95_time`` (the
        Student-t half-width of the mean over the iterations: a mean of a few tens of iterations is not exact),
        ``messages``.
    """
    d = whole_rows(durations, "the observed times")
    I, W, _ = d.shape
    K = W if K is None else K
    if K != W:
        raise ValueError(f"K must be the trace's {W} workers (every worker keeps its own times), got {K}")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    designs = candidates(K, R, max_orders=max_orders, network=network)
    schedules = [x.schedule() for x in designs]
    rows = filled(d, max(s.load for s in schedules))
    res = _schedule_trials(designs, _InOrder(rows), K, I, 0, ("time", "messages"), network, again=_InOrder(rows),
                           schedules=schedules)
    out = []
    for x, r in zip(designs, res):
        t = r["time"]
        finite = bool(np.isfinite(t).all())
        e = Estimate.of(t) if finite else None
        out.append({"label": x.label, "family": x.family, "load": x.load, "runnable": x.scheme is not None,
                    "mean_time": float(t.mean()) if finite else math.inf,
                    "ci95_time": e.hi - e.value if e is not None and e.known else math.nan,
                    "messages": float(r["messages"].mean()), **({"times": np.asarray(t, float)} if per_iteration
                                                                 else {})})
    return pd.DataFrame(out)


@dataclass
class Backtest:
    """The outcome of :func:`backtest`.

    Attributes:
        rows: uncoded and the top designs under the ranking model: ``role, label, predicted, ci95, observed_fit,
            observed_held, error_fit, error_held`` (errors: predicted / observed - 1).
        by_model: one row per model the advice simulated: its own recommendation and the same numbers for uncoded
            and for it, its regret on the held-out part, and whether it ranks the advice (``primary``).
        fit: the :class:`TraceAdvice` of the fitted part. observed_fit, observed_held: :func:`observed` of each
            part. drift: the slowest worker of the fitted part, its mean pace in each part and their ratio - 1
            (``drift``), the median of every worker's (``median_drift``). regret: the advised design's held-out
            time over the held-out best runnable design's, - 1 (``best_held``: that design); ``regret_ci`` its 95%
            interval, paired by held-out iteration (the observed means are means of a few tens of iterations, not
            exact). targets: name ->
            ``{value, limit, met}``. warnings: a sentence per target missed. settings: the split and the options.
    """

    rows: pd.DataFrame
    by_model: pd.DataFrame
    fit: TraceAdvice
    observed_fit: pd.DataFrame
    observed_held: pd.DataFrame
    drift: dict
    regret: float
    best_held: str
    targets: dict
    warnings: list
    settings: dict
    regret_ci: tuple = (math.nan, math.nan)

    def text(self) -> str:
        s = self.settings
        lines = [f"back-test of gclib advise on {s['source']}: fitted on the first {s['fit_iterations']} of "
                 f"{s['iterations']} iterations, held out the last {s['held_iterations']}; K = {s['K']} workers, "
                 f"each keeping its recorded times on both parts; ranked under '{self.fit.primary}'", "",
                 f"{'role':9s} {'design':24s} {'predicted':>10s} {'fit part':>9s} {'error':>7s} {'held out':>9s} "
                 f"{'error':>7s}"]
        for r in self.rows.itertuples():
            lines.append(f"{r.role:9s} {r.label:24s} {r.predicted:10.4g} {r.observed_fit:9.4g} "
                         f"{100 * r.error_fit:+6.1f}% {r.observed_held:9.4g} {100 * r.error_held:+6.1f}%")
        d = self.drift
        lo, hi = self.regret_ci
        ci = f" (95% CI {100 * lo:.1f}% to {100 * hi:.1f}%, paired by iteration)" if math.isfinite(lo) else ""
        lines += ["", f"regret: the advised design is {100 * self.regret:.1f}% slower than the held-out best "
                      f"({self.best_held}) on the held-out part{ci}",
                  f"drift: worker {d['worker']}, the slowest of the fitted part, ran at {d['pace_fit']:.4g} s per "
                  f"task there and {d['pace_held']:.4g} held out ({100 * d['drift']:+.1f}%; the median worker "
                  f"{100 * d['median_drift']:+.1f}%): no model fitted on the first part can know it",
                  "", "every model's own recommendation (errors held out; regret on the held-out part):"]
        for r in self.by_model.itertuples():
            mark = " <- ranks the advice" if r.primary else ""
            lines.append(f"  {r.model:24s} {r.advised:24s} uncoded {100 * r.uncoded_error_held:+6.1f}%  advised "
                         f"{100 * r.advised_error_held:+6.1f}%  regret {100 * r.regret:.1f}%{mark}")
        if self.fit.reliance is not None:
            lines.append(reliance_text(self.fit.reliance))
        lines.append("")
        lines += [f"warning: {w}" for w in self.warnings] or ["every target met: in sample within "
                                                             f"{TARGETS['in_sample']:.0%}, held out within "
                                                             f"{TARGETS['held_out']:.0%}, regret under "
                                                             f"{TARGETS['regret']:.0%}"]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return jsonable({"settings": self.settings, "rows": self.rows.to_dict(orient="records"),
                         "by_model": self.by_model.to_dict(orient="records"), "drift": self.drift,
                         "regret": self.regret, "regret_ci": list(self.regret_ci), "best_held": self.best_held,
                         "targets": self.targets,
                         "warnings": self.warnings, "reliance": self.fit.reliance, "advice": self.fit.to_dict()})


def _part(t, sl, what):
    return Timings(durations=t.durations[sl], hosts=t.hosts, iteration_ids=t.iteration_ids[sl],
                   worker_ids=t.worker_ids, source=f"{t.source} ({what})")


def iterations_needed(holdout: float) -> int:
    """The fewest iterations a trace needs for a back-test holding out ``holdout`` of them: :data:`MIN_PART` to
    fit and :data:`MIN_PART` held out (``round(holdout * n)`` of ``n``). Found from a closed form and a look at
    the few counts around it, never by counting up (a holdout of 1e-300 needs about 5e300)."""
    h = checks.real("holdout", holdout, above=0, below=1)
    ok = lambda n: n - round(h * n) >= MIN_PART and round(h * n) >= MIN_PART  # noqa: E731
    # round(h n) >= MIN_PART from n >= (MIN_PART - 0.5) / h, and n - round(h n) >= MIN_PART from
    # n >= (MIN_PART - 0.5) / (1 - h): the answer is within a few of the larger
    start = max(MIN_PART, math.floor(max((MIN_PART - 0.5) / h, (MIN_PART - 0.5) / (1 - h))) - 2)
    if start > 2 ** 53:  # beyond exact integers: any trace is too short
        return start
    return next((n for n in range(start, start + 8) if ok(n)), start + 8)


def backtest(t, holdout: float = 0.5, *, seed=0, bootstrap: int = 200, trials: int | None = None,
             max_load: int | None = None, budget: float | None = None, top: int = 3, all_models: bool = False,
             progress: bool = False, network=None) -> Backtest:
    """Fit on the first iterations of a trace, advise, and check the advice on the held-out rest.

    The last ``round(holdout * iterations)`` iterations are held out; :func:`from_trace` fits and advises on the
    others for ``K`` = the trace's workers. Every candidate design is then replayed on each part with every worker
    keeping its recorded times (:func:`observed`). Reported: the predicted and observed mean iteration time of
    uncoded and of the ``top`` designs with their errors on both parts; every model's own recommendation with its
    errors and regret; the regret of the advice (how much slower the advised design is than the best runnable
    design on the held-out part); the drift of the slowest worker's pace between the parts. A target of
    :data:`TARGETS` that is missed gives a warning. Nothing is fitted or tuned on the held-out part.

    Args:
        t: a :class:`gclib.timings.Timings`, every worker observed in every iteration. holdout: the fraction held
            out, in (0, 1). network: charged on both parts' replays too. Others as :func:`from_trace`.
    Raises:
        ValueError: a worker missing from an iteration; fewer iterations than :data:`MIN_PART` in either part
        (the message says how many the trace needs).
    """
    check_trace(t)
    holdout = checks.real("holdout", holdout, above=0, below=1)
    top = checks.integer("top", top, low=1)
    check_complete(t)
    I = t.iterations
    n_held = int(round(holdout * I))
    n_fit = I - n_held
    if n_fit < MIN_PART or n_held < MIN_PART:
        need = iterations_needed(holdout)
        need = f"{need:,}" if need < 10 ** 12 else f"about {float(need):.3g}"
        raise ValueError(f"{t.source}: a back-test with holdout {holdout:g} needs at least {need} iterations (at "
                         f"least {MIN_PART} to fit and {MIN_PART} held out), the trace has {I} ({n_fit} to fit, "
                         f"{n_held} held out)")
    first, second = _part(t, slice(0, n_fit), "fitted part"), _part(t, slice(n_fit, I), "held-out part")
    if first.n_finite < MIN_SAMPLES:
        raise ValueError(f"{t.source}: the fitted part holds {first.n_finite} finite task times, at least "
                         f"{MIN_SAMPLES} are needed to fit; hold out less or record more")
    K = t.workers
    fa = from_trace(first, K, seed=seed, bootstrap=bootstrap, trials=trials, max_load=max_load, budget=budget,
                    all_models=all_models, progress=progress, network=network)
    adv = fa.advice
    R = adv.settings["max_load"]
    of = observed(first.durations, K, R, network=network).set_index("label")
    oh = observed(second.durations, K, R, network=network, per_iteration=True).set_index("label")
    ok = oh["runnable"] & np.isfinite(oh["mean_time"])
    if budget is not None:
        ok &= oh["messages"] <= budget
    best_held = str(oh[ok]["mean_time"].idxmin())
    rows = []
    ranked = adv.ranked[adv.ranked["runnable"] & adv.ranked["feasible"].astype(bool)
                        & np.isfinite(adv.ranked["mean_time"])]
    picks = [("uncoded", "uncoded")] + [("advised" if i == 0 else f"top {i + 1}", lab)
                                        for i, lab in enumerate(ranked["label"].head(top))]
    by_label = adv.ranked.set_index("label")
    for role, lab in picks:
        p = float(by_label.at[lab, "mean_time"])
        rows.append({"role": role, "label": lab, "predicted": p, "ci95": float(by_label.at[lab, "ci95_time"]),
                     "observed_fit": float(of.at[lab, "mean_time"]), "observed_held": float(oh.at[lab, "mean_time"]),
                     "observed_held_ci95": float(oh.at[lab, "ci95_time"]),
                     "error_fit": p / float(of.at[lab, "mean_time"]) - 1,
                     "error_held": p / float(oh.at[lab, "mean_time"]) - 1})
    rows = pd.DataFrame(rows)
    best_time = float(oh.at[best_held, "mean_time"])
    advised = adv.best["label"] if adv.best is not None else None
    regret = float(oh.at[advised, "mean_time"]) / best_time - 1 if advised is not None else math.nan
    regret_ci = (paired_change(oh.at[advised, "times"], oh.at[best_held, "times"])[1:3] if advised is not None
                 else (math.nan, math.nan))
    per = []
    for name, g in adv.table.groupby("model", sort=False):
        g = g.set_index("label")
        run = [lab for lab in g.index if oh.at[lab, "runnable"] and np.isfinite(g.at[lab, "mean_time"])
               and (budget is None or g.at[lab, "messages"] <= budget)]
        if not run:
            continue
        own = min(run, key=lambda lab: g.at[lab, "mean_time"])
        pu, pa = float(g.at["uncoded", "mean_time"]), float(g.at[own, "mean_time"])
        per.append({"model": name, "primary": name == fa.primary, "advised": own, "uncoded_predicted": pu,
                    "uncoded_error_fit": pu / float(of.at["uncoded", "mean_time"]) - 1,
                    "uncoded_error_held": pu / float(oh.at["uncoded", "mean_time"]) - 1,
                    "advised_predicted": pa, "advised_error_fit": pa / float(of.at[own, "mean_time"]) - 1,
                    "advised_error_held": pa / float(oh.at[own, "mean_time"]) - 1,
                    "regret": float(oh.at[own, "mean_time"]) / best_time - 1})
    by_model = pd.DataFrame(per)
    s = slowest_worker(first)
    pf, ph = paces(first).mean(axis=0), paces(second).mean(axis=0)
    drift = {"worker": s["worker"], "pace_fit": float(pf[s["index"]]), "pace_held": float(ph[s["index"]]),
             "drift": float(ph[s["index"]] / pf[s["index"]] - 1), "median_drift": float(np.median(ph / pf - 1)),
             "share_slowest_fit": s["share"]}
    unc, adv_row = rows.iloc[0], rows.iloc[1] if len(rows) > 1 else None
    targets = {
        "uncoded in sample": {"value": float(unc["error_fit"]), "limit": TARGETS["in_sample"]},
        "advised in sample": {"value": float(adv_row["error_fit"]) if adv_row is not None else math.nan,
                              "limit": TARGETS["in_sample"]},
        "advised held out": {"value": float(adv_row["error_held"]) if adv_row is not None else math.nan,
                             "limit": TARGETS["held_out"]},
        "regret": {"value": regret, "limit": TARGETS["regret"]},
    }
    warnings = []
    what = {"uncoded in sample": "on the fitted iterations, uncoded's predicted mean iteration time misses theirs by",
            "advised in sample": "on the fitted iterations, the advised design's predicted time misses theirs by",
            "advised held out": "on the held-out iterations, the advised design's predicted time misses theirs by",
            "regret": "the advised design is"}
    for name, v in targets.items():
        v["met"] = bool(v["value"] < v["limit"]) if name == "regret" else bool(abs(v["value"]) <= v["limit"])
        if not v["met"]:
            tail = (f"slower than the held-out best ({best_held}); the target is under {v['limit']:.0%}"
                    if name == "regret" else f"(the target is within {v['limit']:.0%})")
            num = f"{100 * v['value']:.1f}%" if name == "regret" else f"{100 * v['value']:+.1f}%"
            warnings.append(f"{what[name]} {num} {tail}")
    if not targets["advised held out"]["met"] or abs(float(unc["error_held"])) > TARGETS["held_out"]:
        warnings.append(f"uncoded's held-out error {100 * float(unc['error_held']):+.1f}% stands beside the slowest "
                        f"worker's drift of {100 * drift['drift']:+.1f}% between the parts")
    settings = {"source": t.source, "iterations": I, "fit_iterations": n_fit, "held_iterations": n_held,
                "holdout": holdout, "K": K, "seed": seed, "trials": fa.advice.settings["trials"],
                "bootstrap": bootstrap, "max_load": R, "budget": budget, "primary": fa.primary,
                "primary_reason": fa.reason,
                "fit_ids": [int(first.iteration_ids[0]), int(first.iteration_ids[-1])],
                "held_ids": [int(second.iteration_ids[0]), int(second.iteration_ids[-1])]}
    return Backtest(rows, by_model, fa, of.reset_index(), oh.drop(columns="times").reset_index(), drift, regret,
                    best_held, targets, warnings, settings, regret_ci)
