"""Choosing a GC-MMC design: orders, order vectors, cluster counts (and the hybrid) under a communication budget.

The GC-MMC paper leaves the choice of orders as future work. Here every candidate design is simulated on the
*same* sampled compute times (common random numbers, so differences between designs are not sampling noise), and
the search returns the design with the lowest mean completion time whose mean communication load stays within
a budget. :func:`pareto_front` keeps the designs no other design beats on both time and load.

Candidates (all at ``K`` workers, computation load at most ``r``), drawn from the table of families of
:mod:`gclib.design_space` that the advice draws from too (a family is added there):

* ``gc``: plain GC (CRC) with load ``r`` in ``P`` clusters (``P = K / r`` is fractional repetition);
* ``rs``: Reed-Solomon GC with ``s = r' - 1`` for every ``r' <= r``; ``frc``: fractional repetition for every
  ``r' <= r`` dividing ``K``;
* ``uc-mmc``: uncoded multi-message, ``P`` clusters; ``lcc``: Lagrange coded computing with load ``r``;
* ``gc-mmc-correlated``: every order ``m`` and cluster count ``P``;
* ``gc-mmc-uncorrelated``: every order vector of at most ``max_orders`` distinct orders from ``order_grid``, every
  ``P``;
* ``hybrid``: every order vector below ``r`` (plus the plain sum at ``r``), when ``r | K``.

:func:`exact_rule_table` sets the paper's threshold against the exact span test. The studies of notebooks 04 and
05 that use all this are :mod:`gclib.studies.gc_mmc.study` (Fig. 1 under several timing models, the order sweep)
and :mod:`gclib.studies.mmc_design.study` (every design under several models, fronts and budgets).

The rules are the fast ones of each scheme: for the uncorrelated design, the paper's ``K l - sum(m) + 1``
messages per cluster, which is sufficient but not necessary when it exceeds the cluster's ``K_c`` parts (see
:class:`gclib.codes.mmc.SpanRule`), so those designs are evaluated as the paper's interpolation decoder sees them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from gclib.codes import mmc
from gclib.codes.base import GradientCode
from gclib import checks, design_space
from gclib.design_space import Candidate  # noqa: F401 - the record of a design, where the studies import it
from gclib.progress import progress as _progress
from gclib.simulator import CANDIDATE_TRIAL_BYTES, Schedule, simulate, simulate_trials
from gclib.stats import mean_ci
from gclib.stragglers import ComputeModel

LOADS = ("messages", "cluster_messages")
#: The scheme families of :func:`candidates`, in the order they are built (:func:`gclib.design_space.names`).
FAMILIES = design_space.names("design")


def label(family: str, **params) -> str:
    """The label of a design in :func:`candidates` (``"corr m=6 P=4"``, ``"unc [6, 8, 10] P=4"``, ``"gc P=1"``,
    ``"frc r=2"``, ``"hybrid [1, 10]"``, ``"lcc"``) from its family and parameters (``clusters``, ``order``,
    ``orders``, ``load``); other parameters are ignored. The templates are those of
    :data:`gclib.design_space.FAMILIES`."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    return design_space.FAMILIES[family].label_of(params)


