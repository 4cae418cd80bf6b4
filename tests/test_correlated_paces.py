"""Worker identity and whole iterations: the variance split and its intervals, the models that keep them
(replay by iteration, worker effects), and their goodness of fit on whole iterations."""
from __future__ import annotations

import numpy as np
import pytest

from gclib import correlated_paces
from gclib.advise import model_choice
from gclib.correlated_paces import WorkerEffects, by_iteration
from gclib.stragglers import Replay, filled
from gclib.timings import Timings


def _trace(I=40, W=6, J=3, sd_worker=0.3, sd_iteration=0.2, sd_residual=0.1, seed=0):
    """Durations whose log pace is a sum of independent normal worker, iteration and residual effects; the tasks of
    a cell vary by +-10% around its pace."""
    rng = np.random.default_rng(seed)
    y = (rng.normal(0, sd_iteration, (I, 1)) + rng.normal(0, sd_worker, (1, W)) + rng.normal(0, sd_residual, (I, W)))
    shape = rng.uniform(0.9, 1.1, (I, W, J))
    shape /= shape.mean(axis=2, keepdims=True)
    return np.exp(y)[:, :, None] * shape


def test_decompose_a_table_by_hand():
    d = correlated_paces.decompose([[1.0, 2.0], [3.0, 4.0]])
    assert d["mu"] == 2.5 and d["a"].tolist() == [-1, 1] and d["b"].tolist() == [-0.5, 0.5]
    assert np.allclose(d["e"], 0) and d["var_residual"] == 0
    assert d["var_iteration"] == pytest.approx(2.0) and d["var_worker"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="at least 2 of each"):
        correlated_paces.decompose([[1.0, 2.0]])


def test_split_recovers_the_parts_that_made_the_trace():
    s = correlated_paces.split(_trace(I=80, W=40, seed=3), bootstrap=200, seed=1)
    truth = np.array([0.3, 0.2, 0.1]) ** 2
    truth = dict(zip(correlated_paces.PARTS, truth / truth.sum()))
    for p in correlated_paces.PARTS:
        lo, hi = s.ci[p]
        assert lo <= s.fraction[p] <= hi and lo <= truth[p] <= hi, (p, s.fraction[p], s.ci[p], truth[p])
    assert sum(s.fraction.values()) == pytest.approx(1.0)
    assert list(s.table()["part"]) == list(correlated_paces.PARTS) and "worker" in s.text()


def test_split_same_seed_same_intervals_and_refuses_a_missing_worker():
    d = _trace(seed=2)
    assert correlated_paces.split(d, seed=5).ci == correlated_paces.split(d, seed=5).ci
    d[3, 1, :] = np.nan
    with pytest.raises(ValueError, match="worker 1 has none in iteration 3"):
        correlated_paces.split(d)


def test_slowest_worker_and_the_trace_without_it():
    d = np.ones((4, 3, 2))
    d[:, 2, :] = 2.0
    d[0, 0, :] = 3.0  # worker 0 is the slowest once
    s = correlated_paces.slowest_worker(d)
    assert s["index"] == 2 and s["share"] == 0.75 and s["pace"] == 2.0
    assert s["ratio"] == pytest.approx(2.0 / 1.5)  # worker means 1.5, 1, 2: median 1.5
    w = correlated_paces.without_slowest(d)
    assert correlated_paces.paces(w).mean(axis=0)[2] == pytest.approx(1.5) and np.array_equal(w[:, :2], d[:, :2])


def test_iteration_replay_draws_whole_recorded_iterations():
    d = _trace(I=5, W=4, J=2, seed=4)
    m = by_iteration(d)
    f = m.sample(np.random.default_rng(0), 200, 4, 3)  # one task beyond the record: at the row's pace
    rec = np.cumsum(filled(d, 3), axis=2)
    hits = [int(np.flatnonzero([np.allclose(x, r) for r in rec])[0]) for x in f]
    assert set(hits) == set(range(5))  # every trial is one recorded iteration, workers in place
    with pytest.raises(ValueError, match="keeps the trace's 4 workers, got 5"):
        m.sample(np.random.default_rng(0), 2, 5, 2)
    gap = d.copy()
    gap[1, 2, :] = np.nan
    with pytest.raises(ValueError, match="worker 2 has none in iteration 1"):
        by_iteration(gap)


