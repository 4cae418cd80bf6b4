"""The comparisons of notebook 06 as functions (the notebook only calls, plots and shows them).

* :func:`lag_check`: GD, LAG-WK and LAG-PS on Chen et al.'s 9-worker problem, under each warm-up;
* :func:`paper_schemes`: GD, GC (CRC), grouping (FRC, no laziness), LAG-WK, LAG-PS, LAGC and G-LAG on ``n`` workers
  and ``G`` groups, all coded schemes at the same computation load ``r = n / G``;
* :func:`run_grid`: every scheme x compute-time model x seed, totals to the target (and optionally the curves);
* :func:`comparison`: Zhang and Simeone's comparison (Figs. 2 and 3) over Pareto shapes and the exponential model,
  plus LAGC with the literal threshold ``M = n``;
* :func:`spread`, :func:`bar_data`, :func:`medians`: the summaries behind the figures; :func:`write_table`.

The claims drawn from these tables are judged in :mod:`gclib.claims.lazy`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..progress import progress as _progress
from ..stragglers import Exponential, Pareto
from .optim import WARMUPS, compare, make_scheme, train
from .problems import Problem, lag_synthetic

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
    it = _progress(list(models.items()), "models", progress)
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


#: The warm-ups in a few words (settings of the claims table, legends).
WARMUP_WORDS = {"silent": "Chen et al.'s warm-up", "upload": "our warm-up (every unit uploads)"}
#: The measures of Figs. 2 and 3, in display order.
METRICS = ("time", "uploads", "computations")


def model_label(shape: float | None = None) -> str:
    """``"pareto 1.5"`` for a Pareto shape, ``"exp"`` for ``None`` (the exponential model): the ``model``
    column of :func:`comparison`'s tables."""
    return "exp" if shape is None else f"pareto {shape:g}"


def lag_check(workers: int = 9, dim: int = 50, seed=0, *, target: float = 1e-8, rate: float = 1.0,
              max_iter: int = 20_000, warmups=WARMUPS):
    """GD, LAG-WK and LAG-PS on Chen et al.'s heterogeneous regression (:func:`lag_synthetic`), to ``target``.

    GD runs once; each lazy scheme runs under every warm-up of ``warmups`` (``"silent"``: Chen et al.'s,
    ``"upload"``: every worker uploads in the first ``D`` iterations). The compute times are exponential with
    ``rate`` (seed ``seed``); they only set the clock: the iterates and uploads of these schemes do not depend on
    them.

    Returns:
        ``(problem, totals, curves)``: totals has one row per run (``scheme, warmup, status, iterations, time,
        uploads, computations, target, workers, samples``; ``warmup`` is ``"none"`` for GD), curves one row per iterate
        of every run (``scheme, warmup, iteration, gap, time, uploads, computations, active``).
    """
    bad = [w for w in warmups if w not in WARMUPS]
    if bad or not len(warmups):
        raise ValueError(f"warmups must be a non-empty list of {list(WARMUPS)}, got {warmups!r}")
    problem = lag_synthetic(workers=workers, dim=dim, seed=seed)
    model = Exponential(rate)
    runs = [("gd", "none")] + [(name, w) for name in ("lag-wk", "lag-ps") for w in warmups]
    tots, frames = [], []
    for name, w in runs:
        res = train(problem, make_scheme(name, workers, warmup="silent" if w == "none" else w), model,
                    target=target, seed=seed, max_iter=max_iter)
        tots.append({"scheme": name, "warmup": w, "status": res.status, **res.totals(), "target": target,
                     "workers": workers, "samples": problem.n_samples})
        f = res.frame()
        f.insert(1, "warmup", w)
        frames.append(f)
    return problem, pd.DataFrame(tots), pd.concat(frames, ignore_index=True)


