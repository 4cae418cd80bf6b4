"""Notebook 14's study: every family of the design space, the partial-straggler protocol, the sequential schemes
and the approximate codes, on the same models, as mean iteration time against computation and communication.

* The families of :mod:`gclib.design_space` (2017-2024), at every load of :func:`gclib.advise.candidates` up to a
  largest one, the partial-straggler protocol and the approximate codes are simulated on the same sampled compute times
  (paired: every design of one model reads the same iterations); the sequential schemes choose their parameters on
  the first iterations of the same draws and are judged on the next ones, as rounds (:func:`sequential_entries`).
* Each model is a compute-time model of :mod:`gclib.stragglers` or a shipped real trace (:func:`models`).
* Computation is the load ``r`` (parts of the data per worker, out of ``K``); communication the gradient-length
  vectors the master receives per iteration (``volume``; a message of a communication-efficient code is a
  fraction of one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from gclib import advise, checks, schemes, sequential as sq, timings
from gclib.codes import approximate as ap, partial_work as R
from gclib.correlated_paces import WorkerEffects, by_iteration
from gclib.progress import progress as _progress
from gclib.simulator import Communication, Schedule, simulate_chunk
from gclib.stats import mean_ci
from gclib.stragglers import model_set
from gclib.studies.partial_stragglers.study import rmg_times

#: Line of work of each scheme family: a name of the schemes (the papers are in the notebook's text).
REPETITION = "repetition codes (FRC, CRC)"
COMM_POLY = "communication-efficient, polynomial"
COMM_LINEAR = "communication-efficient, any linear code"
MULTI = "multi-message (UC-MMC, GC-MMC)"
APPROX = "approximate (ignore, expander, stochastic)"
SEQ = "sequential (GC, SR-SGC, M-SGC; deadline rule)"
#: Year and line of work of each family, for the figure's legend and the tables.
LINES = {
    "uncoded": (2017, "uncoded"), "ignore": (2017, APPROX), "frc": (2017, REPETITION), "crc": (2017, REPETITION),
    "gc": (2017, REPETITION), "rs": (2018, "Reed-Solomon"), "ye-abbe": (2018, COMM_POLY),
    "kadhe": (2020, COMM_LINEAR), "uc-mmc": (2019, MULTI), "gc-mmc-correlated": (2019, MULTI),
    "gc-mmc-uncorrelated": (2019, MULTI), "hybrid": (2019, MULTI), "lcc": (2019, "Lagrange coded computing"),
    "rmg": (2024, "partial-straggler protocol"), "expander": (2018, APPROX), "stochastic": (2020, APPROX),
    "gc (deadline)": (2023, SEQ), "sr-sgc": (2023, SEQ), "m-sgc": (2023, SEQ),
}

#: Columns of :attr:`Study.table`.
COLUMNS = ["model", "family", "year", "line", "kind", "label", "load", "mean_time", "ci95_time", "mean_volume",
           "ci95_volume", "failed", "error"]


@dataclass(frozen=True)
class Entry:
    """One design of the study: its ``family`` (a scheme name), ``label``, computation ``load`` (parts per worker),
    ``kind`` (``"exact"``, ``"approximate"`` or ``"sequential"``), and either its ``schedule`` (simulated with the
    others on the same draws) or ``run(finish)`` (its own simulator, on the same draws: ``finish`` ``(trials,
    workers, tasks)`` the finish time of every worker's tasks), which returns rows ``{"label", "load", "time":
    array, "volume": array}``: the designs it chose, each with its per-iteration times and vectors received, and for
    an approximate code ``"error"``, its mean decoding error ``||a B_R - 1||_2`` (the table's ``nan`` for an exact
    one)."""

    family: str
    label: str
    load: float
    kind: str = "exact"
    schedule: Callable | None = None
    run: Callable | None = None


def models(K: int, traces=("SE", "AR"), **params) -> dict:
    """The models of the study, ``{name: model}``: the shifted exponential of eq. 5 and the Pareto of
    :func:`gclib.stragglers.model_set` (``"scale"``, with ``params``), then each shipped trace named in ``traces``
    (:func:`gclib.timings.shipped`): its recorded iterations replayed whole when it has ``K`` workers
    (:func:`gclib.correlated_paces.by_iteration`), else its worker and iteration effects drawn for ``K`` workers
    (:class:`gclib.correlated_paces.WorkerEffects`)."""
    K = checks.integer("K", K, low=2)
    out = dict(model_set("scale", **params))
    found = timings.shipped()
    for name in traces:
        if name not in found:
            raise ValueError(f"traces must name shipped traces among {sorted(found)}, got {name!r}")
        t = timings.convert(found[name]).timings.durations
        if t.shape[1] == K:
            out[f"trace {name} (its {K} workers, whole iterations)"] = by_iteration(t)
        else:
            out[f"trace {name} (effects of its {t.shape[1]} workers, drawn for {K})"] = WorkerEffects(
                t, keep_workers=False)
    return out


def design_entries(K: int, max_load: int) -> list:
    """The designs of the design space (:func:`gclib.advise.candidates`: every family, every load of its grid up to
    ``max_load``), as :class:`Entry`."""
    return [Entry(d.family, d.label, float(d.load), "exact", d.schedule) for d in advise.candidates(K, max_load)]


@dataclass
class Study:
    """The designs' rows (:attr:`table`, columns :data:`COLUMNS`) and the settings."""

    table: pd.DataFrame
    settings: dict

    def best(self) -> pd.DataFrame:
        """Per model, family and load: the fastest design (the lowest mean time)."""
        t = self.table[np.isfinite(self.table["mean_time"])]
        idx = t.groupby(["model", "family", "load"], sort=False)["mean_time"].idxmin()
        return t.loc[idx].reset_index(drop=True)

    def fastest(self) -> pd.DataFrame:
        """Per model and family: the fastest design at any load, sorted by model and mean time."""
        b = self.best()
        idx = b.groupby(["model", "family"], sort=False)["mean_time"].idxmin()
        return b.loc[idx].sort_values(["model", "mean_time"], kind="stable").reset_index(drop=True)