def valid_clusters(K: int, r: int) -> list:
    """Cluster counts ``P`` whose clusters all hold at least ``r`` workers."""
    return [P for P in range(1, K // r + 1)]


def candidates(K: int, r: int, *, order_grid: Iterable[int] | None = None, max_orders: int = 3,
               clusters: Iterable[int] | None = None, baselines: bool = True) -> list:
    """Every candidate design (see the module docstring), drawn from the table of families
    (:func:`gclib.design_space.points` on a ``"design"`` space).

    Args:
        K: workers. r: computation load budget. order_grid: orders allowed in order vectors (default ``1..r``).
        max_orders: longest order vector. clusters: cluster counts (default every valid one).
        baselines: include GC, RS, FRC, UC-MMC and LCC.
    Returns:
        list of :class:`gclib.design_space.Candidate`.
    """
    grid = sorted(set(range(1, r + 1) if order_grid is None else order_grid))
    if not grid or grid[0] < 1 or grid[-1] > r:
        raise ValueError(f"order_grid must hold orders in [1, load = {r}], got {grid}")
    Ps = valid_clusters(K, r) if clusters is None else sorted(set(clusters))
    for P in Ps:
        mmc.cluster_sizes(K, P, r)
    sp = design_space.Space("design", K, (r,), max_orders, tuple(grid), tuple(Ps), baselines)
    return [p.candidate() for p in design_space.points(sp)]


def evaluate(cands: list, model: ComputeModel, K: int, trials: int = 10_000, seed=0, *,
             progress: bool = False, dtype=np.float32, keep_trials: bool = False):
    """Simulate every candidate on the same sampled compute times.

    The sampled times are rounded to ``dtype`` (float32 by default: a relative error below ``6e-8``, and about
    half the memory traffic of float64) before the rules run; the same seed gives the same numbers. Under eq. 5
    the chunk holds one draw per worker (:func:`gclib.simulator.simulate_workers`); the candidates are kept as
    their schedules (:class:`gclib.simulator.Schedule`), without their encoding matrices. A request whose results
    and chunk would exceed the memory budget is refused before anything is built.

    Returns:
        one row per candidate: ``family, label, params, failed, mean_time, ci95_time, mean_messages,
        ci95_messages, mean_cluster_messages, ci95_cluster_messages, mean_computations, ci95_computations``
        (means over the trials that complete); with ``keep_trials``, ``(table, per_trial)`` where ``per_trial``
        maps ``time``, ``messages`` and ``cluster_messages`` to ``(candidates, trials)`` arrays of every trial
        (the same draws for every candidate: compare them pair by pair, :func:`gclib.stats.paired_matrix`).
    """
    if not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    checks.need_memory("evaluate", CANDIDATE_TRIAL_BYTES * int(trials) * len(cands),
                       sizes=f"{len(cands)} candidates, trials = {trials}", lower="trials or the candidates")
    items = _progress(cands, "build", progress)
    codes = [c.schedule() if c.schedule is not None else Schedule.of(c.build()) for c in items]
    acc = simulate_trials(codes, model, K, trials, seed, progress=progress, dtype=dtype)
    rows = []
    for cand, a in zip(cands, acc):
        t = a["time"]
        done = np.isfinite(t)
        row = {"family": cand.family, "label": cand.label, "params": cand.params, "failed": int((~done).sum())}
        for k in a:
            row[f"mean_{k}"], row[f"ci95_{k}"] = mean_ci(a[k][done])
        rows.append(row)
    if keep_trials:
        # float32: the times were drawn in ``dtype`` and the loads are counts, exact below 2^24
        return pd.DataFrame(rows), {k: np.stack([a[k] for a in acc]).astype(np.float32, copy=False)
                                    for k in ("time", *LOADS)}
    return pd.DataFrame(rows)


def pareto_front(df: pd.DataFrame, x: str = "mean_messages", y: str = "mean_time") -> pd.DataFrame:
    """Rows not dominated on (``x``, ``y``), both to be minimized, sorted by ``x``."""
    d = df.sort_values([x, y]).reset_index(drop=True)
    keep, best = [], np.inf
    for i, v in enumerate(d[y].to_numpy()):
        if v < best:
            keep.append(i)
            best = v
    return d.iloc[keep].reset_index(drop=True)


@dataclass
class SearchResult:
    """Outcome of :func:`search`: the best feasible design (``None`` if none fits) and the whole table."""

    best: dict | None
    table: pd.DataFrame
    budget: float
    load: str


def search(K: int, r: int, model: ComputeModel, budget: float, *, load: str = "messages", trials: int = 10_000,
           seed=0, families: Iterable[str] | None = None, progress: bool = False, **kw) -> SearchResult:
    """Lowest mean completion time among the candidates whose mean communication load is at most ``budget``.

    Args:
        load: ``"messages"`` (received until completion) or ``"cluster_messages"`` (per cluster until it
            decodes). families: restrict to these scheme families. progress: progress bars over the candidates
            built and the chunks of trials. ``kw``: passed to :func:`candidates` (at ``K = 1000``, restrict
            ``clusters``, ``order_grid`` and ``max_orders``: the full grid holds about 19,000 designs).
    """
    if load not in LOADS:
        raise ValueError(f"load must be one of {LOADS}, got {load!r}")
    if not budget > 0:
        raise ValueError(f"budget must be positive, got {budget!r}")
    cands = candidates(K, r, **kw)
    if families is not None:
        fam = set(families)
        cands = [c for c in cands if c.family in fam]
        if not cands:
            raise ValueError(f"families {sorted(fam)} select no candidate")
    table = evaluate(cands, model, K, trials, seed, progress=progress)
    ok = table[table[f"mean_{load}"] <= budget]
    best = None if ok.empty else fastest(ok).to_dict()
    return SearchResult(best, table, float(budget), load)


# ---------------------------------------------------------------------------------------------- exact rule
def exact_rule_comparison(code: GradientCode, model: ComputeModel, trials: int, seed=0) -> dict:
    """Simulate ``code`` with its own (fast) rule and with the exact span test
    (:func:`gclib.codes.mmc.with_exact_rule`) on the same sampled times.

    Returns:
        ``{trials, time_threshold_rule, ci95_time_threshold_rule, time_exact, ci95_time_exact,
        messages_threshold_rule, messages_exact, differing}``: mean times and messages with the 95% half-widths of
        the times, and the number of trials whose completion times differ between the two rules.
    """
    fast = simulate(code, model, trials, seed)
    exact = simulate(mmc.with_exact_rule(code), model, trials, seed)
    f, e = fast.summary(), exact.summary()
    same = np.isclose(fast.time, exact.time) | (np.isinf(fast.time) & np.isinf(exact.time))
    return {"trials": int(trials), "time_threshold_rule": f["mean_time"], "ci95_time_threshold_rule": f["ci95_time"],
            "time_exact": e["mean_time"], "ci95_time_exact": e["ci95_time"],
            "messages_threshold_rule": f["mean_messages"], "messages_exact": e["mean_messages"],
            "differing": int(np.sum(~same))}


def exact_rule_table(designs, K: int, r: int, model: ComputeModel, trials: int, seed=0) -> pd.DataFrame:
    """:func:`exact_rule_comparison` for uncorrelated designs ``designs``: ``[(orders, clusters), ...]``.

    Returns:
        one row per design: ``orders`` (text), ``clusters``, ``threshold`` (the paper's messages per cluster),
        ``parts_per_cluster`` (of the largest cluster), then the columns of :func:`exact_rule_comparison`.
    """
    rows = []
    for orders, P in designs:
        code = mmc.gc_mmc_uncorrelated(K, r, tuple(orders), P)
        row = {"orders": str(list(orders)), "clusters": int(P), "threshold": int(code.rule.thresholds.max()),
               "parts_per_cluster": int(np.ceil(K / P))}
        row.update(exact_rule_comparison(code, model, trials, seed))
        rows.append(row)
    return pd.DataFrame(rows, columns=["orders", "clusters", "threshold", "parts_per_cluster", "trials",
                                       "time_threshold_rule", "ci95_time_threshold_rule", "time_exact",
                                       "ci95_time_exact", "messages_threshold_rule", "messages_exact", "differing"])


def _by_time(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` from the lowest ``mean_time`` up; designs whose times agree to 10 significant digits (the same
    design under two names, whose times differ in the last bits with the machine's rounding) are a tie, kept in
    the table's order, so that a choice of the fastest does not change from one CPU to another."""
    key = np.array([float(f"{v:.10g}") for v in table["mean_time"]])
    return table.iloc[np.argsort(key, kind="stable")]


def fastest(table: pd.DataFrame) -> pd.Series:
    """The row of ``table`` with the lowest ``mean_time``, ties (see :func:`_by_time`) won by the first row."""
    return _by_time(table).iloc[0]
