"""The model the advice of a trace ranks under: the trace checked, the compute-time models fitted to it
(:func:`gclib.fit.fit`) and those that keep worker identity and whole iterations
(:func:`gclib.correlated_paces.models`), judged on the trace's whole iterations
(:func:`gclib.correlated_paces.support`); the advice (:func:`gclib.advise.advise`) under the first supported one of
:func:`choose`'s order, and how much of its recommendation rests on the slowest worker
(:func:`reliance`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gclib import checks, correlated_paces, fit
from gclib.advise import report as _report
from gclib.advise.designs import TRIALS, default_max_load
from gclib.advise.ranking import Advice, advise
from gclib.advise.report import reliance_text
from gclib.advise.simulation import design_times
from gclib.correlated_paces import LEVEL, TRACE_MODELS, can_simulate, slowest_worker, without_slowest
from gclib.jsonable import jsonable
from gclib.timings import Timings

#: Fitted models whose bootstrap goodness-of-fit test rejects them at this level are left out of the advice (their
#: tails, e.g. a Pareto fitted to exponential data, would otherwise dominate the robustness columns).
REJECT_LEVEL = 0.05
#: Bootstrap replicates of the fits and of the goodness-of-fit tests by default.
BOOTSTRAP = 200


#: The range a trace's positive task times must lie in (seconds; 0 and inf apart) to be fitted and simulated: the
#: fits take squares, logarithms and ratios of them and the simulator sums them, which overflow or underflow
#: float64 outside it (times of 1e300 s make every design's time inf; of 1e-320 s, denormal, ratios of 0 / 0).
TIME_RANGE = (1e-100, 1e100)


def check_trace(t) -> Timings:
    """``t`` when its task times can be fitted and simulated: positive finite times within :data:`TIME_RANGE`, at
    least two distinct ones; else a ``ValueError`` naming the trace and what it holds instead, before any fit or
    simulation (a trace of zeros, of one repeated time, of times near 1e300 or of denormal times)."""
    if not isinstance(t, Timings):
        raise checks.ParameterTypeError(f"t must be a gclib.timings.Timings, got {type(t).__name__}")
    x = t.durations[np.isfinite(t.durations)]
    pos = x[x > 0]
    if pos.size == 0:
        raise ValueError(f"{t.source}: every finite task time is 0 s; a compute-time model needs positive times")
    lo, hi = float(pos.min()), float(pos.max())
    if lo < TIME_RANGE[0] or hi > TIME_RANGE[1]:
        raise ValueError(f"{t.source}: task times must lie within {TIME_RANGE[0]:g} to {TIME_RANGE[1]:g} s (or be 0 "
                         f"or inf) to be fitted and simulated in float64 (gclib.advise.TIME_RANGE), got {lo:.3g} to "
                         f"{hi:.3g} s; write the trace in seconds")
    if np.unique(x).size < 2:
        raise ValueError(f"{t.source}: every finite task time is the same ({lo:.6g} s); fitting a compute-time model "
                         f"needs at least 2 distinct times")
    return t


@dataclass
class TraceAdvice:
    """The outcome of :func:`from_trace`.

    Attributes:
        advice: the :class:`gclib.advise.Advice`, ranked under ``primary``. report: the fits (:func:`gclib.fit.fit`).
        split: :func:`gclib.correlated_paces.split` of the trace (``None`` when the trace cannot have it). support: the
            goodness of fit of every model on the trace's whole iterations (:func:`gclib.correlated_paces.support`;
            empty when the trace cannot be judged). primary: the model the advice ranks under; reason: why (a sentence);
            primary_model: that model.
        left_out: the fits the bootstrap KS test rejects (left out of the advice unless ``all_models``).
        skipped: models the trace cannot have, ``{name: why}``. reliance: how much of the recommendation's
            speed-up rests on the slowest worker (:func:`reliance`; ``None`` when not computed). iteration: what one
            iteration of the advice is in the trace's terms (:func:`gclib.advise.report.iteration_numbers`).
    """

    advice: Advice
    report: object
    split: object
    support: pd.DataFrame
    primary: str
    reason: str
    left_out: list
    skipped: dict
    reliance: dict | None = None
    primary_model: object = None
    iteration: dict | None = None

    def text(self) -> str:
        """The variance split, the models judged on whole iterations, then the advice with the model it ranks
        under and why, and the slowest worker's share in the speed-up."""
        lines = []
        if self.split is not None:
            s = self.split.slowest
            lines.append(f"variance of the log paces (pace: a worker's mean task time in an iteration; 95% bootstrap "
                         f"intervals over iterations and workers): {self.split.text()}; worker {s['worker']} is the "
                         f"slowest on average ({s['ratio']:.3g}x the median worker's pace) and in "
                         f"{100 * s['share']:.0f}% of the iterations")
        if len(self.support):
            lines.append("models judged on whole iterations (mean k-th fastest pace, k = 1 .. workers; bootstrap "
                         "p-value; slowest: the model's mean slowest pace against the trace's):")
            for r in self.support.itertuples():
                if r.note:
                    lines.append(f"  {r.model:24s} not judged: {r.note}")
                else:
                    lines.append(f"  {r.model:24s} p {r.p_value:<6.3g} slowest {100 * r.slowest_error:+.1f}%  "
                                 f"{'supported' if r.supported else 'not supported'}")
        for n, why in self.skipped.items():
            lines.append(f"  {n:24s} not fitted: {why}")
        lines += ["", self.advice.text(), f"Ranked under {self.reason}."]
        if self.iteration is not None:
            lines.append(_report.iteration_text(self.iteration, self.advice))
        if self.reliance is not None:
            lines.append(reliance_text(self.reliance))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = self.advice.to_dict()
        out.update(jsonable({"primary_reason": self.reason, "support": self.support.to_dict(orient="records"),
                             "variance_split": None if self.split is None else {
                                 "parts": self.split.table().to_dict(orient="records"),
                                 "slowest": self.split.slowest},
                             "not_fitted": self.skipped, "reliance": self.reliance,
                             "iteration": self.iteration}))
        return out


