"""Claims of notebook 02: Reed-Solomon (polynomial) gradient codes after Halbawi, Azizan, Salehi and Hassibi
(ISIT 2018, arXiv 1706.05436), and our own conclusions about their numerical stability.

Only the paper's abstract could be checked, so one row tests the paper (any ``n - s`` workers decode); the
others are our checks of the reconstructed construction: how the choice and the assignment of evaluation points
decide the decoding error, what complex points cost in communication, whether the decoder warns where the code
is unusable, and a cross-check of worst-case Vandermonde condition numbers against values reported in a
secondary summary of the paper (they are not the paper's own numbers).

:func:`judge` turns the notebook's result tables into the claims table; every threshold is a constant below,
fixed before the numbers were read. The claims' texts and criteria are the table :data:`CLAIMS` of
:class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gclib.claims import CHECK, FAILS, HOLDS, INCONCLUSIVE, PAPER, Claim, Estimate, all_hold, exact, less, table, within
from gclib.codes import COND_WARN
from gclib.studies.reed_solomon.study import limit_table

#: A float64 decode is *accurate* when its worst relative error is below this.
TOL64 = 1e-6
#: A float32 decode is *useless* when its worst relative error is at least this (fewer than two correct digits).
USELESS32 = 1e-2
#: "Orders of magnitude": a gain of at least two.
SPREAD_GAIN = 100.0
#: An error at or below this is round-off: no gain can be measured against it.
ROUNDOFF = 1e-12
#: kappa "tracks" the float64 error: ``eps kappa / KAPPA_FACTOR <= error <= KAPPA_FACTOR eps kappa``.
KAPPA_FACTOR = 10.0
#: Unit of the float64 error prediction ``eps * kappa``.
EPS64 = float(np.finfo(np.float64).eps)
#: Agreement with a value reported to two significant digits.
REPORTED_REL = 0.05
#: Complex messages cost two real vectors: the volume ratio must lie within this of 2.
VOLUME_REL = 0.01
#: Worst ``cond(V_F)`` over all straggler sets, points on ``[-1, 1]``, as reported in a secondary summary of
#: the paper (that summary's own computation, not the paper's): ``(n, s) -> {points: value}``.
REPORTED_COND_VF = {(10, 4): {"equispaced": 4.9e3, "chebyshev": 2.8e3},
                    (12, 3): {"equispaced": 6.9e4, "chebyshev": 1.0e4},
                    (20, 4): {"equispaced": 3.4e8, "chebyshev": 1.3e7}}
#: What "worst" means in the settings: a maximum over the tested patterns, a lower bound of the true worst case.
WORST = ("worst = over the tested patterns (all C(n, s) when few, else structured and uniform ones: a lower bound "
         "of the true worst)")
REAL_POINTS = ("equispaced", "chebyshev")
ALL_POINTS = ("equispaced", "chebyshev", "roots-of-unity")
#: The rule of R6 and R7 (``{better}``: the point family judged).
_LIMIT_RULE = ("holds when {better}'s limit is never smaller and larger at least once; does not hold when smaller "
               "once; inconclusive when every limit ties (0 when the smallest n already fails)")
_OUR = "our check"
CLAIMS = {c.id: c for c in (
    Claim("R1", PAPER, "any n - s workers decode, the fewest permissible for load s + 1",
          'Paper: "recovers the gradient from the least number of machines f theoretically permissible"',
          "exact: the all-ones row lies in the exact row span of the messages of every n - s workers"),
    Claim("R2", CHECK, "the fast rule agrees with the exact oracle", _OUR,
          "exact: the threshold rule and the exact span test agree on every subset of messages"),
    Claim("R3", CHECK, "the natural assignment breaks down early", _OUR,
          "holds when, for every real point family and s/n, some n of the sweep has a {what}; does not hold when "
          "one never has"),
    Claim("R4", CHECK, "float32 is useless beyond some n (real points)",
          "our check (a secondary summary, not the paper, estimated real points unusable for n of about 20 or more)",
          "holds when, for every real point family and s/n, some n of the sweep has a {what}; does not hold when "
          "one never has"),
    Claim("R5", CHECK, "spreading the points gains orders of magnitude ({points})", _OUR,
          f"at the largest n, natural / spread >= {SPREAD_GAIN:g} for every s/n whose natural error exceeds "
          f"round-off ({ROUNDOFF:g}); inconclusive when none does"),
    Claim("R6", CHECK, "equispaced points beat Chebyshev points", _OUR, _LIMIT_RULE),
    Claim("R7", CHECK, "complex roots of unity are the most stable", _OUR, _LIMIT_RULE),
    Claim("R8", CHECK, "complex points cost twice the communication", _OUR,
          f"the ratio's interval lies within {VOLUME_REL:.0%} of 2"),
    Claim("R9", CHECK, "with the largest s/n, no choice survives the worst pattern", _OUR,
          f"holds when every choice's worst float64 error is at least {TOL64:g}"),
    Claim("R10", CHECK, "the median pattern stays accurate ({assign} assignment)", _OUR,
          f"order-statistic 95% interval of each point family's median float64 error: every one below {TOL64:g} "
          f"holds, one at or above it does not hold, otherwise inconclusive"),
    Claim("R11", CHECK, "the decoder warns or refuses where the code is unusable", _OUR,
          f"exact: every case with kappa > {COND_WARN:g} warns or refuses, every other decodes silently"),
    Claim("R12", CHECK, "kappa tracks the float64 error", _OUR,
          f"holds when eps kappa / {KAPPA_FACTOR:g} <= worst error <= {KAPPA_FACTOR:g} eps kappa for every code "
          f"with a finite error (eps = {EPS64:.3g})"),
    Claim("R13", CHECK, "worst cond(V_F) matches the reported values ({points})",
          "reported values, from a secondary summary's own computation (not the paper): {reported}",
          f"holds when every value lies within {REPORTED_REL:.0%} of the reported one (two significant digits); "
          f"does not hold otherwise"),
)}


def _g(x) -> str:
    return "inf" if x == math.inf else ("n/a" if x != x else f"{x:.2g}")


def _n(x) -> str:
    return "none" if x != x else str(int(x))


def _first_failing(stab: pd.DataFrame, column: str, tol: float) -> pd.DataFrame:
    """Per (points, assign, s/n): the smallest n whose ``column`` is at least ``tol`` (NaN when none)."""
    return limit_table(stab, ("points", "assign", "s/n"), tol=tol, column=column)


def _breakdown_row(key: str, stab: pd.DataFrame, column: str, tol: float, what: str) -> dict:
    """``R3``, ``R4``: the first n of the sweep whose worst ``column`` is at least ``tol``, per real point family
    and s/n under the natural assignment (``what`` names the event)."""
    lim = _first_failing(stab, column, tol)
    nat = lim[(lim["assign"] == "natural") & lim["points"].isin(REAL_POINTS)]
    parts = [f"{p}, s = {f:g} n: {_n(x)}" for p, f, x in zip(nat["points"], nat["s/n"], nat["first_failing_n"])]
    ok = bool(len(nat)) and bool(nat["first_failing_n"].notna().all())
    return CLAIMS[key].row(setting=f"RS codes, natural assignment, real points, n up to {int(stab['n'].max())}; "
                                   f"{WORST}",
                           measured=f"first n of the sweep with {what}: " + "; ".join(parts), verdict=exact(ok),
                           what=what)


def _at_largest_n(stab: pd.DataFrame) -> pd.DataFrame:
    return stab[stab["n"] == stab["n"].max()]


def _spread(sub: pd.DataFrame) -> tuple[str, str]:
    """Verdict and measured text of one point family at the largest n: natural / spread per s/n."""
    parts, verdicts = [], []
    for f, g in sub.groupby("s/n"):
        nat = float(g.loc[g["assign"] == "natural", "worst_error64"].max())
        spr = float(g.loc[g["assign"] == "spread", "worst_error64"].max())
        with np.errstate(all="ignore"):
            gain = nat / spr if spr > 0 else math.inf
        if not nat > ROUNDOFF:
            parts.append(f"s = {f:g} n: both at round-off ({_g(nat)}, {_g(spr)})")
            continue
        verdicts.append(INCONCLUSIVE if gain != gain else exact(gain >= SPREAD_GAIN))
        parts.append(f"s = {f:g} n: natural {_g(nat)} / spread {_g(spr)} = {_g(gain)}")
    return (all_hold(verdicts) if verdicts else INCONCLUSIVE), ("; ".join(parts) if parts else "not measured")


def _spread_rows(stab: pd.DataFrame) -> list:
    big = _at_largest_n(stab)
    out = []
    for k, p in enumerate(ALL_POINTS):
        verdict, measured = _spread(big[big["points"] == p])
        out.append(CLAIMS["R5"].row(id=f"R5{'abc'[k]}", points=p, measured=measured, verdict=verdict,
                                    setting=f"RS, {p} points, n = {int(stab['n'].max())}, worst float64 error; "
                                            f"{WORST}"))
    return out


def _limit_vs(stab: pd.DataFrame, better: str, others: tuple) -> tuple[str, str]:
    """Compare the usable limits (largest n accurate up to it) of ``better`` with the best of ``others`` per
    (assign, s/n): holds when never smaller and larger at least once, fails when smaller once, else ties."""
    lim = _first_failing(stab, "worst_error64", TOL64)
    lim = lim.assign(limit=lim["largest_ok_n"].fillna(0))
    parts, diffs = [], []
    for (a, f), g in lim.groupby(["assign", "s/n"]):
        mine = float(g.loc[g["points"] == better, "limit"].max())
        theirs = float(g.loc[g["points"].isin(others), "limit"].max())
        if mine != mine or theirs != theirs:
            continue
        diffs.append(mine - theirs)
        parts.append(f"{a}, s = {f:g} n: {int(mine)} vs {int(theirs)}")
    if not diffs:
        return INCONCLUSIVE, "not measured"
    if min(diffs) < 0:
        return FAILS, "; ".join(parts)
    return (HOLDS if max(diffs) > 0 else INCONCLUSIVE), "; ".join(parts)


def _limit_row(key: str, stab: pd.DataFrame, better: str, others: tuple) -> dict:
    verdict, measured = _limit_vs(stab, better, others)
    return CLAIMS[key].row(setting=f"RS codes, n up to {int(stab['n'].max())}, both assignments, every s/n; {WORST}",
                           measured=f"largest n up to which the worst float64 error stays below {TOL64:g} ({better} "
                                    f"vs {' / '.join(others)}): {measured}",
                           verdict=verdict, better=better)


def _ratio(m1, h1, m2, h2) -> Estimate:
    """``m1 / m2`` with the interval of the quotient of the two intervals (both positive)."""
    if any(v is None or v != v for v in (m1, h1, m2, h2)) or m2 - h2 <= 0:
        return Estimate(m1 / m2 if m2 else math.nan, math.nan, math.nan)
    return Estimate(m1 / m2, (m1 - h1) / (m2 + h2), (m1 + h1) / (m2 - h2))


def _volume_row(cost: pd.DataFrame):
    c = cost.set_index("points")
    r = _ratio(c.loc["roots-of-unity", "volume"], c.loc["roots-of-unity", "volume ci95"],
               c.loc["equispaced", "volume"], c.loc["equispaced", "volume ci95"])
    times = ", ".join(f"{p} {t:.3g} [{t - h:.3g}, {t + h:.3g}]" for p, t, h in zip(cost["points"], cost["mean time"],
                                                                                   cost["ci95"]))
    return CLAIMS["R8"].row(setting="RS code, simulator with latency + size / bandwidth (settings in the notebook)",
                            measured=f"volume per iteration roots-of-unity / equispaced = {r.text('.4g')}; mean "
                                     f"time: {times}",
                            verdict=within(r, 2.0, VOLUME_REL))


def _largest_fraction(stab: pd.DataFrame) -> pd.DataFrame:
    big = _at_largest_n(stab)
    return big[big["s/n"] == big["s/n"].max()]


def _worst_row(stab: pd.DataFrame):
    sub = _largest_fraction(stab)
    n, s = int(sub["n"].iloc[0]), int(sub["s"].iloc[0])
    parts = [f"{p} {a}: {_g(e)}" for p, a, e in zip(sub["points"], sub["assign"], sub["worst_error64"])]
    return CLAIMS["R9"].row(setting=f"RS, n = {n}, s = {s}, every point family and assignment; {WORST}",
                            measured="worst float64 error: " + "; ".join(parts),
                            verdict=exact(bool((sub["worst_error64"] >= TOL64).all())))


def _median_rows(stab: pd.DataFrame) -> list:
    """``R10a``, ``R10b``: the median float64 error over uniform random patterns (every pattern when they were
    enumerated), judged by its order-statistic 95% interval (:meth:`gclib.claims.Estimate.median`)."""
    sub = _largest_fraction(stab)
    n, s = int(sub["n"].iloc[0]), int(sub["s"].iloc[0])
    out = []
    for k, a in enumerate(("natural", "spread")):
        g = sub[sub["assign"] == a]
        est = [Estimate(m, lo, hi) for m, lo, hi in zip(g["median_error64"], g["median_error64_lo"],
                                                         g["median_error64_hi"])]
        parts = [f"{p}: {e.text('.2g')}" for p, e in zip(g["points"], est)]
        out.append(CLAIMS["R10"].row(
            id=f"R10{'ab'[k]}", assign=a,
            setting=(f"RS, n = {n}, s = {s}, {a} assignment, median over {int(g['uniform_patterns'].min())} or more "
                     f"uniform random patterns (or all of them)"),
            measured="median float64 error with its 95% interval: " + "; ".join(parts),
            verdict=all_hold([less(e, TOL64) for e in est]) if est else INCONCLUSIVE))
    return out


def _warning_row(outcomes: pd.DataFrame):
    parts = [f"{c}: {o} (kappa {_g(k)})" for c, o, k in zip(outcomes["case"], outcomes["outcome"], outcomes["kappa"])]
    ok = bool(((outcomes["kappa"] > COND_WARN) == (outcomes["outcome"] != "silent")).all())
    return CLAIMS["R11"].row(setting="RS codes decoded with the first s workers straggling (cases in the notebook)",
                             measured="; ".join(parts), verdict=exact(ok))


def _kappa_row(stab: pd.DataFrame):
    ok = stab[np.isfinite(stab["worst_kappa"]) & np.isfinite(stab["worst_error64"]) & (stab["worst_error64"] > 0)]
    ratio = ok["worst_error64"] / (EPS64 * ok["worst_kappa"])
    inside = (ratio >= 1 / KAPPA_FACTOR) & (ratio <= KAPPA_FACTOR)
    measured = (f"worst error / (eps kappa) from {_g(ratio.min())} to {_g(ratio.max())}; inside the band for "
                f"{int(inside.sum())} of {len(ok)} codes ({len(stab) - len(ok)} without a finite error)")
    return CLAIMS["R12"].row(setting=f"every code of the sweep (worst error and worst kappa over its patterns); "
                                     f"{WORST}", measured=measured,
                             verdict=exact(bool(len(ok)) and bool(inside.all())) if len(ok) else INCONCLUSIVE)


def _vandermonde_rows(vt: pd.DataFrame) -> list:
    out = []
    for k, p in enumerate(("chebyshev", "equispaced")):
        parts, ok = [], []
        for n, s, v in zip(vt["n"], vt["s"], vt[p]):
            rep = REPORTED_COND_VF.get((int(n), int(s)), {}).get(p)
            if rep is None:
                continue
            ok.append(abs(v / rep - 1) <= REPORTED_REL)
            parts.append(f"(n, s) = ({int(n)}, {int(s)}): ours {v:.3g}, reported {rep:.2g}")
        reported = "; ".join(f"({n}, {s}): {v[p]:.2g}" for (n, s), v in REPORTED_COND_VF.items())
        out.append(CLAIMS["R13"].row(
            id=f"R13{'ab'[k]}", points=p, reported=reported,
            setting=f"Vandermonde matrix of the survivors' points, {p} on [-1, 1] in natural order, monomial basis, "
                    f"all C(n, s) straggler sets",
            measured="; ".join(parts) if parts else "not measured", verdict=exact(all(ok)) if ok else INCONCLUSIVE))
    return out


def _exact_rows(checks: pd.DataFrame) -> list:
    """``R1``, ``R2``: the small exact code decodes from any n - s workers; the fast rule agrees with the oracle."""
    c = checks.iloc[0]
    setting = f"RS code n = {int(c['n'])}, s = {int(c['s'])}, equispaced points, rational arithmetic"
    return [CLAIMS["R1"].row(setting=setting,
                             measured=f"{int(c['patterns'])} straggler patterns checked, every one "
                                      f"{'decodes' if c['verified'] else 'does not decode'} exactly",
                             verdict=exact(bool(c["verified"]))),
            CLAIMS["R2"].row(setting=setting,
                             measured=f"{int(c['rule_disagreements'])} received sets on which they disagree",
                             verdict=exact(int(c["rule_disagreements"]) == 0))]


def judge(stab: pd.DataFrame, cost: pd.DataFrame, vandermonde: pd.DataFrame, outcomes: pd.DataFrame,
          checks: pd.DataFrame) -> pd.DataFrame:
    """The claims table of notebook 02.

    Args:
        stab: the stability sweep (:func:`gclib.studies.reed_solomon.study.fraction_study`: ``n, s, points,
            assign, s/n``, ``worst_kappa, worst_error64, median_error64, median_error64_lo, median_error64_hi,
            worst_error32, uniform_patterns``).
        cost: :func:`gclib.sweeps.points_cost` (``points, volume, volume ci95, mean time, ci95``).
        vandermonde: :func:`gclib.studies.reed_solomon.study.vandermonde_table` (``n, s, equispaced,
            chebyshev``).
        outcomes: :func:`gclib.diagnostics.decoder_outcomes` (``case, kappa, outcome``).
        checks: :func:`gclib.symbolic.exact_checks` of the small exact code (one row: ``n, s, patterns,
            verified, rule_disagreements``).
    Returns:
        the claims table (:data:`gclib.claims.COLUMNS`).
    """
    rows = [*_exact_rows(checks),
            _breakdown_row("R3", stab, "worst_error64", TOL64, f"worst float64 error >= {TOL64:g}"),
            _breakdown_row("R4", stab, "worst_error32", USELESS32, f"worst float32 error >= {USELESS32:g}"),
            *_spread_rows(stab),
            _limit_row("R6", stab, "equispaced", ("chebyshev",)),
            _limit_row("R7", stab, "roots-of-unity", REAL_POINTS),
            _volume_row(cost), _worst_row(stab), *_median_rows(stab), _warning_row(outcomes), _kappa_row(stab),
            *_vandermonde_rows(vandermonde)]
    return table(rows)