def _row(model, e: Entry, time, volume, label=None, load=None, error=math.nan) -> dict:
    done = np.isfinite(time)
    year, line = LINES.get(e.family, (math.nan, e.family))
    m, c = mean_ci(time[done]) if done.any() else (math.nan, math.nan)
    v, cv = mean_ci(volume[done]) if done.any() else (math.nan, math.nan)
    return {"model": model, "family": e.family, "year": year, "line": line, "kind": e.kind,
            "label": e.label if label is None else label, "load": e.load if load is None else float(load),
            "mean_time": m, "ci95_time": c, "mean_volume": v, "ci95_volume": cv, "failed": int((~done).sum()),
            "error": float(error)}


def study(K: int, max_load: int, model_map: dict, *, trials: int = 4000, seed=0, extra: list | None = None,
          progress: bool = False) -> Study:
    """Simulate every design (:func:`design_entries`, and ``extra`` entries) under every model of ``model_map``.

    Per model, one draw of every worker's task finish times for ``trials`` iterations (``max_load`` tasks), which
    every design reads (paired): the designs with a schedule through the simulator's rules, the others through
    their ``run``.

    Args:
        K: workers. max_load: the largest load of the design space's designs. model_map: ``{name: model}``
            (:func:`models`). trials: iterations simulated per design and model. seed: one stream per model.
        extra: more :class:`Entry`, e.g. :func:`extra_entries`.
    """
    K = checks.integer("K", K, low=2)
    max_load = checks.integer("max_load", max_load, low=1, high=K)
    trials = checks.integer("trials", trials, low=2)
    entries = design_entries(K, max_load) + list(extra or [])
    sched = [e for e in entries if e.schedule is not None]
    own = [e for e in entries if e.schedule is None]
    if any(e.run is None for e in own):
        raise ValueError("every entry needs a schedule or a run function")
    built = [e.schedule() for e in sched]
    n_tasks = max([max_load] + [b.load for b in built])
    checks.need_memory("head to head", 8 * int(trials) * K * n_tasks * 2, sizes=f"trials = {trials}, K = {K}",
                       lower="trials")
    seeds = np.random.SeedSequence(checks.integer("seed", seed, low=0)).spawn(len(model_map))
    rows = []
    for (name, model), ss in _progress(list(zip(model_map.items(), seeds)), "models", progress):
        finish = model.sample(np.random.default_rng(ss), trials, K, n_tasks)
        for e, b in zip(sched, built):
            r = simulate_chunk(b, finish)
            rows.append(_row(name, e, np.asarray(r["time"], float), np.asarray(r["volume"], float)))
        for e in own:
            for r in e.run(finish):
                rows.append(_row(name, e, np.asarray(r["time"], float), np.asarray(r["volume"], float), r["label"],
                                 r["load"], r.get("error", math.nan)))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return Study(table, {"K": K, "max_load": max_load, "trials": trials, "seed": seed, "models": list(model_map)})


