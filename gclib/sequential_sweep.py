"""Choosing a sequential scheme's parameters (see :mod:`gclib.sequential`): the load models that turn a probe matrix
into the delays at a candidate's load, the sweep of every candidate on a probe, and the advice across iterations
under a compute-time model.

* :func:`linear_shift` is the authors' load model (a probe matrix measured at ``base_load``, shifted by ``(load -
  base_load) * base_comp`` seconds for every worker); :func:`proportional` is gclib's compute-time models' (one draw
  per worker and round: a worker's time is ``overhead + load * n * X``); :func:`task_delays` reads the delays of a
  load off a model's task draws;
* :func:`sweep` replays every candidate of :func:`candidates` (the parameter sets of each scheme of
  :data:`gclib.schemes.SEQUENTIAL`) on a probe and :func:`best` picks the fastest;
* :func:`advice`: each scheme's parameters chosen on a probe of a model's draws and judged on held-out rounds (what
  ``gclib advise --sequential`` prints).
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Optional

import numpy as np
import pandas as pd

from gclib import checks
from gclib.design_space import MAX_WORKERS
from gclib.schemes import SEQUENTIAL
from gclib.sequential_replay import MU, _scheme, delay, label, load, run
from gclib.stats import paired_difference



# ------------------------------------------------------------------------------------------------ load models
def linear_shift(base, base_comp: float, base_load: float = 0.0) -> Callable[[float], np.ndarray]:
    """The authors' load model: ``delays(load) = base + (load - base_load) * base_comp``, the probe matrix ``base``
    ``(workers, rounds)`` measured at ``base_load`` and shifted by one constant for every worker and round
    (``base_comp``: seconds per unit of normalized load). The straggler *pattern* of ``base`` is kept at every load."""
    b = checks.finite_array("base", base, ndim=2, complex_ok=False).astype(float)
    c = checks.real("base_comp", base_comp, low=0)
    b0 = checks.real("base_load", base_load, low=0, high=1)

    def at(load: float) -> np.ndarray:
        return b + (checks.real("load", load, above=0) - b0) * c
    return at


def proportional(unit, overhead: float = 0.0) -> Callable[[float], np.ndarray]:
    """gclib's compute-time models' load model: worker ``i`` processes ``load * n`` data parts in round ``r`` at
    ``unit[i, r]`` seconds a part (one draw per worker and round, ``gclib.stragglers`` with ``per_task=False``), plus
    a fixed ``overhead`` per round: ``delays(load) = overhead + load * n * unit``. A straggler's time grows with its
    load."""
    u = checks.finite_array("unit", unit, ndim=2, complex_ok=False).astype(float)
    if (u < 0).any():
        raise ValueError("unit must be non-negative seconds per data part")
    o = checks.real("overhead", overhead, low=0)
    n = u.shape[0]

    def at(load: float) -> np.ndarray:
        return o + checks.real("load", load, above=0) * n * u
    return at


# ------------------------------------------------------------------------------------------------ sweep
#: The most parameter sets a sweep tries (:func:`candidates`), counted before any is listed.
MAX_CANDIDATES = 1_000_000
#: The most work a sweep or an advice replays, in rounds x (workers + :data:`REPLAY_OVERHEAD`): a round's replay
#: costs a fixed part (Python) and a part per worker (NumPy), about 0.6 microseconds per unit on one core, so this
#: is about two minutes; larger requests are refused before the first round (:func:`check_work`).
MAX_REPLAY_WORK = 2e8
REPLAY_OVERHEAD = 128


def count_candidates(scheme: str, n: int, *, max_delay: int = 4, max_W: Optional[int] = None,
                     lambdas: Optional[int] = None) -> int:
    """How many parameter sets :func:`candidates` lists (before ``max_parts``), without listing them: ``lambdas``
    the number of lambdas (default ``n``). A ``max_delay`` beyond :data:`MAX_CANDIDATES` is counted as that many
    (there are more)."""
    lam = n if lambdas is None else lambdas
    D = max_delay
    W_top = D + 1 if max_W is None else max_W
    if scheme == "gc":
        return n
    entry = SEQUENTIAL.get(scheme)
    if entry is None or entry.windows is None:
        return 1
    if D > MAX_CANDIDATES:
        return MAX_CANDIDATES + 1
    return entry.count_windows(D, W_top) * lam


def check_work(rounds: float, n: int, *, what: str, lower: str) -> None:
    """Refuse a replay of ``rounds`` rounds of ``n`` workers beyond :data:`MAX_REPLAY_WORK`, in one line naming
    ``what`` it is and what to ``lower``."""
    work = float(rounds) * (n + REPLAY_OVERHEAD)
    if work > MAX_REPLAY_WORK:
        minutes = work / MAX_REPLAY_WORK * 2
        raise ValueError(f"{what} would replay {rounds:,.0f} rounds of {n:,} workers (about {minutes:,.0f} minutes "
                         f"on one core), more than gclib.sequential.MAX_REPLAY_WORK allows; lower {lower}")


def candidates(scheme: str, n: int, *, max_delay: int = 4, max_W: Optional[int] = None,
               lambdas: Optional[Iterable[int]] = None, s_values: Optional[Iterable[int]] = None,
               max_parts: Optional[float] = None) -> list[dict]:
    """The parameter sets the authors' sweep tries, within bounds (the ``(B, W)`` pairs of each scheme are its
    :attr:`~gclib.schemes.SequentialScheme.windows`): GC ``s`` in ``s_values`` (default ``0 .. n - 1``);
    SR-SGC ``B = 1 .. max_delay``, ``W = B + 1, 2B + 1, ... <= max_W`` (default ``max_delay + 1``); M-SGC ``W = 2 ..``,
    ``B = 1 .. W - 1`` with ``W - 1 + B <= max_delay``; ``lambd`` in ``lambdas`` (default ``1 .. n``); only those
    whose worker processes at most ``max_parts`` of the ``n`` data parts in a round (``load * n``; default: any)."""
    if max_parts is not None:
        cap = checks.real("max_parts", max_parts, above=0)
        return [p for p in candidates(scheme, n, max_delay=max_delay, max_W=max_W, lambdas=lambdas,
                                      s_values=s_values) if load(scheme, n, **p) * n <= cap + 1e-9]
    scheme = _scheme(scheme)
    n = checks.integer("n", n, low=1)
    max_delay = checks.integer("max_delay", max_delay, low=1)
    max_W = max_delay + 1 if max_W is None else checks.integer("max_W", max_W, low=2)
    lams = list(range(1, n + 1)) if lambdas is None else sorted({int(x) for x in lambdas if 1 <= int(x) <= n})
    count = count_candidates(scheme, n, max_delay=max_delay, max_W=max_W, lambdas=len(lams))
    if count > MAX_CANDIDATES:
        raise ValueError(f"a sweep of {scheme} on {n} workers with max_delay {max_delay} has {count:,} candidates, more "
                         f"than {MAX_CANDIDATES:,} (gclib.sequential.MAX_CANDIDATES); lower max_delay, or sweep fewer "
                         f"lambdas")
    if scheme == "gc":
        ss = range(n) if s_values is None else sorted({int(x) for x in s_values if 0 <= int(x) < n})
        return [{"s": s} for s in ss]
    windows = SEQUENTIAL[scheme].windows
    if windows is None:
        return [{}]
    return [{"B": B, "W": W, "lambd": lam} for B, W in windows(max_delay, max_W) for lam in lams]


def sweep(delays_at: Callable[[float], np.ndarray], scheme: str, *, jobs: int, mu: float = MU,
          convention: str = "paper", prune: bool = True, **bounds) -> pd.DataFrame:
    """Replay every candidate of :func:`candidates` (``bounds``: its keyword arguments) on ``delays_at(load)``, the
    probe matrix at the candidate's load (:func:`linear_shift`, :func:`proportional`), for ``jobs`` gradients.
    Returns one row per candidate (:meth:`Result.to_dict`), ``total`` ``inf`` when pruned (``prune``: a candidate
    is stopped once it is slower than the best so far, which cannot change the best)."""
    n = getattr(delays_at, "workers", None) or delays_at(1.0).shape[0]
    jobs = checks.integer("jobs", jobs, low=1)
    cands = candidates(scheme, n, **bounds)
    check_work(len(cands) * (jobs + bounds.get("max_delay", 4)), n, what=f"a sweep of {len(cands):,} {scheme} "
               f"candidates", lower="the workers, the rounds (jobs) or the largest delay")
    rows, best_total = [], math.inf
    cache = {}
    for p in cands:
        ld = load(scheme, n, **p)
        if ld not in cache:
            cache[ld] = delays_at(ld)
        r = run(scheme, cache[ld], jobs=jobs, mu=mu, convention=convention,
                limit=best_total if prune else None, **p)
        if r is None:
            rows.append({"scheme": scheme, "label": label(scheme, p), **{k: p.get(k) for k in ("s", "B", "W", "lambd")},
                         "load": ld, "T": delay(scheme, **p), "jobs": jobs, "mu": mu, "convention": convention,
                         "total": math.inf, "waits": -1})
            continue
        rows.append(r.to_dict())
        best_total = min(best_total, r.total)
    return pd.DataFrame(rows)


def best(table: pd.DataFrame) -> dict:
    """The fastest row of a :func:`sweep` (the first among equals): its parameters as a dict for :func:`run`."""
    if not len(table):
        raise ValueError("the sweep table is empty")
    row = table.loc[table["total"].astype(float).idxmin()]
    names = SEQUENTIAL[row["scheme"]].params
    return {k: int(row[k]) for k in names}


# ------------------------------------------------------------------------------------------------ advice
def task_delays(finish) -> Callable[[float], np.ndarray]:
    """``load -> (workers, rounds)`` delays from ``finish`` ``(rounds, workers, R)``: the finish times of ``R`` tasks of
    one data part each (as :meth:`gclib.stragglers.ComputeModel.sample` draws them for the one-shot simulator). A
    worker that processes ``load * n`` parts (``n`` the workers) finishes when its ``load * n``-th task does,
    interpolated linearly between two tasks for a fractional count (M-SGC's loads); more than ``R`` parts raise."""
    f = checks.real_array("finish", finish, what="finish times (real numbers)")
    if f.ndim != 3 or 0 in f.shape:
        raise ValueError(f"finish must be (rounds, workers, tasks), got shape {f.shape}")
    if np.isnan(f).any() or (f < 0).any():
        raise ValueError("finish must be non-negative times (inf for a task that never finishes)")
    n, R = f.shape[1], f.shape[2]
    padded = np.concatenate([np.zeros(f.shape[:2] + (1,)), f], axis=2)  # finish of 0 tasks: 0

    def at(ld: float) -> np.ndarray:
        parts = checks.real("load", ld, above=0) * n
        if parts > R + 1e-9:
            raise ValueError(f"a load of {parts:.4g} parts needs finish times of that many tasks, got {R}")
        lo = min(int(math.floor(parts + 1e-9)), R)
        frac = parts - lo if lo < R else 0.0
        a = padded[:, :, lo]
        out = a if frac <= 1e-12 else a + frac * (padded[:, :, lo + 1] - a)
        return out.T
    at.workers = n  # (sweep reads it: a load of 1 may need more tasks than drawn)
    return at


#: The schemes the advice across iterations compares (no-wait decodes nothing).
ADVISED = ("no-coding", "gc", "sr-sgc", "m-sgc")


def check_advice(K: int, max_parts: int, *, probe: int = 100, held: int = 100, seeds: int = 3, max_delay: int = 4,
                 lambdas: Optional[Iterable[int]] = None) -> dict:
    """The arguments of :func:`advice` checked, and its work bounded before anything is drawn: ``K`` at most
    :data:`gclib.design_space.MAX_WORKERS`, the draws within the memory budget (:func:`gclib.checks.need_memory`),
    the rounds its sweeps replay within :data:`MAX_REPLAY_WORK` (:func:`check_work`). Returns the checked values
    (``K``, ``R``, ``probe``, ``held``, ``seeds``, ``max_delay``) and ``fits``, the schemes with parameters within
    ``R`` parts.

    Raises:
        ValueError naming the argument, or the work and what to lower.
    """
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (the advice across iterations sweeps lambdas up to K)")
    R = checks.integer("max_parts", max_parts, low=1, high=K, why=f" (at most the {K} workers)")
    max_delay = checks.integer("max_delay", max_delay, low=1)
    probe = checks.integer("probe", probe, low=max_delay + 2)
    held = checks.integer("held", held, low=max_delay + 2)
    seeds = checks.integer("seeds", seeds, low=1)
    checks.need_memory("the advice across iterations", 3 * 8 * (probe + held) * K * (R + 1),
                       sizes=f"K = {K} workers, {R} parts, {probe + held} rounds", lower="the workers or max_parts")
    cands = {s: candidates(s, K, max_delay=max_delay, lambdas=lambdas, max_parts=R) for s in ADVISED
             if s != "no-coding"}
    fits = ["no-coding"] + [s for s in ADVISED if cands.get(s)]
    rounds = seeds * (sum(len(v) for v in cands.values()) * probe + len(fits) * held)
    check_work(rounds, K, what=f"the advice across iterations for {K} workers and {R} parts (its sweeps of "
               f"{sum(len(v) for v in cands.values()):,} candidates, {seeds} draws)",
               lower="the workers or max_parts (gclib advise: --workers, --max-load), or leave it out (--sequential)")
    return {"K": K, "R": R, "probe": probe, "held": held, "seeds": seeds, "max_delay": max_delay, "fits": fits}


def advice(model, K: int, max_parts: int, *, probe: int = 100, held: int = 100, seeds: int = 3, seed=0,
           mu: float = MU, max_delay: int = 4, lambdas: Optional[Iterable[int]] = None) -> pd.DataFrame:
    """Coding across iterations under a compute-time ``model`` (what ``gclib advise --sequential`` prints): for each
    scheme of :data:`ADVISED`, on each of ``seeds`` draws of ``probe + held`` rounds of ``K`` workers (the model's
    task draws, :func:`task_delays`: the same a one-shot design's simulation reads), the parameters chosen on the
    probe among those whose worker processes at most ``max_parts`` data parts a round (the advice's largest load),
    then replayed on the held-out rounds.

    Returns one row per scheme: ``scheme``, ``chosen`` (the parameters chosen most often, the first seen among
    equals), ``load``, ``parts`` (data parts per worker and round), ``T``, ``time`` (the held-out run time per
    gradient, mean over draws) with its Student-t 95% interval over draws (``lo``, ``hi``; none with one draw),
    ``waits`` (rounds that waited for every worker, mean) and ``jobs`` (gradients per draw). A scheme with no
    parameters within ``max_parts`` (SR-SGC needs two parts a round) has ``chosen`` ``"none within R parts"``, no
    time and ``T = -1``. Times are in the model's unit; communication is not charged."""
    c = check_advice(K, max_parts, probe=probe, held=held, seeds=seeds, max_delay=max_delay, lambdas=lambdas)
    K, R, probe, held, seeds, max_delay, fits = (c[k] for k in ("K", "R", "probe", "held", "seeds", "max_delay",
                                                                "fits"))
    mu = checks.real("mu", mu, low=0)
    rows = {s: [] for s in ADVISED}
    for k in range(seeds):
        rng = np.random.default_rng([checks.integer("seed", seed, low=0), k])
        finish = np.asarray(model.sample(rng, probe + held, K, R), dtype=float)
        a, b = task_delays(finish[:probe]), task_delays(finish[probe:])
        for scheme in fits:
            if scheme == "no-coding":
                p = {}
            else:
                tab = sweep(a, scheme, jobs=probe - max_delay, mu=mu, max_delay=max_delay, lambdas=lambdas,
                            max_parts=R)
                p = best(tab)
            r = run(scheme, b(load(scheme, K, **p)), jobs=held - max_delay, mu=mu, **p)
            rows[scheme].append((label(scheme, p), r.load, r.T, r.total / r.jobs, r.waits, r.jobs))
    out = []
    for scheme in ADVISED:
        rs = rows[scheme]
        if not rs:  # no parameters of it within the load
            out.append({"scheme": scheme, "chosen": f"none within {R} parts", "load": math.nan, "parts": math.nan,
                        "T": -1, "time": math.nan, "lo": math.nan, "hi": math.nan, "waits": math.nan,
                        "jobs": held - max_delay, "draws": seeds})
            continue
        t = np.array([x[3] for x in rs])
        e = paired_difference(t, np.zeros(len(t)))
        labels = [x[0] for x in rs]
        chosen = max(dict.fromkeys(labels), key=labels.count)  # the most often, the first seen among equals
        pick = next(x for x in rs if x[0] == chosen)
        out.append({"scheme": scheme, "chosen": chosen, "load": pick[1], "parts": pick[1] * K, "T": pick[2],
                    "time": float(t.mean()), "lo": e.lo if seeds > 1 else math.nan,
                    "hi": e.hi if seeds > 1 else math.nan, "waits": float(np.mean([x[4] for x in rs])),
                    "jobs": int(rs[0][5]), "draws": seeds})
    return pd.DataFrame(out)
