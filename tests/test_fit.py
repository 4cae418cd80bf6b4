"""Fitting straggler models to timing traces: the estimates are scipy's maximum likelihood, the intervals cover
the truth in most seeded repetitions, the family and convention that drew the data win, persistent stragglers are
found, and the replayed trace reproduces the trace's finish times."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gclib import fit as fitting
from gclib.fit import FAMILIES, PARAMETERS, _mle, _scipy_fit, _sorted_draws, _ks_sorted
from gclib.stragglers import Exponential, Pareto, Persistent, Replay, ShiftedExponential
from gclib.timings import Timings

TRUTH = {"shifted-exp": ShiftedExponential(mu=8.0, alpha=0.2), "exp": Exponential(rate=3.0),
         "pareto": Pareto(scale=0.5, shape=2.5)}


def trace(model, iterations, workers, tasks, seed):
    """Task durations drawn by a gclib model: ``(iterations, workers, tasks)``."""
    finish = model.sample(np.random.default_rng(seed), iterations, workers, tasks)
    return np.diff(finish, axis=2, prepend=0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_vectorised_estimates_and_ks_are_scipys(family):
    x = TRUTH[family].task_draws(np.random.default_rng(1), (3, 400))
    p = _mle(family, x)
    for row in range(3):
        ref = _scipy_fit(family, x[row])
        assert {k: p[k][row] for k in ref} == pytest.approx(ref, rel=1e-9)
        dist = fitting._frozen(family, ref)
        ks = _ks_sorted(family, {k: np.array([v]) for k, v in ref.items()}, np.sort(x[row])[None, :])[0]
        assert ks == pytest.approx(stats.kstest(x[row], dist.cdf).statistic, rel=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_sorted_draws_follow_the_model(family):
    true = {k: np.array([getattr(TRUTH[family], k)]) for k in PARAMETERS[family]}
    xs = _sorted_draws(family, true, np.random.default_rng(2), 1, 20000)
    assert np.all(np.diff(xs[0]) >= 0)
    ref = np.sort(TRUTH[family].task_draws(np.random.default_rng(3), (20000,)))
    assert stats.ks_2samp(xs[0], ref).pvalue > 0.001


@pytest.mark.parametrize("family, per_task", [("shifted-exp", False), ("exp", False), ("pareto", False),
                                              ("shifted-exp", True), ("pareto", True)])
def test_intervals_cover_the_truth_in_most_seeded_repetitions(family, per_task):
    truth = type(TRUTH[family])(**{k: getattr(TRUTH[family], k) for k in PARAMETERS[family]}, per_task=per_task)
    reps, covered = 30, {k: 0 for k in PARAMETERS[family]}
    for seed in range(reps):
        d = trace(truth, 8, 6, 2, seed)  # 48 per-worker samples, 96 per-task samples
        f = next(f for f in fitting.fit(d, seed=seed, bootstrap=200).fits
                 if f.family == family and f.per_task == per_task)
        assert f.n == (96 if per_task else 48)
        for k, (lo, hi) in f.ci.items():
            assert 0 <= lo <= hi and (hi == f.params[k] if k in ("alpha", "scale") else lo < hi)
            covered[k] += lo <= getattr(truth, k) <= hi
    for k, c in covered.items():  # nominal 95%: 28.5 of 30; below 24 would be 4 standard deviations off
        assert c >= 24, (family, per_task, k, c)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("per_task", [False, True])
def test_the_family_and_convention_that_drew_the_data_fit_best(family, per_task):
    truth = TRUTH[family]
    model = type(truth)(**{k: getattr(truth, k) for k in PARAMETERS[family]}, per_task=per_task)
    report = fitting.fit(trace(model, 20, 20, 4, seed=7), seed=0)
    best = report.best
    assert (best.family, best.per_task) == (family, per_task), report.table()
    assert report.per_task == per_task
    assert report.task_correlation == (pytest.approx(0.0, abs=0.1) if per_task else 1.0)
    others = [f for f in report.fits if f.per_task == per_task and f.family != family
              and not (f.family == "shifted-exp" and family == "exp")]  # the exponential is a shifted one too
    assert best.p_value >= 0.05 and len(others) == (1 if family == "exp" else 2), report.table()
    assert all(f.p_value < 0.05 for f in others), report.table()
    # the other convention: the per-worker means of independent tasks are not the family's (rejected); the
    # durations of a per-worker trace are (each worker's repeated), so only the task correlation tells
    if per_task:
        assert all(f.p_value < 0.05 for f in report.fits if not f.per_task), report.table()
    assert best.params == pytest.approx({k: getattr(truth, k) for k in best.params}, rel=0.25)
    assert report.table()["best"].sum() == 1


def test_one_task_per_worker_gives_both_conventions_the_same_sample():
    report = fitting.fit(trace(TRUTH["pareto"], 10, 10, 1, seed=3), seed=0)
    by = {(f.family, f.per_task): f for f in report.fits}
    for fam in FAMILIES:
        assert by[fam, False].params == by[fam, True].params and by[fam, False].ks == by[fam, True].ks
    assert report.best.name == "pareto per worker" and np.isnan(report.task_correlation) and not report.per_task


def test_same_seed_same_numbers_and_the_seed_matters():
    d = trace(TRUTH["shifted-exp"], 10, 8, 3, seed=0)
    a, b, c = fitting.fit(d, seed=5), fitting.fit(d, seed=5), fitting.fit(d, seed=6)
    assert a.table().equals(b.table()) and [f.ci for f in a.fits] == [f.ci for f in b.fits]
    assert [f.ci for f in a.fits] != [f.ci for f in c.fits]
    assert a.replay.sample(np.random.default_rng(1), 5, 4, 3).tolist() == \
        b.replay.sample(np.random.default_rng(1), 5, 4, 3).tolist()
    assert fitting.fit(d, seed=np.random.default_rng(5)).table().equals(a.table())


def test_fit_report_table_and_models():
    report = fitting.fit(trace(TRUTH["exp"], 10, 8, 2, seed=0), seed=0, bootstrap=50)
    table = report.table()
    assert list(table["name"]) == [f"{fam} per {c}" for c in ("worker", "task") for fam in FAMILIES]
    assert list(table.columns) == ["name", "family", "per_task", "n", "parameters", "loglik", "aic", "ks",
                                   "p_value", "best"]
    for f in report.fits:
        assert f.aic == pytest.approx(2 * len(f.params) - 2 * f.loglik)
        assert f.loglik == pytest.approx(fitting._frozen(f.family, f.params).logpdf(
            fitting.samples(report.timings)[int(f.per_task)]).sum())
        assert 0 < f.p_value <= 1 and 0 <= f.ks <= 1
        assert type(f.model).__name__ == {"shifted-exp": "ShiftedExponential", "exp": "Exponential",
                                          "pareto": "Pareto"}[f.family] and f.model.per_task == f.per_task
    models = report.models()
    assert list(models) == [*table["name"], "replay"] and isinstance(models["replay"], Replay)
    assert report.persistent == 0 and report.skipped == {}


def test_without_bootstrap_no_intervals_no_p_values_and_no_best_fit():
    report = fitting.fit(trace(TRUTH["exp"], 10, 8, 2, seed=0), bootstrap=0)
    f = report.fits[0]
    assert np.isnan(f.p_value) and all(np.isnan(v).all() for v in f.ci.values())
    with pytest.raises(ValueError, match="without bootstrap .* no goodness-of-fit test to choose the best by"):
        report.best
    assert not report.table()["best"].any()  # the table names none either
    with pytest.raises(ValueError, match=r"bootstrap must be 0 \(no test\) or at least 20 .*got 10"):
        fitting.fit(trace(TRUTH["exp"], 10, 8, 2, seed=0), bootstrap=10)


def test_persistent_stragglers_are_detected_and_wrapped():
    d = trace(TRUTH["shifted-exp"], 12, 10, 3, seed=1)
    d[:, [2, 7], :] = np.inf  # two workers never answer
    d[3, 4, 1:] = np.inf  # one dies once, after its first task: 2 + 1/12 per iteration on average
    report = fitting.fit(d, seed=0, bootstrap=20)
    assert report.persistent == 2
    per_worker = next(f for f in report.fits if not f.per_task)
    assert per_worker.n == 12 * 8 - 1
    assert next(f for f in report.fits if f.per_task).n == 12 * 8 * 3 - 2
    for f in report.fits:
        assert isinstance(f.model, Persistent) and f.model.count == 2
        t = f.model.sample(np.random.default_rng(0), 50, 10, 3)
        assert (np.isinf(t).all(axis=2).sum(axis=1) == 2).all()
    assert report.best.family == "shifted-exp" and report.task_correlation == 1.0


def test_a_sample_a_family_cannot_take_is_skipped():
    d = trace(TRUTH["exp"], 10, 8, 2, seed=0)
    d[0, 0, :] = 0.0
    report = fitting.fit(d, bootstrap=20)
    assert set(report.skipped) == {"pareto per task", "pareto per worker"}
    assert "a Pareto sample must be positive" in report.skipped["pareto per task"]
    assert [f.family for f in report.fits] == ["shifted-exp", "exp"] * 2


def test_bad_arguments():
    d = trace(TRUTH["exp"], 10, 8, 2, seed=0)
    with pytest.raises(TypeError, match="t must be a gclib.timings.Timings or an"):
        fitting.fit("times.csv")
    with pytest.raises(ValueError, match="bootstrap must be a non-negative integer, got -1"):
        fitting.fit(d, bootstrap=-1)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        fitting.fit(d, seed=-1)
    with pytest.raises(ValueError, match="durations: too few samples: 12 finite task times"):
        fitting.fit(d[:1, :6, :])
    with pytest.raises(ValueError, match="durations: a trace needs at least 2 workers"):
        fitting.fit(d[:, :1, :])


# --------------------------------------------------------------------------------------------------- replay
def test_replay_reproduces_the_mean_finish_times():
    d = trace(Pareto(0.2, 3.0, per_task=True), 40, 8, 4, seed=2)
    t = Timings.from_array(d)
    finish = Replay(d).sample(np.random.default_rng(0), 20000, 8, 4)
    assert finish.mean(axis=(0, 1)) == pytest.approx(t.finish_times().mean(axis=(0, 1)), rel=0.03)
    # any number of workers, the same rows
    wide = Replay(d).sample(np.random.default_rng(0), 2000, 30, 4)
    assert wide.shape == (2000, 30, 4)
    rows = {tuple(r) for r in np.cumsum(d, axis=2).reshape(-1, 4)}
    assert all(tuple(r) in rows for r in wide[:20].reshape(-1, 4))


def test_replay_beyond_the_record_unobserved_tasks_and_dead_workers():
    d = np.array([[[1.0, 3.0], [2.0, np.nan]], [[np.inf, np.inf], [0.5, np.inf]]])
    r = Replay(d)
    f = r.sample(np.random.default_rng(0), 400, 3, 4)
    seen = {tuple(x) for x in f.reshape(-1, 4)}
    inf = np.inf
    assert seen == {(1.0, 4.0, 6.0, 8.0),  # beyond the record: the row's mean pace, 2
                    (2.0, 4.0, 6.0, 8.0),  # task 2 not observed: the row's pace too
                    (inf, inf, inf, inf),  # never answered
                    (0.5, inf, inf, inf)}  # died after task 1
    assert r.describe() == {"model": "replay", "shape": [2, 2, 2], "rows": 4}
    with pytest.raises(ValueError, match="times must be a non-empty"):
        Replay(np.ones((2, 2)))
    with pytest.raises(ValueError, match="with negative entries"):
        Replay(-np.ones((2, 2, 1)))
    with pytest.raises(ValueError, match="only nan"):
        Replay(np.full((2, 2, 1), np.nan))


def test_a_per_worker_trace_replays_at_its_own_pace():
    x = ShiftedExponential(10.0, 0.05).per_worker(np.random.default_rng(0), 6, 5, 3)
    d = np.repeat(x[:, :, None], 3, axis=2)
    f = Replay(d).sample(np.random.default_rng(1), 100, 7, 8)
    assert np.allclose(f, f[:, :, :1] * np.arange(1, 9))
    assert set(np.round(f[:, :, 0].ravel(), 12)) <= set(np.round(x.ravel(), 12))


def test_every_model_of_a_report_runs_in_the_simulator_for_any_number_of_workers():
    from gclib.codes import crc
    from gclib.simulator import simulate

    d = trace(TRUTH["shifted-exp"], 10, 6, 2, seed=4)
    d[:, 5, :] = np.inf  # one worker never answers
    models = fitting.fit(d, seed=0, bootstrap=20).models()
    assert len(models) == 7 and models["shifted-exp per worker"].count == 1
    code = crc(8, 2)  # 8 workers, a load of 3 tasks: more workers and tasks than recorded
    for name, model in models.items():
        a, b = simulate(code, model, trials=300, seed=1), simulate(code, model, trials=300, seed=1)
        assert np.array_equal(a.time, b.time), name
        assert (a.time > 0).all(), name
        if name != "replay":  # one dead worker in every trial: CRC with 2 stragglers always decodes
            assert np.isfinite(a.time).all(), name
    # the replay draws each worker's row independently: a dead row with probability 1/6, and CRC fails when 3 or
    # more of the 8 workers are dead, P = 0.135
    replay = simulate(code, models["replay"], trials=300, seed=1).time
    assert 0.07 < np.isinf(replay).mean() < 0.22
    assert replay.min() >= 3 * d[np.isfinite(d)].min() - 1e-12  # no faster than the fastest recorded pace
