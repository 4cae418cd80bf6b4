"""Choosing a GC-MMC design: orders, order vectors, cluster counts (and the hybrid) under a communication budget.

The GC-MMC paper leaves the choice of orders as future work. Here every candidate design is simulated on the
*same* sampled compute times (common random numbers, so differences between designs are not sampling noise), and
the search returns the design with the lowest mean completion time whose mean communication load stays within
a budget. :func:`pareto_front` keeps the designs no other design beats on both time and load.

Candidates (all at ``K`` workers, computation load at most ``r``):

* ``gc``: plain GC (CRC) with load ``r`` in ``P`` clusters (``P = K / r`` is fractional repetition);
* ``rs``: Reed-Solomon GC with ``s = r' - 1`` for every ``r' <= r``; ``frc``: fractional repetition for every
  ``r' <= r`` dividing ``K``;
* ``uc-mmc``: uncoded multi-message, ``P`` clusters; ``lcc``: Lagrange coded computing with load ``r``;
* ``gc-mmc-correlated``: every order ``m`` and cluster count ``P``;
* ``gc-mmc-uncorrelated``: every order vector of at most ``max_orders`` distinct orders from ``order_grid``, every
  ``P``;
* ``hybrid``: every order vector below ``r`` (plus the plain sum at ``r``), when ``r | K``.

The rules are the fast ones of each scheme: for the uncorrelated design, the paper's ``K l - sum(m) + 1``
messages per cluster, which is sufficient but not necessary when it exceeds the cluster's ``K_c`` parts (see
:class:`gclib.codes.mmc.SpanRule`), so those designs are evaluated as the paper's interpolation decoder sees them.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from .codes import frc, rs
from .codes import lcc as _lcc
from .codes import mmc
from .codes.base import GradientCode
from .simulate import CHUNK, mean_ci, simulate_chunk
from .stragglers import ComputeModel

LOADS = ("messages", "cluster_messages")


@dataclass(frozen=True)
class Candidate:
    """One design: ``family`` (scheme name), a label, its parameters and a builder."""

    family: str
    label: str
    params: dict
    build: Callable[[], GradientCode]


def valid_clusters(K: int, r: int) -> list:
    """Cluster counts ``P`` whose clusters all hold at least ``r`` workers."""
    return [P for P in range(1, K // r + 1)]


def candidates(K: int, r: int, *, order_grid: Iterable[int] | None = None, max_orders: int = 3,
               clusters: Iterable[int] | None = None, baselines: bool = True) -> list:
    """Every candidate design (see the module docstring).

    Args:
        K: workers. r: computation load budget. order_grid: orders allowed in order vectors (default ``1..r``).
        max_orders: longest order vector. clusters: cluster counts (default every valid one).
        baselines: include GC, RS, FRC, UC-MMC and LCC.
    Returns:
        list of :class:`Candidate`.
    """
    grid = sorted(set(range(1, r + 1) if order_grid is None else order_grid))
    if not grid or grid[0] < 1 or grid[-1] > r:
        raise ValueError(f"order_grid must hold orders in [1, load = {r}], got {grid}")
    Ps = valid_clusters(K, r) if clusters is None else sorted(set(clusters))
    for P in Ps:
        mmc.cluster_sizes(K, P, r)
    out = []
    if baselines:
        for P in Ps:
            out.append(Candidate("gc", f"gc P={P}", {"clusters": P},
                                 lambda P=P: mmc.clustered_design(lambda k: mmc.gc_cyclic(k, r), K, P, r)))
            out.append(Candidate("uc-mmc", f"uc-mmc P={P}", {"clusters": P},
                                 lambda P=P: mmc.clustered_design(lambda k: mmc.uc_mmc(k, r), K, P, r)))
        for rr in range(1, r + 1):
            out.append(Candidate("rs", f"rs r={rr}", {"load": rr}, lambda rr=rr: rs(K, rr - 1)))
            if K % rr == 0:
                out.append(Candidate("frc", f"frc r={rr}", {"load": rr}, lambda rr=rr: frc(K, rr - 1)))
        try:
            _lcc.lcc_code(K, r)
            out.append(Candidate("lcc", "lcc", {}, lambda: _lcc.lcc_code(K, r)))
        except ValueError:
            pass
    for P in Ps:
        for m in grid:
            out.append(Candidate("gc-mmc-correlated", f"corr m={m} P={P}", {"order": m, "clusters": P},
                                 lambda m=m, P=P: mmc.gc_mmc_correlated(K, r, m, P)))
        for n in range(1, max_orders + 1):
            for orders in combinations(grid, n):
                out.append(Candidate("gc-mmc-uncorrelated", f"unc {list(orders)} P={P}",
                                     {"orders": list(orders), "clusters": P},
                                     lambda o=orders, P=P: mmc.gc_mmc_uncorrelated(K, r, o, P)))
    if K % r == 0:
        below = [m for m in grid if m < r]
        for n in range(0, max_orders):
            for orders in combinations(below, n):
                o = tuple(orders) + (r,)
                out.append(Candidate("hybrid", f"hybrid {list(o)}", {"orders": list(o), "clusters": K // r},
                                     lambda o=o: mmc.hybrid(K, r, o)))
    return out


def fast_chunk(code: GradientCode, finish: np.ndarray) -> dict:
    """:func:`gclib.simulate.simulate_chunk` (without communication delays) on ``finish``
    ``(trials, workers, >= code.load)``, which may be float32 (the rules keep its dtype)."""
    return simulate_chunk(code, finish[:, :, : code.load])


def evaluate(cands: list, model: ComputeModel, K: int, trials: int = 10_000, seed=0, *,
             progress: bool = False, dtype=np.float32) -> pd.DataFrame:
    """Simulate every candidate on the same sampled compute times.

    The sampled times are rounded to ``dtype`` (float32 by default: a relative error below ``6e-8``, and about
    half the memory traffic of float64) before the rules run; the same seed gives the same numbers.

    Returns:
        one row per candidate: ``family, label, params, failed, mean_time, ci95_time, mean_messages,
        ci95_messages, mean_cluster_messages, ci95_cluster_messages, mean_computations, ci95_computations``
        (means over the trials that complete).
    """
    if not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    codes = [c.build() for c in cands]
    if any(c.n_workers != K for c in codes):
        raise ValueError(f"every candidate must have {K} workers")
    n_tasks = max(c.load for c in codes)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    acc = [{k: [] for k in ("time", "messages", "cluster_messages", "computations")} for _ in codes]
    chunks = [CHUNK] * (trials // CHUNK) + ([trials % CHUNK] if trials % CHUNK else [])
    it = chunks
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(chunks, desc="evaluate", leave=False)
    for n in it:
        finish = model.sample(rng, n, K, n_tasks).astype(dtype, copy=False)
        for a, code in zip(acc, codes):
            res = fast_chunk(code, finish)
            for k in a:
                a[k].append(res[k])
    rows = []
    for cand, a in zip(cands, acc):
        t = np.concatenate(a["time"])
        done = np.isfinite(t)
        row = {"family": cand.family, "label": cand.label, "params": cand.params, "failed": int((~done).sum())}
        for k in a:
            v = np.concatenate(a[k])[done]
            row[f"mean_{k}"], row[f"ci95_{k}"] = mean_ci(v)
        rows.append(row)
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
           seed=0, families: Iterable[str] | None = None, **kw) -> SearchResult:
    """Lowest mean completion time among the candidates whose mean communication load is at most ``budget``.

    Args:
        load: ``"messages"`` (received until completion) or ``"cluster_messages"`` (per cluster until it
            decodes). families: restrict to these scheme families. ``kw``: passed to :func:`candidates`.
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
    table = evaluate(cands, model, K, trials, seed)
    ok = table[table[f"mean_{load}"] <= budget]
    best = None if ok.empty else ok.sort_values("mean_time").iloc[0].to_dict()
    return SearchResult(best, table, float(budget), load)