# ------------------------------------------------------------------------------------------------ beside the space
#: The fraction of the workers an approximate code does not wait for (its stragglers ``s``).
APPROX_FRACTION = 0.25
#: The sequential schemes of the study, with the family names of the tables: GC under the same deadline rule, and
#: the two schemes of Krishnan et al.
SEQUENTIAL = {"gc": "gc (deadline)", "sr-sgc": "sr-sgc", "m-sgc": "m-sgc"}
#: Rounds of the probe on which the sequential schemes choose their parameters, and most rounds of the held-out
#: replay they are judged on.
PROBE_ROUNDS, HELD_ROUNDS = 200, 1000


def approximate_entries(K: int, max_load: int, *, fraction: float = APPROX_FRACTION, patterns: int = 200,
                        seed=0) -> list:
    """The approximate codes at every load ``r`` from 2 to ``max_load`` (expander-graph and stochastic codes of
    degree ``r``), each ignoring ``s = ceil(fraction * K)`` stragglers (the master waits for the ``K - s`` fastest),
    and ignore-stragglers (load 1) with the same ``s``. On a model's draws, each reads the same iterations as the
    other designs; its decoding error ``||a B_R - 1||_2`` is averaged over the first ``patterns`` iterations, each
    with its own stragglers (the ``s`` workers that finish their load last)."""
    K = checks.integer("K", K, low=2)
    s = min(K - 1, max(1, math.ceil(checks.real("fraction", fraction, above=0, below=1) * K)))
    patterns = checks.integer("patterns", patterns, low=1)

    def run_for(code, r, label):
        schedule = Schedule.of(code)

        def run(finish):
            out = simulate_chunk(schedule, finish)
            last = finish[:patterns, :, r - 1]
            mask = np.zeros(last.shape, bool)
            np.put_along_axis(mask, np.argsort(last, axis=1, kind="stable")[:, K - s:], True, axis=1)
            err = float(np.mean(ap.straggler_errors(code, mask)))
            return [{"label": label, "load": float(r), "time": out["time"], "volume": out["volume"], "error": err}]
        return run

    designs = [("ignore", 1, {})] + [(f, r, {"load": r}) for r in range(2, max_load + 1)
                                     for f in ("expander", "stochastic") if r * K % 2 == 0 or f == "stochastic"]
    out = []
    for family, r, kw in designs:
        code = schemes.build(family, workers=K, stragglers=s, seed=seed, **kw)
        label = f"{code.name} r={r} s={s}"
        out.append(Entry(family, label, float(r), "approximate", run=run_for(code, r, label)))
    return out


def round_times(finish: np.ndarray) -> Callable:
    """``parts -> (workers, rounds)``: a worker's time in a round (an iteration of ``finish``, ``(rounds, workers,
    tasks)`` task finish times) for ``parts`` parts of the data, fractional parts interpolated between its task
    finish times; beyond the tasks of ``finish``, at the worker's mean pace of the round."""
    rounds, K, n_tasks = finish.shape
    cum = np.concatenate([np.zeros((rounds, K, 1)), finish], axis=2)

    def at(parts: float) -> np.ndarray:
        if parts >= n_tasks:
            return (cum[:, :, n_tasks] * (parts / n_tasks)).T
        lo = int(math.floor(parts))
        f = parts - lo
        return ((1 - f) * cum[:, :, lo] + f * cum[:, :, lo + 1]).T
    return at


def _vectors_per_round(scheme: str, params: dict, delays: np.ndarray, result, mu: float) -> np.ndarray:
    """Gradient-length vectors the master receives in each round of ``result`` (replayed on ``delays``): one per
    worker that answers by the round's end (every worker in a round that waited for all, the workers within the
    deadline otherwise, none in a skipped round), ``W - 1 + B`` per such worker for M-SGC (a minitask of each job
    in flight)."""
    n, rounds = delays.shape[0], result.rounds
    late = sq.stragglers(delays[:, :rounds], mu).sum(axis=0)
    got = np.where(result.waited, n, n - late).astype(float)
    if result.skipped is not None:
        got[np.asarray(result.skipped, bool)] = 0.0
    return got * ((params["W"] - 1 + params["B"]) if scheme == "m-sgc" else 1)


