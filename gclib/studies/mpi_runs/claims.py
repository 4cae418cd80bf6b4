"""Claims about real MPI runs of Tandon et al.'s codes (notebook 07), judged from the iteration log and the test
scores of a :class:`gclib.studies.mpi_runs.study.GridResult`.

The exact codes decode the full gradient, so all of them follow the same loss trajectory per iteration and differ
only in how long an iteration takes. Every scheme of a model sees the same injected delays in iteration ``i``,
and so does every data set (:func:`gclib.studies.mpi_runs.study.paired_times`): a code is compared with uncoded
iteration by iteration, by the Student-t 95% interval of the mean paired difference of their iteration times
(each iteration's time averaged over the data sets, which measure the same delays, so each comparison is one row,
not one per data set). Below :data:`MIN_ITERATIONS` pairs the verdict is inconclusive. Where the injected delays
give an iteration time no finite variance (a Pareto tail of shape ``a`` and a code tolerating ``s`` stragglers
with ``(s + 1) a <= 2``: uncoded under shape 1.5), no interval of a mean means anything, so the comparison is a
sign test instead: the code holds when it is faster in more than half of the paired iterations beyond the Wilson
interval. Measured times are wall-clock times, so the table may change from run to run; the rules do not.

The test AUC of ignore-stragglers is compared with an exact code's on the same test set by a paired bootstrap;
where every scheme's AUC is the same (a saturated metric: the test set cannot tell them apart) the verdict is
inconclusive, and runs under two models that ignored the same workers (the same ranking of the injected delays)
are one measurement and one row.

The claims' texts and criteria are the table :data:`CLAIMS` of :class:`gclib.claims.Claim` entries (with
:data:`UC_MMC` and, for a run that lacks what a claim needs, :data:`NOT_MEASURED`), filled in by short functions
that measure each.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gclib.claims import (
    CHECK, EXTENSION, INCONCLUSIVE, PAPER, Claim, Estimate, beyond, exact, greater, ids, less, table, within)
from gclib.learning.problems import auc
from gclib.stats import paired_difference, paired_sign
from gclib.studies.gradient_coding.claims import finite_variance
from gclib.studies.mpi_runs.study import MODELS, auc_difference, build, iteration_times, overhead, paired_times
from gclib.theory import expected_time

#: Fewest iterations per run for a verdict on iteration times.
MIN_ITERATIONS = 10
#: Largest relative error of a decoded gradient that counts as the full gradient.
GRAD_BOUND = 1e-8
#: Largest relative gap between the measured and the predicted mean iteration time that counts as "little".
OVERHEAD_REL = 0.10
#: Bootstrap resamples of the test set for the AUC interval.
BOOT_REPS = 1000
TANDON = "Tandon et al. (ICML 2017)"
#: Why these runs are not the paper's: its stragglers were EC2's own machines.
INJECTED = ("the paper ran on Amazon EC2, whose machines were the stragglers; here delays drawn from a compute-time "
            "model are injected into real MPI runs on one machine")
#: The paper's running-time statement, carried to these runs.
RUNNING_TIME = beyond(f"{TANDON}: coded schemes cut the running time of the uncoded baseline", INJECTED)


#: The paper's generalization statement, carried to these runs.
GENERALIZATION = beyond(f"{TANDON}, abstract: the schemes are compared in generalization error, ignoring stragglers "
                        f"being the baseline that loses it (the figure's numbers are second-hand: a third party's "
                        f"re-run reads the Amazon Employee Access figure as a test AUC of about 0.84 against 0.88)",
                        f"{INJECTED}, on other data sets")
_PAIRED_RULE = (f"paired by iteration (the same injected delays): the Student-t 95% interval of the mean difference "
                f"wholly below 0 holds, at or above 0 does not hold, containing 0 is inconclusive; where an iteration "
                f"time has no finite variance (Pareto shape a, (s + 1) a <= 2), a sign test: the Wilson interval of "
                f"the fraction of iterations the code is faster wholly above 1/2 holds, below does not hold; fewer "
                f"than {MIN_ITERATIONS} pairs is inconclusive")
CLAIMS = {c.id: c for c in (
    Claim("M1", EXTENSION, "{code} beats uncoded in running time", RUNNING_TIME, _PAIRED_RULE),
    Claim("M2", CHECK, "CRC is slower than uncoded under the shifted exponential",
          "our check: each CRC worker computes s + 1 parts, so its message comes s + 1 times later",
          "exact: the closed-form expected time of CRC (the (n - s)-th of n draws times s + 1) above uncoded's (the "
          "largest of n draws); the measurement is shown beside it"),
    Claim("M3", PAPER, "exact codes decode the full gradient",
          f"{TANDON}: any n - s workers give the full gradient exactly",
          f"exact: every relative error below {GRAD_BOUND:g} (float64 rounding only)"),
    Claim("M4", EXTENSION, "ignore-stragglers generalizes worse than exact codes", GENERALIZATION,
          f"paired bootstrap over the test set ({BOOT_REPS} resamples), 95% percentile interval of AUC(exact) - "
          f"AUC(ignore): wholly above 0 holds; at or below 0 does not hold; lower end at or below 0 and upper end "
          f"above 0 is inconclusive; every scheme with the same AUC (the metric saturated) is inconclusive"),
    Claim("M5", CHECK, "{scheme}: the runtime adds little to the injected delays",
          "our check: the MPI runtime is faithful to the simulator for the same delays",
          f"Student-t 95% CI over iterations of the mean overhead, as a ratio to the predicted mean: inside "
          f"[{1 - OVERHEAD_REL:g}, {1 + OVERHEAD_REL:g}] holds, wholly outside does not hold, straddling an edge is "
          f"inconclusive; fewer than {MIN_ITERATIONS} iterations is inconclusive"),
)}
#: UC-MMC against uncoded: Ozfatura, Gunduz and Ulukus's uncoded multi-message baseline, of which neither paper
#: claims this, so it is our check (Tandon et al.'s codes carry their claim to these runs, ``M1``).
UC_MMC = Claim("M1", CHECK, "{code} beats uncoded in running time",
               "our check: UC-MMC (Ozfatura, Gunduz and Ulukus's uncoded multi-message baseline, load s + 1) against "
               "uncoded; neither paper states this comparison", _PAIRED_RULE)
#: The claims of a run that lacks what they need.
NOT_MEASURED = {c.id: c for c in (
    Claim("M1", EXTENSION, "coded schemes beat uncoded in running time", RUNNING_TIME, "needs both runs"),
    Claim("M3", PAPER, "exact codes decode the full gradient", f"{TANDON}: exact recovery of the gradient",
          f"every error below {GRAD_BOUND:g}"),
    Claim("M4", EXTENSION, "ignore-stragglers generalizes worse than exact codes", GENERALIZATION, "needs both runs"),
)}


def _exact_schemes(schemes, workers, stragglers, seed) -> list:
    return [s for s in schemes if build(s, workers, stragglers, seed).exact]


def _time(r, finite: bool = True) -> Estimate:
    """The mean iteration time of a run of :func:`gclib.studies.mpi_runs.study.iteration_times`, with its
    interval only when the iteration time has a finite variance."""
    if not finite:
        return Estimate(r["mean_time"], math.nan, math.nan, int(r["iterations"]))
    return Estimate(r["mean_time"], r["lo"], r["hi"], int(r["iterations"]))


def _finite(names, models: dict, workers, stragglers, seed) -> dict:
    """``{(model name, scheme): whether its iteration time has a finite variance}`` (see the module docstring)."""
    return {(m, s): finite_variance(models[m], build(s, workers, stragglers, seed).stragglers)
            for m in models for s in names}


def _against_uncoded(a: np.ndarray, b: np.ndarray, both: bool, unc_finite: bool) -> tuple[str, str]:
    """Verdict and measured text of a code's iteration times ``a`` against uncoded's ``b`` (paired by iteration):
    by the mean paired difference when ``both`` have a finite variance, else by a sign test."""
    if both:
        e = paired_difference(a, b)
        verdict = less(e, 0.0)
        text = f"mean paired difference (code - uncoded) {e.text()} s per iteration"
    else:
        e = paired_sign(a, b)
        verdict = greater(e, 0.5)
        text = (f"uncoded's iteration time has no finite variance: the code is faster in {e.text('.2f')} of the "
                f"paired iterations (sign test)")
    few = e.n < MIN_ITERATIONS
    unc = Estimate.of(b).text() if unc_finite else _plain(b)
    text += (f"; mean iteration time {Estimate.of(a).text()} s against uncoded {unc} s, over {e.n} paired "
             f"iterations" + (" (too few for a verdict)" if few else ""))
    return (INCONCLUSIVE if few else verdict), text


def _coded_rows(log: pd.DataFrame, exact_names: list, finite: dict) -> list:
    coded = [c for c in exact_names if c != "uncoded"]
    out = []
    for m, t in paired_times(log).items():
        if "uncoded" not in t:
            continue
        datasets = ", ".join(t.attrs.get("datasets", []))
        for code in (c for c in coded if c in t):
            both = finite.get((m, code), True) and finite.get((m, "uncoded"), True)
            verdict, text = _against_uncoded(t[code].to_numpy(float), t["uncoded"].to_numpy(float), both,
                                             finite.get((m, "uncoded"), True))
            out.append((m, datasets, code, verdict, text))
    if not out:
        return [NOT_MEASURED["M1"].row(setting="this run", verdict=INCONCLUSIVE,
                                       measured="not measured: the run needs uncoded and at least one exact code")]
    return [(UC_MMC if code == "uc-mmc" else CLAIMS["M1"]).row(
                id=i, code=code, measured=text, verdict=verdict,
                setting=f"{m} stragglers injected into real MPI runs (not EC2's own stragglers); data sets {ds} (the "
                        f"same delays: each iteration's time averaged over them)")
            for i, (m, ds, code, verdict, text) in zip(ids("M1", len(out)), out)]


def _plain(x) -> str:
    """A mean without an interval (an iteration time that has no finite variance)."""
    x = pd.Series(x).dropna()
    return f"{x.mean():.3g} (no interval: no finite variance)" if len(x) else "not measured"


def _crc_row(log: pd.DataFrame, workers, stragglers, time_scale, models, seed) -> dict:
    model = models["shifted-exp"]
    crc = expected_time(build("crc", workers, stragglers, seed), model)
    unc = expected_time(build("uncoded", workers, stragglers, seed), model)
    it = iteration_times(log)
    it = it[it["model"] == "shifted-exp"]
    seen = []
    for ds, g in it.groupby("dataset", sort=False):
        c, u = g[g["scheme"] == "crc"], g[g["scheme"] == "uncoded"]
        if len(c) and len(u):
            seen.append(f"{ds}: CRC {_time(c.iloc[0]).text()} s, uncoded {_time(u.iloc[0]).text()} s")
    measured = (f"closed forms {crc:.4g} (CRC) against {unc:.4g} (uncoded) model units, i.e. "
                f"{crc * time_scale:.3g} s against {unc * time_scale:.3g} s at the time scale; measured mean "
                f"iteration times: " + ("; ".join(seen) if seen else "not run"))
    known = math.isfinite(crc) and math.isfinite(unc)
    desc = ", ".join(f"{k} = {v:g}" for k, v in model.describe().items()
                     if isinstance(v, (int, float)) and not isinstance(v, bool))
    return CLAIMS["M2"].row(setting=f"n = {workers}, s = {stragglers}, shifted exponential ({desc}), time scale "
                                    f"{time_scale:g} s",
                            measured=measured, verdict=exact(crc > unc) if known else INCONCLUSIVE)


def _gradient_row(log: pd.DataFrame, exact_names: list) -> dict:
    sub = log[log["scheme"].isin(exact_names)]
    if not len(sub):
        return NOT_MEASURED["M3"].row(setting="this run", measured="no exact code ran", verdict=INCONCLUSIVE)
    worst = sub.groupby("scheme", sort=False)["grad_error"].max()
    text = "; ".join(f"{s}: {v:.2g}" for s, v in worst.items())
    return CLAIMS["M3"].row(setting=f"{', '.join(worst.index)}; every iteration of every run",
                            measured=f"largest relative error of the decoded gradient: {text}",
                            verdict=exact(bool((worst < GRAD_BOUND).all())))


def _auc_rows(test: pd.DataFrame, exact_names: list, seed) -> list:
    ran = set(test["scheme"]) if len(test) else set()
    refs = [s for s in exact_names if s in ran]
    if "ignore" not in ran or not refs:
        return [NOT_MEASURED["M4"].row(setting="this run", verdict=INCONCLUSIVE,
                                       measured="not measured: the run needs ignore and an exact code with a test "
                                                "set")]
    ref = refs[0]
    d = auc_difference(test, "ignore", ref, reps=BOOT_REPS, seed=seed)
    out = []
    for ds, g in d.groupby("dataset", sort=False):
        sub = test[test["dataset"] == ds]
        aucs = _final_aucs(sub)
        saturated = len(set(round(v, 12) for v in aucs.values())) == 1
        for models, r in _same_runs(sub, g):
            e = Estimate(r["difference"], r["lo"], r["hi"], int(r["samples"]))
            # greater(e, 0): holds when lo > 0; does not hold when hi <= 0; inconclusive when lo <= 0 < hi.
            verdict = INCONCLUSIVE if saturated else greater(e, 0.0)
            text = (f"final test AUC {r['auc_reference']:.4f} ({ref}) against {r['auc']:.4f} (ignore); difference "
                    f"{e.text('.2g')} over {int(r['samples'])} test samples")
            if saturated:
                text += f"; saturated: every scheme's test AUC is {next(iter(aucs.values())):.5f}"
            out.append((ds, models, verdict, text))
    return [CLAIMS["M4"].row(
                id=i, measured=text, verdict=verdict,
                setting=f"{ds}, {' and '.join(ms)} stragglers" + (" (the same workers ignored under both: one "
                        "measurement)" if len(ms) > 1 else "") + ", after the same number of iterations; not the "
                        "Amazon data")
            for i, (ds, ms, verdict, text) in zip(ids("M4", len(out)), out)]


def _final_aucs(test: pd.DataFrame) -> dict:
    """``{(model, scheme): test AUC of the final parameters}`` of one data set's runs."""
    return {k: auc(g.sort_values("sample")["score"].to_numpy(float), g.sort_values("sample")["label"].to_numpy())
            for k, g in test.groupby(["model", "scheme"], sort=False)}


