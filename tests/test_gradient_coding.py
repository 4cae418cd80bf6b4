"""What notebook 01 computes: Tandon's builders, the multi-model sweep and its aggregations, the conditioning
study, the exact verification tables and the two figures, each on a case small enough to check by hand."""
from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
import sympy as sp

from gclib import codes, diagnostics, symbolic
from gclib.codes import repetition
from gclib.studies.gradient_coding import plots as figures
from gclib.stats import Z95
from gclib.sweeps import agreement, argmin_set, best, closed_form_z, sweep
from gclib.stragglers import Pareto, ShiftedExponential

matplotlib.use("Agg")


def test_builders_give_the_four_schemes_at_n():
    b = repetition.builders(6, seed=2)
    assert list(b) == ["uncoded", "ignore", "frc", "crc"]
    assert b["uncoded"](3).n_workers == 6 and b["uncoded"](3).stragglers == 0
    assert b["ignore"](2).rule.thresholds.tolist() == [4]
    assert b["frc"](2).stragglers == 2
    with pytest.raises(ValueError, match="divisible"):
        b["frc"](3)  # 4 does not divide 6
    np.testing.assert_array_equal(b["crc"](2).B, codes.crc(6, 2, 2).B)
    with pytest.raises(ValueError, match="workers"):
        repetition.builders(0)


def test_exact_examples_skip_frc_where_it_is_not_defined():
    assert [c.name for c in repetition.exact_examples(6, 2)] == ["frc", "crc"]
    small = repetition.exact_examples(5, 1)
    assert [c.name for c in small] == ["crc"] and small[0].B_exact is not None


def test_sweep_over_several_models_is_the_concatenation_of_single_sweeps():
    models = {"exp": ShiftedExponential(10, 0.01), "par": Pareto(0.1, 1.5)}
    b = repetition.builders(4, seed=1)
    df = sweep(b, [0, 1, 2], models, trials=50, seed=3)
    assert list(df.columns[:3]) == ["model", "scheme", "value"]
    assert list(dict.fromkeys(df["model"])) == ["exp", "par"]
    alone = sweep(b, [0, 1, 2], models["par"], trials=50, seed=3)
    pd.testing.assert_frame_equal(df[df.model == "par"].drop(columns="model").reset_index(drop=True), alone)
    assert set(df[df.scheme == "frc"]["value"]) == {0, 1}  # s = 2: 3 does not divide 4
    with pytest.raises(ValueError, match="non-empty"):
        sweep(b, [0], {}, trials=10)


def test_closed_form_z_agreement_and_best_by_hand():
    df = pd.DataFrame({"model": ["m"] * 4, "scheme": ["a", "a", "a", "b"], "value": [0, 1, 2, 0],
                       "mean_time": [1.0, 0.5, 0.6, 2.0], "ci95_time": [Z95 * 0.1, Z95 * 0.1, 0.0, 0.0],
                       "closed_form_time": [1.2, 0.5, 0.6, math.nan]})
    z = closed_form_z(df)["z"].tolist()
    assert z[0] == pytest.approx(-2.0) and z[1] == 0 and z[2] == 0 and math.isnan(z[3])
    a = agreement(df)
    assert a["max_abs_z"].tolist()[0] == pytest.approx(2.0) and a["points"].tolist() == [3, 0]
    bt = best(df)
    assert bt["best_value"].tolist() == [1, 0] and bt["closed_form_best"].tolist() == ["1", ""]
    assert argmin_set([0, 1, 2, 3], [2.0, 1.0, 1.0 + 1e-13, np.inf]) == [1, 2]
    assert argmin_set([0, 1], [np.nan, np.inf]) == []
    with pytest.raises(ValueError, match="same length"):
        argmin_set([0, 1], [1.0])


def test_conditioning_rows_follow_n_and_seeds():
    df = diagnostics.conditioning(codes.crc, [4, 6], 2, max_patterns=100)
    assert df[["n", "s", "seed"]].values.tolist() == [[4, 1, 0], [4, 1, 1], [6, 1, 0], [6, 1, 1]]
    assert (df["worst_cond"] >= df["median_cond"]).all() and df["enumerated"].all()
    # FRC decodes by adding one message per group: no amplification at all
    frc = diagnostics.conditioning(lambda n, s, seed: codes.frc(n, s), [6], [0], s_fraction=0.4)
    assert frc["s"].tolist() == [2] and frc["worst_error"].iloc[0] < 1e-15  # floor(0.4 * 6) = 2
    summary = diagnostics.conditioning_summary(df)
    assert list(summary.index) == [4, 6] and list(summary.columns) == ["worst_cond", "worst_error"]
    with pytest.raises(ValueError, match="s_fraction"):
        diagnostics.conditioning(codes.crc, [4], 1, s_fraction=1.5)


def test_verification_and_derivation_of_the_worked_example():
    ex = codes.example_n3_code()
    _, A_paper = codes.example_n3()
    t = symbolic.verification(ex, reference={ex.name: A_paper})
    assert t[["code", "n", "s", "patterns", "verified", "reference"]].values.tolist() == [
        ["tandon-n3", 3, 1, 3, True, "matches"]]
    wrong = A_paper.copy()
    wrong[0, 1] = 3.0
    assert symbolic.verification(ex, reference={ex.name: wrong})["reference"].tolist() == ["differs"]
    exact_ref = sp.Matrix(A_paper.astype(int).tolist())
    assert symbolic.verification([ex], reference={ex.name: exact_ref})["reference"].tolist() == ["matches"]
    tex = symbolic.derivation(ex, product=True)
    assert tex.count("$$") == 2 and r"\frac{1}{2}" in tex and "AB =" in tex
    two = symbolic.derivation(repetition.exact_examples(6, 2, 1), rows=5)
    assert two.count("$$") == 4 and r"\text{first 5 of 15 rows}" in two


def test_figures_have_the_expected_panels_and_lines():
    cond = pd.DataFrame({"n": [6, 6, 8, 8], "seed": [0, 1, 0, 1], "worst_cond": [10, 20, 100, 300],
                         "median_cond": [2, 3, 4, 5], "worst_error": [1e-15, 2e-15, 1e-13, 3e-13],
                         "median_error": [1e-16] * 4})
    fig = figures.conditioning(cond)
    assert len(fig.axes) == 2 and all(len(ax.lines) == 2 for ax in fig.axes)
    times = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "scheme": ["uncoded", "uncoded", "crc", "crc"] * 2,
                          "value": [0, 1] * 4, "mean_time": [1.0, 1.0, 1.0, 0.8] * 2, "ci95_time": [0.1] * 8,
                          "closed_form_time": [1.0, 1.0, 1.0, 0.8] * 2})
    fig = figures.completion_time(times)
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in axes] == ["a", "b"]
    assert all(len(ax.lines) == 4 for ax in axes)  # Monte Carlo and closed form per scheme