def sequential_entries(K: int, max_load: int, *, mu: float | None = None, max_delay: int = 4) -> list:
    """The sequential schemes (:mod:`gclib.sequential`): GC under their deadline rule, SR-SGC and M-SGC, each
    choosing its parameters on the first :data:`PROBE_ROUNDS` iterations of the model's draws (at most half of
    them) and judged on the next ones (at most :data:`HELD_ROUNDS`), a round being an iteration of the same draws
    the one-shot designs read. For every load ``r`` up to ``max_load``, the candidate of load at most ``r`` parts
    per worker that was fastest on the probe; its time per gradient is the held-out run time over its gradients
    (the interval treats the rounds as independent, which a scheme that carries work across rounds makes
    optimistic), its communication the vectors that reach the master (:func:`_vectors_per_round`)."""
    mu = sq.MU if mu is None else mu

    def run_for(scheme):
        def run(finish):
            trials, K_, _ = finish.shape
            probe_rounds = min(PROBE_ROUNDS, trials // 2)
            held = min(HELD_ROUNDS, trials - probe_rounds)
            if probe_rounds <= max_delay + 1 or held <= max_delay + 1:
                raise ValueError(f"trials must leave more than {max_delay + 1} rounds to the probe and to the "
                                 f"held-out replay, got {trials}")
            probe_at = round_times(finish[:probe_rounds])
            held_at = round_times(finish[probe_rounds:probe_rounds + held])
            probe = lambda ld: probe_at(ld * K_)  # noqa: E731
            bounds = {"s_values": range(max_load)} if scheme == "gc" else {}
            tab = sq.sweep(probe, scheme, jobs=probe_rounds - max_delay, mu=mu, prune=False, max_delay=max_delay,
                           **bounds)
            tab = tab[np.isfinite(tab["total"].astype(float))]
            tab = tab.assign(parts=tab["load"] * K_)
            rows, seen = [], set()
            for r in range(1, max_load + 1):
                ok = tab[tab["parts"] <= r + 1e-9]
                if ok.empty:
                    continue
                p = sq.best(ok)
                lab = sq.label(scheme, p)
                if lab in seen:
                    continue
                seen.add(lab)
                ld = sq.load(scheme, K_, **p)
                dh = held_at(ld * K_)
                res = sq.run(scheme, dh, jobs=held - max_delay, mu=mu, **p)
                scale = res.rounds / res.jobs  # per gradient: the run's rounds over its gradients
                rows.append({"label": lab, "load": ld * K_, "time": res.durations * scale,
                             "volume": _vectors_per_round(scheme, p, dh, res, mu) * scale})
            return rows
        return run

    return [Entry(fam, fam, math.nan, "sequential", run=run_for(scheme)) for scheme, fam in SEQUENTIAL.items()]


def rmg_entries(K: int, max_load: int) -> list:
    """The partial-straggler protocol of Ramamoorthy, Meng and Girimaji (:func:`gclib.codes.partial_work.rmg` on the
    cyclic assignment in its natural order, which meets the lower bound of ``Q_max``, like UC-MMC's) at every load from
    2 to ``max_load``: its exact recovery once the finished chunks cover every part,
    and the vectors its two-phase exchange uploads (one per picked worker); communication costs nothing here, as
    for every other design of the study."""
    def run_for(r):
        code = R.rmg(K, r, "cyclic")

        def run(finish):
            out = rmg_times(code, finish[:, :, :r], Communication())
            return [{"label": f"rmg r={r}", "load": float(r), "time": out["time"], "volume": out["volume"]}]
        return run

    return [Entry("rmg", f"rmg r={r}", float(r), "exact", run=run_for(r)) for r in range(2, max_load + 1)]


def extra_entries(K: int, max_load: int, seed=0) -> list:
    """The schemes beside the design space: the partial-straggler protocol (:func:`rmg_entries`), the approximate
    codes (:func:`approximate_entries`) and the sequential schemes (:func:`sequential_entries`)."""
    return rmg_entries(K, max_load) + approximate_entries(K, max_load, seed=seed) + sequential_entries(K, max_load)
