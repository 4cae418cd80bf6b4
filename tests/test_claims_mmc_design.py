"""gclib.studies.mmc_design.claims on hand-made design tables whose verdicts are known by hand."""
import math

import pandas as pd
import pytest

from gclib import claims, design
from gclib.claims import FAILS, HOLDS, INCONCLUSIVE
from gclib.studies.mmc_design import claims as mmc_design
from gclib.studies.mmc_design import study as design_study


def designs_table(rows, model="M"):
    """Rows: (family, label, clusters, time, ci, messages, ci, cluster messages, ci)."""
    cols = ["family", "label", "clusters", "mean_time", "ci95_time", "mean_messages", "ci95_messages",
            "mean_cluster_messages", "ci95_cluster_messages"]
    return pd.DataFrame(rows, columns=cols).assign(model=model)


FIVE = designs_table([  # (load, time) by hand: a, b on the front; c dominated by b; d undecided; e on the front
    ("gc", "a", 1, 5.00, 0.1, 1, 0.0, 1, 0.0),
    ("gc", "b", 1, 3.00, 0.1, 2, 0.0, 2, 0.0),
    ("gc", "c", 1, 4.00, 0.1, 2, 0.0, 2, 0.0),
    ("gc", "d", 1, 3.05, 0.1, 3, 0.5, 3, 0.5),
    ("gc", "e", 1, 1.00, 0.1, 4, 0.0, 4, 0.0),
])


def test_front_verdicts_of_five_points():
    fv = mmc_design.front_verdicts(FIVE, "mean_messages")
    assert fv["verdict"].tolist() == [HOLDS, HOLDS, FAILS, INCONCLUSIVE, HOLDS]
    assert fv["witness"].tolist() == [-1, -1, 1, 1, -1]  # c is dominated by b; d cannot be told from b
    # The plain front of the means (design.pareto_front) keeps a, b, e.
    assert design.pareto_front(FIVE)["label"].tolist() == ["a", "b", "e"]


def test_an_unknown_interval_is_undecided():
    t = FIVE.copy()
    t.loc[4, "ci95_time"] = math.nan
    fv = mmc_design.front_verdicts(t, "mean_messages")
    assert fv["verdict"].tolist()[4] == INCONCLUSIVE


def test_distinct_merges_twins_and_names_them():
    t = designs_table([("uc-mmc", "uc-mmc P=1", 1, 0.2, 0.01, 100, 1, 100, 1),
                       ("gc-mmc-correlated", "corr m=1 P=1", 1, 0.2, 0.01, 100, 1, 100, 1),
                       ("gc", "gc P=1", 1, 1.0, 0.01, 31, 0, 31, 0)])
    d = mmc_design.distinct(t)
    assert d["name"].tolist() == ["uc-mmc P=1 = corr m=1 P=1", "gc P=1"]
    assert d["label"].tolist() == ["uc-mmc P=1", "gc P=1"]


DESIGNS = designs_table([
    ("gc", "gc P=1", 1, 1.00, 0.01, 31, 0, 31, 0),
    ("uc-mmc", "uc-mmc P=1", 1, 0.20, 0.01, 100, 1, 100, 1),
    ("gc-mmc-correlated", "corr m=1 P=1", 1, 0.20, 0.01, 100, 1, 100, 1),  # twin of uc-mmc P=1
    ("gc-mmc-correlated", "corr m=2 P=2", 2, 0.30, 0.01, 50, 1, 35, 1),
    ("gc-mmc-uncorrelated", "unc [2] P=1", 1, 0.60, 0.01, 60, 1, 60, 1),
    ("gc-mmc-uncorrelated", "unc [2] P=2", 2, 0.50, 0.01, 55, 1, 40, 1),
    ("gc", "gc P=2", 2, 0.80, 0.01, 20, 0, 10, 0),
    ("uc-mmc", "uc-mmc P=2", 2, 0.15, 0.01, 90, 1, 50, 1),
    ("hybrid", "hybrid [1, 2]", math.nan, 0.16, 0.01, 95, 1, 55, 1),
])
EXACT = pd.DataFrame([
    {"orders": "[3, 2]", "clusters": 1, "threshold": 20, "parts_per_cluster": 12, "trials": 50,
     "time_threshold_rule": 0.47, "ci95_time_threshold_rule": 0.04, "time_exact": 0.28, "ci95_time_exact": 0.03,
     "messages_threshold_rule": 20.0, "messages_exact": 14.6, "differing": 49},  # lower beyond the CIs
    {"orders": "[3, 1]", "clusters": 2, "threshold": 9, "parts_per_cluster": 6, "trials": 50,
     "time_threshold_rule": 0.34, "ci95_time_threshold_rule": 0.05, "time_exact": 0.30, "ci95_time_exact": 0.05,
     "messages_threshold_rule": 19.0, "messages_exact": 15.4, "differing": 20},  # intervals overlap
    {"orders": "[6, 8, 10]", "clusters": 4, "threshold": 7, "parts_per_cluster": 10, "trials": 200,
     "time_threshold_rule": 0.43, "ci95_time_threshold_rule": 0.02, "time_exact": 0.42, "ci95_time_exact": 0.02,
     "messages_threshold_rule": 43.4, "messages_exact": 43.0, "differing": 3},  # rules should agree, do not
])


