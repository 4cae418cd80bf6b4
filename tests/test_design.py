"""Design search and Pareto front; the CLI of the GC-MMC schemes."""
import json

import numpy as np
import pandas as pd
import pytest

from gclib import Pareto, ShiftedExponential, design
from gclib.cli import main


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
    df = design.fig1(ShiftedExponential(10, 0.01), trials=2000, seed=0)
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
