"""Claims of notebook 10: the advice on real traces, fitted on the first half and checked on the held-out half.
Judged from a :class:`gclib.studies.real_traces.study.Study`.

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
their Wilson interval; ``B5`` by separated intervals of the absolute errors. The claims' texts and criteria are the
table :data:`CLAIMS` (and :data:`NO_WORKER`) of :class:`gclib.claims.Claim` entries, filled in by short functions
that measure each.
"""
from __future__ import annotations

import math

import pandas as pd

from gclib.advise import TARGETS
from gclib.claims import (
    CHECK, READING, Claim, Estimate, FAILS, HOLDS, INCONCLUSIVE, at_most, exact, greater, ids, less, proportion, table,
    within)
from gclib.studies.real_traces.study import BEFORE

#: The pace of the slowest worker over the median worker's above which a worker counts as persistently slow.
SLOW_RATIO = 1.2
#: The share of the variance of the log paces below which a part counts as absent.
SMALL = 0.1
_PAPER = "Lin et al., Understanding Stragglers in Large Model Training Using What-if Analysis (OSDI 2025, " \
         "arXiv:2505.05713), its artifact's sample traces"
CAUSES = {"AR": "an artificial slowdown of an individual worker (App. A.2)",
          "SE": "sequence-length imbalance between microbatches, occurring at random (Section 5.2)",
          "ST": "stage-partitioning imbalance: a long last pipeline stage (Section 5.3)"}


_HOLDOUT = "our check of gclib advise --holdout"
CLAIMS = {c.id: c for c in (
    Claim("R1", READING, "trace AR: one worker is the straggler",
          f"{_PAPER}: trace AR's stragglers come from {CAUSES['AR']}; read as: one worker of the converted trace is "
          f"the slowest in most iterations and persistently slow",
          f"Wilson interval of the share above 1/2 and pace ratio >= {SLOW_RATIO:g}"),
    Claim("B3", CHECK, "trace {name}: held out, the advised design's predicted time within {rel:.0%}",
          f"{_HOLDOUT}: the prediction of the model it ranks under",
          "the 95% interval of predicted / observed within 1 +/- {rel:.0%} (the prediction's Monte Carlo error and "
          "the observed mean's sampling error combined)"),
    Claim("B4", CHECK, "trace {name}: regret under {regret:.0%}",
          f"{_HOLDOUT}: the advised design against the best design on the held-out iterations",
          "the regret's 95% interval below {regret:.0%} holds, at or above it does not hold, straddling it is "
          "inconclusive (the advised design is the held-out best: exactly 0)"),
    Claim("B5", CHECK, "trace {name}: '{primary}' predicts uncoded's held-out time at least as well as '{before}'",
          "our check: keeping worker identity and whole iterations against drawing rows independently",
          "the interval of the ranking model's absolute error not above the replay's (separated: holds or does not "
          "hold; overlapping: inconclusive)"),
)}
#: The reading of a trace whose root cause leaves no persistent worker effect (SE, ST): rows ``R1`` as well.
NO_WORKER = Claim("R1", READING, "trace {name}: no worker is persistently slow",
                  _PAPER + ": trace {name}'s stragglers come from {cause}; read as: the converted trace (one task time "
                           "per data-parallel worker, its stages summed) has no worker effect",
                  f"the worker share's 95% interval below {SMALL:g}")


def _abs_error(pred: float, half: float, observed: float) -> Estimate:
    """``|pred / observed - 1|`` with the interval from ``pred +/- half``."""
    lo, hi = (pred - half) / observed - 1, (pred + half) / observed - 1
    if math.isnan(half):
        return Estimate(abs(pred / observed - 1), math.nan, math.nan)
    a, b = sorted((abs(lo), abs(hi)))
    low = 0.0 if lo <= 0 <= hi else a
    return Estimate(abs(pred / observed - 1), low, b)


