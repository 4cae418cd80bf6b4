"""Claims of notebook 02 (gclib.studies.reed_solomon.claims) on small hand-made tables whose verdicts are known by
hand."""
from __future__ import annotations

import pandas as pd
import pytest

from gclib import claims
from gclib.claims import FAILS, HOLDS, INCONCLUSIVE
from gclib.studies.reed_solomon import claims as rc

POINTS = ("equispaced", "chebyshev", "roots-of-unity")

# worst float64 error per (points, assign, s/n) at n = 10 and n = 20
GOOD = {
    ("equispaced", "natural", 0.1): (1e-10, 1e-3), ("equispaced", "natural", 0.5): (1e-9, 1e-2),
    ("chebyshev", "natural", 0.1): (1e-10, 1e-2), ("chebyshev", "natural", 0.5): (1e-5, 1e-1),
    ("roots-of-unity", "natural", 0.1): (1e-15, 1e-13), ("roots-of-unity", "natural", 0.5): (1e-14, 1e-8),
}


def stab_table(err64=GOOD, median64=1e-10, err32=(1e-5, 1.0), kappa_ratio=1.0, median_band=10.0):
    """Every point family and assignment at n = 10, 20 and s/n = 0.1, 0.5. Spread codes are at round-off; the
    natural ones have the errors of ``err64`` and the median ``median64`` with the interval [median / band,
    median * band]; kappa = error / (eps * kappa_ratio)."""
    rows = []
    for p in POINTS:
        for a in ("spread", "natural"):
            for f in (0.1, 0.5):
                for k, n in enumerate((10, 20)):
                    e = err64.get((p, a, f), (1e-15, 1e-14))[k]
                    med = median64 if a == "natural" else 1e-16
                    rows.append({"n": n, "s": max(1, round(f * n)), "points": p, "assign": a, "s/n": f,
                                 "worst_error64": e, "median_error64": med, "median_error64_lo": med / median_band,
                                 "median_error64_hi": med * median_band, "uniform_patterns": 12,
                                 "worst_error32": err32[k] if a == "natural" else 1e-7,
                                 "worst_kappa": e / (rc.EPS64 * kappa_ratio), "patterns": 15})
    return pd.DataFrame(rows)


def cost_table(roots_volume=34.0):
    return pd.DataFrame({"points": list(POINTS), "volume": [17.0, 17.0, roots_volume], "volume ci95": [0.0] * 3,
                         "mean time": [0.8, 0.8, 0.85], "ci95": [0.01] * 3})


def vandermonde_table(scale_equispaced=0.5):
    return pd.DataFrame([{"n": n, "s": s, "equispaced": v["equispaced"] * scale_equispaced,
                          "chebyshev": v["chebyshev"] * 1.01} for (n, s), v in rc.REPORTED_COND_VF.items()])


def outcomes_table(bad_outcome="warned"):
    return pd.DataFrame({"case": ["bad", "good"], "kappa": [1e12, 1e2], "outcome": [bad_outcome, "silent"]})


def checks_table(verified=True, disagreements=0):
    return pd.DataFrame([{"case": "rs", "n": 5, "s": 2, "patterns": 10, "verified": verified,
                          "rule_disagreements": disagreements}])


def verdicts(t: pd.DataFrame) -> dict:
    return dict(zip(t["id"], t["verdict"]))


