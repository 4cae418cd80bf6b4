"""Sequential gradient coding over MPI (:mod:`gclib.runtime.rounds`): the live run follows the replay's round logic
(the delays it measured replay to its rounds exactly), decodes every job exactly from real partial gradients, trains
with the scheme's delay, survives a killed worker where the scheme's model absorbs it and says why where it cannot;
bad specs are refused before MPI."""
from __future__ import annotations

import math
import tempfile

import numpy as np
import pytest

from gclib import sequential as sq
from gclib.runtime import launch
from gclib.runtime import rounds as R


def _delays(rounds=8, seed=0, slow=((3, 0, 3.0), (2, 2, 5.0), (1, 5, 3.0))):
    """4 workers, 30 ms rounds with a little noise and a few slow entries (worker, round, factor)."""
    rng = np.random.default_rng(seed)
    d = 0.03 * (1 + rng.exponential(0.1, (4, rounds)))
    for w, r, f in slow:
        d[w, r] *= f
    return d


@pytest.fixture
def tmp_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))


# ------------------------------------------------------------------------------------------------ no MPI
def test_the_replay_through_the_round_states_gives_the_vectorized_rules():
    """GC and no coding have a vectorized replay; their round states (what a live run steps) give the same rounds."""
    rng = np.random.default_rng(4)
    for _ in range(30):
        d = 1 + rng.exponential(0.4, (5, 9))
        d[rng.random(d.shape) < 0.15] *= 3
        for scheme, p in (("gc", {"s": 0}), ("gc", {"s": 1}), ("gc", {"s": 3}), ("no-coding", {})):
            fast = sq.run(scheme, d, mu=0.5, **p)
            dur, waited, skipped = sq.replay(sq.rounds_of(scheme, 5, 9, **p), d, 0.5)
            assert np.allclose(dur, fast.durations) and np.array_equal(waited, fast.waited)
            assert not skipped.any()


def test_the_plans_follow_each_scheme():
    """SR-SGC (B=1, W=2, lambd=1: s = 1): after two workers miss job 0, the lowest-indexed one redoes it in round 1;
    M-SGC (B=1, W=2): a worker that lost its piece of job 0 redoes it instead of the coded group."""
    st = sq.rounds_of("sr-sgc", 4, 3, B=1, W=2, lambd=1)
    assert st.begin(0) == [[(0, sq.GC_TASK, 0)]] * 4
    st.end(np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 1], bool), True)
    assert [t[0][0] for t in st.begin(1)] == [1, 1, 0, 1]
    st = sq.rounds_of("m-sgc", 4, 3, B=1, W=2, lambd=1)
    assert st.begin(0) == [[(0, sq.PIECE, 0)]] * 4
    st.end(np.array([1, 1, 1, 0], bool), np.array([0, 0, 0, 1], bool), True)
    plan = st.begin(1)
    assert plan[0] == [(1, sq.PIECE, 0), (0, sq.GROUP, 0)] and plan[3] == [(1, sq.PIECE, 0), (0, sq.PIECE, 0)]


@pytest.mark.parametrize("scheme, params", [("gc", {"s": 1}), ("sr-sgc", {"B": 1, "W": 3, "lambd": 2}),
                                            ("m-sgc", {"B": 2, "W": 3, "lambd": 1}), ("no-coding", {})])
def test_every_task_layout_sums_to_the_full_gradient(scheme, params):
    """Decoding the tasks of every worker with the scheme's code gives the full gradient (M-SGC: every piece plus
    every coded group), in exact agreement with the problem's gradient at the same point."""
    from gclib.learning import make_problem

    seq = R.SequentialRun(scheme, np.ones((4, 8)), params=params)
    code = seq.code(0)
    problem = make_problem("tandon-logistic", parts=seq.parts(), seed=1, n_samples=4 * seq.parts(), dim=5)
    theta = np.linspace(-1, 1, 5)
    n = 4
    total = np.zeros(5)
    kinds = [(sq.GC_TASK, 0)] if scheme != "m-sgc" else [(sq.GROUP, b) for b in range(params["B"])]
    for kind, index in kinds:
        ids = np.arange(n - code.stragglers)
        A = code.decode(ids, warn=False)
        msgs = np.array([R.task_vector(problem, code, seq, w, (0, kind, index), theta) for w in ids])
        total += code.combine(A, msgs, 5)
    if scheme == "m-sgc":
        total += sum(R.task_vector(problem, code, seq, w, (0, sq.PIECE, k), theta)
                     for w in range(n) for k in range(params["W"] - 1))
    full = problem.gradient(theta)
    assert np.linalg.norm(total - full) <= 1e-12 * np.linalg.norm(full)


