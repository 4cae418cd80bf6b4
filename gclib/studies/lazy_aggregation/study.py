"""The comparisons of notebook 06 as functions (the notebook only calls, plots and shows them).

* :func:`lag_check`: GD, LAG-WK and LAG-PS on Chen et al.'s 9-worker problem, under each warm-up, with Chen et
  al.'s constants;
* :func:`paper_schemes`: GD, GC (CRC), grouping (FRC, no laziness), and LAG, LAGC and G-LAG each with both
  triggers (``lag-wk``, ``lag-ps``, ``lagc-wk``, ``lagc-ps``, ``g-lag-wk``, ``g-lag-ps``) on ``n`` workers and
  ``G`` groups, all coded schemes at the same computation load ``r = n / G``;
* :func:`gclib.stragglers.mean_one_models` (importable from here): Pareto tails of several shapes, the
  exponential and a shifted exponential, all of mean 1 per unit of work, so that heavy and light tails compare at
  the same mean (:func:`model_table` says how; :func:`model_label` names a member);
* :func:`run_grid`: every scheme x compute-time model x seed, totals to the target (and optionally the curves);
* :func:`comparison`: our reconstruction of Zhang and Simeone's comparison (their Figs. 2 and 3, whose settings
  are unknown) on Chen et al.'s problem, plus LAGC with the literal threshold ``M = n``;
* :func:`robustness`: the same schemes on a family of generic problems (:func:`gclib.learning.problems.family`),
  with Chen et al.'s server-side constant beside ours;
* :func:`spread`, :func:`bar_data`, :func:`medians`: the summaries behind the figures; :func:`write_table`.

The claims drawn from these tables are judged in :mod:`gclib.studies.lazy_aggregation.claims`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gclib import checks
from gclib.progress import progress as _progress
from gclib.stragglers import Exponential, Pareto, ShiftedExponential, mean_one_models
from gclib.stragglers import mean_one_label as model_label  # noqa: F401  (the notebook's name)
from gclib.learning.optim import WARMUPS, compare, make_scheme, train
from gclib.learning.problems import Problem, lag_synthetic

#: The two trigger rules, each lazy scheme runs with both: worker side (``wk``) and server side (``ps``).
TRIGGERS = ("wk", "ps")
#: The lazy schemes (each run once per trigger, labelled ``<scheme>-<trigger>``).
LAZY = ("lag", "lagc", "g-lag")
#: Display order of the schemes.
ORDER = ("gd", "gc", "grouping", *(f"{name}-{t}" for name in LAZY for t in TRIGGERS))


def lazy_label(name: str, trigger: str) -> str:
    """``"g-lag-ps"``: the label of a lazy scheme with a trigger."""
    if name not in LAZY or trigger not in TRIGGERS:
        raise ValueError(f"a lazy scheme is one of {list(LAZY)} with a trigger of {list(TRIGGERS)}, got "
                         f"{name!r}, {trigger!r}")
    return f"{name}-{trigger}"


def paper_schemes(workers: int = 12, groups: int = 4, seed=0, *, triggers=TRIGGERS, **kw) -> dict:
    """``{label: LazyScheme}`` in :data:`ORDER`: GD, GC (CRC), grouping and every lazy scheme with every trigger of
    ``triggers`` (``kw`` goes to :func:`make_scheme` of the lazy ones, e.g. ``units``, ``warmup``, ``xi``)."""
    bad = [t for t in triggers if t not in TRIGGERS]
    if bad or not len(triggers):
        raise ValueError(f"triggers must be a non-empty list of {list(TRIGGERS)}, got {triggers!r}")
    out = {"gd": make_scheme("gd", workers, groups=groups, seed=seed),
           "gc": make_scheme("gc", workers, groups=groups, seed=seed),
           "grouping": make_scheme("gc", workers, groups=groups, code="frc", seed=seed)}
    for name in LAZY:
        for t in TRIGGERS:
            if t in triggers:
                scheme = "lag-wk" if name == "lag" else name
                out[lazy_label(name, t)] = make_scheme(scheme, workers, groups=groups, seed=seed, trigger=t, **kw)
    return out


def _moments(model) -> tuple[float, float]:
    """(mean, coefficient of variation) of one draw of a model of :func:`mean_one_models`."""
    if isinstance(model, Pareto):
        a, s = model.shape, model.scale
        mean = a * s / (a - 1) if a > 1 else math.inf
        return mean, (1 / math.sqrt(a * (a - 2)) if a > 2 else math.inf)
    if isinstance(model, ShiftedExponential):
        mean = model.alpha + 1 / model.mu
        return mean, (1 / model.mu) / mean
    if isinstance(model, Exponential):
        return 1 / model.rate, 1.0
    raise ValueError(f"model must be a Pareto, exponential or shifted-exponential model, got {model!r}")


def model_table(models: dict) -> pd.DataFrame:
    """One row per model: ``model, distribution, mean, cv`` (the coefficient of variation of one draw, infinite
    for a Pareto shape at most 2), so that a reader sees what is matched (the mean) and what is not (the spread)."""
    rows = []
    for name, m in models.items():
        mean, cv = _moments(m)
        desc = ", ".join(f"{k} = {v:.4g}" for k, v in m.describe().items()
                         if isinstance(v, float) and not isinstance(v, bool))
        rows.append({"model": name, "distribution": f"{m.name} ({desc})", "mean": mean, "cv": cv})
    return pd.DataFrame(rows)


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


def lag_check(workers: int = 9, dim: int = 50, seed=0, *, target: float = 1e-8, rate: float = 1.0,
              max_iter: int = 20_000, warmups=WARMUPS):
    """GD, LAG-WK and LAG-PS on Chen et al.'s heterogeneous regression (:func:`lag_synthetic`), to ``target``,
    with Chen et al.'s constants (``xi="chen"``: ``10/D`` on the server side).

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
        kw = {} if name == "gd" else {"xi": "chen"}
        res = train(problem, make_scheme(name, workers, warmup="silent" if w == "none" else w, **kw), model,
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
        problem: the regression problem. schemes: ``{label: LazyScheme}`` in :data:`ORDER`. models: the
            compute-time models by label (:func:`mean_one_models`).
        totals: one row per (model, scheme, seed) (see :func:`run_grid`). curves: the iterates of seed
            ``curves_seed`` (one row per iterate, with a ``model`` column). literal: the totals of LAGC (worker
            side) with ``M = n`` (``units="count"``) under the exponential model, one row per seed. setting: the
            parameters in words (for the claims table).
    """

    problem: Problem
    schemes: dict
    models: dict
    totals: pd.DataFrame
    curves: pd.DataFrame
    literal: pd.DataFrame
    setting: str

    def describe(self) -> pd.DataFrame:
        """One row per scheme: code, trigger, warm-up, computation load, units, ``M`` and ``xi`` of the
        threshold."""
        d = pd.DataFrame({k: s.describe() for k, s in self.schemes.items()}).T
        return d[["code", "trigger", "warmup", "load", "units", "threshold_units", "xi"]]

    def runs(self) -> str:
        """``"120 runs; 2 did not reach the target"`` (runs of :attr:`totals` whose status is not converged)."""
        missed = int((self.totals["status"] != "converged").sum())
        return f"{len(self.totals)} runs; {missed} did not reach the target"

    def curves_of(self, model: str) -> pd.DataFrame:
        """The curves of one model, by its label (``"pareto 1.5"``, ``"exp"``, ``"shifted-exp"``)."""
        if model not in set(self.curves["model"]):
            raise ValueError(f"model {model!r} is not among the curves' models {sorted(set(self.curves['model']))}")
        return self.curves[self.curves["model"] == model]


def comparison(workers: int = 12, groups: int = 4, dim: int = 50, seed=0, *, shapes=(1.5, 3.0), shift: float = 0.5,
               seeds=2, target: float = 1e-6, max_iter: int = 20_000, lagc_units="decoding-mean",
               warmup: str = "silent", curves_seed=0, progress: bool = False) -> Comparison:
    """Our reconstruction of Zhang and Simeone's comparison on :func:`lag_synthetic` (``dim = max(dim,
    workers)``).

    Every scheme of :func:`paper_schemes` (lazy ones with both triggers and ``warmup``; LAGC with ``M =
    lagc_units``) runs under every model of :func:`mean_one_models` (``shapes``, ``shift``) for compute-time seeds
    ``0 .. seeds - 1``; then LAGC (worker side) with the literal ``M = n`` runs under the exponential model for the
    same seeds.
    """
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}")
    if warmup not in WARMUPS:
        raise ValueError(f"warmup must be one of {list(WARMUPS)}, got {warmup!r}")
    problem = lag_synthetic(workers=workers, dim=max(dim, workers), seed=seed)
    schemes = paper_schemes(workers, groups, seed=seed, warmup=warmup)
    for t in TRIGGERS:
        schemes[lazy_label("lagc", t)] = make_scheme("lagc", workers, groups=groups, seed=seed, trigger=t,
                                                     units=lagc_units, warmup=warmup)
    models = mean_one_models(shapes, shift)
    totals, curves = run_grid(problem, schemes, models, range(seeds), target=target, curves_seed=curves_seed,
                              max_iter=max_iter, progress=progress)
    literal = {"lagc-wk": make_scheme("lagc", workers, groups=groups, seed=seed, trigger="wk", units="count",
                                      warmup=warmup)}
    lit, _ = compare(problem, literal, models["exp"], seeds=range(seeds), target=target, max_iter=max_iter)
    setting = (f"LAG synthetic regression (dim {problem.dim}), {workers} workers, {groups} groups (load "
               f"{workers // groups}), gap {target:g}, seeds 0-{seeds - 1}, compute times of mean 1, "
               f"{WARMUP_WORDS[warmup]}")
    return Comparison(problem, schemes, models, totals, curves, lit, setting)


#: The iterations Chen et al.'s constant gets in :func:`robustness`, in multiples of GD's iterations.
CHEN_CAP = 20


@dataclass
class Robustness:
    """The result of :func:`robustness`.

    Attributes:
        problems: the problems by name. totals: one row per (problem, model, scheme, seed): ``problem, kind,
            design, cond`` and the columns of :func:`run_grid`'s totals; schemes with Chen et al.'s server-side
            constant are labelled ``<scheme>-chen`` and run under the first model with the first seed only (their
            uploads and iterations do not depend on the compute times). setting: the parameters in words.
    """

    problems: dict
    totals: pd.DataFrame
    setting: str

    def convergence(self) -> pd.DataFrame:
        """One row per scheme: runs, how many reached the target, how many diverged, and the largest number of
        iterations a converged run took."""
        g = self.totals.groupby("scheme", sort=False)
        out = pd.DataFrame({"runs": g.size(), "converged": g["status"].apply(lambda s: int((s == "converged").sum())),
                            "diverged": g["status"].apply(lambda s: int((s == "diverged").sum())),
                            "max_iterations": g["iterations"].max()})
        return out.reset_index()


def robustness(problems, models: dict, seeds=2, *, workers: int = 12, groups: int = 4, rel_target: float = 1e-6,
               max_iter: int = 20_000, chen: bool = True, progress: bool = False) -> Robustness:
    """Every scheme of :func:`paper_schemes` on every problem of ``problems`` (each with ``workers`` parts), under
    every model, for compute-time seeds ``0 .. seeds - 1``, to the gap ``rel_target`` times the problem's initial
    gap; with ``chen``, also LAG-PS and G-LAG with Chen et al.'s server-side constant (``xi="chen"``) under the
    first model and seed, each stopped after :data:`CHEN_CAP` times GD's iterations on that problem (status
    ``max_iter``: it has not converged in a budget that every scheme with gclib's constants meets).
    """
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}")
    rel_target = checks.real("rel_target", rel_target, above=0)
    problems = list(problems)
    if not problems or not models:
        raise ValueError("robustness needs at least one problem and one model")
    bad = [p.name for p in problems if p.n_parts != workers]
    if bad:
        raise ValueError(f"every problem needs {workers} parts (one per worker), got {bad}")
    schemes = paper_schemes(workers, groups)
    chen_schemes = {f"{lazy_label(n, 'ps')}-chen": make_scheme("lag-ps" if n == "lag" else n, workers, groups=groups,
                                                                trigger="ps", xi="chen") for n in ("lag", "g-lag")}
    first = next(iter(models))
    frames = []
    for p in _progress(problems, "problems", progress):
        target = rel_target * p.gap(np.zeros(p.dim))
        tot, _ = run_grid(p, schemes, models, range(seeds), target=target, max_iter=max_iter)
        parts = [tot]
        if chen:
            cap = min(max_iter, max(100, CHEN_CAP * int(tot.loc[tot.scheme == "gd", "iterations"].max())))
            c, _ = compare(p, chen_schemes, models[first], seeds=[0], target=target, max_iter=cap)
            c.insert(0, "model", first)
            parts.append(c)
        t = pd.concat(parts, ignore_index=True)
        info = p.info
        t.insert(0, "problem", p.name)
        for key in ("kind", "design", "cond"):
            t.insert(1, key, info.get(key))
        frames.append(t)
    setting = (f"{len(problems)} generic problems ({', '.join(sorted({p.info.get('kind', p.kind) for p in problems}))}; "
               f"condition numbers {', '.join(f'{c:g}' for c in sorted({p.info.get('cond', math.nan) for p in problems}))}), "
               f"{workers} workers, {groups} groups, gap {rel_target:g} x the initial gap, seeds 0-{seeds - 1}, "
               f"compute times of mean 1")
    return Robustness({p.name: p for p in problems}, pd.concat(frames, ignore_index=True), setting)


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
