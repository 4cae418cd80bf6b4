"""gclib.shared_draws: the simulator's numbers for the advice's design families, from their parameters on shared draws,
checked against the schedules' simulation on the same draws for every candidate of small K."""
import numpy as np
import pytest

from gclib import advise, shared_draws
from gclib.simulator import simulate_trials
from gclib.simulator import Communication
from gclib.stragglers import Pareto, Persistent, Replay, ShiftedExponential

RNG = np.random.default_rng(0)
MODELS = {"eq. 5": ShiftedExponential(10, 0.01), "per task": ShiftedExponential(10, 0.01, per_task=True),
          "pareto": Pareto(0.05, 1.5), "dead": Persistent(ShiftedExponential(10, 0.01), count=1),
          "replay": Replay(RNG.exponential(1, (20, 5, 2)))}


@pytest.mark.parametrize("K,R", [(8, 3), (12, 4), (20, 5)])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_candidate_as_the_schedule_simulates_it(K, R, name):
    model = MODELS[name]
    designs = advise.candidates(K, R)
    schedules = [d.schedule() for d in designs]
    for comm in (None, Communication(0.01, 7.0, overhead=0.003)):
        ref = simulate_trials(schedules, model, K, 150, 3, keys=("time", "messages", "computations", "volume"),
                              comm=comm)
        draws = shared_draws.Draws(model, np.random.default_rng(3), 150, K, R)
        got = shared_draws.evaluate([d.spec for d in designs], draws, comm=comm)
        for d, a, b in zip(designs, ref, got):
            for key in ("time", "messages", "computations"):
                assert np.array_equal(a[key], b[key]), (d.label, key, comm)
            assert np.allclose(a["volume"], b["volume"]), d.label


@pytest.mark.parametrize("name", ["eq. 5", "replay"])
def test_the_masters_queue_lies_between_the_bounds(name):
    K, R = 12, 4
    model = MODELS[name]
    designs = advise.candidates(K, R)
    comm = Communication(0.01, 30.0, overhead=0.003, queue=True)
    ref = simulate_trials([d.schedule() for d in designs], model, K, 200, 5, keys=("time",), comm=comm)
    draws = shared_draws.Draws(model, np.random.default_rng(5), 200, K, R)
    got = shared_draws.evaluate([d.spec for d in designs], draws, outputs=("time", "messages"), comm=comm)
    for d, a, b in zip(designs, ref, got):
        assert np.all(b["time"] <= a["time"] * (1 + 1e-12)) and np.all(a["time"] <= b["time_high"] * (1 + 1e-12))
        assert (b["time_high"] > b["time"]).any(), d.label  # a real interval, not a tautology
    with pytest.raises(ValueError, match="computations"):
        shared_draws.evaluate([designs[0].spec], shared_draws.Draws(model, np.random.default_rng(5), 4, K, R),
                              comm=comm)


def test_counts_by_hand():
    # two trials of three workers finishing task k at k x; worker 1 never answers
    class Fixed(ShiftedExponential):
        def task_draws(self, rng, shape):
            return np.broadcast_to(np.array([[[1.0], [2.0], [4.0]], [[3.0], [9.0], [0.5]]]), shape).copy()

    D = shared_draws.Draws(Persistent(Fixed(), workers=[1]), np.random.default_rng(0), 2, 3, 2)
    assert D.eq5
    got = D.counts([1, 2], np.array([[2.0, 2.0], [3.0, 3.0]]))
    assert got.tolist() == [[1, 1], [2, 1]]  # trial 0: x = 1 (and 2 <= 2); trial 1: 3, 0.5 (and 1.0 <= 3)
    assert D.counts([1], np.array([1.0, np.inf]), strict=True).ravel().tolist() == [0, 2]  # inf: never counted
    assert D.first(2).tolist() == [2.0, 1.0]


def test_grid_and_specs():
    assert advise.grid(2, 10) == list(range(2, 11))
    g = advise.grid(2, 100)
    assert g[:15] == list(range(2, 17)) and g[-1] == 100
    assert all(b / a <= advise.GRID_RATIO ** 1.5 for a, b in zip(g[15:], g[16:]))
    assert advise.grid(1, 0) == [] and advise.grid(2, 2) == [2]
    s = shared_draws.correlated(11, 3, 2, 3)
    assert s.blocks == (4, 4, 3) and s.need == (3, 3, 2) and s.columns == (2, 3) and s.workers == 11
    u = shared_draws.uncorrelated(9, 3, (1, 3), 3)
    assert u.need == (3 * 2 - 4 + 1,) * 3
    with pytest.raises(ValueError, match="hybrid"):
        shared_draws.hybrid(10, 3, (1, 3))


# ------------------------------------------------------------------------------------- the partial-straggler protocol
class _Paces(ShiftedExponential):
    """Worker w finishes its k-th chunk at k x_w, x = (1, 2, 4) in every trial."""

    def task_draws(self, rng, shape):
        return np.broadcast_to(np.array([[[1.0], [2.0], [4.0]]]), shape).copy()


