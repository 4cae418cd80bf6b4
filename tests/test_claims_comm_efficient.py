"""Claims of notebook 03 (gclib.studies.communication_efficient.claims) on small hand-made tables whose verdicts are
known by hand."""
from __future__ import annotations

import pandas as pd

from gclib import claims
from gclib.claims import FAILS, HOLDS, INCONCLUSIVE
from gclib.studies.communication_efficient import claims as cc

N, S = 12, 2


def checks_table(verified=True, disagreements=0):
    return pd.DataFrame({"case": ["ye-abbe", "kadhe gaussian", "kadhe hamming"], "n": [6, 8, 7], "s": [2, 2, 2],
                         "m": [2, 2, 4], "patterns": [15, 28, 21], "verified": [True, True, verified],
                         "rule_disagreements": [0, disagreements, 0]})


def trade_table(mds_extra=0):
    rows = []
    for s in (1, 2):
        for m in (1, 2):
            rows += [{"s": s, "m": m, "construction": "ye-abbe", "family": "MDS", "load d": s + m + mds_extra},
                     {"s": s, "m": m, "construction": "kadhe gaussian", "family": "MDS", "load d": s + m},
                     {"s": s, "m": m, "construction": "kadhe repetition", "family": "repetition",
                      "load d": m * (s + 1)}]
    return pd.DataFrame(rows)


HAMMING = {"N": 7, "K": 4, "D": 3, "stragglers": 2, "mds_load": 6, "refused": True, "refusal": "..."}

# mean times: Ye-Abbe fastest at m = 2 (inside the range), Kadhe at m = 4 (an end of it)
ITIME = pd.DataFrame({
    "scheme": ["ye-abbe"] * 3 + ["kadhe"] * 3 + ["crc", "uncoded"], "m": [1, 2, 4, 1, 2, 4, 1, 1],
    "mean_time": [3.0, 2.0, 2.5, 2.5, 1.5, 1.4, 3.0, 2.8],
    "mean_messages": [10.0] * 3 + [6.0, 7.0, 8.0] + [10.0, 12.0],
    "ci95_messages": [0.0] * 3 + [0.1, 0.1, 0.1] + [0.0, 0.0]})


def change(a, ma, b, mb, lo, hi):
    return {"scheme_a": a, "m_a": ma, "scheme_b": b, "m_b": mb, "change": (lo + hi) / 2, "lo": lo, "hi": hi}


def changes_table(kadhe_vs_ye_at_4=(-0.5, -0.4)):
    return pd.DataFrame([
        change("kadhe", 4, "ye-abbe", 2, -0.31, -0.29),     # T1: below 0
        change("kadhe", 4, "crc", 1, -0.55, -0.45),         # T2: below 0
        change("ye-abbe", 2, "crc", 1, -0.10, 0.05),        # T3: contains 0
        change("ye-abbe", 2, "uncoded", 1, 0.01, 0.09),     # T4: above 0
        change("kadhe", 1, "ye-abbe", 1, -0.2, -0.1),       # T5, every m
        change("kadhe", 2, "ye-abbe", 2, -0.3, -0.2),
        change("kadhe", 4, "ye-abbe", 4, *kadhe_vs_ye_at_4),
        change("ye-abbe", 2, "ye-abbe", 1, -0.34, -0.32),   # T6a: the interior best beats both ends
        change("ye-abbe", 2, "ye-abbe", 4, -0.21, -0.19),
        change("kadhe", 4, "kadhe", 1, -0.45, -0.4),        # T6b: the best is an end and beats every other m
        change("kadhe", 4, "kadhe", 2, -0.08, -0.05),
    ])


def stab_table(kadhe_error=1e-15, plain_error=1e-3, default_few=1e-14, default_many=1e-2):
    rows = []
    for regime, s, plain, default in (("smallest s", 1, 1e-12, default_few),
                                      ("largest s <= n/2", 10, plain_error, default_many)):
        for n in (12, 24):
            rows += [{"regime": regime, "n": n, "s": s, "m": 2, "label": "kadhe", "worst_error64": kadhe_error},
                     {"regime": regime, "n": n, "s": s, "m": 2, "label": "ye-abbe chebyshev natural",
                      "worst_error64": plain if n == 24 else 1e-14},
                     {"regime": regime, "n": n, "s": s, "m": 2, "label": cc.DEFAULT_YE_ABBE,
                      "worst_error64": default if n == 24 else 1e-15}]
    return pd.DataFrame(rows)


def verdicts(t):
    return dict(zip(t["id"], t["verdict"]))


def test_a_run_with_every_verdict():
    t = cc.judge(checks_table(), trade_table(), HAMMING, ITIME, changes_table(), stab_table(), n=N, s=S)
    claims.check(t)
    v = verdicts(t)
    assert v["E1"] == v["E2"] == v["E3"] == v["E4"] == HOLDS
    assert (v["T1"], v["T2"], v["T3"], v["T4"]) == (HOLDS, HOLDS, INCONCLUSIVE, FAILS)
    assert v["T5"] == HOLDS
    assert v["T6a"] == HOLDS and v["T6b"] == FAILS
    assert v["T7"] == HOLDS  # Kadhe 6, 7, 8 (+- 0.1) below n - s = 10; Ye-Abbe exactly 10
    assert t.set_index("id").at["T7", "measured"].endswith("; ye-abbe: m = 1: 10; m = 2: 10; m = 4: 10")
    # with few stragglers the plain Ye-Abbe code stays accurate too (1e-12): this regime cannot tell the two apart,
    # which is no evidence against Kadhe et al.'s claim
    assert v["S1a"] == INCONCLUSIVE and "does not tell them apart" in t.set_index("id").at["S1a", "criterion"]
    assert v["S1b"] == HOLDS  # it reaches 1e-3 at n = 24, Kadhe stays at 1e-15
    assert v["S2"] == HOLDS and v["S3"] == HOLDS
    row = t.set_index("id").loc["T4"]
    assert row["kind"] == "extension" and "-32% running time against uncoded" in row["paper"]
    assert "carried beyond the paper" in row["paper"] and "only the direction" in row["paper"]
    ec2 = t.set_index("id").loc[["EC2a", "EC2b", "EC2c"]]
    assert (ec2["kind"] == "paper").all() and (ec2["verdict"] == "not testable here").all()
    assert "+5.0%" in row["measured"]


def test_the_opposite_run():
    t = cc.judge(checks_table(False, 2), trade_table(mds_extra=1), {**HAMMING, "refused": False}, ITIME,
                 changes_table((-0.05, 0.02)), stab_table(kadhe_error=1e-5, default_few=1e-3, default_many=1e-9),
                 n=N, s=S)
    v = verdicts(t)
    assert v["E1"] == v["E2"] == v["E3"] == v["E4"] == FAILS
    assert v["T5"] == INCONCLUSIVE  # at m = 4 the interval contains 0
    assert v["S1a"] == v["S1b"] == FAILS  # Kadhe itself reaches 1e-5
    assert v["S2"] == FAILS and v["S3"] == FAILS


def test_missing_comparisons_and_short_ranges_are_inconclusive():
    short = ITIME[ITIME["m"] <= 2]
    t = cc.judge(checks_table(), trade_table(), HAMMING, short, changes_table().iloc[:0], stab_table(), n=N, s=S)
    v = verdicts(t)
    assert v["T1"] == v["T2"] == v["T3"] == v["T4"] == v["T5"] == INCONCLUSIVE
    assert v["T6a"] == v["T6b"] == INCONCLUSIVE  # two values of m cannot show an interior minimum