def test_a_run_with_every_verdict():
    t = rc.judge(stab_table(), cost_table(), vandermonde_table(), outcomes_table(), checks_table())
    claims.check(t)
    v = verdicts(t)
    assert v["R1"] == v["R2"] == HOLDS
    assert v["R3"] == HOLDS  # every real natural family reaches 1e-6 at n = 20 (chebyshev 0.5 already at 10)
    assert v["R4"] == HOLDS  # float32 error 1.0 >= 1e-2 at n = 20
    assert v["R5a"] == v["R5b"] == HOLDS  # e.g. 1e-3 / 1e-14 at n = 20
    # roots of unity: at s/n = 0.1 the natural error 1e-13 is round-off, at 0.5 the gain is 1e-8 / 1e-14
    assert v["R5c"] == HOLDS
    # limits (natural): equispaced 10, 10 vs chebyshev 10, 0 (fails at n = 10); spread ties at 20
    assert v["R6"] == HOLDS
    assert v["R7"] == HOLDS  # roots of unity natural: 20 and 20 against the best real limits 10 and 10
    assert v["R8"] == HOLDS  # 34 / 17 = 2 exactly
    assert v["R9"] == FAILS  # the spread codes stay at round-off at n = 20, s/n = 0.5
    assert v["R10a"] == v["R10b"] == HOLDS
    assert v["R11"] == HOLDS
    assert v["R12"] == HOLDS  # error / (eps kappa) = 1 everywhere
    assert v["R13a"] == HOLDS  # 1% off the reported Chebyshev values
    assert v["R13b"] == FAILS  # half the reported equispaced values
    assert "reported" in t.set_index("id").loc["R13b", "paper"] and "not the paper" in t.set_index("id").loc[
        "R13b", "paper"]


def test_the_opposite_run():
    calm = {k: (1e-15, 1e-14) for k in GOOD}  # nothing ever breaks down
    t = rc.judge(stab_table(calm, median64=1e-3, err32=(1e-7, 1e-6), kappa_ratio=100.0), cost_table(30.0),
                 vandermonde_table(1.0), outcomes_table("silent"), checks_table(False, 3))
    v = verdicts(t)
    assert v["R1"] == v["R2"] == FAILS
    assert v["R3"] == v["R4"] == FAILS
    assert v["R5a"] == v["R5b"] == v["R5c"] == INCONCLUSIVE  # every natural error is round-off: no gain to measure
    assert v["R6"] == v["R7"] == INCONCLUSIVE  # every limit ties at the largest n
    assert v["R8"] == FAILS  # 30 / 17 is not 2
    assert v["R10a"] == FAILS and v["R10b"] == HOLDS  # the median judged per assignment
    assert v["R11"] == FAILS  # kappa 1e12 decoded silently
    assert v["R12"] == FAILS  # error 100 times eps kappa
    assert v["R13b"] == HOLDS


def test_a_smaller_limit_does_not_hold():
    worse = dict(GOOD)
    worse[("equispaced", "natural", 0.5)] = (1e-3, 1e-2)  # equispaced now fails at n = 10 where Chebyshev does too
    worse[("equispaced", "natural", 0.1)] = (1e-3, 1e-2)  # ... and where Chebyshev does not
    v = verdicts(rc.judge(stab_table(worse), cost_table(), vandermonde_table(), outcomes_table(), checks_table()))
    assert v["R6"] == FAILS


@pytest.mark.parametrize("median, band, verdict", [
    (1e-10, 10.0, HOLDS),          # [1e-11, 1e-9] below 1e-6
    (1e-7, 100.0, INCONCLUSIVE),   # [1e-9, 1e-5] straddles 1e-6: the sampled median cannot tell
    (1e-3, 10.0, FAILS),           # [1e-4, 1e-2] above
    (1e-6, 1.0, FAILS),            # an exact median (every pattern enumerated) at the tolerance is not below it
])
def test_the_median_is_judged_by_its_interval(median, band, verdict):
    t = rc.judge(stab_table(median64=median, median_band=band), cost_table(), vandermonde_table(), outcomes_table(),
                 checks_table()).set_index("id")
    assert t.at["R10a", "verdict"] == verdict and t.at["R10b", "verdict"] == HOLDS  # spread: 1e-16
    assert "12 or more uniform random patterns" in t.at["R10a", "setting"]


@pytest.mark.parametrize("volume, ci, verdict", [(34.0, 0.0, HOLDS), (34.0, 1.0, INCONCLUSIVE), (40.0, 0.0, FAILS)])
def test_volume_ratio_interval(volume, ci, verdict):
    cost = cost_table(volume)
    cost["volume ci95"] = [0.0, 0.0, ci]
    v = verdicts(rc.judge(stab_table(), cost, vandermonde_table(), outcomes_table(), checks_table()))
    assert v["R8"] == verdict  # 34 +- 1 over 17: [1.94, 2.06] straddles the 1% band around 2