def _same_runs(test: pd.DataFrame, diffs: pd.DataFrame):
    """The rows of ``diffs`` (one per model) grouped by identical ignore-stragglers runs: models whose ignore run
    scored every test sample the same are one measurement. Yields ``(models, first row)``."""
    groups: list = []
    for _, r in diffs.iterrows():
        scores = test[(test["model"] == r["model"]) & (test["scheme"] == "ignore")].sort_values("sample")["score"]
        scores = scores.to_numpy(float)
        for grp in groups:
            if np.array_equal(grp[0], scores):
                grp[1].append(r["model"])
                break
        else:
            groups.append((scores, [r["model"]], r))
    for _, models, r in groups:
        yield models, r


def _overhead_rows(log: pd.DataFrame) -> list:
    o = overhead(log)
    out = []
    for _, r in o.iterrows():
        e = Estimate(r["ratio"], r["ratio_lo"], r["ratio_hi"], int(r["iterations"]))
        few = r["iterations"] < MIN_ITERATIONS
        out.append((r["scheme"], INCONCLUSIVE if few else within(e, 1.0, OVERHEAD_REL),
                    f"measured / predicted mean iteration time {e.text('.3f')} ({r['mean_time']:.3g} s against "
                    f"{r['mean_predicted']:.3g} s; overhead {1e3 * r['mean_overhead']:.2g} ms per iteration) over "
                    f"{int(r['iterations'])} iterations" + (" (too few for a verdict)" if few else "")))
    return [CLAIMS["M5"].row(id=i, scheme=scheme, setting="all runs of the scheme pooled (every data set and model)",
                             measured=text, verdict=verdict)
            for i, (scheme, verdict, text) in zip(ids("M5", len(out)), out)]


