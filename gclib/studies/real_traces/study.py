"""Notebook 10: the shipped public traces through convert -> fit -> advise -> back-test.

:func:`study` converts each trace of :func:`gclib.timings.shipped` (or any files), splits the variance of its log
paces (:func:`gclib.correlated_paces.split`) and back-tests the advice on it (:func:`gclib.advise.backtest`). The
:class:`Study` it returns gives the tables of the notebook's figures and of its claims: :meth:`Study.splits`,
:meth:`Study.designs` (every design's predicted time under the ranking model and under the independent replay the
advice ranked under before, against its observed time on each part), :meth:`Study.models` (every model's errors and
regret: where each model breaks) and :meth:`Study.targets`. The benchmark ``bench_backtest`` prints the targets of
the same study as JSON.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from gclib import advise, checks, correlated_paces, timings
from gclib.jsonable import jsonable
from gclib.progress import progress as _progress

#: The model the advice ranked under before worker identity and whole iterations were modelled: rows of the trace
#: drawn independently for every worker.
BEFORE = "replay"


@dataclass
class Study:
    """Per trace name: ``conversions`` (:class:`gclib.timings.Conversion`), ``splits``
    (:class:`gclib.correlated_paces.VarianceSplit`), ``backtests`` (:class:`gclib.advise.Backtest`); ``settings``."""

    conversions: dict
    splits: dict
    backtests: dict
    settings: dict = field(default_factory=dict)

    def traces(self) -> pd.DataFrame:
        """One row per trace: its shape, what the conversion kept, the model the advice ranks under and why."""
        rows = []
        for name, c in self.conversions.items():
            t, b = c.timings, self.backtests[name]
            rows.append({"trace": name, "iterations": t.iterations, "workers": t.workers, "tasks": t.tasks,
                         "task_times": t.n_finite, "rows_kept": c.kept, "rows_read": c.rows,
                         "fit_iterations": b.settings["fit_iterations"],
                         "held_iterations": b.settings["held_iterations"], "ranked_under": b.fit.primary,
                         "why": b.fit.reason})
        return pd.DataFrame(rows)

    def conversions_text(self) -> str:
        """What each trace's conversion kept and dropped, one paragraph per trace."""
        return "\n\n".join(c.text() for c in self.conversions.values())

    def backtests_text(self) -> str:
        """Each trace's back-test in words, one paragraph per trace."""
        return "\n\n".join(b.text() for b in self.backtests.values())

    def splits_table(self) -> pd.DataFrame:
        """One row per trace and part of the variance: ``trace, part, variance, fraction, lo, hi``, and the slowest
        worker's share of iterations and pace ratio."""
        out = []
        for name, s in self.splits.items():
            df = s.table()
            df.insert(0, "trace", name)
            df["slowest_worker"] = s.slowest["worker"]
            df["slowest_share"] = s.slowest["share"]
            df["slowest_ratio"] = s.slowest["ratio"]
            out.append(df)
        return pd.concat(out, ignore_index=True)

    def designs(self) -> pd.DataFrame:
        """One row per trace and design simulated under both the ranking model and :data:`BEFORE`: ``trace, label,
        family, load, predicted`` (ranking model), ``ci95``, ``predicted_before``, ``observed_fit``,
        ``observed_held``, ``role`` (uncoded, advised, best held out, or empty)."""
        out = []
        for name, b in self.backtests.items():
            tab = b.fit.advice.table
            after = tab[tab["model"] == b.fit.primary].set_index("label")
            before = tab[tab["model"] == BEFORE].set_index("label") if BEFORE in set(tab["model"]) else None
            of, oh = b.observed_fit.set_index("label"), b.observed_held.set_index("label")
            advised = b.fit.advice.best["label"] if b.fit.advice.best is not None else None
            for lab, r in after.iterrows():
                if not math.isfinite(r["mean_time"]):
                    continue
                role = ("uncoded" if lab == "uncoded" else "advised" if lab == advised
                        else "best held out" if lab == b.best_held else "")
                out.append({"trace": name, "label": lab, "family": r["family"], "load": int(r["load"]),
                            "predicted": float(r["mean_time"]), "ci95": float(r["ci95_time"]),
                            "predicted_before": (float(before.at[lab, "mean_time"]) if before is not None
                                                 and lab in before.index else math.nan),
                            "observed_fit": float(of.at[lab, "mean_time"]),
                            "observed_held": float(oh.at[lab, "mean_time"]), "role": role})
        return pd.DataFrame(out)

    def models(self) -> pd.DataFrame:
        """One row per trace and model the advice simulated: its support on whole iterations (``p_value``,
        ``supported``), its own recommendation, the errors of its predictions of uncoded and of that
        recommendation on the fitted and the held-out part, its regret, and ``when``: ``after`` (the model the
        advice ranks under), ``before`` (:data:`BEFORE`) or ``other``."""
        out = []
        for name, b in self.backtests.items():
            sup = b.fit.support.set_index("model") if len(b.fit.support) else None
            for r in b.by_model.to_dict(orient="records"):
                m = r["model"]
                p = float(sup.at[m, "p_value"]) if sup is not None and m in sup.index else math.nan
                out.append({"trace": name, **r, "p_value": p, "supported": bool(p >= 0.05) if p == p else False,
                            "when": "after" if r["primary"] else "before" if m == BEFORE else "other",
                            "drift": b.drift["drift"]})
        return pd.DataFrame(out)

    def targets(self) -> pd.DataFrame:
        """One row per trace and target (:data:`gclib.advise.TARGETS`): ``value, limit, met``, the advised design
        and the slowest worker's drift between the parts."""
        out = []
        for name, b in self.backtests.items():
            for target, v in b.targets.items():
                out.append({"trace": name, "target": target, "value": v["value"], "limit": v["limit"],
                            "met": v["met"], "advised": b.fit.advice.best["label"] if b.fit.advice.best else "",
                            "ranked_under": b.fit.primary, "drift": b.drift["drift"]})
        return pd.DataFrame(out)

    def summary(self) -> dict:
        """JSON-ready: per trace, the targets and the before/after errors (the benchmark prints it)."""
        m = self.models()
        out = {}
        for name, b in self.backtests.items():
            rows = m[m["trace"] == name].set_index("when")
            pick = lambda w: (rows.loc[w].to_dict() if w in rows.index else None)  # noqa: E731
            after, before = pick("after"), pick("before")
            out[name] = {"workers": b.settings["K"], "iterations": b.settings["iterations"],
                         "ranked_under": b.fit.primary, "advised": b.fit.advice.best["label"],
                         "targets": {k: {"value": v["value"], "limit": v["limit"], "met": v["met"]}
                                     for k, v in b.targets.items()},
                         "all_met": all(v["met"] for v in b.targets.values()),
                         "drift": b.drift["drift"],
                         "after": {k: after[k] for k in ("model", "advised", "uncoded_error_fit", "uncoded_error_held",
                                                         "advised_error_fit", "advised_error_held", "regret")},
                         "before": None if before is None else {
                             k: before[k] for k in ("model", "advised", "uncoded_error_fit", "uncoded_error_held",
                                                    "advised_error_fit", "advised_error_held", "regret")}}
        return jsonable(out)


