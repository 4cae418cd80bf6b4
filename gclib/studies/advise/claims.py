"""Claims of notebook 09: does the advice of ``gclib advise`` hold? Judged from the tables of
:mod:`gclib.studies.advise.study`.

* ``F1`` rows, per generating model and parameter: the fit's 95% intervals cover the true parameter in at least
  :data:`COVERAGE_FLOOR` of the repetitions (traces drawn by gclib's own models, fitted by
  :func:`gclib.fit.fit`). The nominal level is 95%; the floor leaves room for bootstrap intervals of small
  traces being a little short, and a shortfall beyond it is a defect of the fit.
* ``F2`` rows, per generating model: the fit the report calls best (:attr:`gclib.fit.FitReport.best`) has the
  generating family and convention in most repetitions.
* ``M1``: on this machine, a profile with injected delays of a known model gives a fitted mean task time within
  :data:`REL` of the injected one (the measured times add the real compute and the runtime's own latency).
* ``A1``: the advised code's real mean iteration time (``gclib run`` with the same injected delays) lies within
  :data:`REL` of the advice's prediction; ``A2`` the same for uncoded; ``A3``: the advised code is faster than
  uncoded in the real runs.

* ``N1``: on this machine, charging the network ``gclib profile`` measured (the master's queue of
  :class:`gclib.simulator.Communication`) changes the recommendation; ``N2``: the design advised with the network
  charged is faster in real runs than the one advised without it; ``N3``: with the network charged, the advised
  design's real mean iteration time lies within :data:`REL` of the prediction; ``N4``: the same for the design
  advised without communication, against its prediction without communication (where charging nothing misleads);
  ``N5`` rows, per design run: its real mean iteration time lies within :data:`REL` of the larger of its charged
  prediction and the time the measured network needs for every message it sent (the advice charges the messages
  an iteration waits for; on a link that every message crosses, the ones sent after the decoding take it too).

Criteria, fixed before looking at the numbers: coverage and "most repetitions" by the Wilson 95% interval of the
proportion (above the floor or one half: holds; below: does not hold; else inconclusive); "within" by the 95%
interval of the real mean lying inside the band (wholly outside: does not hold; straddling an edge:
inconclusive); "faster" by separated intervals. The claims' texts and criteria are the table :data:`CLAIMS` of
:class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import math

import pandas as pd

from gclib.claims import (
    CHECK, Claim, Estimate, FAILS, HOLDS, exact, greater, ids, less, majority, proportion, table, within)

#: Smallest coverage of the nominal 95% intervals that counts as covering: ten points under the nominal level, a
#: shortfall that a few hundred repetitions resolve; bootstrap intervals of small samples run a little short of it.
COVERAGE_FLOOR = 0.85
#: Largest relative gap between a prediction and its measurement that counts as agreeing.
REL = 0.10
_OURS = "our check of gclib advise"


_WITHIN = f"95% interval of the real mean within {REL:.0%} of the prediction"
CLAIMS = {c.id: c for c in (
    Claim("F1", CHECK, "the fit's 95% intervals cover the true parameter",
          f"{_OURS}: maximum likelihood with 95% intervals",
          f"Wilson 95% interval of the coverage above {COVERAGE_FLOOR:g}"),
    Claim("F2", CHECK, "the generating model fits best",
          f"{_OURS}: the best fit has the family and the convention that made the trace",
          "Wilson 95% interval of the fraction above 1/2"),
    Claim("M1", CHECK, "on this machine, the fit recovers the injected mean task time",
          f"{_OURS}: gclib profile measures what the workers take",
          f"95% interval within {REL:.0%} of the injected mean"),
    Claim("A1", CHECK, "the advised code: the real iteration time matches the advice's prediction",
          f"{_OURS}: the prediction from the fitted trace", _WITHIN),
    Claim("A2", CHECK, "uncoded: the real iteration time matches the advice's prediction",
          f"{_OURS}: the prediction from the fitted trace", _WITHIN),
    Claim("A3", CHECK, "the advised code is faster than uncoded in real runs", f"{_OURS}: the advice saves time",
          "95% intervals separated, the advised code's below"),
    Claim("N1", CHECK, "charging the measured network changes the recommendation",
          f"{_OURS}: communication measured and charged", "the two recommendations differ"),
    Claim("N2", CHECK, "the design advised with the network charged is faster in real runs than the one advised "
                       "without",
          f"{_OURS}: charging the network picks the faster code",
          "95% intervals separated, the charged advice's below"),
    Claim("N3", CHECK, "with the network charged, the advised design's real iteration time matches the prediction",
          f"{_OURS}: the prediction with the network charged", _WITHIN),
    Claim("N4", CHECK, "without communication, the advised design's real iteration time matches the prediction",
          f"{_OURS}: the prediction without communication", _WITHIN),
    Claim("N5", CHECK, "the real iteration time matches the charged prediction or, where larger, the link's time for "
                       "every message sent",
          f"{_OURS}: what the charge leaves out", f"95% interval of the real mean within {REL:.0%} of the larger"),
)}


def _real(r) -> Estimate:
    if r is None:
        return Estimate(math.nan, math.nan, math.nan)
    return Estimate(float(r["mean_time"]), float(r["lo"]), float(r["hi"]), int(r["iterations"]))


def _predicted(r) -> Estimate:
    if r is None:
        return Estimate(math.nan, math.nan, math.nan)
    return Estimate(float(r["predicted"]), float(r["predicted_lo"]), float(r["predicted_hi"]))


def _role(real: pd.DataFrame, role: str):
    g = real[real["role"] == role]
    return None if g.empty else g.iloc[0]


def _fit_rows(coverage: pd.DataFrame, goodness: pd.DataFrame) -> list:
    """``F1`` rows (coverage, per model and parameter) and ``F2`` rows (model choice, per model)."""
    rows = []
    for key, (_, r) in zip(ids("F1", len(coverage)), coverage.iterrows()):
        e = proportion(int(r["covered"]), int(r["repeats"]))
        rows.append(CLAIMS["F1"].row(
            id=key, setting=f"{r['truth']}; parameter {r['parameter']} = {float(r['true_value']):.4g}; "
                            f"{int(r['repeats'])} traces",
            measured=f"covered in {int(r['covered'])} of {int(r['repeats'])}: {e.text('.2f')}",
            verdict=greater(e, COVERAGE_FLOOR)))
    for key, (_, r) in zip(ids("F2", len(goodness)), goodness.iterrows()):
        n, k = int(r["repeats"]), int(r["wins"])
        other = f"; most often otherwise: {r['other']}" if isinstance(r.get("other"), str) and r["other"] else ""
        rows.append(CLAIMS["F2"].row(id=key, setting=f"{r['truth']}; {n} traces",
                                     measured=f"best fit in {k} of {n} traces{other}",
                                     verdict=majority([True] * k + [False] * (n - k))))
    return rows


def _machine_row(machine: dict) -> dict:
    """``M1``: the fit of a profile with injected delays recovers the injected mean task time."""
    fitted = Estimate(machine["fitted_mean"], machine["fitted_lo"], machine["fitted_hi"])
    return CLAIMS["M1"].row(setting=f"gclib profile, injected {machine['injected']}; fitted {machine['fit']}",
                            measured=f"fitted mean task time {fitted.text('.4g')} s, injected "
                                     f"{machine['injected_mean']:.4g} s",
                            verdict=within(fitted, float(machine["injected_mean"]), REL))


def _advice_rows(real: pd.DataFrame) -> list:
    """``A1``, ``A2``: the advised code's and uncoded's real times against the predictions; ``A3``: the advised code
    against uncoded."""
    adv, unc = _role(real, "advised"), _role(real, "uncoded")
    rows = []
    for key, r in (("A1", adv), ("A2", unc)):
        p, m = _predicted(r), _real(r)
        rows.append(CLAIMS[key].row(
            setting=(f"{r['label']}; gclib run, {int(r['iterations'])} iterations, same injected delays"
                     if r is not None else "not run"),
            measured=f"real {m.text('.4g')} s, predicted {p.text('.4g')} s",
            verdict=within(m, p.value, REL) if r is not None else within(m, math.nan, REL)))
    a, u = _real(adv), _real(unc)
    rows.append(CLAIMS["A3"].row(setting=f"{adv['label'] if adv is not None else '?'} against uncoded, same injected "
                                         f"delays",
                                 measured=f"{a.text('.4g')} s against {u.text('.4g')} s", verdict=less(a, u)))
    return rows


def judge(coverage: pd.DataFrame, goodness: pd.DataFrame, machine: dict, real: pd.DataFrame,
          network=None) -> pd.DataFrame:
    """The claims table of notebook 09.

    Args:
        coverage: :func:`gclib.studies.advise.study.coverage` (``truth, parameter, true_value, repeats,
            covered``).
        goodness: :func:`gclib.studies.advise.study.goodness` (``truth, repeats, wins``: repetitions in which
            the generating family fitted best).
        machine: :attr:`gclib.studies.advise.study.Machine.fit_check` (``fit``, ``injected_mean``,
            ``fitted_mean``, ``fitted_lo``, ``fitted_hi``: seconds per task).
        real: :attr:`gclib.studies.advise.study.Machine.real` (``role`` "advised" / "uncoded", ``label``,
            ``predicted``, ``predicted_lo``, ``predicted_hi``, ``mean_time``, ``lo``, ``hi``, ``iterations``).
        network: a :class:`gclib.studies.advise.study.NetworkCase` (the rows ``N1`` .. ``N4``), or ``None``.
    """
    rows = [*_fit_rows(coverage, goodness), _machine_row(machine), *_advice_rows(real)]
    if network is not None:
        rows += judge_network(network)
    return table(rows)


def _network_estimates(r: pd.DataFrame):
    """``(real(label), pred(label, which))``: the real mean iteration time of a design run and its prediction
    (``which``: ``"charged"`` or ``"free"``) from ``r``, the runs indexed by label (unknown when not run)."""
    def real(label) -> Estimate:
        if label is None or label not in getattr(r, "index", []):
            return Estimate(math.nan, math.nan, math.nan)
        x = r.loc[label]
        return Estimate(float(x["mean_time"]), float(x["lo"]), float(x["hi"]), int(x["iterations"]))

    def pred(label, which) -> Estimate:
        if label is None or label not in getattr(r, "index", []):
            return Estimate(math.nan, math.nan, math.nan)
        x = r.loc[label]
        return Estimate(float(x[which]), float(x[f"{which}_lo"]), float(x[f"{which}_hi"]))

    return real, pred


def judge_network(case) -> list:
    """The rows ``N1`` .. ``N5`` of notebook 09's claims table (see the module docstring), from a
    :class:`gclib.studies.advise.study.NetworkCase`."""
    free_best = case.free.best["label"] if case.free.best is not None else None
    charged_best = case.charged.best["label"] if case.charged.best is not None else None
    real, pred = _network_estimates(case.real.set_index("label") if len(case.real) else case.real)
    setting = (f"K = {case.free.settings['K']} workers, {getattr(case, 'where', 'this machine')}; network measured "
               f"by gclib profile: {case.network.text()}")
    same = free_best == charged_best
    a, b = real(free_best), real(charged_best)
    rows = [CLAIMS["N1"].row(setting=setting, verdict=exact(not same and charged_best is not None),
                             measured=f"without communication: {free_best}; with the network charged: {charged_best}"),
            CLAIMS["N2"].row(setting=f"{charged_best} against {free_best}; gclib run, delays of the same model and "
                                     f"seed",
                             measured=(f"{b.text('.4g')} s against {a.text('.4g')} s" if not same else
                                       f"one design ({free_best}): nothing to compare"),
                             verdict=less(b, a) if not same else less(math.nan, math.nan))]
    for key, label, which in (("N3", charged_best, "charged"), ("N4", free_best, "free")):
        p, m = pred(label, which), real(label)
        rows.append(CLAIMS[key].row(setting=f"{label}; gclib run, {m.n or 0} iterations",
                                    measured=f"real {m.text('.4g')} s, predicted {p.text('.4g')} s",
                                    verdict=within(m, p.value, REL)))
    for x in (case.real.itertuples() if "link" in case.real else ()):
        m = real(x.label)
        rows.append(CLAIMS["N5"].row(
            id=f"N5-{x.label}", setting=f"{x.label}; gclib run, {m.n or 0} iterations, {x.sent:.3g} messages sent per "
                                       f"iteration",
            measured=f"real {m.text('.4g')} s; charged prediction {x.charged:.4g} s, the link's time for the messages "
                     f"sent {x.link:.4g} s",
            verdict=within(m, max(float(x.charged), float(x.link)), REL)))
    return rows


def conclusions(verdicts: pd.DataFrame) -> str:
    """Markdown sentences rendered from the claims table of :func:`judge`."""
    v = verdicts.set_index("id")
    f1 = verdicts[verdicts["id"].str.startswith("F1")]
    f2 = verdicts[verdicts["id"].str.startswith("F2")]
    out = [f"- Interval coverage: {int((f1['verdict'] == HOLDS).sum())} of {len(f1)} parameters covered as "
           f"claimed, {int((f1['verdict'] == FAILS).sum())} short of the floor, the rest inconclusive.",
           f"- Model choice: the best fit had the generating family and convention in most traces for "
           f"{int((f2['verdict'] == HOLDS).sum())} of {len(f2)} generating models."]
    for key in ("M1", "A1", "A2", "A3", "N1", "N2", "N3", "N4", *[i for i in v.index if i.startswith("N5")]):
        if key in v.index:
            out.append(f"- {v.loc[key, 'claim'][0].upper()}{v.loc[key, 'claim'][1:]}: **{v.loc[key, 'verdict']}** "
                       f"({v.loc[key, 'measured']}).")
    return "\n".join(out)
