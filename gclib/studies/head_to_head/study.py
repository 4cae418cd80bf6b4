"""Notebook 14's study: every family of the design space, the partial-straggler protocol, the sequential schemes
and the approximate codes, on the same models, as mean iteration time against computation and communication.

* The families of :mod:`gclib.space` (2017-2024), at every load of :func:`gclib.advise.candidates` up to a largest
  one, are simulated on the same sampled compute times (paired: every design of one model sees the same draws).
* Each model is a compute-time model of :mod:`gclib.stragglers` or a shipped real trace (:func:`models`).
* Computation is the load ``r`` (parts of the data per worker, out of ``K``); communication the gradient-length
  vectors the master receives per iteration (``volume``; a message of a communication-efficient code is a
  fraction of one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from gclib import advise, checks, timings
from gclib.design import evaluate_trials
from gclib.effects import IterationReplay, WorkerEffects
from gclib.progress import progress as _progress
from gclib.stats import mean_ci
from gclib.stragglers import model_set

#: Year and line of work of each family, for the figure's legend and the tables.
LINES = {
    "uncoded": (2017, "baseline"), "ignore": (2017, "approximate"), "frc": (2017, "Tandon et al."),
    "crc": (2017, "Tandon et al."), "gc": (2017, "Tandon et al."), "rs": (2018, "Halbawi et al."),
    "ye-abbe": (2018, "Ye and Abbe"), "kadhe": (2020, "Kadhe et al."), "uc-mmc": (2019, "Ozfatura et al."),
    "gc-mmc-correlated": (2019, "Ozfatura et al."), "gc-mmc-uncorrelated": (2019, "Ozfatura et al."),
    "hybrid": (2019, "Ozfatura et al."), "lcc": (2019, "Lagrange coded computing"),
}

#: Columns of :attr:`Study.table`.
COLUMNS = ["model", "family", "year", "line", "kind", "label", "load", "mean_time", "ci95_time", "mean_volume",
           "ci95_volume", "failed"]


@dataclass(frozen=True)
class Entry:
    """One design of the study: its ``family`` (a scheme name), ``label``, computation ``load`` (parts per worker),
    ``kind`` (``"exact"``, ``"approximate"`` or ``"sequential"``), and either its ``schedule`` (simulated with the
    others on the same draws) or ``run(model, K, trials, rng) -> {"time": array, "volume": array}`` (its own
    simulator, on draws of the same model)."""

    family: str
    label: str
    load: float
    kind: str = "exact"
    schedule: Callable | None = None
    run: Callable | None = None
    params: dict = field(default_factory=dict)


def models(K: int, traces=("SE", "AR"), **params) -> dict:
    """The models of the study, ``{name: model}``: the shifted exponential of eq. 5 and the Pareto of
    :func:`gclib.stragglers.model_set` (``"scale"``, with ``params``), then each shipped trace named in ``traces``
    (:func:`gclib.timings.shipped`): its recorded iterations replayed whole when it has ``K`` workers
    (:class:`gclib.effects.IterationReplay`), else its worker and iteration effects drawn for ``K`` workers
    (:class:`gclib.effects.WorkerEffects`)."""
    K = checks.integer("K", K, low=2)
    out = dict(model_set("scale", **params))
    found = timings.shipped()
    for name in traces:
        if name not in found:
            raise ValueError(f"traces must name shipped traces among {sorted(found)}, got {name!r}")
        t = timings.convert(found[name]).timings.durations
        if t.shape[1] == K:
            out[f"trace {name} (its {K} workers, whole iterations)"] = IterationReplay(t)
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


def _row(model, e: Entry, time, volume) -> dict:
    done = np.isfinite(time)
    year, line = LINES.get(e.family, (math.nan, e.family))
    m, c = mean_ci(time[done]) if done.any() else (math.nan, math.nan)
    v, cv = mean_ci(volume[done]) if done.any() else (math.nan, math.nan)
    return {"model": model, "family": e.family, "year": year, "line": line, "kind": e.kind, "label": e.label,
            "load": e.load, "mean_time": m, "ci95_time": c, "mean_volume": v, "ci95_volume": cv,
            "failed": int((~done).sum())}


def study(K: int, max_load: int, model_map: dict, *, trials: int = 4000, seed=0, extra: list | None = None,
          progress: bool = False) -> Study:
    """Simulate every design (:func:`design_entries`, and ``extra`` entries) under every model of ``model_map``.

    Args:
        K: workers. max_load: the largest load of the design space's designs. model_map: ``{name: model}``
            (:func:`models`). trials: iterations simulated per design and model. seed: one stream per model
            (the designs with a schedule share its draws). extra: more :class:`Entry`, e.g. the sequential and
            approximate schemes.
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
    seeds = np.random.SeedSequence(seed if isinstance(seed, int) else 0).spawn(len(model_map))
    rows = []
    for (name, model), ss in _progress(list(zip(model_map.items(), seeds)), "models", progress):
        rng = np.random.default_rng(ss)
        res = evaluate_trials(built, model, K, trials, rng, keys=("time", "volume"))
        rows += [_row(name, e, r["time"], r["volume"]) for e, r in zip(sched, res)]
        for e in own:
            r = e.run(model, K, trials, rng)
            rows.append(_row(name, e, np.asarray(r["time"], float), np.asarray(r["volume"], float)))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return Study(table, {"K": K, "max_load": max_load, "trials": trials, "seed": seed, "models": list(model_map)})


def extra_entries(K: int, max_load: int) -> list:
    """The schemes beside the design space: the sequential schemes and the approximate codes, as :class:`Entry`
    (see :func:`sequential_entries` and :func:`approximate_entries`)."""
    return []