#: The models that keep most of a trace first: the one the advice ranks under is the first supported one that can
#: simulate the workers asked for; the fitted families follow, the best fit first and the others by AIC
#: (:func:`choose`).
PREFERENCE = ("replay by iteration", "worker effects", "replay")


def preference(report) -> list:
    """The order :func:`choose` tries the models of a trace in: :data:`PREFERENCE`, then the fits of ``report``
    (:func:`gclib.fit.fit`), its best fit first and the others by AIC."""
    fits = sorted(report.fits, key=lambda f: (f.name != report.best.name, f.aic)) if report.fits else []
    return list(PREFERENCE) + [f.name for f in fits]


def choose(table: pd.DataFrame, candidates: dict, K: int, order=None) -> tuple[str, str]:
    """The model the advice ranks under, and why: the first model of ``order`` (default :data:`PREFERENCE`, then
    the other models in ``candidates``' order) that can simulate ``K`` workers and is supported by ``table``
    (:func:`gclib.correlated_paces.support`'s); when none is, the one of largest p-value among those that can
    (ties: the order).

    Returns:
        ``(name, sentence)``.
    """
    order = list(PREFERENCE if order is None else order)
    order += [n for n in candidates if n not in order]
    order = [n for n in order if n in candidates]
    by = table.set_index("model") if len(table) else pd.DataFrame(columns=["p_value", "supported"])
    able = [n for n in order if can_simulate(candidates[n], K)]
    if not able:
        raise ValueError(f"no model simulates {K} workers: {', '.join(order)}")

    def p(n):
        return float(by.at[n, "p_value"]) if n in by.index else math.nan

    for n in able:
        if n in by.index and bool(by.at[n, "supported"]):
            skipped = [m for m in order[:order.index(n)] if m in by.index]
            why = "; ".join(f"'{m}' " + ("does not simulate " + str(K) + " workers" if m not in able else
                                           f"not supported (p = {p(m):.3g})") for m in skipped)
            return n, (f"'{n}', the first model supported by the trace's whole iterations (p = {p(n):.3g} >= "
                       f"{LEVEL:g})" + (f"; before it {why}" if why else ""))
    judged = [n for n in able if not math.isnan(p(n))]
    if not judged:
        return able[0], f"'{able[0]}': no model could be judged on the trace's whole iterations"
    best = max(judged, key=lambda n: (p(n), -order.index(n)))
    return best, (f"'{best}', the largest p-value ({p(best):.3g}) of the models that simulate {K} workers; none is "
                  f"supported by the trace's whole iterations at {LEVEL:g}")


@dataclass
class TraceFit:
    """The models of a trace and the one the advice ranks under (:func:`fit_trace`), before any simulation.

    Attributes:
        report: the fits (:func:`gclib.fit.fit`). left_out: the fits the bootstrap KS test rejects. extra, skipped:
            the models that keep worker identity and whole iterations and those the trace cannot have
            (:func:`gclib.correlated_paces.models`). split, support: as :class:`TraceAdvice`. primary, reason: the model
            the advice ranks under and why. models: the models the advice simulates for ``K`` workers.
    """

    report: object
    left_out: list
    extra: dict
    skipped: dict
    split: object
    support: pd.DataFrame
    primary: str
    reason: str
    models: dict


