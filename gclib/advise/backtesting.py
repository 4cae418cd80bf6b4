"""The back-test of the advice: fit on the first iterations of a trace, advise, and check the advice on the
held-out rest, every worker keeping its recorded times (:func:`observed`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gclib import checks
from gclib.advise.designs import candidates, default_max_load
from gclib.advise.model_choice import BOOTSTRAP, TraceAdvice, check_trace, from_trace
from gclib.advise.report import reliance_text
from gclib.advise.simulation import schedule_trials
from gclib.correlated_paces import paces, slowest_worker
from gclib.jsonable import jsonable
from gclib.stats import Estimate, paired_change
from gclib.stragglers import Replay, filled, whole_rows
from gclib.timings import MIN_SAMPLES, Timings, check_complete

#: The targets of :func:`backtest`: the largest relative error of the prediction on the fitted iterations (uncoded
#: and the advised design), on the held-out ones (the advised design), and the largest regret.
TARGETS = {"in_sample": 0.05, "held_out": 0.07, "regret": 0.03}
#: The fewest iterations each part of a back-test holds.
MIN_PART = 5


def observed(durations, K: int | None = None, max_load: int | None = None, *, max_orders: int = 2,
             network=None, per_iteration: bool = False) -> pd.DataFrame:
    """The mean iteration time of every candidate design on recorded iterations, each iteration once, every worker
    keeping its recorded task times (worker ``w`` of the trace is worker ``w`` of the code; tasks beyond the record
    at the row's pace: :func:`gclib.stragglers.filled`).

    Args:
        durations: ``(iterations, workers, tasks)`` with every worker observed in every iteration.
        network: a :class:`gclib.simulator.Communication` charged on every message (as
            :func:`gclib.advise.advise` charges it).
        per_iteration: also return each design's ``(iterations,)`` times (column ``times``), for paired comparisons.
    Returns:
        one row per design of :func:`~gclib.advise.designs.candidates`: ``label, family, load, runnable, mean_time,
        ci95_time`` (the Student-t half-width of the mean over the iterations: a mean of a few tens of iterations is not
        exact), ``messages``.
    """
    d = whole_rows(durations, "the observed times")
    I, W, _ = d.shape
    K = W if K is None else K
    if K != W:
        raise ValueError(f"K must be the trace's {W} workers (every worker keeps its own times), got {K}")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    designs = candidates(K, R, max_orders=max_orders, network=network)
    schedules = [x.schedule() for x in designs]
    rows = filled(d, max(s.load for s in schedules))
    res = schedule_trials(designs, Replay(rows, by="order"), K, I, 0, ("time", "messages"), network,
                          again=Replay(rows, by="order"), schedules=schedules)
    out = []
    for x, r in zip(designs, res):
        t = r["time"]
        finite = bool(np.isfinite(t).all())
        e = Estimate.of(t) if finite else None
        out.append({"label": x.label, "family": x.family, "load": x.load, "runnable": x.scheme is not None,
                    "mean_time": float(t.mean()) if finite else math.inf,
                    "ci95_time": e.hi - e.value if e is not None and e.known else math.nan,
                    "messages": float(r["messages"].mean()), **({"times": np.asarray(t, float)} if per_iteration
                                                                 else {})})
    return pd.DataFrame(out)



@dataclass
class Backtest:
    """The outcome of :func:`backtest`.

    Attributes:
        rows: uncoded and the top designs under the ranking model: ``role, label, predicted, ci95, observed_fit,
            observed_held, error_fit, error_held`` (errors: predicted / observed - 1).
        by_model: one row per model the advice simulated: its own recommendation and the same numbers for uncoded
            and for it, its regret on the held-out part, and whether it ranks the advice (``primary``).
        fit: the :class:`TraceAdvice` of the fitted part. observed_fit, observed_held: :func:`observed` of each
            part. drift: the slowest worker of the fitted part, its mean pace in each part and their ratio - 1
            (``drift``), the median of every worker's (``median_drift``). regret: the advised design's held-out
            time over the held-out best runnable design's, - 1 (``best_held``: that design); ``regret_ci`` its 95%
            interval, paired by held-out iteration (the observed means are means of a few tens of iterations, not
            exact). targets: name ->
            ``{value, limit, met}``. warnings: a sentence per target missed. settings: the split and the options.
    """

    rows: pd.DataFrame
    by_model: pd.DataFrame
    fit: TraceAdvice
    observed_fit: pd.DataFrame
    observed_held: pd.DataFrame
    drift: dict
    regret: float
    best_held: str
    targets: dict
    warnings: list
    settings: dict
    regret_ci: tuple = (math.nan, math.nan)

    def text(self) -> str:
        s = self.settings
        lines = [f"back-test of gclib advise on {s['source']}: fitted on the first {s['fit_iterations']} of "
                 f"{s['iterations']} iterations, held out the last {s['held_iterations']}; K = {s['K']} workers, "
                 f"each keeping its recorded times on both parts; ranked under '{self.fit.primary}'", "",
                 f"{'role':9s} {'design':24s} {'predicted':>10s} {'fit part':>9s} {'error':>7s} {'held out':>9s} "
                 f"{'error':>7s}"]
        for r in self.rows.itertuples():
            lines.append(f"{r.role:9s} {r.label:24s} {r.predicted:10.4g} {r.observed_fit:9.4g} "
                         f"{100 * r.error_fit:+6.1f}% {r.observed_held:9.4g} {100 * r.error_held:+6.1f}%")
        d = self.drift
        lo, hi = self.regret_ci
        ci = f" (95% CI {100 * lo:.1f}% to {100 * hi:.1f}%, paired by iteration)" if math.isfinite(lo) else ""
        lines += ["", f"regret: the advised design is {100 * self.regret:.1f}% slower than the held-out best "
                      f"({self.best_held}) on the held-out part{ci}",
                  f"drift: worker {d['worker']}, the slowest of the fitted part, ran at {d['pace_fit']:.4g} s per "
                  f"task there and {d['pace_held']:.4g} held out ({100 * d['drift']:+.1f}%; the median worker "
                  f"{100 * d['median_drift']:+.1f}%): no model fitted on the first part can know it",
                  "", "every model's own recommendation (errors held out; regret on the held-out part):"]
        for r in self.by_model.itertuples():
            mark = " <- ranks the advice" if r.primary else ""
            lines.append(f"  {r.model:24s} {r.advised:24s} uncoded {100 * r.uncoded_error_held:+6.1f}%  advised "
                         f"{100 * r.advised_error_held:+6.1f}%  regret {100 * r.regret:.1f}%{mark}")
        if self.fit.reliance is not None:
            lines.append(reliance_text(self.fit.reliance))
        lines.append("")
        lines += [f"warning: {w}" for w in self.warnings] or ["every target met: in sample within "
                                                             f"{TARGETS['in_sample']:.0%}, held out within "
                                                             f"{TARGETS['held_out']:.0%}, regret under "
                                                             f"{TARGETS['regret']:.0%}"]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return jsonable({"settings": self.settings, "rows": self.rows.to_dict(orient="records"),
                         "by_model": self.by_model.to_dict(orient="records"), "drift": self.drift,
                         "regret": self.regret, "regret_ci": list(self.regret_ci), "best_held": self.best_held,
                         "targets": self.targets,
                         "warnings": self.warnings, "reliance": self.fit.reliance, "advice": self.fit.to_dict()})


def _part(t, sl, what):
    return Timings(durations=t.durations[sl], hosts=t.hosts, iteration_ids=t.iteration_ids[sl],
                   worker_ids=t.worker_ids, source=f"{t.source} ({what})")


def iterations_needed(holdout: float) -> int:
    """The fewest iterations a trace needs for a back-test holding out ``holdout`` of them: :data:`MIN_PART` to
    fit and :data:`MIN_PART` held out (``round(holdout * n)`` of ``n``). Found from a closed form and a look at
    the few counts around it, never by counting up (a holdout of 1e-300 needs about 5e300)."""
    h = checks.real("holdout", holdout, above=0, below=1)
    ok = lambda n: n - round(h * n) >= MIN_PART and round(h * n) >= MIN_PART  # noqa: E731
    # round(h n) >= MIN_PART from n >= (MIN_PART - 0.5) / h, and n - round(h n) >= MIN_PART from
    # n >= (MIN_PART - 0.5) / (1 - h): the answer is within a few of the larger
    start = max(MIN_PART, math.floor(max((MIN_PART - 0.5) / h, (MIN_PART - 0.5) / (1 - h))) - 2)
    if start > 2 ** 53:  # beyond exact integers: any trace is too short
        return start
    return next((n for n in range(start, start + 8) if ok(n)), start + 8)


def backtest(t, holdout: float = 0.5, *, seed=0, bootstrap: int = BOOTSTRAP, trials: int | None = None,
             max_load: int | None = None, budget: float | None = None, top: int = 3, all_models: bool = False,
             progress: bool = False, network=None) -> Backtest:
    """Fit on the first iterations of a trace, advise, and check the advice on the held-out rest.

    The last ``round(holdout * iterations)`` iterations are held out; :func:`from_trace` fits and advises on the
    others for ``K`` = the trace's workers. Every candidate design is then replayed on each part with every worker
    keeping its recorded times (:func:`observed`). Reported: the predicted and observed mean iteration time of
    uncoded and of the ``top`` designs with their errors on both parts; every model's own recommendation with its
    errors and regret; the regret of the advice (how much slower the advised design is than the best runnable
    design on the held-out part); the drift of the slowest worker's pace between the parts. A target of
    :data:`TARGETS` that is missed gives a warning. Nothing is fitted or tuned on the held-out part.

    Args:
        t: a :class:`gclib.timings.Timings`, every worker observed in every iteration. holdout: the fraction held
            out, in (0, 1). network: charged on both parts' replays too. Others as :func:`from_trace`.
    Raises:
        ValueError: a worker missing from an iteration; fewer iterations than :data:`MIN_PART` in either part
        (the message says how many the trace needs).
    """
    check_trace(t)
    holdout = checks.real("holdout", holdout, above=0, below=1)
    top = checks.integer("top", top, low=1)
    check_complete(t)
    first, second = _parts(t, holdout)
    K = t.workers
    fa = from_trace(first, K, seed=seed, bootstrap=bootstrap, trials=trials, max_load=max_load, budget=budget,
                    all_models=all_models, progress=progress, network=network)
    adv = fa.advice
    R = adv.settings["max_load"]
    of = observed(first.durations, K, R, network=network).set_index("label")
    oh = observed(second.durations, K, R, network=network, per_iteration=True).set_index("label")
    ok = oh["runnable"] & np.isfinite(oh["mean_time"])
    if budget is not None:
        ok &= oh["messages"] <= budget
    best_held = str(oh[ok]["mean_time"].idxmin())
    rows = _rows(adv, of, oh, top)
    best_time = float(oh.at[best_held, "mean_time"])
    advised = adv.best["label"] if adv.best is not None else None
    regret = float(oh.at[advised, "mean_time"]) / best_time - 1 if advised is not None else math.nan
    regret_ci = (paired_change(oh.at[advised, "times"], oh.at[best_held, "times"])[1:3] if advised is not None
                 else (math.nan, math.nan))
    by_model = _by_model(fa, of, oh, best_time, budget)
    drift = _drift(first, second)
    targets = _targets(rows, regret)
    warnings = _warnings(targets, rows, drift, best_held)
    settings = {"source": t.source, "iterations": t.iterations, "fit_iterations": first.iterations,
                "held_iterations": second.iterations, "holdout": holdout, "K": K, "seed": seed,
                "trials": fa.advice.settings["trials"], "bootstrap": bootstrap, "max_load": R, "budget": budget,
                "primary": fa.primary, "primary_reason": fa.reason,
                "fit_ids": [int(first.iteration_ids[0]), int(first.iteration_ids[-1])],
                "held_ids": [int(second.iteration_ids[0]), int(second.iteration_ids[-1])]}
    return Backtest(rows, by_model, fa, of.reset_index(), oh.drop(columns="times").reset_index(), drift, regret,
                    best_held, targets, warnings, settings, regret_ci)


def _parts(t, holdout: float) -> tuple:
    """The fitted and the held-out part of ``t`` (:class:`gclib.timings.Timings`), each of at least
    :data:`MIN_PART` iterations, the fitted one with enough finite times to fit."""
    I = t.iterations
    n_held = int(round(holdout * I))
    n_fit = I - n_held
    if n_fit < MIN_PART or n_held < MIN_PART:
        need = iterations_needed(holdout)
        need = f"{need:,}" if need < 10 ** 12 else f"about {float(need):.3g}"
        raise ValueError(f"{t.source}: a back-test with holdout {holdout:g} needs at least {need} iterations (at "
                         f"least {MIN_PART} to fit and {MIN_PART} held out), the trace has {I} ({n_fit} to fit, "
                         f"{n_held} held out)")
    first, second = _part(t, slice(0, n_fit), "fitted part"), _part(t, slice(n_fit, I), "held-out part")
    if first.n_finite < MIN_SAMPLES:
        raise ValueError(f"{t.source}: the fitted part holds {first.n_finite} finite task times, at least "
                         f"{MIN_SAMPLES} are needed to fit; hold out less or record more")
    return first, second


def _rows(adv, of: pd.DataFrame, oh: pd.DataFrame, top: int) -> pd.DataFrame:
    """:attr:`Backtest.rows`: uncoded and the ``top`` runnable designs within the budget, predicted and observed
    on both parts (``of``, ``oh``: :func:`observed` of each, by label)."""
    rows = []
    ranked = adv.ranked[adv.ranked["runnable"] & adv.ranked["feasible"].astype(bool)
                        & np.isfinite(adv.ranked["mean_time"])]
    picks = [("uncoded", "uncoded")] + [("advised" if i == 0 else f"top {i + 1}", lab)
                                        for i, lab in enumerate(ranked["label"].head(top))]
    by_label = adv.ranked.set_index("label")
    for role, lab in picks:
        p = float(by_label.at[lab, "mean_time"])
        rows.append({"role": role, "label": lab, "predicted": p, "ci95": float(by_label.at[lab, "ci95_time"]),
                     "observed_fit": float(of.at[lab, "mean_time"]), "observed_held": float(oh.at[lab, "mean_time"]),
                     "observed_held_ci95": float(oh.at[lab, "ci95_time"]),
                     "error_fit": p / float(of.at[lab, "mean_time"]) - 1,
                     "error_held": p / float(oh.at[lab, "mean_time"]) - 1})
    return pd.DataFrame(rows)


def _by_model(fa: TraceAdvice, of: pd.DataFrame, oh: pd.DataFrame, best_time: float, budget) -> pd.DataFrame:
    """:attr:`Backtest.by_model`: every model's own recommendation, its errors on both parts and its regret."""
    per = []
    for name, g in fa.advice.table.groupby("model", sort=False):
        g = g.set_index("label")
        run = [lab for lab in g.index if oh.at[lab, "runnable"] and np.isfinite(g.at[lab, "mean_time"])
               and (budget is None or g.at[lab, "messages"] <= budget)]
        if not run:
            continue
        own = min(run, key=lambda lab: g.at[lab, "mean_time"])
        pu, pa = float(g.at["uncoded", "mean_time"]), float(g.at[own, "mean_time"])
        per.append({"model": name, "primary": name == fa.primary, "advised": own, "uncoded_predicted": pu,
                    "uncoded_error_fit": pu / float(of.at["uncoded", "mean_time"]) - 1,
                    "uncoded_error_held": pu / float(oh.at["uncoded", "mean_time"]) - 1,
                    "advised_predicted": pa, "advised_error_fit": pa / float(of.at[own, "mean_time"]) - 1,
                    "advised_error_held": pa / float(oh.at[own, "mean_time"]) - 1,
                    "regret": float(oh.at[own, "mean_time"]) / best_time - 1})
    return pd.DataFrame(per)


def _drift(first, second) -> dict:
    """The slowest worker of the fitted part, its mean pace in each part and their ratio - 1, and the median of
    every worker's (:attr:`Backtest.drift`)."""
    s = slowest_worker(first)
    pf, ph = paces(first).mean(axis=0), paces(second).mean(axis=0)
    return {"worker": s["worker"], "pace_fit": float(pf[s["index"]]), "pace_held": float(ph[s["index"]]),
            "drift": float(ph[s["index"]] / pf[s["index"]] - 1), "median_drift": float(np.median(ph / pf - 1)),
            "share_slowest_fit": s["share"]}


def _targets(rows: pd.DataFrame, regret: float) -> dict:
    """Each target of :data:`TARGETS`: ``{value, limit, met}``."""
    unc, adv_row = rows.iloc[0], rows.iloc[1] if len(rows) > 1 else None
    targets = {
        "uncoded in sample": {"value": float(unc["error_fit"]), "limit": TARGETS["in_sample"]},
        "advised in sample": {"value": float(adv_row["error_fit"]) if adv_row is not None else math.nan,
                              "limit": TARGETS["in_sample"]},
        "advised held out": {"value": float(adv_row["error_held"]) if adv_row is not None else math.nan,
                             "limit": TARGETS["held_out"]},
        "regret": {"value": regret, "limit": TARGETS["regret"]},
    }
    for name, v in targets.items():
        v["met"] = bool(v["value"] < v["limit"]) if name == "regret" else bool(abs(v["value"]) <= v["limit"])
    return targets


def _warnings(targets: dict, rows: pd.DataFrame, drift: dict, best_held: str) -> list:
    """A sentence per target missed, and uncoded's held-out error beside the drift when the held-out prediction
    misses."""
    warnings = []
    what = {"uncoded in sample": "on the fitted iterations, uncoded's predicted mean iteration time misses theirs by",
            "advised in sample": "on the fitted iterations, the advised design's predicted time misses theirs by",
            "advised held out": "on the held-out iterations, the advised design's predicted time misses theirs by",
            "regret": "the advised design is"}
    for name, v in targets.items():
        if not v["met"]:
            tail = (f"slower than the held-out best ({best_held}); the target is under {v['limit']:.0%}"
                    if name == "regret" else f"(the target is within {v['limit']:.0%})")
            num = f"{100 * v['value']:.1f}%" if name == "regret" else f"{100 * v['value']:+.1f}%"
            warnings.append(f"{what[name]} {num} {tail}")
    unc = rows.iloc[0]
    if not targets["advised held out"]["met"] or abs(float(unc["error_held"])) > TARGETS["held_out"]:
        warnings.append(f"uncoded's held-out error {100 * float(unc['error_held']):+.1f}% stands beside the slowest "
                        f"worker's drift of {100 * drift['drift']:+.1f}% between the parts")
    return warnings