def _reading_row(key: str, name: str, s) -> dict:
    """``R1``: the root cause the artifact names for trace ``name``, read on its converted split ``s``."""
    if name == "AR":
        k = int(round(s.slowest["share"] * s.iterations))
        e = proportion(k, s.iterations)
        v = [greater(e, 0.5), exact(s.slowest["ratio"] >= SLOW_RATIO)]
        return CLAIMS["R1"].row(
            id=key, setting=f"trace AR converted: {s.iterations} iterations x {s.workers} data-parallel workers",
            measured=f"worker {s.slowest['worker']} slowest in {k} of {s.iterations} iterations ({e.text('.2f')}), "
                     f"at {s.slowest['ratio']:.3g}x the median worker's pace",
            verdict=FAILS if FAILS in v else HOLDS if all(x == HOLDS for x in v) else INCONCLUSIVE)
    lo, hi = s.ci["worker"]
    e = Estimate(s.fraction["worker"], lo, hi)
    return NO_WORKER.row(
        id=key, name=name, cause=CAUSES[name],
        setting=f"trace {name} converted: {s.iterations} iterations x {s.workers} workers; pigeonhole bootstrap of "
                f"{s.bootstrap}",
        measured=f"worker share of the variance of log paces {e.text('.3f')}; iteration "
                 f"{s.fraction['iteration']:.3f}, residual {s.fraction['residual']:.3f}",
        verdict=less(e, SMALL))


def _held_out_row(key: str, name: str, b, where: str) -> dict:
    """``B3``: the advised design's predicted time against the observed one on the held-out half."""
    x = b.rows.set_index("role").loc["advised"]
    ratio = _ratio(float(x["predicted"]), float(x["ci95"]), float(x["observed_held"]),
                   float(x["observed_held_ci95"]))
    rel = TARGETS["held_out"]
    return CLAIMS["B3"].row(
        id=key, name=name, rel=rel, setting=f"{where}; {x['label']}",
        measured=f"predicted {float(x['predicted']):.4g} +/- {float(x['ci95']):.2g} s, observed "
                 f"{float(x['observed_held']):.4g} +/- {float(x['observed_held_ci95']):.2g} s over "
                 f"{b.settings['held_iterations']} iterations; predicted / observed {ratio.text('.3f')}",
        verdict=within(ratio, 1.0, rel))


def _regret_row(key: str, name: str, b, where: str) -> dict:
    """``B4``: the regret of the advised design on the held-out half."""
    lo, hi = b.regret_ci
    reg = (Estimate(b.regret, min(b.regret, lo), max(b.regret, hi)) if math.isfinite(lo) and math.isfinite(hi)
           else Estimate(b.regret, math.nan, math.nan))
    return CLAIMS["B4"].row(id=key, name=name, regret=TARGETS["regret"],
                            setting=f"{where}; advised {b.fit.advice.best['label']}, held-out best {b.best_held}",
                            measured=f"regret {_pct(reg)}, paired by held-out iteration",
                            verdict=less(reg, TARGETS["regret"]))


def _replay_rows(key: str, name: str, b, where: str) -> list:
    """``B5``: the ranking model against the independent replay on uncoded's held-out time (none when the advice
    did not rank under both)."""
    m = b.by_model.set_index("model")
    primary, adv = b.fit.primary, b.fit.advice.table
    if not (BEFORE in m.index and primary in m.index):
        return []
    obs = float(b.observed_held.set_index("label").at["uncoded", "mean_time"])
    est = {}
    for model in (primary, BEFORE):
        g = adv[(adv["model"] == model) & (adv["label"] == "uncoded")].iloc[0]
        est[model] = _abs_error(float(g["mean_time"]), float(g["ci95_time"]), obs)
    return [CLAIMS["B5"].row(id=key, name=name, primary=primary, before=BEFORE, setting=f"{where}; uncoded",
                             measured=f"|error| {est[primary].text('.3f')} against {est[BEFORE].text('.3f')}",
                             verdict=HOLDS if primary == BEFORE else at_most(est[primary], est[BEFORE]))]


def judge(study) -> pd.DataFrame:
    """The claims table of notebook 10 from a :class:`gclib.studies.real_traces.study.Study`."""
    names = list(study.backtests)
    readings = [n for n in names if n in CAUSES]
    rows = [_reading_row(key, name, study.splits[name]) for key, name in zip(ids("R1", len(readings)), readings)]
    for i, name in enumerate(names):
        b, sfx = study.backtests[name], _suffix(i, len(names))
        where = (f"trace {name}: fitted on {b.settings['fit_iterations']} iterations, {b.settings['held_iterations']} "
                 f"held out; K = {b.settings['K']}; ranked under '{b.fit.primary}'")
        rows += [_held_out_row(f"B3{sfx}", name, b, where), _regret_row(f"B4{sfx}", name, b, where),
                 *_replay_rows(f"B5{sfx}", name, b, where)]
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
