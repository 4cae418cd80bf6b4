"""gclib.studies.scale.claims on hand-made study tables with known verdicts."""
import math

import pandas as pd

from gclib.claims import FAILS, HOLDS, INCONCLUSIVE
from gclib.studies.scale import claims as sc
from gclib.studies.scale.study import COLUMNS


def point(model, setting, K, scheme, t, ci=0.01, gain=(1.0, 1.0, 1.0), msgs=(10.0, 0.1), cf=math.nan, order=None):
    r = dict.fromkeys(COLUMNS, math.nan)
    r.update({"model": model, "setting": setting, "K": K, "scheme": scheme, "mean_time": t, "ci95_time": ci,
              "closed_form_time": cf, "gain": gain[0], "gain_lo": gain[1], "gain_hi": gain[2],
              "mean_messages": msgs[0], "ci95_messages": msgs[1], "order": order, "trials": 100})
    return r


def table(model, g1_small, g1_large, g2_small, g2_large, mmc, gc, lcc, mmc_msgs, uc_msgs, cf_gap=0.0):
    rows = []
    for K, g1, g2 in ((40, g1_small, g2_small), (1000, g1_large, g2_large)):
        rows += [point(model, "load fraction", K, "uncoded", 1.0, cf=1.0 + cf_gap),
                 point(model, "load fraction", K, "GC", 2.0, gain=g1),
                 point(model, "cluster size", K, "uncoded", 1.0),
                 point(model, "cluster size", K, "GC", gc, gain=g2),
                 point(model, "cluster size", K, "LCC", lcc),
                 point(model, "cluster size", K, "UC-MMC", 0.2, msgs=uc_msgs),
                 point(model, "cluster size", K, "GC-MMC", mmc, msgs=mmc_msgs, order=6)]
    return rows


# a: every claim holds: gains apart in the claimed direction, GC-MMC below GC and LCC, fewer messages.
A = table("a", (1.0, 0.9, 1.1), (2.0, 1.9, 2.1), (2.0, 1.9, 2.1), (1.0, 0.9, 1.1), 0.28, 1.5, 0.30,
          (20.0, 0.1), (40.0, 0.1))
# b: every claim fails: the other direction; GC-MMC slower than GC and than LCC; more messages; closed form off.
B = table("b", (2.0, 1.9, 2.1), (1.0, 0.9, 1.1), (1.0, 0.9, 1.1), (2.0, 1.9, 2.1), 2.0, 1.5, 0.30,
          (50.0, 0.1), (40.0, 0.1), cf_gap=0.5)
# c: every interval overlaps.
C = table("c", (1.0, 0.8, 1.2), (1.1, 0.9, 1.3), (1.0, 0.8, 1.2), (1.1, 0.9, 1.3), 1.55, 1.55, 1.48,
          (40.0, 1.0), (40.5, 1.0))


def judge(rows):
    return sc.judge(pd.DataFrame(rows, columns=COLUMNS), load_fraction=0.1, load=10, cluster_size=10)


def test_every_claim_reaches_each_verdict():
    for rows, verdict in ((A, HOLDS), (B, FAILS), (C, INCONCLUSIVE)):
        v = judge(rows).set_index("id")["verdict"]
        assert (v.drop("C") == verdict).all(), (verdict, v.to_dict())
    assert judge(A).set_index("id").loc["C", "verdict"] == HOLDS  # gap 0
    assert judge(B).set_index("id").loc["C", "verdict"] == FAILS  # gap of 50 standard errors
    assert judge([r for r in A if r["scheme"] != "uncoded"]).set_index("id").loc["C", "verdict"] == INCONCLUSIVE


def test_rows_per_model_are_lettered_and_name_the_order():
    t = judge(A + B)
    assert list(t["id"]) == ["C", "G1a", "G1b", "G2a", "G2b", "M1a", "M1b", "M2a", "M2b", "M3a", "M3b"]
    assert "order m = 6" in t.set_index("id").loc["M1a", "setting"]
    assert "0 of 2 K faster (not at K = 40, 1000)" in t.set_index("id").loc["M1b", "measured"]
    kind = t.set_index("id")["kind"]
    # Fig. 1's statements grown past its K = 40 are extensions; the paper says nothing of scale otherwise
    assert set(kind[kind.index.str.startswith("M")]) == {"extension"}
    assert set(kind[kind.index.str.startswith("G")]) == {"reading"} and kind["C"] == "check"


def test_trends_and_conclusions():
    tr = sc.trends(pd.DataFrame(A + B, columns=COLUMNS))
    row = tr[(tr["model"] == "a") & (tr["setting"] == "load fraction") & (tr["scheme"] == "GC")].iloc[0]
    assert (row["trend"], row["at the largest K"]) == ("grows", "faster than uncoded")
    row = tr[(tr["model"] == "b") & (tr["setting"] == "load fraction")].iloc[0]
    assert (row["trend"], row["at the largest K"]) == ("shrinks", "as uncoded")
    text = sc.conclusions(judge(A), tr)
    assert text.startswith("**Claims:** 6 claims: 6 hold, 0 do not hold, 0 inconclusive.")
    assert "- *a, load fraction*: the gain over uncoded grows: GC." in text
