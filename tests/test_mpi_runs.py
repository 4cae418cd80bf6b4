"""gclib.studies.mpi_runs.study: the run grid of notebook 07 (one small real MPI grid, marked ``mpi``) and the
pure
aggregations of an iteration log, on hand-made logs whose results are known by hand."""
from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

from gclib.studies.mpi_runs import plots as figures
from gclib.studies.mpi_runs import study

matplotlib.use("Agg")
T2 = 4.302652729911275  # Student t quantile 0.975 with 2 degrees of freedom


def log_rows(scheme, times, predicted, losses=None, dataset="d", model="m"):
    losses = losses if losses is not None else [1.0 / (i + 1) for i in range(len(times))]
    wall = np.cumsum(times)
    return [{"dataset": dataset, "model": model, "scheme": scheme, "iteration": i, "time": t, "predicted": p,
             "wall": w, "loss": l, "auc": 0.9, "grad_error": 1e-15}
            for i, (t, p, w, l) in enumerate(zip(times, predicted, wall, losses))]


def test_build_names_every_scheme_of_the_notebook():
    uc = study.build("uc-mmc", 4, 1)
    assert uc.name == "uc-mmc" and uc.n_messages == 8 and sorted(uc.ready.tolist()) == [1] * 4 + [2] * 4
    assert uc.is_decodable(uc.surviving([2]))  # any one straggler
    assert study.build("crc", 4, 1, seed=2).stragglers == 1
    with pytest.raises(ValueError, match="divisible"):
        study.build("frc", 4, 2)
    with pytest.raises(ValueError, match="scheme"):
        study.build("nope", 4, 1)
    assert study.problem("tandon-logistic", 4, samples=40, dim=3).X.shape == (40, 3)


def test_tables_of_the_figures_keep_their_columns():
    log = pd.DataFrame(log_rows("a", [1.0, 2.0], [0.9, 1.9]))
    assert list(study.curve_table(log, "loss").columns) == ["dataset", "model", "scheme", "iteration",
                                                                 "wall", "loss"]
    assert list(study.timing_table(log).columns) == ["dataset", "model", "scheme", "iteration", "predicted",
                                                           "time"]
    with pytest.raises(ValueError, match="metric"):
        study.curve_table(log, "nope")


def test_iteration_times_and_overhead_by_hand():
    log = pd.DataFrame(log_rows("a", [1.1, 1.2, 1.3], [1.0, 1.0, 1.0]) + log_rows("b", [2.0], [1.0]))
    it = study.iteration_times(log).set_index("scheme")
    half = T2 * 0.1 / math.sqrt(3)
    assert it.at["a", "mean_time"] == pytest.approx(1.2) and it.at["a", "hi"] == pytest.approx(1.2 + half)
    assert it.at["a", "mean_predicted"] == 1.0 and it.at["b", "iterations"] == 1 and math.isnan(it.at["b", "lo"])
    o = study.overhead(log).set_index("scheme")
    assert o.at["a", "mean_overhead"] == pytest.approx(0.2) and o.at["a", "ratio"] == pytest.approx(1.2)
    assert o.at["a", "ratio_lo"] == pytest.approx(1.2 - half) and o.at["a", "ratio_hi"] == pytest.approx(1.2 + half)
    both = study.overhead(log, by=("dataset", "model"))
    assert both["iterations"].tolist() == [4] and both["mean_overhead"].iloc[0] == pytest.approx(0.4)


def test_time_to_target_by_hand():
    log = pd.DataFrame(log_rows("a", [1.0, 1.0, 1.0], [1, 1, 1], [1.0, 0.5, 0.3])
                       + log_rows("b", [0.5, 0.5, 0.5], [1, 1, 1], [1.0, 0.302, 0.301])
                       + log_rows("c", [0.5, 0.5], [1, 1], [1.0, 0.9]))
    tt = study.time_to_target(log, rel=0.01)  # target 1.01 * 0.3 = 0.303
    row = tt.loc[("d", "m")]
    assert list(tt.columns) == ["a", "b", "c"]
    assert row["a"] == 3.0 and row["b"] == 1.0 and math.isnan(row["c"])
    with pytest.raises(ValueError, match="rel"):
        study.time_to_target(log, rel=-1)


def test_auc_difference_by_hand():
    labels = np.array([1.0, 1.0, -1.0, -1.0] * 5)
    def scored(scheme, scores):
        return pd.DataFrame({"dataset": "d", "model": "m", "scheme": scheme, "sample": np.arange(labels.size),
                             "label": labels, "score": scores})
    perfect, reversed_ = labels * 2.0, -labels
    test = pd.concat([scored("exact", perfect), scored("ignore", reversed_)], ignore_index=True)
    d = study.auc_difference(test, "ignore", "exact", reps=200, seed=1).iloc[0]
    assert (d["auc_reference"], d["auc"], d["difference"], d["lo"], d["hi"]) == (1.0, 0.0, 1.0, 1.0, 1.0)
    assert study.auc_difference(test, "ignore", "absent").empty
    bad = test.copy()
    bad.loc[bad.scheme == "ignore", "label"] = 1.0
    with pytest.raises(ValueError, match="different test sets"):
        study.auc_difference(bad, "ignore", "exact")
    with pytest.raises(ValueError, match="reps"):
        study.auc_difference(test, "ignore", "exact", reps=0)


def test_figures_have_one_panel_per_pair_and_one_line_per_scheme():
    log = pd.DataFrame(log_rows("uncoded", [1.0, 1.0], [0.9, 0.9]) + log_rows("crc", [0.5, 0.5], [0.4, 0.4])
                       + log_rows("crc", [0.5, 0.5], [0.4, 0.4], model="p"))
    fig = figures.curves(study.curve_table(log, "loss"), "training loss")
    assert len(fig.axes) == 2 and [len(ax.lines) for ax in fig.axes] == [2, 1]
    fig = figures.measured_vs_simulated(study.timing_table(log))
    ax = fig.axes[0]
    assert len(ax.collections) == 2 and len(ax.lines) == 1  # one scatter per scheme and the diagonal


@pytest.mark.mpi
def test_run_grid_runs_every_triple_over_mpi():
    grid = study.run_grid(["tandon-logistic"], ["shifted-exp"], ["uncoded", "ignore"], workers=4,
                                stragglers=1, iterations=2, time_scale=0.01, samples=400, dim=10, seed=3,
                                timeout=5.0, job_timeout=60)
    assert grid.summary[["scheme"]].values.ravel().tolist() == ["uncoded", "ignore"]
    assert len(grid.log) == 4 and list(grid.log.columns[:3]) == ["dataset", "model", "scheme"]
    assert (grid.log["predicted"] > 0).all() and (grid.log["time"] > 0).all()
    assert grid.log.groupby("scheme", sort=False)["grad_error"].max()["uncoded"] < 1e-12
    assert len(grid.test) == 2 * 100  # 400 training rows leave 100 test rows per run
    # the final AUC of each run equals that of its test scores
    from gclib.learning import auc
    for scheme, g in grid.test.groupby("scheme"):
        assert auc(g["score"].to_numpy(), g["label"].to_numpy()) == pytest.approx(
            grid.summary.set_index("scheme").at[scheme, "final_auc"])
    with pytest.raises(ValueError, match="models"):
        study.run_grid(["tandon-logistic"], ["nope"], ["uncoded"], workers=4, stragglers=1, iterations=1,
                             time_scale=0.01, samples=400, dim=10)