def test_the_protocol_by_hand():
    # cyclic, natural order, K = 3, l = 2: worker w computes chunk w at x_w, then chunk w + 1 at 2 x_w
    # chunk 0: worker 0 at 1; chunk 1: worker 1 at 2 or worker 0 at 2; chunk 2: worker 2 at 4 or worker 1 at 4
    D = shared_draws.Draws(_Paces(), np.random.default_rng(0), 1, 3, 2)
    uc, pr = shared_draws.correlated(3, 2, 1), shared_draws.rmg(3, 2)
    a, b = shared_draws.evaluate([uc, pr], D, outputs=("time", "messages", "volume"))
    assert a["time"].tolist() == b["time"].tolist() == [4.0]  # the coverage: UC-MMC's time in one cluster
    assert b["messages"].tolist() == [3] and b["volume"].tolist() == [3.0]  # every worker has a chunk done by 4
    assert a["messages"].tolist() == [5]  # UC-MMC: every chunk done by 4 (worker 2's second at 8 is not)
    # independent delays: a report and an instruction cost 0.25 + 0.125, a vector 0.25 + 0.125 + 1 / 4
    net = Communication(0.25, 4.0, overhead=0.125)
    a, b = shared_draws.evaluate([uc, pr], D, outputs=("time",), comm=net)
    assert a["time"].tolist() == [4.625] and b["time"].tolist() == [4.0 + 0.375 + 0.375 + 0.625]
    # the master's queue: reports reach it 0.5 after, taken in for 0.25 each in the order (1.5: w0 c0), (2.5: w0 c1),
    # (2.5: w1 c1), (4.5: w1 c2), (4.5: w2 c2), (8.5): taken at 1.75, 2.75, 3.0, 4.75, ...: chunk 2 first at 4.75;
    # the instruction arrives 0.5 + 0.25 later, the three vectors 0.5 after that, each taken in for 0.25 + 1 / 2
    q = Communication(0.5, 2.0, overhead=0.25, queue=True)
    (b,) = shared_draws.evaluate([pr], D, outputs=("time", "messages"), comm=q)
    assert b["time"].tolist() == b["time_high"].tolist() == [4.75 + 0.75 + 0.5 + 3 * 0.75]
    assert b["messages"].tolist() == [3]
    with pytest.raises(ValueError, match="protocol must be one of"):
        shared_draws.protocol(shared_draws.correlated(3, 2, 1), D, b["time"], q)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_protocol_takes_uc_mmcs_time_when_messages_cost_nothing_and_its_round_trip_when_they_do(name):
    from gclib.codes import partial_work

    K, l, n = 9, 3, 150
    model = MODELS[name]
    uc, pr = shared_draws.correlated(K, l, 1), shared_draws.rmg(K, l)
    D = shared_draws.Draws(model, np.random.default_rng(4), n, K, l)
    for comm in (None, Communication()):
        a, b = shared_draws.evaluate([uc, pr], D, comm=comm)
        assert np.array_equal(a["time"], b["time"])
        assert np.all(b["messages"] <= a["messages"]) and (b["messages"] < a["messages"]).any()
        assert np.array_equal(b["volume"], b["messages"].astype(float))
        assert np.array_equal(a["computations"], b["computations"])
    net = Communication(0.02, 3.0, overhead=0.005)
    a, b = shared_draws.evaluate([uc, pr], D, comm=net)
    done = np.isfinite(a["time"])
    assert np.array_equal(done, np.isfinite(b["time"])) and done.any()
    assert np.allclose(b["time"][done] - a["time"][done], 2 * (0.02 + 0.005), rtol=0, atol=1e-12)
    # the charged vectors bound the count of the server's picks (decode_plan) at the coverage, every trial
    order = partial_work.make_order(partial_work.cyclic_assignment(K, l), "cyclic")
    t0 = shared_draws.times([uc], D)[0]
    v = shared_draws.charged_vectors(D, t0.astype(float))
    for i in np.flatnonzero(np.isfinite(t0)):
        progress = [int(sum(D.col(k)[i, w] <= t0[i] for k in range(1, l + 1))) for w in range(K)]
        assert 1 <= len(partial_work.decode_plan(order, progress)) <= v[i] <= K


@pytest.mark.parametrize("name", ["eq. 5", "per task", "dead"])
def test_the_protocol_in_the_masters_queue_as_the_schedules_simulate_its_reports(name):
    # the reports are UC-MMC's messages in one cluster at the reports' cost: the simulator's queue on the schedule
    # with service(SMALL) per message gives the time the master decides
    K, l, n = 9, 3, 120
    model = MODELS[name]
    q = Communication(0.01, 5.0, overhead=0.004, queue=True)
    reports = Communication(q.latency, overhead=float(q.service(shared_draws.SMALL)), queue=True)
    d = [x for x in advise.candidates(K, l, network=q) if x.label == f"rmg r={l}"][0]
    (ref,) = simulate_trials([d.schedule()], model, K, n, 8, keys=("time",), comm=reports)
    D = shared_draws.Draws(model, np.random.default_rng(8), n, K, l)
    (got,) = shared_draws.evaluate([d.spec], D, outputs=("time", "messages"), comm=q)
    v = shared_draws.charged_vectors(D, ref["time"], q.latency)
    want = ref["time"] + q.delay(0.0) + q.latency + v * q.service(1.0)
    assert np.allclose(got["time"], want, rtol=1e-12) and np.array_equal(got["messages"], v)
    # the advice's exact path (the schedules, the protocol on the same draws) gives the same numbers
    t = advise.trial_times([f"uc-mmc r={l} P=1", f"rmg r={l}"], model, K, l, trials=n, seed=8, network=q)
    assert np.array_equal(t[f"rmg r={l}"], got["time"])
    (uc,) = simulate_trials([x.schedule() for x in advise.candidates(K, l) if x.label == f"uc-mmc r={l} P=1"],
                            model, K, n, 8, keys=("time",), comm=q)
    assert np.array_equal(t[f"uc-mmc r={l} P=1"], uc["time"])
