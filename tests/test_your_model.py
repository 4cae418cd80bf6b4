"""Notebook 15's study (:mod:`gclib.studies.your_model`): the network is the same in PyTorch and NumPy, the digits
are scikit-learn's, the delays replay recorded workers and steps of a trace, the tables and claims read a study's
runs as stated (on a small study made by hand), and the figures draw from their tables."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gclib import claims as C
from gclib.learning import check_model
from gclib.message_cost import NetworkProfile
from gclib.studies.your_model import claims as your_claims
from gclib.studies.your_model import perceptron, plots, study


def test_the_digits_are_scikit_learns():
    from sklearn.datasets import load_digits

    d = load_digits()
    shipped = perceptron.shipped_digits()
    np.testing.assert_array_equal(shipped[:, :64], d.data)
    np.testing.assert_array_equal(shipped[:, 64], d.target)
    Xtr, ytr, Xte, yte = perceptron.digits(data_seed=3, test_fraction=0.25)
    assert len(Xte) == 449 and len(Xtr) == 1797 - 449 and set(ytr) == set(range(10))
    np.testing.assert_allclose(Xtr.mean(axis=0), 0, atol=1e-12)


def test_the_network_is_the_same_in_pytorch_and_numpy():
    a = perceptron.digits_mlp(4, hidden=5, framework="numpy", seed=2)
    b = perceptron.digits_mlp(4, hidden=5, framework="torch", seed=2)
    assert a.dim == b.dim == perceptron.size(5) == 5 * 64 + 5 + 10 * 5 + 10
    np.testing.assert_array_equal(a.initial(), b.initial())
    check_model(a)
    check_model(b)
    theta = a.initial() + 0.1 * np.random.default_rng(0).standard_normal(a.dim)
    Ga, Gb = a.partial_gradients(theta), b.partial_gradients(theta)
    assert np.abs(Ga - Gb).max() <= 1e-12 * np.abs(Gb).max()
    assert a.loss(theta) == pytest.approx(b.loss(theta), rel=1e-13)
    assert a.test_metrics(theta)["accuracy"] == b.test_metrics(theta)["accuracy"]
    with pytest.raises(ValueError, match="framework must be one of"):
        perceptron.digits_mlp(4, framework="jax")


def test_the_delays_replay_recorded_workers_from_a_step_on():
    d = np.arange(5 * 6 * 3, dtype=float).reshape(5, 6, 3) + 1
    model, chosen, first = study.replayed(d, 4, seed=7)
    assert len(set(chosen)) == 4 and list(chosen) == sorted(chosen)
    finish = model.sample(np.random.default_rng(0), 7, 4, 2)  # cycling through the recorded steps
    for t in range(7):
        step = (first + t) % 5
        np.testing.assert_array_equal(finish[t], np.cumsum(d[step][chosen][:, :2], axis=1))
    again = study.replayed(d, 4, seed=7)
    assert list(again[1]) == list(chosen) and again[2] == first
    with pytest.raises(ValueError, match=r"workers must be an integer in \[2, 6\] \(at most the trace's 6 recorded"):
        study.replayed(d, 7, seed=0)


def test_an_advice_command_builds_its_code():
    code = study.code_of("--scheme uc-mmc --workers 8 --load 2 --clusters 4")
    assert code.n_workers == 8 and code.load == 2 and code.stragglers == 1
    assert study.code_of("--scheme uncoded --workers 4").stragglers == 0


def test_the_network_is_charged_in_the_traces_seconds():
    p = NetworkProfile(latency=1e-4, overhead=2e-5, bandwidth=1e9, gradient_bytes=8000)
    c = study.trace_units(p, 0.02, 8000)
    assert c.latency == pytest.approx(5e-3) and c.overhead == pytest.approx(1e-3) and c.queue
    assert c.bandwidth == pytest.approx(1e9 / 8000 * 0.02)  # gradients per trace second


def _study(seeds=3, saved=0.01):
    """A study made by hand: uncoded and one code over ``seeds`` seeds of 4 iterations; accuracy 0.5, 0.7, 0.9,
    0.95 at every seed; uncoded's iterations ``10 + seed`` ms, the code's second and third ``saved / 2`` s shorter
    (it reaches 0.9, at the third, ``saved`` s sooner); the simulator predicts 9 ms throughout."""
    rows = []
    for seed in range(seeds):
        for sch, cut in (("uncoded", 0.0), ("uc-mmc r=2 P=4", saved / 2)):
            wall = 0.0
            for i, acc in enumerate((0.5, 0.7, 0.9, 0.95)):
                t = 0.01 + 0.001 * seed - (cut if i in (1, 2) else 0.0)
                wall += t
                rows.append({"scheme": sch, "seed": seed, "kind": "compare", "killed": None, "iteration": i,
                             "time": t, "predicted": 0.009, "wall": wall, "loss": 1 - acc, "accuracy": acc,
                             "grad_error": 1e-15, "messages": 4})
    schemes = pd.DataFrame([{"scheme": "uncoded", "role": "uncoded", "family": "uncoded", "tolerates": 0,
                             "command": "--scheme uncoded --workers 4"},
                            {"scheme": "uc-mmc r=2 P=4", "role": study.BOTH, "family": "uc-mmc", "tolerates": 1,
                             "command": "--scheme uc-mmc --workers 4 --load 2 --clusters 4"}])
    kills = pd.DataFrame([{"scheme": "uc-mmc r=2 P=4", "killed": 3, "at": 1, "iterations": 4, "finished": 4,
                           "dead": "3", "max_grad_error": 2e-15, "status": "ok"}])
    settings = {"trace": "SE", "workers": 4, "hidden": 8, "framework": "numpy", "lr": 0.5, "iterations": 4,
                "target": 0.9, "seeds": seeds, "time_scale": 0.01}
    return study.Study(settings, None, {}, None, schemes, pd.DataFrame(rows), pd.DataFrame(), kills)


def test_time_to_target_and_the_paired_saving():
    s = _study(seeds=3, saved=0.004)
    t = s.time_to_target()
    assert (t["iteration"] == 2).all()
    unc = t[t["scheme"] == "uncoded"].set_index("seed")["wall"]
    np.testing.assert_allclose(unc, [0.03 + 0.003 * k for k in range(3)])
    (r,) = s.savings().itertuples()
    assert r.seeds == 3 and r.saved == pytest.approx(0.004) and r.saved_hi - r.saved_lo < 1e-12  # the same each seed
    assert r.fraction == pytest.approx(0.004 / np.mean([0.03, 0.033, 0.036]))
    e = s.ratio("uncoded")
    assert e.value == pytest.approx(np.mean([0.01, 0.011, 0.012]) / 0.009)


def test_the_claims_of_a_study_made_by_hand():
    table = your_claims.judge(_study(seeds=3, saved=0.004)).set_index("id")
    assert list(table.index) == ["C1", "C2", "C3", "C4a", "C4b"]
    assert set(table["kind"]) == {C.CHECK}
    assert table.loc["C1", "verdict"] == C.HOLDS and "1e-15" in table.loc["C1", "measured"]
    assert table.loc["C2", "verdict"] == C.HOLDS and "4 of 4 iterations" in table.loc["C2", "measured"]
    assert table.loc["C3", "verdict"] == C.HOLDS  # the same saving every seed: an exact positive difference
    assert table.loc["C4a", "verdict"] == C.FAILS  # 10-12 ms against 9 ms: 22% above, outside the band
    one = your_claims.judge(_study(seeds=1)).set_index("id")
    assert one.loc["C3", "verdict"] == C.INCONCLUSIVE and "over 1 paired seed" in one.loc["C3", "measured"]
    slow = _study(seeds=3, saved=-0.004)
    assert your_claims.judge(slow).set_index("id").loc["C3", "verdict"] == C.FAILS
    broken = _study()
    broken.runs.loc[5, "grad_error"] = 1e-6
    broken.kills.loc[0, "dead"] = ""
    t = your_claims.judge(broken).set_index("id")
    assert t.loc["C1", "verdict"] == C.FAILS and t.loc["C2", "verdict"] == C.FAILS


def test_the_figures_draw_from_their_tables():
    s = _study(seeds=3, saved=0.004)
    data = plots.curves(s)
    assert list(data.columns) == ["scheme", "family", "seed", "iteration", "wall", "accuracy"] and len(data) == 24
    fig = plots.accuracy_vs_time(data, 0.9)
    assert fig.get_size_inches()[0] <= 3.5
    timing = plots.timing(s)
    assert len(timing) == 24 and math.isclose(timing["predicted"].iloc[0], 0.009)
    fig = plots.measured_vs_predicted(timing)
    assert fig.get_size_inches()[0] <= 3.5
    texts = [t for ax in fig.axes for t in [ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels()]]
    assert min(t.get_fontsize() for t in texts) >= 7

