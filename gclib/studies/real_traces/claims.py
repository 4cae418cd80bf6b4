"""Claims of notebook 10: the advice on real traces, fitted on the first half and checked on the held-out half.
Judged from a :class:`gclib.studies.real_traces.traces.Study`.

* ``R1`` rows, ``reading``: what the artifact of Lin et al. (OSDI 2025, arXiv:2505.05713) says of the root cause of
  each shipped trace's stragglers, read as a statement about the converted trace: trace AR's (an artificial slowdown
  of one worker) is one worker slowest in most iterations, at least :data:`SLOW_RATIO` times the median worker's
  pace; SE's (sequence-length imbalance, occurring at random) and ST's (a long last pipeline stage, the same in every
  data-parallel replica) leave no persistent worker effect: the worker part of the variance of the log paces is
  below :data:`SMALL` with its whole interval.
* ``B1`` to ``B5`` rows per trace, ``check`` (the targets of ``gclib advise --holdout``, fixed before looking at the
  numbers): on the fitted half, the prediction of the model the advice ranks under is within
  :data:`gclib.advise.TARGETS` ``in_sample`` of uncoded's (``B1``) and the advised design's (``B2``) mean iteration
  time, replayed with every worker kept; on the held-out half, the advised design's within ``held_out`` (``B3``);
  the regret under ``regret`` (``B4``); and ``B5``: that model predicts uncoded's held-out time at least as well as
  the independent replay the advice ranked under before (the errors' intervals from the predictions' Monte Carlo
  intervals).

Verdicts: "within" by the prediction's 95% Monte Carlo interval inside the band around the observed mean (wholly
outside: does not hold; straddling an edge: inconclusive); the regret is exact (observed times of the held-out
iterations); proportions by their Wilson interval; ``B5`` by separated intervals of the absolute errors.
"""
from __future__ import annotations

import math

import pandas as pd

from gclib.advise import TARGETS
from gclib.claims import (
    Estimate, FAILS, HOLDS, INCONCLUSIVE, at_most, exact, greater, ids, less, proportion, row, table, within)
from gclib.studies.real_traces.traces import BEFORE

#: The pace of the slowest worker over the median worker's above which a worker counts as persistently slow.
SLOW_RATIO = 1.2
#: The share of the variance of the log paces below which a part counts as absent.
SMALL = 0.1
_PAPER = "Lin et al., Understanding Stragglers in Large Model Training Using What-if Analysis (OSDI 2025, " \
         "arXiv:2505.05713), its artifact's sample traces"
CAUSES = {"AR": "an artificial slowdown of an individual worker (App. A.2)",
          "SE": "sequence-length imbalance between microbatches, occurring at random (Section 5.2)",
          "ST": "stage-partitioning imbalance: a long last pipeline stage (Section 5.3)"}


def _abs_error(pred: float, half: float, observed: float) -> Estimate:
    """``|pred / observed - 1|`` with the interval from ``pred +/- half``."""
    lo, hi = (pred - half) / observed - 1, (pred + half) / observed - 1
    if math.isnan(half):
        return Estimate(abs(pred / observed - 1), math.nan, math.nan)
    a, b = sorted((abs(lo), abs(hi)))
    low = 0.0 if lo <= 0 <= hi else a
    return Estimate(abs(pred / observed - 1), low, b)


