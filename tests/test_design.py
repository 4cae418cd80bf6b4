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