def fit_trace(t, K: int | None = None, *, seed=0, bootstrap: int = BOOTSTRAP, all_models: bool = False,
              report=None) -> TraceFit:
    """Fit every model to a trace (or take ``report``, the fits :func:`gclib.fit.fit` made of it with this
    ``seed`` and ``bootstrap``), judge them on its whole iterations and choose the one the advice ranks under.

    Args: as :func:`from_trace`.
    """
    check_trace(t)
    K = t.workers if K is None else checks.integer("K", K, low=2)
    seed = checks.integer("seed", seed, low=0)
    report = fit.fit(t, seed=seed, bootstrap=bootstrap) if report is None else report
    level = None if all_models else REJECT_LEVEL
    left_out = [] if level is None else report.rejected(level)
    extra, skipped = correlated_paces.models(t)
    judged = {**report.models(), **extra}
    split, sup = None, pd.DataFrame(columns=["model", "distance", "p_value", "supported", "slowest_model",
                                             "slowest_trace", "slowest_error", "fastest_error", "note"])
    try:
        split = correlated_paces.split(t, bootstrap=bootstrap, seed=seed)
        sup = correlated_paces.support(judged, t, bootstrap=max(bootstrap, 1), seed=seed)
        primary, reason = choose(sup, judged, K, order=preference(report))
    except ValueError as e:  # a trace with workers missing from iterations, or that never answered
        primary = "replay"
        reason = f"'replay': the trace's whole iterations cannot be judged ({e})"
    models = {n: m for n, m in {**report.models(level=level), **extra}.items() if can_simulate(m, K)}
    if primary not in models:
        models[primary] = judged[primary]
    return TraceFit(report, left_out, extra, skipped, split, sup, primary, reason, models)


def from_trace(t, K: int | None = None, *, seed=0, bootstrap: int = BOOTSTRAP, trials: int | None = None,
               max_load: int | None = None, budget: float | None = None, all_models: bool = False,
               progress: bool = False, network=None, screen: bool | None = None, report=None) -> TraceAdvice:
    """Fit every model to a trace and advise under the best supported one.

    The fits of :func:`gclib.fit.fit` (those the bootstrap KS test does not reject, or all with ``all_models``),
    the replay of independent rows, and the models that keep worker identity and whole iterations
    (:func:`gclib.correlated_paces.models`) are judged on the trace's whole iterations
    (:func:`gclib.correlated_paces.support`); the advice (:func:`gclib.advise.advise`, every model that simulates ``K``
    workers) ranks under the first supported one of :func:`choose`'s order (:func:`fit_trace`).
    When the ranking model keeps the trace's workers, :func:`reliance` says how much of the recommendation's speed-up
    rests on the slowest worker.

    Args:
        t: a :class:`gclib.timings.Timings`. K: workers to advise (default: the trace's). seed: the fits'
            bootstrap, the tests and the simulation. bootstrap: replicates of the fits and of the tests.
            trials, max_load, budget, progress, network, screen: as :func:`gclib.advise.advise`.
        report: the fits of ``t`` when made already (:func:`gclib.fit.fit` with this ``seed`` and ``bootstrap``):
            the trace is then fitted once.
    """
    f = fit_trace(t, K, seed=seed, bootstrap=bootstrap, all_models=all_models, report=report)
    K = t.workers if K is None else checks.integer("K", K, low=2)
    seed = checks.integer("seed", seed, low=0)
    primary = f.primary
    adv = advise(f.models, K, max_load=max_load, budget=budget, trials=trials, seed=seed, primary=primary,
                 progress=progress, network=network, screen=screen)
    adv.settings["primary_reason"] = f.reason
    adv.settings["unit"] = "s"  # a measured trace's times are seconds
    rel = None
    if primary in f.extra and adv.best is not None and K == t.workers:
        rel = reliance(t, adv.best["label"], primary, max_load=adv.settings["max_load"],
                       trials=adv.settings["trials"], seed=seed, network=network)
    return TraceAdvice(adv, f.report, f.split, f.support, primary, f.reason, f.left_out, f.skipped, rel,
                       f.models[primary], _report.iteration_numbers(t.durations, adv))


def reliance(t, label: str, model_name: str, *, max_load: int | None = None, trials: int = TRIALS,
             seed=0, network=None) -> dict:
    """How much of a design's predicted speed-up over uncoded rests on the trace's slowest worker: the speed-up
    under ``model_name`` (``"replay by iteration"`` or ``"worker effects"``) fitted to the trace, and fitted to the
    trace with that worker's pace brought to the median worker's (:func:`gclib.correlated_paces.without_slowest`); with
    ``network`` charged as :func:`gclib.advise.advise` charges it.

    Returns:
        ``worker, share_slowest`` (fraction of iterations it is the slowest), ``ratio`` (its mean pace over the
        median worker's), ``speedup``, ``speedup_without``, ``share``: ``(speedup - speedup_without) / (speedup -
        1)``, the part of the saving that rests on it (NaN without a saving).
    """
    if model_name not in TRACE_MODELS:
        raise ValueError(f"model_name must be one of {sorted(TRACE_MODELS)}, got {model_name!r}")
    d = t.durations
    K = d.shape[1]
    R = default_max_load(K) if max_load is None else max_load
    s = slowest_worker(t)
    out = {"worker": s["worker"], "share_slowest": s["share"], "ratio": s["ratio"]}
    for key, dd in (("speedup", d), ("speedup_without", without_slowest(t))):
        times = design_times(["uncoded", label], TRACE_MODELS[model_name](dd), K, R, trials, seed, network)
        out[key] = times["uncoded"] / times[label]
    sp, sw = out["speedup"], out["speedup_without"]
    out["share"] = (sp - sw) / (sp - 1) if sp > 1 and math.isfinite(sp) else math.nan
    return out