def judge(log: pd.DataFrame, test: pd.DataFrame, *, workers: int, stragglers: int, time_scale: float,
          seed: int = 0, models: dict | None = None) -> pd.DataFrame:
    """The claims table of notebook 07.

    Args:
        log, test: the ``log`` and ``test`` tables of :func:`gclib.studies.mpi_runs.study.run_grid`.
        workers, stragglers, time_scale, seed: the settings of the runs (the closed forms of ``M2`` and which
            schemes are exact are computed from them).
        models: compute-time models by name (default :data:`gclib.studies.mpi_runs.study.MODELS`).
    Returns:
        ``M1*`` each exact code against uncoded (per model, paired by iteration), ``M2`` CRC against uncoded under the
        shifted exponential (closed forms), ``M3`` exact decoding, ``M4*`` ignore-stragglers' test AUC against
        an exact code's (per data set and set of identical runs), ``M5*`` measured against predicted iteration
        time (per scheme).
    """
    models = MODELS if models is None else models
    names = list(dict.fromkeys(log["scheme"])) if len(log) else []
    exact_names = _exact_schemes(names, workers, stragglers, seed)
    finite = _finite(names, {m: models[m] for m in dict.fromkeys(log["model"]) if m in models} if len(log) else {},
                     workers, stragglers, seed)
    rows = [*_coded_rows(log, exact_names, finite), _crc_row(log, workers, stragglers, time_scale, models, seed),
            _gradient_row(log, exact_names), *_auc_rows(test, exact_names, seed), *_overhead_rows(log)]
    return table(rows)


__all__ = ["BOOT_REPS", "GRAD_BOUND", "MIN_ITERATIONS", "OVERHEAD_REL", "judge"]
