"""Claims of notebook 10: the advice on real traces, fitted on the first half and checked on the held-out half.
Judged from a :class:`gclib.studies.real_traces.traces.Study`.

* ``R1`` rows, ``reading``: what the artifact of Lin et al. (OSDI 2025, arXiv:2505.05713) says of the root cause of
  each shipped trace's stragglers, read as a statement about the converted trace: trace AR's (an artificial slowdown
  of one worker) is one worker slowest in most iterations, at least :data:`SLOW_RATIO` times the median worker's
  pace; SE's (sequence-length imbalance, occurring at random) and ST's (a long last pipeline stage, the same in every
  data-parallel replica) leave no persistent worker effect: the worker part of the variance of the log paces is
  below :data:`SMALL` with its whole interval.
* ``B3`` to ``B5`` rows per trace, ``check`` (the targets of ``gclib advise --holdout``, fixed before looking at the
  numbers): on the held-out half, the advised design's predicted mean iteration time within
  :data:`gclib.advise.TARGETS` ``held_out`` of the observed one (``B3``); the regret under ``regret`` (``B4``); and
  ``B5``: the model the advice ranks under predicts uncoded's held-out time at least as well as the independent
  replay the advice ranked under before (the errors' intervals from the predictions' Monte Carlo intervals). The
  in-sample targets are not claims: the ranking model replays the fitted iterations, so its in-sample prediction
  restates the computation that produced it (a unit test keeps it).

Verdicts: "within" by the 95% interval of the ratio predicted / observed inside the band around 1 (its width from
the prediction's Monte Carlo interval and the observed mean's Student-t interval over the held-out iterations,
which are a few tens: the observed mean is a sample, not an exact number; wholly outside: does not hold;
straddling an edge: inconclusive); the regret by its 95% interval paired by held-out iteration; proportions by
their Wilson interval; ``B5`` by separated intervals of the absolute errors.
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
        x = r.loc["advised"]
        ratio = _ratio(float(x["predicted"]), float(x["ci95"]), float(x["observed_held"]),
                       float(x["observed_held_ci95"]))
        rel = TARGETS["held_out"]
        rows.append(row(f"B3{_suffix(i, len(names))}", f"trace {name}: held out, the advised design's predicted time "
                        f"within {rel:.0%}", kind="check",
                        paper="our check of gclib advise --holdout: the prediction of the model it ranks under",
                        setting=f"{where}; {x['label']}",
                        measured=f"predicted {float(x['predicted']):.4g} +/- {float(x['ci95']):.2g} s, observed "
                                 f"{float(x['observed_held']):.4g} +/- {float(x['observed_held_ci95']):.2g} s over "
                                 f"{b.settings['held_iterations']} iterations; predicted / observed {ratio.text('.3f')}",
                        criterion=f"the 95% interval of predicted / observed within 1 +/- {rel:.0%} (the prediction's "
                                  f"Monte Carlo error and the observed mean's sampling error combined)",
                        verdict=within(ratio, 1.0, rel)))
        lo, hi = b.regret_ci
        reg = (Estimate(b.regret, min(b.regret, lo), max(b.regret, hi)) if math.isfinite(lo) and math.isfinite(hi)
               else Estimate(b.regret, math.nan, math.nan))
        rows.append(row(f"B4{_suffix(i, len(names))}", f"trace {name}: regret under {TARGETS['regret']:.0%}",
                        kind="check", paper="our check of gclib advise --holdout: the advised design against the "
                                            "best design on the held-out iterations",
                        setting=f"{where}; advised {b.fit.advice.best['label']}, held-out best {b.best_held}",
                        measured=f"regret {_pct(reg)}, paired by held-out iteration",
                        criterion=f"the regret's 95% interval below {TARGETS['regret']:.0%} holds, at or above it "
                                  f"does not hold, straddling it is inconclusive (the advised design is the held-out "
                                  f"best: exactly 0)",
                        verdict=less(reg, TARGETS["regret"])))
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


def _ratio(pred: float, pred_half: float, obs: float, obs_half: float) -> Estimate:
    """``pred / obs`` with a 95% interval combining both relative half-widths (first order: independent errors)."""
    r = pred / obs
    rel = math.hypot(pred_half / pred, obs_half / obs)
    if not math.isfinite(rel):
        return Estimate(r, math.nan, math.nan)
    return Estimate(r, r * (1 - rel), r * (1 + rel))


def _pct(e: Estimate) -> str:
    if e.is_exact:
        return f"{100 * e.value:.2f}% (exact: the advised design is the held-out best)"
    if not e.known:
        return f"{100 * e.value:.2f}% (no interval)"
    return f"{100 * e.value:.2f}% [{100 * e.lo:.2f}%, {100 * e.hi:.2f}%]"


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
