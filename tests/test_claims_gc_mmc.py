"""gclib.studies.gc_mmc.claims on hand-made Example 1 counts, Fig. 1 tables and order sweeps with known verdicts."""
import pandas as pd
import pytest

from gclib import claims
from gclib.claims import FAILS, HOLDS, INCONCLUSIVE
from gclib.studies.gc_mmc import claims as gc_mmc
from gclib.codes.mmc import WorkedExampleFacts


def facts(**kw):
    counts = [("correlated", "distinct messages", 1, 0, 6), ("correlated", "distinct messages", 4, 0, 15),
              ("correlated", "distinct messages", 5, 6, 6), ("correlated", "workers", 2, 0, 15),
              ("correlated", "workers", 3, 14, 20), ("correlated", "workers", 4, 15, 15),
              ("gc", "workers", 3, 0, 20), ("gc", "workers", 4, 15, 15)]
    counts += [("uncorrelated", "messages", t, d, n) for t, d, n in
               [(1, 0, 12), (2, 0, 66), (3, 0, 220), (4, 0, 495), (5, 0, 792), (6, 864, 924), (7, 786, 792),
                (8, 495, 495)]]
    f = dict(eq2=True, red=True, eq3=False, rule_agrees=True, workers_124=True, failing_triples=[(1, 2, 3)],
             scenario=True, scenario_gc=False,
             counts=pd.DataFrame(counts, columns=["design", "received", "size", "decoding", "sets"]))
    f.update(kw)
    return WorkedExampleFacts(**f)


def bars(model, gc, lcc, uc, g1, g2):
    """Each scheme: (time, ci, messages, ci); cluster messages = messages / 2."""
    rows = []
    for label, (t, ct, m, cm) in zip(["GC", "LCC", "UC-MMC", "GC-MMC-1", "GC-MMC-2"], [gc, lcc, uc, g1, g2]):
        rows.append({"model": model, "label": label, "mean_time": t, "ci95_time": ct, "mean_messages": m,
                     "ci95_messages": cm, "mean_cluster_messages": m / 2, "ci95_cluster_messages": cm})
    return pd.DataFrame(rows)


FIG1 = pd.concat([
    # a: GC-MMC-1 0.29 <= 1.05 * 0.29; GC-MMC-2 0.43 > 1.05 * 0.31; GC-MMC-2's 43.4..44.0 messages in 36..44;
    #    tallest bars 1.5 in (1.4, 1.6] and 106 in (100, 120].
    bars("a", (1.5, 0.01, 31, 0), (0.30, 0.01, 7, 0), (0.17, 0.01, 106, 1), (0.28, 0.01, 42, 1),
         (0.44, 0.01, 43.7, 0.3)),
    # b: GC-MMC-1 0.30..0.32 against 1.05 x 0.29..0.31 overlaps; GC-MMC-2 messages 43.7..44.7 straddle 44;
    #    tallest time 1.3 is not above 1.4.
    bars("b", (1.3, 0.01, 31, 0), (0.30, 0.01, 7, 0), (0.25, 0.01, 86, 1), (0.31, 0.01, 38, 1),
         (0.28, 0.01, 44.2, 0.5)),
], ignore_index=True)


def sweep(model, times):
    rows = [{"model": model, "label": f"m={m}", "family": "gc-mmc-correlated", "order": m, "mean_time": t,
             "ci95_time": 0.01, "mean_messages": 100 / m, "ci95_messages": 1} for m, t in times.items()]
    rows.append({"model": model, "label": "LCC", "family": "lcc", "order": float("nan"), "mean_time": 0.30,
                 "ci95_time": 0.01, "mean_messages": 7, "ci95_messages": 0})
    return pd.DataFrame(rows)


# a: m = 1 beats LCC beyond the CIs; b: m = 1, 2 overlap LCC and only m = 3 (= GC-MMC-1's order) beats it.
SWEEP = pd.concat([sweep("a", {1: 0.20, 2: 0.25, 3: 0.28}), sweep("b", {1: 0.29, 2: 0.30, 3: 0.20})],
                  ignore_index=True)
EXACT = pd.DataFrame([{"orders": "[6, 8, 10]", "clusters": 4, "threshold": 7, "parts_per_cluster": 10,
                       "trials": 200, "time_threshold_rule": 0.43, "ci95_time_threshold_rule": 0.02,
                       "time_exact": 0.43, "ci95_time_exact": 0.02, "messages_threshold_rule": 43.4,
                       "messages_exact": 43.4, "differing": 0}])


@pytest.fixture(scope="module")
def table():
    return gc_mmc.judge(facts(), FIG1, SWEEP, EXACT, K=40, order=3, trials=1000, sweep_trials=500)


def test_worked_example_rows(table):
    v = dict(zip(table["id"], table["verdict"]))
    assert [v[f"E{i}"] for i in range(1, 12)] == [HOLDS, HOLDS, FAILS, HOLDS, HOLDS, HOLDS, HOLDS, HOLDS, HOLDS,
                                                 FAILS, HOLDS]
    m = table.set_index("id")["measured"]
    assert "864 of 924 sets of 6 and 786 of 792 sets of 7 decode" in m["E10"]
    assert "14 of 20 triples" in m["E7"] and "(1, 2, 3)" in m["E7"]


def test_worked_example_rows_follow_the_counts():
    t = gc_mmc.judge(facts(scenario_gc=True, workers_124=False), FIG1, SWEEP, EXACT, K=40, order=3, trials=1000,
                     sweep_trials=500)
    v = dict(zip(t["id"], t["verdict"]))
    assert v["E11"] == FAILS and v["E6"] == FAILS


def test_fig1_rows_per_model(table):
    v = dict(zip(table["id"], table["verdict"]))
    assert [v[f"F{i}a"] for i in range(1, 9)] == [HOLDS, FAILS, HOLDS, HOLDS, HOLDS, HOLDS, HOLDS, HOLDS]
    # F9, the sweep: a: times 0.20 < 0.25 < 0.28 and messages 100 > 50 > 33, every step decided; b: m = 3 (0.20)
    # is faster than m = 2 (0.30).
    assert v["F9a"] == HOLDS and v["F9b"] == FAILS
    assert "m = 3 to 2: does not hold" in table.set_index("id").loc["F9b", "measured"]
    # b: F1 overlaps; F2 0.28 vs LCC holds; F3 only m = 3 (not < order) beats LCC; F6 GC-MMC-2 faster than GC and
    # fewer messages than UC-MMC; F7 straddles the band; F8 tallest time 1.3 is not above 1.4.
    assert [v[f"F{i}b"] for i in range(1, 9)] == [INCONCLUSIVE, HOLDS, INCONCLUSIVE, HOLDS, HOLDS, HOLDS,
                                                 INCONCLUSIVE, FAILS]
    assert v["X1"] == HOLDS
    assert "m = 1, 2;" in table.set_index("id").loc["F3a", "measured"]  # m = 3: 0.29 is not below 0.29
    assert set(v.values()) == {HOLDS, FAILS, INCONCLUSIVE}
    claims.check(table)
