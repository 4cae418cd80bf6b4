"""Fitting the compute-time models of :mod:`gclib.stragglers` to a timing trace (:mod:`gclib.timings`).

:func:`fit` fits, by maximum likelihood (``scipy.stats``), three families under both conventions of
:mod:`gclib.stragglers`:

* families: shifted exponential ``(mu, alpha)``, exponential ``(rate)``, Pareto ``(scale, shape)``; every one has a
  closed-form maximum-likelihood estimate (``alpha`` and ``scale`` are the sample minimum, the rates and the shape
  follow from the mean or the mean log), which ``scipy.stats`` computes for the data and this module repeats,
  vectorised, for the bootstrap;
* per task (``per_task=True``): every finite task duration of the trace is one sample;
* per worker (``per_task=False``, eq. 5: the ``j``-th task of a worker done at ``j * X``): one sample ``X`` per
  (iteration, worker): the worker's mean task duration over its tasks observed from task 1 on (its finish time of
  task ``J`` divided by ``J``, ``J`` its last task observed before the first one not observed). Under eq. 5 every
  task of a worker takes ``X``, so this is ``X`` exactly; with one task per worker both conventions see the same
  sample.

A worker that has a task that never finished (``inf``) in an iteration is a persistent straggler there: its
(iteration, worker) gives no per-worker sample (its finite tasks still count per task), and
:attr:`FitReport.persistent` is the mean number of such workers per iteration, rounded; every fitted model is then
wrapped in :class:`gclib.stragglers.Persistent` with that ``count``.

Goodness of fit and intervals come from one parametric bootstrap (``bootstrap`` replicates, seeded): draw a
sample of the same size from the fitted model (drawn in order, without a sort, see :func:`_sorted_draws`), refit
it, and record the parameters and the Kolmogorov-Smirnov statistic of the refit.

* ``p_value``: the fraction of replicates whose KS statistic is at least the data's, ``(1 + count) / (1 + B)``; as
  the replicates are refitted, the p-value accounts for the estimated parameters (the KS table would not);
* ``ci``: 95% basic (reverse-percentile) bootstrap intervals, ``2 theta - q97.5 .. 2 theta - q2.5``, on the log
  scale for the positive parameters (rates, ``scale``, ``shape``) and on the raw scale for the shift ``alpha``
  (clipped at 0). ``alpha`` and the Pareto ``scale`` are estimated by the sample minimum, which they never exceed:
  their interval ends at the estimate (its lower end is the basic one, so it covers the truth 97.5% of the time).
  For the exponential rate, ``alpha`` and the Pareto scale the statistic is a pivot and these intervals are exact
  up to the bootstrap's resolution; the sample minimum sits on the boundary of the support, where a
  Fisher-information interval does not apply.

The recorded trace is a model of its own, :class:`gclib.stragglers.Replay` (:attr:`FitReport.replay`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd
from scipy import stats

from gclib import checks
from gclib.progress import progress as _progress
from gclib.stats import basic_interval
from gclib.stragglers import MODELS, ComputeModel, Persistent, Replay
from gclib.timings import Timings

__all__ = ["FAMILIES", "PARAMETERS", "Fit", "FitReport", "fit", "samples", "task_correlation"]

#: the fitted families, in the order of :attr:`FitReport.fits`.
FAMILIES = ("shifted-exp", "exp", "pareto")
#: each family's parameters, named as the fields of its :mod:`gclib.stragglers` model.
PARAMETERS = {"shifted-exp": ("mu", "alpha"), "exp": ("rate",), "pareto": ("scale", "shape")}
_LOCATION = {"alpha"}  # intervals on the raw scale; the others on the log scale
_MINIMUM = {"alpha", "scale"}  # estimated by the sample minimum, which they cannot exceed
_CHUNK_CELLS = 2_000_000  # bootstrap samples drawn at a time (16 MB)
#: The fewest bootstrap replicates of a test: a p-value is at least ``1 / (B + 1)``, which is below 0.05 only from
#: ``B = 20`` on (with fewer, no fit could ever be rejected at 5%).
MIN_BOOTSTRAP = 20


@dataclass(frozen=True, eq=False)
class Fit:
    """One fitted model. Its fields (described here rather than as an attribute list, whose ``model`` entry would
    be a second target of the name ``model`` in the API reference):

    * ``name``: e.g. ``"shifted-exp per worker"``; ``family``: ``"shifted-exp"``, ``"exp"`` or ``"pareto"``;
      ``per_task``: the convention (see the module docstring); ``params``: the model's parameters by name;
    * ``ci``: parameter name -> ``(lo, hi)``, 95% basic parametric bootstrap interval (``nan`` without bootstrap);
    * ``loglik``: the log-likelihood of the sample at ``params``; ``aic``: ``2 * len(params) - 2 * loglik``;
    * ``ks``: the Kolmogorov-Smirnov statistic of the sample against the fitted model; ``p_value``: its parametric
      bootstrap p-value (``nan`` without bootstrap); ``n``: the number of samples;
    * ``model``: the fitted :class:`gclib.stragglers.ComputeModel` (in :class:`~gclib.stragglers.Persistent` when
      the trace has workers that never answered).
    """

    name: str
    family: str
    per_task: bool
    params: dict
    ci: dict
    loglik: float
    aic: float
    ks: float
    p_value: float
    n: int
    model: ComputeModel

    def cdf(self, x) -> np.ndarray:
        """The fitted distribution function of one sample (a task's duration, or a worker's draw) at ``x``."""
        return _frozen(self.family, self.params).cdf(np.asarray(x, dtype=float))

    def text(self) -> str:
        """``mu = 9.8 [9.1, 10.6], alpha = 0.0101 [0.0099, 0.0102]``."""
        return ", ".join(f"{k} = {v:.4g} [{self.ci[k][0]:.4g}, {self.ci[k][1]:.4g}]" for k, v in self.params.items())


@dataclass(eq=False)
class FitReport:
    """Every fit of a trace.

    Attributes:
        fits: one :class:`Fit` per family and convention that could be fitted. persistent: workers that never
            answered, per iteration on average (rounded), the ``count`` of :class:`~gclib.stragglers.Persistent`.
        replay: :class:`gclib.stragglers.Replay` of the trace. skipped: fit name -> why it could not be fitted
            (e.g. a Pareto fit on a sample with a zero). timings: the trace.
        task_correlation: the intraclass correlation of the log durations within an (iteration, worker), over the
            workers with at least 2 positive finite tasks: ``1 - pooled within variance / total variance``; 1 when a
            worker's tasks take the same time (per worker, eq. 5), about 0 when they are independent (per task);
            ``nan`` when no worker has 2 such tasks.
    """

    fits: list
    persistent: int
    replay: ComputeModel
    skipped: dict = field(default_factory=dict)
    timings: Optional[Timings] = None
    task_correlation: float = np.nan

    @property
    def per_task(self) -> bool:
        """The convention the trace follows: per task when :attr:`task_correlation` is below 0.5 (a worker's tasks
        nearer independent than equal), per worker otherwise, and per worker with one task per worker (then both
        conventions see the same sample)."""
        return bool(self.task_correlation < 0.5)  # nan (one task per worker) compares False

    @property
    def best(self) -> Fit:
        """The fit that describes the trace best. The convention is :attr:`per_task` (the Kolmogorov-Smirnov test
        sees only the distribution of single durations, which is the same under both conventions, so it cannot
        choose). Within it, the fit of smallest AIC among those not rejected at 5% (``p_value >= 0.05``), where a
        shifted exponential whose ``alpha`` interval reaches 0 gives way to the exponential when that fits too
        (it is the exponential, with one parameter more); when every fit is rejected, the largest p-value, then the
        smallest KS statistic. Without bootstrap (``bootstrap=0``) there is no test to choose by: ``ValueError``."""
        if not self.fits:
            raise ValueError("no model could be fitted to this trace: " + "; ".join(
                f"{k}: {v}" for k, v in self.skipped.items()))
        if all(np.isnan(f.p_value) for f in self.fits):
            raise ValueError(f"the fits were made without bootstrap (bootstrap=0): there is no goodness-of-fit test "
                             f"to choose the best by; fit with bootstrap >= {MIN_BOOTSTRAP}")
        same = [f for f in self.fits if f.per_task == self.per_task] or self.fits
        passed = [f for f in same if f.p_value >= 0.05]
        if any(f.family == "exp" for f in passed):
            passed = [f for f in passed if not (f.family == "shifted-exp" and f.ci["alpha"][0] <= 0)]
        if passed:
            return min(passed, key=lambda f: f.aic)
        return min(same, key=lambda f: (-1.0 if np.isnan(f.p_value) else -f.p_value, f.ks))

    def models(self, level: float | None = None) -> dict:
        """Fit name -> fitted model, plus ``"replay"``: every fit, or with ``level`` only the fits the bootstrap
        test does not reject at that level (``p_value >= level``; a fit without a p-value is kept)."""
        keep = [f for f in self.fits if level is None or not f.p_value < level]
        return {**{f.name: f.model for f in keep}, "replay": self.replay}

    def rejected(self, level: float = 0.05) -> list:
        """Names of the fits the bootstrap test rejects at ``level`` (``p_value < level``)."""
        return [f.name for f in self.fits if f.p_value < level]

    def table(self) -> pd.DataFrame:
        """One row per fit: name, family, per_task, n, parameters with their intervals, loglik, aic, ks, p_value,
        and which is best."""
        best = self.best.name if self.fits and not all(np.isnan(f.p_value) for f in self.fits) else None
        return pd.DataFrame([{"name": f.name, "family": f.family, "per_task": f.per_task, "n": f.n,
                              "parameters": f.text(), "loglik": f.loglik, "aic": f.aic, "ks": f.ks,
                              "p_value": f.p_value, "best": f.name == best} for f in self.fits],
                            columns=["name", "family", "per_task", "n", "parameters", "loglik", "aic", "ks",
                                     "p_value", "best"])


def samples(t: Timings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The samples the fits see.

    Returns:
        ``per_worker`` (1-d: one mean task duration per (iteration, worker) with a task observed from task 1 on and
        none that never finished), ``per_task`` (1-d: every finite duration), ``dead`` (``(iterations, workers)``
        bool: the worker has a task that never finished in that iteration).
    """
    d = t.durations
    dead = np.isinf(d).any(axis=2)
    seen = np.cumprod(~np.isnan(d), axis=2).astype(bool)  # observed from task 1 on, without a gap
    J = seen.sum(axis=2)
    with np.errstate(invalid="ignore"):
        total = np.where(seen, d, 0.0).sum(axis=2)
    ok = ~dead & (J > 0)
    return total[ok] / J[ok], d[np.isfinite(d)], dead