@pytest.mark.parametrize("kw, says", [
    ({"scheme": "no-wait"}, "decodes nothing"), ({"scheme": "sr-sgc", "B": 2, "W": 4, "lambd": 1}, "divide"),
    ({"scheme": "m-sgc", "B": 1, "W": 2, "lambd": 4}, "at most n - 1"), ({"scheme": "gc", "s": 4}, "at most n - 1"),
    ({"scheme": "gc", "s": 1, "jobs": 9}, "jobs"), ({"scheme": "gc", "s": 1, "kill": {5: 1}}, "kill"),
    ({"scheme": "gc", "s": 1, "kill": {1: 8}}, "kill"), ({"scheme": "gc", "s": 1, "samples": 2}, "samples")])
def test_bad_sequential_runs_are_refused_before_mpi(kw, says):
    kw = dict(kw)
    scheme = kw.pop("scheme")
    with pytest.raises(ValueError, match=says):
        R.sequential_spec(scheme, _delays(), **kw)


def test_a_nan_delay_is_refused():
    d = _delays()
    d[1, 2] = math.nan
    with pytest.raises(ValueError, match="nan"):
        R.sequential_spec("gc", d, s=1)


def test_the_prediction_with_a_killed_worker_stops_where_the_scheme_must_wait_for_it():
    seq = R.SequentialRun("no-coding", _delays())
    p = seq.predicted({1: 3})
    assert np.isfinite(p[:3]).all() and np.isinf(p[3:]).all()
    seq = R.SequentialRun("sr-sgc", _delays(slow=()), params={"B": 1, "W": 2, "lambd": 1})
    assert np.isfinite(seq.predicted({1: 3})).all()


# ------------------------------------------------------------------------------------------------ MPI
@pytest.mark.mpi
@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme, params", [("sr-sgc", {"B": 1, "W": 2, "lambd": 2}),
                                            ("m-sgc", {"B": 1, "W": 2, "lambd": 1})])
def test_a_live_run_decodes_every_job_exactly_and_replays_to_its_own_rounds(tmp_runs, scheme, params):
    d = _delays()
    res = launch(R.sequential_spec(scheme, d, **params), job_timeout=90, check=False)
    assert res.ok, res.error
    seq = R.SequentialRun(scheme, d, params=params)
    assert len(res.records) == seq.rounds
    decoded = [r for r in res.records if r["job"] is not None]
    assert [r["job"] for r in decoded] == list(range(seq.jobs))
    assert max(r["grad_error"] for r in decoded) < 1e-9
    assert res.records[-1]["loss"] < 0.5 * res.records[0]["loss"]  # delayed gradient descent trains
    check = R.check_replay(res)
    assert check["agree"], check
    # the rounds with a slow worker went on without it, as the replay of the injected delays says
    assert [r["late"] for r in res.records[:3]] == [[3], [], [2]]
    predicted = np.array([r["predicted"] for r in res.records])
    assert np.all(np.array([r["round"] for r in res.records]) >= predicted - 1e-9)


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_killed_worker_is_survived_by_sr_sgc_and_stops_m_sgc_with_a_clear_error(tmp_runs):
    """Worker 2 dies at round 2 and nobody else straggles: SR-SGC's GC(1) layer absorbs it in every round; M-SGC's
    bursts last at most B = 1 round, so it waits for the dead worker and the run stops, saying why."""
    d = _delays(rounds=7, slow=())
    res = launch(R.sequential_spec("sr-sgc", d, B=1, W=2, lambd=1, kill={2: 2}, stop_timeout=2.0), job_timeout=90, check=False)
    assert res.ok, res.error
    assert res.dead_workers == [2] and len(res.records) == 7
    assert all(2 in r["late"] for r in res.records[2:] if not r["skipped"])
    assert max(r["grad_error"] for r in res.records if r["job"] is not None) < 1e-9
    assert R.check_replay(res)["agree"]
    res = launch(R.sequential_spec("m-sgc", d, B=1, W=2, lambd=1, kill={2: 2}, stop_timeout=2.0), job_timeout=90, check=False)
    assert not res.ok and "waits for every worker" in res.error and "workers [2] died" in res.error
    assert len(res.records) == 3  # rounds 0, 1 and the first one without the worker went through


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_worker_late_round_after_round_stays_in_the_run(tmp_runs):
    """GC(1) goes on without worker 3 in five rounds in a row: the worker abandons each of them and is sent every
    later plan all the same (the master counts the messages a worker leaves unanswered), so it is on time again, and
    alive, once it is fast again; every round's stragglers are those of the replay of the injected delays."""
    d = _delays(slow=[(3, r, 3.0) for r in range(5)])
    spec = R.sequential_spec("gc", d, s=1)
    res = launch(spec, job_timeout=90, check=False)
    assert res.ok, res.error
    assert res.dead_workers == [] and [r["late"] for r in res.records] == [[3]] * 5 + [[]] * 3
    _, waited, _, late = spec.sequential.replayed()
    assert [np.flatnonzero(x).tolist() for x in late] == [r["late"] for r in res.records]
    assert R.check_replay(res)["agree"]
