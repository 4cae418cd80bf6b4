"""Design search and Pareto front; the CLI of the GC-MMC schemes."""
import json

import numpy as np
import pandas as pd
import pytest

from gclib import Pareto, ShiftedExponential, design
from gclib.cli import main
from gclib.studies.gc_mmc import study as gc_mmc_study
from gclib.studies.mmc_design import study as design_study


def test_pareto_front_hand_example():
    df = pd.DataFrame({"label": list("abcde"), "mean_messages": [1, 2, 2, 3, 4], "mean_time": [5, 3, 4, 3, 1]})
    assert design.pareto_front(df)["label"].tolist() == ["a", "b", "e"]


def test_search_small_grid_respects_budget():
    m = ShiftedExponential(10, 0.01)
    res = design.search(12, 3, m, budget=12, trials=500, seed=1, max_orders=2)
    ok = res.table[res.table.mean_messages <= 12]
    assert res.best is not None and res.best["mean_messages"] <= 12
    assert res.best["mean_time"] == ok.mean_time.min()
    fams = set(res.table.family)
    assert {"gc", "rs", "frc", "uc-mmc", "lcc", "gc-mmc-correlated", "gc-mmc-uncorrelated", "hybrid"} <= fams
    # Same seed, same numbers (common random numbers).
    again = design.search(12, 3, m, budget=12, trials=500, seed=1, max_orders=2)
    assert np.array_equal(res.table.mean_time.to_numpy(), again.table.mean_time.to_numpy())


def test_search_infeasible_budget_and_bad_args():
    res = design.search(8, 2, Pareto(1, 2), budget=0.5, trials=100, families=["gc"])
    assert res.best is None
    with pytest.raises(ValueError, match="load must be"):
        design.search(8, 2, Pareto(1, 2), budget=5, load="bytes")
    with pytest.raises(ValueError, match="order_grid"):
        design.candidates(8, 2, order_grid=[3])


