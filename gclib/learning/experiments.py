"""The comparisons of Zhang and Simeone's Figs. 2 and 3 as functions (the notebook only calls and plots them).

* :func:`paper_schemes`: GD, GC (CRC), grouping (FRC, no laziness), LAG-WK, LAG-PS, LAGC and G-LAG on ``n`` workers
  and ``G`` groups, all coded schemes at the same computation load ``r = n / G``;
* :func:`run_grid`: every scheme x compute-time model x seed, totals to the target (and optionally the curves);
* :func:`check_claims`: the paper's qualitative claims, checked per model and seed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .optim import compare, make_scheme

#: Display order of the schemes.
ORDER = ("gd", "gc", "grouping", "lag-wk", "lag-ps", "lagc", "g-lag")


def paper_schemes(workers: int = 12, groups: int = 4, seed=0, **kw) -> dict:
    """``{label: LazyScheme}`` for :data:`ORDER` (``kw`` goes to :func:`make_scheme`, e.g. ``units``)."""
    out = {}
    for lab in ORDER:
        if lab == "grouping":
            out[lab] = make_scheme("gc", workers, groups=groups, code="frc", seed=seed)
        else:
            extra = kw if lab in ("lag-wk", "lag-ps", "lagc", "g-lag") else {}
            out[lab] = make_scheme(lab, workers, groups=groups, seed=seed, **extra)
    return out


def run_grid(problem, schemes: dict, models: dict, seeds, *, target: float = 1e-6, curves_seed=None,
             progress: bool = False, **kw):
    """Run every scheme under every model for every seed.

    Args:
        models: ``{label: ComputeModel}``. seeds: seeds of the compute times.
        curves_seed: also return the per-iterate curves of this seed (``None``: no curves).
    Returns:
        ``(totals, curves)``: totals has one row per (model, scheme, seed) with ``status, iterations, time,
        uploads, computations, final_gap``; curves (or ``None``) one row per iterate with a ``model`` column.
    """
    tots, curves = [], []
    it = list(models.items())
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="models", leave=False)
    seeds = list(seeds)
    in_grid = curves_seed is not None and curves_seed in seeds  # then its curves come from the grid run itself
    for lab, model in it:
        tot, cur = compare(problem, schemes, model, seeds=seeds, target=target, curves=in_grid, **kw)
        tot.insert(0, "model", lab)
        tots.append(tot)
        if in_grid:
            cur = cur[cur["seed"] == curves_seed].reset_index(drop=True)
        elif curves_seed is not None:
            _, cur = compare(problem, schemes, model, seeds=[curves_seed], target=target, curves=True, **kw)
        if curves_seed is not None:
            cur.insert(0, "model", lab)
            curves.append(cur)
    return pd.concat(tots, ignore_index=True), (pd.concat(curves, ignore_index=True) if curves else None)


def spread(totals: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Median and quartiles of ``metric`` over seeds, per (model, scheme)."""
    g = totals.groupby(["model", "scheme"], sort=False)[metric]
    out = pd.DataFrame({"median": g.median(), "q25": g.quantile(0.25), "q75": g.quantile(0.75),
                        "runs": g.size(), "failed": totals.groupby(["model", "scheme"], sort=False)["status"]
                        .apply(lambda s: int((s != "converged").sum()))})
    return out.reset_index()


def _per_seed(totals, model, metric):
    t = totals[totals.model == model]
    return t.pivot(index="seed", columns="scheme", values=metric)


def check_claims(totals: pd.DataFrame, heavy: list, light: str) -> pd.DataFrame:
    """The paper's qualitative claims, checked on ``totals`` (from :func:`run_grid`).

    Args:
        heavy: labels of the Pareto models. light: label of the exponential model.
    Returns:
        one row per (claim, model): ``holds`` (fraction of seeds where the claim holds) and ``detail`` (the
        medians behind it).
    """
    rows = []
    models = list(heavy) + [light]
    for mdl in models:
        T, U, C = (_per_seed(totals, mdl, m) for m in ("time", "uploads", "computations"))
        lazy = [s for s in ("lag-wk", "lag-ps", "lagc") if s in T]
        others = [s for s in T.columns if s != "g-lag"]
        best_t = T[others].min(axis=1)
        rows.append({"claim": "G-LAG has the shortest wall-clock time to the target", "model": mdl,
                     "holds": float(np.mean(T["g-lag"] <= best_t)),
                     "detail": f"G-LAG {T['g-lag'].median():.4g} vs best other {best_t.median():.4g} "
                               f"({T[others].median().idxmin()})"})
        best_u = U[others].min(axis=1)
        rows.append({"claim": "G-LAG needs the fewest uploads", "model": mdl,
                     "holds": float(np.mean(U["g-lag"] <= best_u)),
                     "detail": f"G-LAG {U['g-lag'].median():.0f} vs best other {best_u.median():.0f} "
                               f"({U[others].median().idxmin()})"})
        rows.append({"claim": "G-LAG's computation stays low (below GD's, GC's and LAGC's)", "model": mdl,
                     "holds": float(np.mean((C["g-lag"] <= C["gd"]) & (C["g-lag"] <= C["gc"])
                                            & (C["g-lag"] <= C["lagc"]))),
                     "detail": f"G-LAG {C['g-lag'].median():.0f}, GD {C['gd'].median():.0f}, "
                               f"GC {C['gc'].median():.0f}, LAGC {C['lagc'].median():.0f}"})
        rows.append({"claim": "LAG and LAGC upload less than GD and GC", "model": mdl,
                     # skipna=False: a lazy scheme that never reached the target (NaN) does not count as "less"
                     "holds": float(np.mean(U[lazy].max(axis=1, skipna=False) < U[["gd", "gc"]].min(axis=1))),
                     "detail": ", ".join(f"{s} {U[s].median():.0f}" for s in ["gd", "gc", *lazy])})
        rows.append({"claim": "LAGC is faster than LAG (coding's straggler robustness)", "model": mdl,
                     "holds": float(np.mean(T["lagc"] < T[["lag-wk", "lag-ps"]].min(axis=1))),
                     "detail": f"LAGC {T['lagc'].median():.4g}, LAG-WK {T['lag-wk'].median():.4g}, "
                               f"LAG-PS {T['lag-ps'].median():.4g}"})
    # coding helps most under the heavy tail: GD time / GC time, compared with the exponential model
    TL = _per_seed(totals, light, "time")
    for code in ("gc", "grouping"):
        gain_light = (TL["gd"] / TL[code]).median()
        for mdl in heavy:
            TH = _per_seed(totals, mdl, "time")
            gain = TH["gd"] / TH[code]
            rows.append({"claim": f"coding ({code}) speeds GD up more under the heavy tail than under the "
                                  f"exponential", "model": mdl,
                         "holds": float(np.mean(gain > gain_light)),
                         "detail": f"GD/{code} time {gain.median():.3g} vs {gain_light:.3g} ({light})"})
    return pd.DataFrame(rows)