def test_worker_effects_keep_the_workers_or_draw_them():
    d = _trace(I=50, W=5, J=2, sd_worker=0.5, sd_iteration=0.0, sd_residual=0.05, seed=6)
    m = WorkerEffects(d)
    own = m.sample(np.random.default_rng(1), 4000, 5, 2)[:, :, -1] / 2
    # the same workers: each keeps its place, its mean pace within 2% of the trace's
    trace_mean = correlated_paces.paces(d).mean(axis=0)
    assert np.argsort(own.mean(axis=0)).tolist() == np.argsort(trace_mean).tolist()
    assert np.allclose(own.mean(axis=0), trace_mean, rtol=0.02)
    # any other number of workers: effects drawn from the pool, every worker alike in distribution
    many = m.sample(np.random.default_rng(1), 4000, 9, 2)[:, :, -1] / 2
    assert np.ptp(many.mean(axis=0)) < 0.1 * many.mean()
    # an iteration effect alone: the workers of a trial move together
    it = WorkerEffects(_trace(I=50, W=5, J=1, sd_worker=0.0, sd_iteration=0.5, sd_residual=0.0, seed=7))
    x = np.log(it.sample(np.random.default_rng(2), 500, 8, 1)[:, :, 0])
    assert np.allclose(x, x[:, :1])
    with pytest.raises(ValueError, match="finite task times"):
        WorkerEffects(np.where(np.arange(3)[None, :, None] == 1, np.inf, d[:, :3, :]))


def test_support_rejects_independent_rows_on_a_persistent_straggler():
    d = _trace(I=30, W=8, sd_worker=0.05, sd_iteration=0.05, sd_residual=0.05, seed=8)
    d[:, 3, :] *= 1.6  # one machine slow in every iteration
    t = Timings.from_array(d)
    extra, why = correlated_paces.models(t)
    assert set(extra) == {"replay by iteration", "worker effects"} and not why
    cands = {"replay": Replay(d), **extra}
    sup = correlated_paces.support(cands, t, bootstrap=200, seed=0).set_index("model")
    assert not sup.at["replay", "supported"] and sup.at["replay", "slowest_error"] < -0.05
    assert sup.at["replay by iteration", "supported"] and abs(sup.at["replay by iteration", "slowest_error"]) < 0.01
    assert sup.at["worker effects", "supported"]
    assert ((sup["p_value"] > 0) & (sup["p_value"] <= 1)).all()
    name, why = model_choice.choose(sup.reset_index(), cands, 8)
    assert name == "replay by iteration" and "first model supported" in why
    name, why = model_choice.choose(sup.reset_index(), cands, 20)
    assert name == "worker effects" and "does not simulate 20 workers" in why


def test_choose_falls_back_to_the_largest_p_value():
    import pandas as pd

    d = _trace(I=6, W=3, seed=9)
    cands = {"replay": Replay(d), "replay by iteration": by_iteration(d)}
    table = pd.DataFrame({"model": ["replay", "replay by iteration"], "p_value": [0.03, 0.01],
                          "supported": [False, False]})
    name, why = model_choice.choose(table, cands, 3)
    assert name == "replay" and "none is supported" in why


def test_models_says_why_a_trace_cannot_have_them():
    d = _trace(I=6, W=3, seed=10)
    d[2, 0, 1:] = np.inf  # worker 0 never finished its second task in iteration 2
    extra, why = correlated_paces.models(d)
    assert "replay by iteration" in extra and "worker effects" in why and "never answered" in why["worker effects"]
