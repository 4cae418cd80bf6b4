"""Grids of real MPI runs (notebook 07) and the pure aggregations of their iteration logs.

:func:`run_grid` runs every (data set, compute-time model, scheme) over MPI, in series in as few jobs as it takes
(:func:`gclib.runtime.launch_series`), and returns a :class:`GridResult` of three tables: one row per run (``summary``),
one per iteration (``log``) and one per test sample of each run's final parameters (``test``, for intervals on the
test AUC). The functions below it read those tables only (no MPI): :func:`curve_table`, :func:`timing_table`,
:func:`iteration_times`, :func:`paired_times`, :func:`overhead`, :func:`time_to_target` and :func:`auc_difference`.

All schemes of one (data set, model) pair use the same seed, so they see the same injected delays per worker and
iteration (common random numbers); the data of a data set is the same in every run (its own seed, 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gclib import schemes as registry
from gclib.learning import TandonAGD, make_problem
from gclib.learning.problems import average_ranks
from gclib.stats import Estimate, percentile_interval
from gclib.progress import bar
from gclib.runtime import RunSpec, launch_series
from gclib.stragglers import model_set

#: The compute-time models of notebook 07 by name (model time units; a run scales them by its time scale): the set
#: ``"mpi-runs"`` of :func:`gclib.stragglers.model_set`.
MODELS = model_set("mpi-runs")
#: What :func:`run_grid` keeps of a run's summary.
SUMMARY = ("mean_time", "mean_predicted", "relative_error", "mean_overhead", "mean_messages", "stale_messages",
           "final_loss", "final_auc", "max_grad_error")
KEYS = ["dataset", "model", "scheme"]


def build(name: str, workers: int, stragglers: int, seed: int = 0):
    """The code of scheme ``name`` at ``(workers, stragglers)``: a scheme of :mod:`gclib.schemes`, with
    ``uc-mmc`` the uncoded multi-message code of load ``stragglers + 1`` (every partial gradient sent as soon as
    it is computed; any ``stragglers`` workers tolerated). Raises ``ValueError`` for an unknown name or a pair the
    scheme cannot take (FRC needs ``(s + 1) | n``)."""
    if name == "uc-mmc":
        return registry.build("uc-mmc", workers=workers, load=stragglers + 1, clusters=1)
    return registry.build(name, workers=workers, stragglers=stragglers, seed=seed)


def problem(dataset: str, parts: int, *, samples: int, dim: int):
    """The learning problem of a run: ``dataset`` split into ``parts`` parts (Tandon's synthetic data with
    ``samples`` rows and ``dim`` features; the data sets shipped with scikit-learn ignore both)."""
    kw = {"n_samples": samples, "dim": dim} if dataset == "tandon-logistic" else {}
    return make_problem(dataset, parts=parts, seed=0, **kw)


@dataclass
class GridResult:
    """What :func:`run_grid` measured.

    Attributes:
        summary: one row per run: ``dataset, model, scheme`` and the :data:`SUMMARY` fields of
            :meth:`gclib.runtime.RunResult.summary`.
        log: one row per iteration: ``dataset, model, scheme`` and the run's records (``iteration, time,
            predicted, messages, stale, ..., grad_error, wall, loss, test_loss, auc``).
        test: one row per run and test sample: ``dataset, model, scheme, sample, label, score`` (the final
            parameters' score ``x @ theta``; empty for problems without a test set).
    """

    summary: pd.DataFrame
    log: pd.DataFrame
    test: pd.DataFrame


def run_grid(datasets, models, schemes, *, workers: int, stragglers: int, iterations: int, time_scale: float,
             samples: int, dim: int, seed: int = 0, timeout: float = 60.0, job_timeout: float | None = None,
             progress: bool = False) -> GridResult:
    """One run per (data set, model, scheme), in series (:func:`gclib.runtime.launch_series`: the ranks start once
    for them all), each of ``workers + 1`` ranks, accelerated gradient descent with step ``1 / L`` (Tandon et
    al.'s update), ``iterations`` iterations, delays of ``models[...]`` scaled by ``time_scale`` seconds per unit and
    drawn from ``seed``.

    Args:
        datasets: names of :data:`gclib.learning.DATASETS`. models: names of :data:`MODELS`.
        schemes: names for :func:`build`.
        timeout: seconds the master waits for a decodable set in one iteration.
    Returns:
        :class:`GridResult`; a run that stops early raises :class:`gclib.runtime.RuntimeFailure`.
    """
    bad = [m for m in models if m not in MODELS]
    if bad:
        raise ValueError(f"models must be among {sorted(MODELS)}, got {bad}")
    jobs = [(ds, m, s) for ds in datasets for m in models for s in schemes]
    runs = []
    for ds, mname, name in jobs:
        code = build(name, workers, stragglers, seed)
        prob = problem(ds, code.n_parts, samples=samples, dim=dim)
        runs.append((prob, RunSpec(code, prob, TandonAGD(1.0 / prob.smoothness), MODELS[mname],
                                   iterations=iterations, time_scale=time_scale, seed=seed, timeout=timeout,
                                   label=name)))
    with bar(len(runs) * iterations, "MPI runs (iterations)", progress) as shown:
        done = launch_series([spec for _, spec in runs], job_timeout=job_timeout,
                             progress=lambda record: shown.update())
    rows, logs, tests = [], [], []
    for (ds, mname, name), (prob, _), res in zip(jobs, runs, done):
        s = res.summary()
        key = {"dataset": ds, "model": mname, "scheme": name}
        rows.append({**key, **{k: s[k] for k in SUMMARY}})
        logs.append(res.frame().drop(columns=["workers", "dead"], errors="ignore").assign(**key))
        if prob.X_test is not None and len(prob.X_test):
            tests.append(pd.DataFrame({**key, "sample": np.arange(len(prob.y_test)), "label": prob.y_test,
                                       "score": prob.X_test @ res.theta}))
    log = pd.concat(logs, ignore_index=True) if logs else pd.DataFrame(columns=KEYS)
    log = log[KEYS + [c for c in log.columns if c not in KEYS]]
    test = (pd.concat(tests, ignore_index=True) if tests
            else pd.DataFrame(columns=KEYS + ["sample", "label", "score"]))
    return GridResult(pd.DataFrame(rows), log, test)


# ---------------------------------------------------------------------------------------------- aggregations
def curve_table(log: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The data of a curve against wall-clock time: ``dataset, model, scheme, iteration, wall, <metric>``."""
    if metric not in log.columns:
        raise ValueError(f"metric must be a column of the log, got {metric!r}")
    return log[KEYS + ["iteration", "wall", metric]].reset_index(drop=True)


def timing_table(log: pd.DataFrame) -> pd.DataFrame:
    """The data of the measured-against-predicted figure: ``dataset, model, scheme, iteration, predicted, time``."""
    return log[KEYS + ["iteration", "predicted", "time"]].reset_index(drop=True)


def _groups(log: pd.DataFrame, keys):
    return log.groupby(list(keys), sort=False)


def iteration_times(log: pd.DataFrame) -> pd.DataFrame:
    """Mean measured iteration time of every run with its Student-t 95% interval over iterations.

    Returns:
        one row per (dataset, model, scheme): ``iterations, mean_time, lo, hi`` (seconds; ``lo``/``hi`` NaN
        below two iterations), beside the run's ``mean_predicted``.
    """
    rows = []
    for key, g in _groups(log, KEYS):
        e = Estimate.of(g["time"])
        rows.append({**dict(zip(KEYS, key)), "iterations": len(g), "mean_time": e.value, "lo": e.lo, "hi": e.hi,
                     "mean_predicted": float(g["predicted"].mean())})
    return pd.DataFrame(rows, columns=KEYS + ["iterations", "mean_time", "lo", "hi", "mean_predicted"])


def paired_times(log: pd.DataFrame) -> dict:
    """The measured iteration times of every scheme, paired iteration by iteration, per model.

    All schemes of a model see the same injected delays in iteration ``i`` (common random numbers), and so do
    all data sets of that model (the delays do not depend on the data): the runs of one model on several data
    sets are repeated measurements of the same delays. Each iteration's time is therefore averaged over the
    data sets, and iteration ``i`` of one scheme is paired with iteration ``i`` of another.

    Returns:
        ``{model: DataFrame}``, each indexed by ``iteration`` with one column per scheme (seconds; NaN where a
        scheme has no such iteration), and the data sets averaged in ``.attrs["datasets"]``.
    """
    out = {}
    for m, sub in _groups(log, ["model"]):
        m = m[0] if isinstance(m, tuple) else m
        t = sub.pivot_table(index="iteration", columns="scheme", values="time", aggfunc="mean", sort=False)
        t = t[list(dict.fromkeys(sub["scheme"]))]
        t.attrs["datasets"] = list(dict.fromkeys(sub["dataset"]))
        out[m] = t
    return out


def overhead(log: pd.DataFrame, by=("scheme",)) -> pd.DataFrame:
    """Measured against predicted iteration time, pooled over the runs of each group (default: per scheme).

    The overhead of an iteration is its measured time minus the simulator's time for the same delays; its mean
    gets a Student-t 95% interval over the iterations, and ``ratio = 1 + overhead / mean_predicted`` (the
    measured mean over the predicted mean) the same interval scaled.

    Returns:
        one row per group: ``iterations, mean_time, mean_predicted, mean_overhead, overhead_lo, overhead_hi,
        ratio, ratio_lo, ratio_hi``.
    """
    cols = ["iterations", "mean_time", "mean_predicted", "mean_overhead", "overhead_lo", "overhead_hi", "ratio",
            "ratio_lo", "ratio_hi"]
    rows = []
    for key, g in _groups(log, by):
        key = key if isinstance(key, tuple) else (key,)
        o = Estimate.of(g["time"] - g["predicted"])
        p = float(g["predicted"].mean())
        r = [1 + x / p if p > 0 else math.nan for x in (o.value, o.lo, o.hi)]
        rows.append({**dict(zip(by, key)), "iterations": len(g), "mean_time": float(g["time"].mean()),
                     "mean_predicted": p, "mean_overhead": o.value, "overhead_lo": o.lo, "overhead_hi": o.hi,
                     "ratio": r[0], "ratio_lo": r[1], "ratio_hi": r[2]})
    return pd.DataFrame(rows, columns=list(by) + cols)


def time_to_target(log: pd.DataFrame, rel: float = 0.01) -> pd.DataFrame:
    """Wall-clock seconds at which each run first reaches ``(1 + rel)`` times the lowest loss any scheme of its
    (data set, model) pair reached.

    Returns:
        a table indexed by ``(dataset, model)`` with one column per scheme (NaN: never within the run).
    """
    if not rel >= 0:
        raise ValueError(f"rel must be non-negative, got {rel!r}")
    rows = []
    for (ds, m), sub in _groups(log, ["dataset", "model"]):
        target = (1 + rel) * sub["loss"].min()
        for sch, g in sub.groupby("scheme", sort=False):
            hit = g[g["loss"] <= target]
            rows.append({"dataset": ds, "model": m, "scheme": sch,
                         "seconds": float(hit["wall"].iloc[0]) if len(hit) else math.nan})
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    return df.pivot_table(index=["dataset", "model"], columns="scheme", values="seconds", sort=False,
                          dropna=False)[list(dict.fromkeys(df["scheme"]))]


def _auc_rows(scores: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """AUC of every row of ``scores`` ``(reps, m)`` against the boolean labels ``pos`` ``(reps, m)`` (ties count
    one half; NaN for a row with one class only)."""
    ranks = np.array([average_ranks(row) for row in scores]).reshape(scores.shape)
    ranks[np.isnan(scores).any(axis=1)] = np.nan  # as scipy.stats.rankdata: a row with a NaN has no ranks
    n_pos = pos.sum(axis=1)
    n_neg = pos.shape[1] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((ranks * pos).sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def auc_difference(test: pd.DataFrame, scheme: str, reference: str, *, reps: int = 1000, seed=0) -> pd.DataFrame:
    """Test AUC of ``reference`` minus that of ``scheme`` per (data set, model), with a paired bootstrap 95%
    interval over the test samples (both runs scored on the same resampled test set; percentile interval).

    Args:
        test: the ``test`` table of a :class:`GridResult`.
    Returns:
        one row per (dataset, model) where both schemes ran: ``auc, auc_reference, difference, lo, hi, samples,
        reps`` (``lo``/``hi`` NaN when no resample holds both classes).
    """
    if not (isinstance(reps, (int, np.integer)) and reps >= 1):
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    rng = np.random.default_rng(seed)
    rows = []
    for (ds, m), sub in _groups(test, ["dataset", "model"]):
        a = sub[sub["scheme"] == scheme].sort_values("sample")
        b = sub[sub["scheme"] == reference].sort_values("sample")
        if not (len(a) and len(b)):
            continue
        if not np.array_equal(a["label"].to_numpy(), b["label"].to_numpy()):
            raise ValueError(f"{ds}, {m}: {scheme} and {reference} were scored on different test sets")
        pos = a["label"].to_numpy() > 0
        sa, sb = a["score"].to_numpy(float), b["score"].to_numpy(float)
        auc_a = float(_auc_rows(sa[None], pos[None])[0])
        auc_b = float(_auc_rows(sb[None], pos[None])[0])
        idx = rng.integers(0, len(pos), size=(reps, len(pos)))
        diff = _auc_rows(sb[idx], pos[idx]) - _auc_rows(sa[idx], pos[idx])
        d = auc_b - auc_a
        lo, hi = percentile_interval(d, diff)
        rows.append({"dataset": ds, "model": m, "auc": auc_a, "auc_reference": auc_b, "difference": d, "lo": lo,
                     "hi": hi, "samples": len(pos), "reps": reps})
    return pd.DataFrame(rows, columns=["dataset", "model", "auc", "auc_reference", "difference", "lo", "hi",
                                       "samples", "reps"])