def task_correlation(t: Timings) -> float:
    """See :attr:`FitReport.task_correlation` (logs, so that a heavy tail has a variance)."""
    d = t.durations
    ok = np.isfinite(d) & (d > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(ok, np.log(np.where(ok, d, 1.0)), 0.0)
    m = ok.sum(axis=2)
    cells = m >= 2
    if not cells.any():
        return float("nan")
    x, ok, m = x[cells], ok[cells], m[cells]
    mean = x.sum(axis=1) / m
    within = (np.where(ok, x - mean[:, None], 0.0) ** 2).sum() / (m - 1).sum()
    total = np.var(x[ok], ddof=1)
    if total == 0:
        return 1.0
    return float(1.0 - within / total)


# ------------------------------------------------------------------------------------- the three families
def _scipy_fit(family, x) -> dict:
    """Maximum-likelihood parameters of ``x`` (1-d) with ``scipy.stats``."""
    if family == "shifted-exp":
        loc, scale = stats.expon.fit(x)
        return {"mu": 1.0 / scale, "alpha": float(loc)}
    if family == "exp":
        _, scale = stats.expon.fit(x, floc=0)
        return {"rate": 1.0 / scale}
    b, _, scale = stats.pareto.fit(x, floc=0)
    return {"scale": float(scale), "shape": float(b)}


def _frozen(family, p):
    if family == "shifted-exp":
        return stats.expon(loc=p["alpha"], scale=1.0 / p["mu"])
    if family == "exp":
        return stats.expon(scale=1.0 / p["rate"])
    return stats.pareto(p["shape"], scale=p["scale"])


def _mle(family, x) -> dict:
    """The same estimates as :func:`_scipy_fit`, for each row of ``x`` (``(B, n)``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if family == "shifted-exp":
            lo = x.min(axis=1)
            return {"mu": 1.0 / (x.mean(axis=1) - lo), "alpha": lo}
        if family == "exp":
            return {"rate": 1.0 / x.mean(axis=1)}
        lo = x.min(axis=1)
        return {"scale": lo, "shape": x.shape[1] / np.log(x / lo[:, None]).sum(axis=1)}


def _cdf(family, p, x):
    """CDF at ``x`` (``(B, n)``) of the models with parameters ``p`` (arrays of ``B``)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if family == "shifted-exp":
            return -np.expm1(-p["mu"][:, None] * np.maximum(x - p["alpha"][:, None], 0.0))
        if family == "exp":
            return -np.expm1(-p["rate"][:, None] * x)
        s = p["scale"][:, None]
        return np.where(x >= s, -np.expm1(p["shape"][:, None] * np.log(s / np.maximum(x, s))), 0.0)


def _sorted_draws(family, p, rng, c, n):
    """``c`` samples of ``n`` draws of the model with parameters ``p``, each sorted, as a ``(c, n)`` array,
    without sorting: the order statistics of ``n`` standard exponentials are the cumulative sums of independent
    ``Exp(1) / (n - i)``, ``i = 0 .. n-1`` (Renyi), and each family is an increasing function of a standard
    exponential ``E``: ``alpha + E / mu``, ``E / rate``, ``scale * exp(E / shape)``."""
    e = np.cumsum(rng.exponential(size=(c, n)) / (n - np.arange(n)), axis=1)
    if family == "shifted-exp":
        return p["alpha"] + e / p["mu"]
    if family == "exp":
        return e / p["rate"]
    return p["scale"] * np.exp(e / p["shape"])


def _ks_sorted(family, p, xs):
    """Kolmogorov-Smirnov statistic of each row of ``xs`` (``(B, n)``, rows sorted) against its model."""
    n = xs.shape[1]
    F = _cdf(family, p, xs)
    i = np.arange(1, n + 1)
    return np.maximum((i / n - F).max(axis=1), (F - (i - 1) / n).max(axis=1))


def _why_not(family, x) -> Optional[str]:
    if len(x) < 2 or np.ptp(x) == 0:
        return f"needs at least 2 distinct samples, got {len(np.unique(x))}"
    if family == "pareto" and x.min() <= 0:
        return "a Pareto sample must be positive, the trace has a duration of 0"
    return None


def _fit_one(family, per_task, x, rng, bootstrap, persistent) -> Fit:
    params = _scipy_fit(family, x)
    base = MODELS[family](**params, per_task=per_task)  # checks the parameters (e.g. a rate beyond float64)
    dist = _frozen(family, params)
    loglik = float(dist.logpdf(x).sum())
    ks = float(stats.kstest(x, dist.cdf).statistic)
    n = len(x)
    ci = {k: (np.nan, np.nan) for k in params}
    p_value = np.nan
    if bootstrap:
        boot = {k: [] for k in params}
        ks_b = []
        step = max(1, _CHUNK_CELLS // n)
        for start in range(0, bootstrap, step):
            c = min(step, bootstrap - start)
            xb = _sorted_draws(family, params, rng, c, n)
            pb = _mle(family, xb)
            ks_b.append(_ks_sorted(family, pb, xb))
            for k in params:
                boot[k].append(pb[k])
        ks_b = np.concatenate(ks_b)
        p_value = float((1 + np.count_nonzero(ks_b >= ks)) / (1 + bootstrap))
        for k, v in params.items():
            b = np.concatenate(boot[k])
            if k in _LOCATION:
                lo, hi = basic_interval(v, b)
                ci[k] = (max(0.0, lo), hi)
            else:
                ci[k] = basic_interval(v, b, log=True)
            if k in _MINIMUM:  # never above the sample minimum, which is the estimate
                ci[k] = (ci[k][0], v)
        ci = {k: (float(lo), float(hi)) for k, (lo, hi) in ci.items()}
    model = Persistent(base, count=persistent) if persistent else base
    return Fit(name=f"{family} {'per task' if per_task else 'per worker'}", family=family, per_task=per_task,
               params={k: float(v) for k, v in params.items()}, ci=ci, loglik=loglik,
               aic=2 * len(params) - 2 * loglik, ks=ks, p_value=p_value, n=n, model=model)


def fit(t, *, seed=0, bootstrap: int = 200, progress: bool = False) -> FitReport:
    """Fit every family under both conventions to a trace, and keep the trace as a model (see the module
    docstring).

    Args:
        t: a :class:`gclib.timings.Timings`, or an ``(iterations, workers, tasks)`` array of durations (checked by
            :meth:`Timings.from_array`). seed: an integer or a ``numpy.random.Generator`` (the bootstrap's only
            randomness: the same seed gives the same report). bootstrap: replicates of the parametric bootstrap, at
            least :data:`MIN_BOOTSTRAP` (0: no intervals, no p-values, and no best fit: :attr:`FitReport.best`
            refuses). progress: a progress bar over the fits (on stderr; a trace of a million task times takes
            about a minute).
    Returns:
        :class:`FitReport`.
    """
    if not isinstance(t, Timings):
        if not isinstance(t, (np.ndarray, list, tuple)):
            raise checks.ParameterTypeError(f"t must be a gclib.timings.Timings or an (iterations, workers, tasks) "
                                            f"array of durations, got {type(t).__name__}")
        t = Timings.from_array(t)
    bootstrap = checks.integer("bootstrap", bootstrap, low=0)
    if 0 < bootstrap < MIN_BOOTSTRAP:
        raise ValueError(f"bootstrap must be 0 (no test) or at least {MIN_BOOTSTRAP} (a p-value below 0.05 needs "
                         f"{MIN_BOOTSTRAP} replicates), got {bootstrap}")
    rng = checks.generator(seed)
    per_worker, per_task, dead = samples(t)
    persistent = int(np.round(dead.sum(axis=1).mean()))
    fits, skipped = [], {}
    seeds = rng.integers(0, 2 ** 63, size=2 * len(FAMILIES))

    jobs = [(ci, pt, x, fi, family) for ci, (pt, x) in enumerate(((False, per_worker), (True, per_task)))
            for fi, family in enumerate(FAMILIES)]
    for ci, pt, x, fi, family in _progress(jobs, "fit", progress, unit="fit", delay=2):  # shown past 2 s
        name = f"{family} {'per task' if pt else 'per worker'}"
        why = _why_not(family, x)
        if why is None:
            try:
                fits.append(_fit_one(family, pt, x, np.random.default_rng(seeds[ci * len(FAMILIES) + fi]),
                                     bootstrap, persistent))
                continue
            except ValueError as e:  # parameters a model refuses (e.g. a rate beyond the float64 range)
                why = str(e)
        skipped[name] = why
    return FitReport(fits=fits, persistent=persistent, replay=Replay(t.durations), skipped=skipped, timings=t,
                     task_correlation=task_correlation(t))