@pytest.mark.parametrize("args", [
    ["--scheme", "gc-mmc-uncorrelated", "--orders", "6,8,10", "--clusters", "4"],
    ["--scheme", "gc-mmc-correlated", "--order", "6", "--clusters", "4"],
    ["--scheme", "uc-mmc"], ["--scheme", "lcc"], ["--scheme", "hybrid", "--orders", "6,8,10"],
    ["--scheme", "gc", "--clusters", "4"],
])
def test_cli_simulate_json(args, capsys):
    assert main(["simulate", *args, "--workers", "40", "--load", "10", "--trials", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["trials"] == 200 and out["mean_messages"] >= out["mean_cluster_messages"] > 0


def test_cli_bad_order(capsys):
    assert main(["simulate", "--scheme", "gc-mmc-correlated", "--order", "11", "--workers", "40",
                 "--load", "10"]) == 2
    assert "order must lie in [1, 10]" in capsys.readouterr().err


def _reference_cluster_times(rule, arr):
    """Cluster times the slow, obvious way: class minimum, then the threshold-th smallest per cluster."""
    arr = arr.astype(float)
    ct = np.stack([arr[:, rule.msg_class == c].min(axis=1) for c in range(rule.class_cluster.size)], axis=1)
    return np.stack([np.sort(ct[:, rule.class_cluster == c], axis=1)[:, rule.thresholds[c] - 1]
                     for c in range(rule.n_clusters)], axis=1)


def test_rule_shortcuts_match_the_obvious_computation():
    """The rules' shortcuts (identity classes, equal contiguous clusters, float32 kept) change no number."""
    m = ShiftedExponential(10, 0.01, per_task=True)
    finish = m.sample(np.random.default_rng(2), 400, 12, 3)
    shortcut_kinds = set()
    for cand in design.candidates(12, 3, max_orders=2)[::5]:
        code = cand.build()
        rule = code.rule
        if not hasattr(rule, "_block"):
            continue
        shortcut_kinds.add((rule._identity, bool(rule._block)))
        arr = finish[:, code.sender, code.ready - 1]
        for dtype in (np.float64, np.float32):
            got = rule.cluster_times(arr.astype(dtype))
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.astype(float), _reference_cluster_times(rule, arr.astype(dtype)))
    # and the general path: clusters of unequal sizes and thresholds
    from gclib import codes

    for code in (codes.partial_stragglers(5, 1, pieces=4), codes.clustered([codes.crc(4, 1), codes.frc(6, 2)])):
        assert not code.rule._block
        shortcut_kinds.add((code.rule._identity, False))
        arr = m.sample(np.random.default_rng(3), 300, code.n_workers, code.load)[:, code.sender, code.ready - 1]
        np.testing.assert_array_equal(code.rule.cluster_times(arr), _reference_cluster_times(code.rule, arr))
    assert len(shortcut_kinds) >= 3, shortcut_kinds


def test_fig1_bars_and_order():
    df = gc_mmc_study.fig1(ShiftedExponential(10, 0.01), trials=2000, seed=0)
    assert df.label.tolist() == ["GC", "LCC", "UC-MMC", "GC-MMC-1", "GC-MMC-2"]
    g = df.set_index("label")
    assert g.loc["GC", "mean_messages"] == 31 and g.loc["LCC", "mean_messages"] == 7
    assert g.loc["GC-MMC-2", "mean_cluster_messages"] == 28
    # GC waits for the 31st of 40 workers: 10 * (alpha + (H_40 - H_9) / mu).
    H = lambda n: sum(1 / i for i in range(1, n + 1))  # noqa: E731
    assert abs(g.loc["GC", "mean_time"] - 10 * (0.01 + (H(40) - H(9)) / 10)) < 4 * g.loc["GC", "ci95_time"]


def test_cli_verify_exact_uncorrelated(capsys):
    assert main(["verify", "--scheme", "gc-mmc-uncorrelated", "--orders", "3,2", "--workers", "6", "--load", "3",
                 "--messages", "8"]) == 0
    assert "495 received message sets" in capsys.readouterr().out


def test_labels_are_those_of_the_candidates():
    for c in design.candidates(12, 3, max_orders=2):
        assert design.label(c.family, **c.params) == c.label
    assert design.label("gc-mmc-uncorrelated", orders=(6, 8, 10), clusters=4) == "unc [6, 8, 10] P=4"
    with pytest.raises(ValueError, match="family must be one of"):
        design.label("ldpc")
    with pytest.raises(ValueError, match="needs the parameter 'order'"):
        design.label("gc-mmc-correlated", clusters=2)


def _tiny_table():
    """Two models; in model A five designs whose fronts are known by hand."""
    rows = [("A", "gc", "a", 5.0, 1, 1), ("A", "gc", "b", 3.0, 2, 1), ("A", "uc-mmc", "c", 4.0, 2, 2),
            ("A", "uc-mmc", "d", 3.5, 3, 1), ("A", "lcc", "e", 1.0, 4, 4), ("B", "gc", "a", 2.0, 1, 1),
            ("B", "lcc", "e", 1.0, 4, 4)]
    return pd.DataFrame(rows, columns=["model", "family", "label", "mean_time", "mean_messages",
                                       "mean_cluster_messages"]).assign(ci95_time=0.1)


def test_pareto_fronts_per_model_and_load_by_hand():
    f = design_study.pareto_fronts(_tiny_table())
    got = {(m, load): list(g["label"]) for (m, load), g in f.groupby(["model", "load"], sort=False)}
    assert got == {("A", "mean_messages"): ["a", "b", "e"],          # d (3.5 at 3) is slower than b (3.0 at 2)
                   ("A", "mean_cluster_messages"): ["b", "e"],  # a, b, d cost 1: b is fastest; c (2) is slower
                   ("B", "mean_messages"): ["a", "e"], ("B", "mean_cluster_messages"): ["a", "e"]}


def test_best_per_budget_and_per_family_by_hand():
    best = design_study.best_per_budget(_tiny_table(), [0.5, 2, 10])
    assert list(best.columns) == ["model", "load", "budget", "label", "family", "mean_time", "ci95_time",
                                  "mean_messages", "mean_cluster_messages"]
    lab = best.set_index(["model", "load", "budget"])["label"]
    assert pd.isna(lab[("A", "mean_messages", 0.5)])                   # nothing within half a message
    assert lab[("A", "mean_messages", 2)] == "b" and lab[("A", "mean_messages", 10)] == "e"
    assert lab[("A", "mean_cluster_messages", 2)] == "b" and lab[("B", "mean_messages", 2)] == "a"
    fam = design_study.best_per_family(_tiny_table())
    assert fam[["model", "family", "label"]].values.tolist() == [
        ["A", "lcc", "e"], ["A", "gc", "b"], ["A", "uc-mmc", "d"], ["B", "lcc", "e"], ["B", "gc", "a"]]


def test_fig1_models_and_order_sweep_small():
    models = gc_mmc_study.timing_models(10, 0.01)
    assert list(models) == [gc_mmc_study.EQ5, gc_mmc_study.PER_TASK] and models[gc_mmc_study.PER_TASK].per_task
    kw = dict(K=6, r=3, P=2, m=2, orders=(2, 3))
    df = gc_mmc_study.fig1_models(models, trials=300, seed=1, **kw)
    assert df["model"].tolist() == [gc_mmc_study.EQ5] * 5 + [gc_mmc_study.PER_TASK] * 5
    one = gc_mmc_study.fig1(models[gc_mmc_study.PER_TASK], trials=300, seed=1, **kw)
    np.testing.assert_array_equal(df["mean_time"].to_numpy()[5:], one["mean_time"].to_numpy())
    assert set(gc_mmc_study.FIG1_COLUMNS) <= set(df.columns)
    sw = gc_mmc_study.order_sweep(models, K=6, r=3, P=2, trials=300, seed=1)
    assert sw["label"].tolist() == ["m=1", "m=2", "m=3", "LCC"] * 2
    assert sw["order"].tolist()[:3] == [1, 2, 3] and np.isnan(sw["order"].iloc[3])
    a = sw[sw["model"] == gc_mmc_study.EQ5].set_index("label")
    assert a.loc["m=1", "mean_messages"] > a.loc["m=2", "mean_messages"] > a.loc["m=3", "mean_messages"]
    assert a.loc["m=1", "mean_time"] <= a.loc["m=3", "mean_time"]  # same draws: more messages never finish later
    with pytest.raises(ValueError, match="models"):
        gc_mmc_study.order_sweep({}, K=6, r=3, P=2)


def test_exact_rule_table_small():
    m = ShiftedExponential(10, 0.01)
    t = design.exact_rule_table([((3, 2), 1), ((3, 2), 2)], 6, 3, m, trials=60, seed=2)
    # Unclustered: the paper's threshold 8 exceeds the 6 parts, and the exact span test finishes earlier;
    # 2 clusters of 3 workers: threshold 3 * 2 - 5 + 1 = 2 messages, at most the 3 parts: the rules agree.
    assert t[["threshold", "parts_per_cluster"]].values.tolist() == [[8, 6], [2, 3]]
    assert t.loc[0, "time_exact"] < t.loc[0, "time_threshold_rule"] and t.loc[0, "differing"] > 0
    assert t.loc[1, "differing"] == 0 and t.loc[1, "time_exact"] == t.loc[1, "time_threshold_rule"]
    assert (t["trials"] == 60).all()


def test_evaluate_models_and_counts():
    cands = design.candidates(6, 3, max_orders=1)
    counts = design_study.family_counts(cands)
    assert sum(counts.values()) == len(cands) and counts["gc-mmc-correlated"] == 6  # m = 1..3, P = 1, 2
    models = design_study.design_models(10, 0.01, 0.05, 2.0)
    assert list(models) == ["shifted-exp (eq. 5)", "Pareto (scale 0.05, shape 2.0)"]
    t = design_study.evaluate_models(cands, models, 6, trials=200, seed=0)
    assert len(t) == 2 * len(cands) and t["params"].map(type).eq(str).all()
    by = t.drop_duplicates("label").set_index("label")["clusters"]
    assert by["gc P=2"] == 2 and by["corr m=1 P=1"] == 1 and np.isnan(by["lcc"])
    assert set(design_study.TABLE_COLUMNS) <= set(t.columns)
    # the per-trial results behind the table, for paired comparisons: the same table, and its means
    t2, per = design_study.evaluate_models(cands, models, 6, trials=200, seed=0, keep_trials=True)
    pd.testing.assert_frame_equal(t, t2)
    first = next(iter(models))
    assert set(per) == set(models) and per[first]["time"].shape == (len(cands), 200)
    mine = t[t.model == first].reset_index(drop=True)
    np.testing.assert_allclose(np.nanmean(np.where(np.isfinite(per[first]["time"]), per[first]["time"], np.nan),
                                          axis=1), mine["mean_time"], rtol=1e-5)
    np.testing.assert_allclose(per[first]["messages"].mean(axis=1), mine["mean_messages"], rtol=1e-6)


def test_equal_times_up_to_rounding_are_a_tie_won_by_the_first_row():
    # the same design under two names: times that differ only in the last bits (as on another CPU) are a tie
    t = 0.1833
    rows = [("A", "gc-mmc-correlated", "corr m=1 P=3", t * (1 + 4e-16), 3, 2),
            ("A", "uc-mmc", "uc-mmc P=3", t, 3, 2), ("A", "gc", "slow", 2 * t, 1, 1)]
    table = pd.DataFrame(rows, columns=["model", "family", "label", "mean_time", "mean_messages",
                                        "mean_cluster_messages"]).assign(ci95_time=0.1)
    assert design.fastest(table)["label"] == "corr m=1 P=3"
    assert design.fastest(table.iloc[::-1])["label"] == "uc-mmc P=3"
    assert design.fastest(table.assign(mean_time=[t * 1.001, t, 2 * t]))["label"] == "uc-mmc P=3"  # not a tie
    lab = design_study.best_per_budget(table, [3])["label"].tolist()
    assert lab == ["corr m=1 P=3", "corr m=1 P=3"]
    # the same rule per family, and with an index that repeats (tables of several models concatenated)
    one = table.assign(family="uc-mmc").set_index(pd.Index([0, 0, 1]))
    assert design_study.best_per_family(one)["label"].tolist() == ["corr m=1 P=3"]
    assert design_study.best_per_family(one.iloc[::-1])["label"].tolist() == ["uc-mmc P=3"]