@pytest.fixture(scope="module")
def verdicts():
    best = design_study.best_per_budget(DESIGNS, [10, 25, 60])
    t = mmc_design.judge(DESIGNS, best, EXACT, K=12, r=3, trials=1000)
    return dict(zip(t["id"], t["verdict"])), t


def test_judge_by_hand(verdicts):
    v, t = verdicts
    claims.check(t)
    # F: corr m=2 P=2 is surely on the front between gc P=1 (31) and uc-mmc P=1 (100), under both accountings.
    assert v["F1"] == v["F2"] == HOLDS
    # P: GC-MMC-1 and -2 exist only at K = 40, r = 10.
    assert all(v[f"P{i}"] == INCONCLUSIVE for i in range(1, 5))
    # B, messages until completion: none within 10; only gc P=2 within 25; corr m=2 P=2 (0.30) beats unc [2] P=2
    # (0.50) within 60. Cluster messages: only gc P=2 within 10 and 25; within 60 uc-mmc P=2 (0.15 +- 0.01) and
    # the hybrid (0.16 +- 0.01) overlap.
    assert [v[f"B{i}"] for i in range(1, 7)] == [FAILS, HOLDS, HOLDS, HOLDS, HOLDS, INCONCLUSIVE]
    assert "no design" in t.set_index("id").loc["B1", "measured"]
    assert "uc-mmc P=2" in t.set_index("id").loc["B6", "measured"]
    # X: conservative beyond the CIs; overlapping; threshold at most the parts, yet 3 trials differ.
    assert [v["X1"], v["X2"], v["X3"]] == [HOLDS, INCONCLUSIVE, FAILS]
    # C: the clustered correlated design (0.30) is slower than the unclustered one (m = 1: 0.20).
    assert v["C1"] == FAILS
    assert set(v.values()) == {HOLDS, FAILS, INCONCLUSIVE}


def test_flexibility_counts_and_missing_references():
    best = design_study.best_per_budget(DESIGNS, [60])
    t = mmc_design.judge(DESIGNS, best, EXACT.iloc[:0], K=12, r=3, trials=1000).set_index("id")
    assert "surely on the front: 1 (corr m=2 P=2); undecided: 1" in t.loc["F1", "measured"]  # the hybrid
    no_gc = DESIGNS[DESIGNS["label"] != "gc P=1"]
    t = mmc_design.judge(no_gc, best, EXACT.iloc[:0], K=12, r=3, trials=1000).set_index("id")
    assert t.loc["F1", "verdict"] == INCONCLUSIVE


def test_paper_designs_on_the_front_at_the_papers_size():
    rows = DESIGNS.copy()
    rows.loc[3, "label"] = "corr m=6 P=4"          # GC-MMC-1: surely on the front
    rows.loc[5, "label"] = "unc [6, 8, 10] P=4"    # GC-MMC-2: dominated by corr m=6 P=4 (messages)
    best = design_study.best_per_budget(rows, [60])
    t = mmc_design.judge(rows, best, EXACT.iloc[:0], K=40, r=10, trials=1000).set_index("id")
    assert t.loc["P1", "verdict"] == HOLDS and t.loc["P2", "verdict"] == FAILS
    assert "dominated by corr m=6 P=4" in t.loc["P2", "measured"]


def test_paired_trials_decide_what_separate_intervals_cannot():
    import numpy as np

    from gclib.stats import mean_ci

    base = np.random.default_rng(0).exponential(1.0, 2000)
    times = np.stack([base, base + 0.01])  # y is x plus 0.01 in every trial: common random numbers
    loads = np.full((2, 2000), 5.0)
    (mx, hx), (my, hy) = mean_ci(times[0]), mean_ci(times[1])
    t = designs_table([("gc", "x", 1, mx, hx, 5, 0, 5, 0), ("gc", "y", 1, my, hy, 5, 0, 5, 0)])
    d = mmc_design.distinct(t)
    assert mmc_design.front_verdicts(d, "mean_messages")["verdict"].tolist() == [INCONCLUSIVE, INCONCLUSIVE]
    mats = mmc_design.matrices(d, {"time": times, "messages": loads, "cluster_messages": loads})
    assert mats["mean_time"].difference(1, 0).text(".3g") == "0.01"  # the paired difference is exact here
    assert mmc_design.front_verdicts(d, "mean_messages", mats)["verdict"].tolist() == [HOLDS, FAILS]
