"""What the decoding error does to training (notebook 13): gradient descent with the decoded gradients on a
simulated clock (:func:`gclib.learning.optim.train`), approximate codes against the exact code of the same load
and uncoded GD.

Every scheme is :func:`gclib.learning.optim.make_scheme`'s ``gc`` (or ``gd``) on one code: the master waits for
the ``n - s`` fastest workers (the code's threshold rule; all ``n`` for uncoded GD, ``n - d + 1`` for the exact
CRC of load ``d``) and really decodes the messages received, so the approximate codes step with their decoded,
inexact gradient. The compute times are a compute-time model of :mod:`gclib.stragglers` (by default notebook
06's Pareto of shape 1.5 and mean 1 per partial gradient), drawn afresh every iteration and shared by every scheme
for a seed (common random numbers).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from gclib import checks
from gclib.codes import approximate as ap
from gclib.codes import crc, ignore_stragglers
from gclib.learning.optim import compare, make_scheme
from gclib.learning.problems import generic
from gclib.stragglers import mean_one_pareto

#: The schemes of :func:`schemes`, in display order.
ORDER = ("expander, optimal", "expander, fixed", "stochastic GC", "ignore stragglers", "CRC (exact)", "uncoded")


def schemes(n: int = 20, d: int = 3, s: int = 4, seed=0) -> dict:
    """``{label: LazyScheme}`` of :data:`ORDER` (no laziness): the approximate codes of load ``d`` waiting for
    ``n - s`` workers, ignore-stragglers (load 1, ``n - s``), the exact CRC of load ``d`` (``n - d + 1``) and
    uncoded GD (all ``n``)."""
    opt = ap.expander(n, s, d, "optimal", seed=seed)
    codes = {"expander, optimal": opt, "expander, fixed": ap.expander(n, s, d, "fixed", adjacency=opt.B * d),
             "stochastic GC": ap.stochastic(n, s, d, seed=seed), "ignore stragglers": ignore_stragglers(n, s),
             "CRC (exact)": crc(n, d - 1, seed)}
    out = {label: make_scheme("gc", n, code=code) for label, code in codes.items()}
    out["uncoded"] = make_scheme("gd", n)
    return out


def problem_of(n: int = 20, kind: str = "linreg", cond: float = 10.0, seed=0):
    """Notebook 06's generic problem (:func:`gclib.learning.problems.generic`): ``kind``, Gaussian design of
    condition number ``cond``, one part per worker."""
    return generic(kind, "gaussian", cond, seed, parts=n)


def runs(n: int = 20, d: int = 3, s: int = 4, *, kind: str = "linreg", cond: float = 10.0, shape: float = 1.5,
         seeds=(0, 1, 2), rel_target: float = 1e-8, max_iter: int = 1000, seed=0, progress: bool = False):
    """Every scheme of :func:`schemes` on notebook 06's generic problem (:func:`gclib.learning.problems.generic`,
    ``kind``, Gaussian design of condition number ``cond``, one part per worker) for every seed of the compute
    times, to the gap ``rel_target`` times the initial one or ``max_iter`` iterations.

    Returns:
        ``(totals, curves)`` of :func:`gclib.learning.optim.compare` (one row per scheme and seed; every iterate),
        with ``curves`` given ``rel_gap``, the gap over the initial one.
    """
    problem = problem_of(n, kind, cond, seed)
    gap0 = problem.gap(np.zeros(problem.dim))
    totals, curves = compare(problem, schemes(n, d, s, seed), mean_one_pareto(shape), seeds=tuple(seeds),
                             target=rel_target * gap0, max_iter=max_iter, progress=progress, curves=True)
    curves["rel_gap"] = curves["gap"] / gap0
    totals["rel_final_gap"] = totals["final_gap"] / gap0
    return totals, curves


def floors(curves: pd.DataFrame, tail: float = 0.25) -> pd.DataFrame:
    """Per (scheme, seed): the median relative gap over the last ``tail`` of the iterations, the level a run has
    settled at (an exact code's last iterates are at its target, an approximate code's at its noise floor)."""
    tail = checks.real("tail", tail, above=0, high=1)
    rows = []
    for (scheme, seed), g in curves.groupby(["scheme", "seed"], sort=False):
        k = max(1, int(np.ceil(tail * len(g))))
        rows.append({"scheme": scheme, "seed": seed, "floor": float(np.median(g["rel_gap"].iloc[-k:])),
                     "iterations": int(g["iteration"].max())})
    return pd.DataFrame(rows)


def time_to(curves: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per (scheme, seed): the simulated time of the first iterate with relative gap at most ``level`` (``inf``
    when the run never gets there).

    Returns:
        ``scheme, seed, level, time``.
    """
    level = checks.real("level", level, above=0)
    rows = []
    for (scheme, seed), g in curves.groupby(["scheme", "seed"], sort=False):
        hit = g.loc[g["rel_gap"] <= level, "time"]
        rows.append({"scheme": scheme, "seed": seed, "level": level,
                     "time": float(hit.iloc[0]) if len(hit) else float("inf")})
    return pd.DataFrame(rows)


def overview(curves: pd.DataFrame, level: float = 1e-3) -> pd.DataFrame:
    """Per scheme, medians over the seeds: the level its runs settle at (:func:`floors`), its iterations, and the
    time to the relative gap ``level`` (:func:`time_to`)."""
    f = floors(curves).groupby("scheme", sort=False)[["floor", "iterations"]].median()
    t = time_to(curves, level).groupby("scheme", sort=False)["time"].median().rename(f"time to {level:g}")
    return f.join(t).reset_index()