def study(traces=None, *, holdout: float = 0.5, seed=0, trials: int | None = None, bootstrap: int = 200,
          progress: bool = False) -> Study:
    """Convert, split and back-test every trace.

    Args:
        traces: ``{name: path}`` (default :func:`gclib.timings.shipped`), or a list of names of the shipped traces.
        holdout, seed, trials, bootstrap: as :func:`gclib.advise.backtest` (``trials`` default
            :data:`gclib.advise.TRIALS`). progress: a bar over the traces.
    """
    found = timings.shipped()
    if traces is None:
        traces = found
    elif isinstance(traces, (list, tuple)):
        unknown = [n for n in traces if n not in found]
        if unknown or not traces:
            raise ValueError(f"traces must name shipped traces among {sorted(found)}, got {list(traces)!r}")
        traces = {n: found[n] for n in traces}
    if not traces:
        raise ValueError("no traces: the shipped ones are missing (data/straggler-analysis) and none was given")
    trials = advise.TRIALS if trials is None else checks.integer("trials", trials, low=2)
    conv, splits, bts = {}, {}, {}
    for name in _progress(list(traces), "traces", progress):
        c = timings.convert(traces[name])
        conv[name] = c
        splits[name] = correlated_paces.split(c.timings, bootstrap=bootstrap, seed=seed)
        bts[name] = advise.backtest(c.timings, holdout, seed=seed, trials=trials, bootstrap=bootstrap)
    return Study(conv, splits, bts, {"holdout": holdout, "seed": seed, "trials": trials, "bootstrap": bootstrap})