def judge(study) -> pd.DataFrame:
    """The claims table of notebook 10 from a :class:`gclib.studies.real_traces.traces.Study`."""
    rows = []
    names = list(study.backtests)
    readings = [n for n in names if n in CAUSES]
    for key, name in zip(ids("R1", len(readings)), readings):
        s = study.splits[name]
        if name == "AR":
            k = int(round(s.slowest["share"] * s.iterations))
            e = proportion(k, s.iterations)
            v = [greater(e, 0.5), exact(s.slowest["ratio"] >= SLOW_RATIO)]
            verdict = FAILS if FAILS in v else HOLDS if all(x == HOLDS for x in v) else INCONCLUSIVE
            rows.append(row(key, "trace AR: one worker is the straggler", kind="reading",
                            paper=f"{_PAPER}: trace AR's stragglers come from {CAUSES[name]}; read as: one worker of "
                                  f"the converted trace is the slowest in most iterations and persistently slow",
                            setting=f"trace AR converted: {s.iterations} iterations x {s.workers} data-parallel "
                                    f"workers",
                            measured=f"worker {s.slowest['worker']} slowest in {k} of {s.iterations} iterations "
                                     f"({e.text('.2f')}), at {s.slowest['ratio']:.3g}x the median worker's pace",
                            criterion=f"Wilson interval of the share above 1/2 and pace ratio >= {SLOW_RATIO:g}",
                            verdict=verdict))
        else:
            lo, hi = s.ci["worker"]
            e = Estimate(s.fraction["worker"], lo, hi)
            rows.append(row(key, f"trace {name}: no worker is persistently slow", kind="reading",
                            paper=f"{_PAPER}: trace {name}'s stragglers come from {CAUSES[name]}; read as: the "
                                  f"converted trace (one task time per data-parallel worker, its stages summed) has "
                                  f"no worker effect",
                            setting=f"trace {name} converted: {s.iterations} iterations x {s.workers} workers; "
                                    f"pigeonhole bootstrap of {s.bootstrap}",
                            measured=f"worker share of the variance of log paces {e.text('.3f')}; iteration "
                                     f"{s.fraction['iteration']:.3f}, residual {s.fraction['residual']:.3f}",
                            criterion=f"the worker share's 95% interval below {SMALL:g}",
                            verdict=less(e, SMALL)))
    for i, name in enumerate(names):
        b = study.backtests[name]
        r = b.rows.set_index("role")
        primary = b.fit.primary
        where = (f"trace {name}: fitted on {b.settings['fit_iterations']} iterations, {b.settings['held_iterations']} "
                 f"held out; K = {b.settings['K']}; ranked under '{primary}'")
        for key, role, col, rel, what in (("B1", "uncoded", "observed_fit", TARGETS["in_sample"],
                                           "in sample, uncoded's predicted time"),
                                          ("B2", "advised", "observed_fit", TARGETS["in_sample"],
                                           "in sample, the advised design's predicted time"),
                                          ("B3", "advised", "observed_held", TARGETS["held_out"],
                                           "held out, the advised design's predicted time")):
            x = r.loc[role]
            p = Estimate.mean_ci(float(x["predicted"]), float(x["ci95"]))
            obs = float(x[col])
            rows.append(row(f"{key}{_suffix(i, len(names))}", f"trace {name}: {what} within {rel:.0%}", kind="check",
                            paper="our check of gclib advise --holdout: the prediction of the model it ranks under",
                            setting=f"{where}; {x['label']}",
                            measured=f"predicted {p.text('.4g')} s, observed {obs:.4g} s ({100 * (p.value / obs - 1):+.1f}%)",
                            criterion=f"the prediction's 95% interval within {rel:.0%} of the observed mean",
                            verdict=within(p, obs, rel)))
        rows.append(row(f"B4{_suffix(i, len(names))}", f"trace {name}: regret under {TARGETS['regret']:.0%}",
                        kind="check", paper="our check of gclib advise --holdout: the advised design against the "
                                            "best design on the held-out iterations",
                        setting=f"{where}; advised {b.fit.advice.best['label']}, held-out best {b.best_held}",
                        measured=f"regret {100 * b.regret:.2f}%",
                        criterion=f"regret < {TARGETS['regret']:.0%} (observed times: exact)",
                        verdict=exact(b.regret < TARGETS["regret"])))
        m = b.by_model.set_index("model")
        adv = b.fit.advice.table
        if BEFORE in m.index and primary in m.index:
            obs = float(b.observed_held.set_index("label").at["uncoded", "mean_time"])
            est = {}
            for model in (primary, BEFORE):
                g = adv[(adv["model"] == model) & (adv["label"] == "uncoded")].iloc[0]
                est[model] = _abs_error(float(g["mean_time"]), float(g["ci95_time"]), obs)
            same = primary == BEFORE
            rows.append(row(f"B5{_suffix(i, len(names))}",
                            f"trace {name}: '{primary}' predicts uncoded's held-out time at least as well as "
                            f"'{BEFORE}'", kind="check",
                            paper="our check: keeping worker identity and whole iterations against drawing rows "
                                  "independently",
                            setting=f"{where}; uncoded",
                            measured=f"|error| {est[primary].text('.3f')} against {est[BEFORE].text('.3f')}",
                            criterion="the interval of the ranking model's absolute error not above the replay's "
                                      "(separated: holds or does not hold; overlapping: inconclusive)",
                            verdict=HOLDS if same else at_most(est[primary], est[BEFORE])))
    return table(rows)


def _suffix(i: int, n: int) -> str:
    return "" if n <= 1 else (chr(ord("a") + i) if n <= 26 else f".{i + 1}")


def conclusions(verdicts: pd.DataFrame, study) -> str:
    """Markdown sentences rendered from the claims table and the study: per trace, which model the advice ranks
    under, the targets met or missed with their numbers, and the drift of the slowest worker."""
    v = verdicts.set_index("id")
    out = []
    for i, (name, b) in enumerate(study.backtests.items()):
        sfx = _suffix(i, len(study.backtests))
        missed = [(k, t) for k, t in b.targets.items() if not t["met"]]
        unc = b.rows.set_index("role").loc["uncoded"]
        line = (f"- **{name}** ({b.settings['K']} workers): ranked under '{b.fit.primary}'; advised "
                f"{b.fit.advice.best['label']}. ")
        if missed:
            line += "Targets **missed**: " + "; ".join(
                f"{k} {100 * t['value']:+.1f}% (limit {100 * t['limit']:.0f}%)" for k, t in missed) + ". "
        else:
            line += (f"Every target met (in sample within {TARGETS['in_sample']:.0%}, held out within "
                     f"{TARGETS['held_out']:.0%}, regret under {TARGETS['regret']:.0%}). ")
        line += (f"Uncoded's held-out error {100 * unc['error_held']:+.1f}% beside the slowest worker's drift "
                 f"{100 * b.drift['drift']:+.1f}% (the median worker's {100 * b.drift['median_drift']:+.1f}%).")
        if f"B5{sfx}" in v.index:
            line += f" Against the independent replay (uncoded, held out): **{v.loc[f'B5{sfx}', 'verdict']}** " \
                    f"({v.loc[f'B5{sfx}', 'measured']})."
        out.append(line)
    for key in [k for k in v.index if k.startswith("R1")]:
        out.append(f"- {v.loc[key, 'claim'][0].upper()}{v.loc[key, 'claim'][1:]}: **{v.loc[key, 'verdict']}** "
                   f"({v.loc[key, 'measured']}).")
    return "\n".join(out)