# ---------------------------------------------------------------------------------------------- Fig. 1
def fig1_candidates(K: int = 40, r: int = 10, P: int = 4, m: int = 6, orders=(6, 8, 10)) -> list:
    """The five bars of Fig. 1 of the GC-MMC paper: GC, LCC, UC-MMC, GC-MMC-1 (correlated, order ``m``, ``P``
    clusters) and GC-MMC-2 (uncorrelated, ``orders``, ``P`` clusters). GC and UC-MMC are unclustered."""
    return [
        Candidate("gc", "GC", {"load": r}, lambda: mmc.gc_cyclic(K, r)),
        Candidate("lcc", "LCC", {"load": r}, lambda: _lcc.lcc_code(K, r)),
        Candidate("uc-mmc", "UC-MMC", {"load": r}, lambda: mmc.uc_mmc(K, r)),
        Candidate("gc-mmc-1", "GC-MMC-1", {"order": m, "clusters": P},
                  lambda: mmc.gc_mmc_correlated(K, r, m, P)),
        Candidate("gc-mmc-2", "GC-MMC-2", {"orders": list(orders), "clusters": P},
                  lambda: mmc.gc_mmc_uncorrelated(K, r, orders, P)),
    ]


def fig1(model: ComputeModel, trials: int = 100_000, seed=0, K: int = 40, r: int = 10, **kw) -> pd.DataFrame:
    """Fig. 1 under ``model``: one row per bar (see :func:`evaluate` for the columns)."""
    return evaluate(fig1_candidates(K, r, **kw), model, K, trials, seed)