@dataclass
class Comparison:
    """The result of :func:`comparison`.

    Attributes:
        problem: the regression problem. schemes: ``{label: LazyScheme}`` in :data:`ORDER`.
        totals: one row per (model, scheme, seed) (see :func:`run_grid`). curves: the iterates of seed
            ``curves_seed`` (one row per iterate, with a ``model`` column). literal: the totals of LAGC with
            ``M = n`` (``units="count"``) under the exponential model, one row per seed. setting: the
            parameters in words (for the claims table).
    """

    problem: Problem
    schemes: dict
    totals: pd.DataFrame
    curves: pd.DataFrame
    literal: pd.DataFrame
    setting: str

    def describe(self) -> pd.DataFrame:
        """One row per scheme: code, trigger, warm-up, computation load, units and ``M`` of the threshold."""
        d = pd.DataFrame({k: s.describe() for k, s in self.schemes.items()}).T
        return d[["code", "trigger", "warmup", "load", "units", "threshold_units", "xi"]]

    def runs(self) -> str:
        """``"120 runs; 2 did not reach the target"`` (runs of :attr:`totals` whose status is not converged)."""
        missed = int((self.totals["status"] != "converged").sum())
        return f"{len(self.totals)} runs; {missed} did not reach the target"

    def curves_of(self, shape: float | None = None) -> pd.DataFrame:
        """The curves of one model: the Pareto ``shape``, or the exponential model for ``None``
        (:func:`model_label`)."""
        label = model_label(shape)
        if label not in set(self.curves["model"]):
            raise ValueError(f"shape {shape!r} is not among the curves' models {sorted(set(self.curves['model']))}")
        return self.curves[self.curves["model"] == label]


def comparison(workers: int = 12, groups: int = 4, dim: int = 50, seed=0, *, shapes=(1.5, 3.0), rate: float = 1.0,
               seeds=2, target: float = 1e-6, max_iter: int = 20_000, lagc_units="decoding-mean",
               warmup: str = "silent", curves_seed=0, progress: bool = False) -> Comparison:
    """Zhang and Simeone's comparison on :func:`lag_synthetic` (``dim = max(dim, workers)``).

    Every scheme of :func:`paper_schemes` (lazy ones with ``warmup``; LAGC with ``M = lagc_units``) runs under
    Pareto(1, ``a``) for every ``a`` in ``shapes`` and Exponential(``rate``), for compute-time seeds
    ``0 .. seeds - 1``; then LAGC with the literal ``M = n`` runs under the exponential model for the same seeds.
    """
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}")
    problem = lag_synthetic(workers=workers, dim=max(dim, workers), seed=seed)
    schemes = paper_schemes(workers, groups, seed=seed, warmup=warmup)
    schemes["lagc"] = make_scheme("lagc", workers, groups=groups, seed=seed, units=lagc_units, warmup=warmup)
    models = {model_label(a): Pareto(1.0, a) for a in shapes}
    models[model_label()] = Exponential(rate)
    totals, curves = run_grid(problem, schemes, models, range(seeds), target=target, curves_seed=curves_seed,
                              max_iter=max_iter, progress=progress)
    literal = {"lagc": make_scheme("lagc", workers, groups=groups, seed=seed, units="count", warmup=warmup)}
    lit, _ = compare(problem, literal, models[model_label()], seeds=range(seeds), target=target, max_iter=max_iter)
    setting = (f"LAG synthetic regression (dim {problem.dim}), {workers} workers, {groups} groups (load "
               f"{workers // groups}), gap {target:g}, seeds 0-{seeds - 1}, {WARMUP_WORDS[warmup]}")
    return Comparison(problem, schemes, totals, curves, lit, setting)


def bar_data(totals: pd.DataFrame, model: str) -> pd.DataFrame:
    """The data of a Fig. 2 / Fig. 3 bar chart: :func:`spread` of every metric of :data:`METRICS` under
    ``model``, schemes in :data:`ORDER`; one row per (metric, scheme)."""
    t = totals[totals.model == model]
    if t.empty:
        raise ValueError(f"model {model!r} is not in the totals (models: {sorted(set(totals.model))})")
    out = []
    for metric in METRICS:
        s = spread(t, metric).set_index("scheme").loc[[k for k in ORDER if k in set(t.scheme)]].reset_index()
        s.insert(0, "metric", metric)
        out.append(s)
    return pd.concat(out, ignore_index=True)


def medians(bars: pd.DataFrame) -> pd.DataFrame:
    """The medians of :func:`bar_data` as a scheme x metric table."""
    order = list(dict.fromkeys(bars.scheme))
    return bars.pivot(index="scheme", columns="metric", values="median").loc[order, list(METRICS)]


def write_table(df: pd.DataFrame, name: str, figures_dir) -> Path:
    """Write ``df`` to ``figures_dir/name.csv`` with the figures' fixed float format and line endings."""
    path = Path(figures_dir) / f"{name}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")
    return path
