"""gclib.bulk: the simulator's numbers for the advice's design families, from their parameters on shared draws,
checked against the schedules' simulation on the same draws for every candidate of small K."""
import numpy as np
import pytest

from gclib import advise, bulk
from gclib.design import evaluate_trials
from gclib.simulate import Communication
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
        ref = evaluate_trials(schedules, model, K, 150, 3, keys=("time", "messages", "computations", "volume"),
                              comm=comm)
        got = bulk.evaluate([d.spec for d in designs], bulk.Draws(model, np.random.default_rng(3), 150, K, R),
                            comm=comm)
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
    ref = evaluate_trials([d.schedule() for d in designs], model, K, 200, 5, keys=("time",), comm=comm)
    got = bulk.evaluate([d.spec for d in designs], bulk.Draws(model, np.random.default_rng(5), 200, K, R),
                        outputs=("time", "messages"), comm=comm)
    for d, a, b in zip(designs, ref, got):
        assert np.all(b["time"] <= a["time"] * (1 + 1e-12)) and np.all(a["time"] <= b["time_high"] * (1 + 1e-12))
        assert (b["time_high"] > b["time"]).any(), d.label  # a real interval, not a tautology
    with pytest.raises(ValueError, match="computations"):
        bulk.evaluate([designs[0].spec], bulk.Draws(model, np.random.default_rng(5), 4, K, R), comm=comm)


def test_counts_by_hand():
    # two trials of three workers finishing task k at k x; worker 1 never answers
    class Fixed(ShiftedExponential):
        def task_draws(self, rng, shape):
            return np.broadcast_to(np.array([[[1.0], [2.0], [4.0]], [[3.0], [9.0], [0.5]]]), shape).copy()

    D = bulk.Draws(Persistent(Fixed(), workers=[1]), np.random.default_rng(0), 2, 3, 2)
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
    s = bulk.correlated(11, 3, 2, 3)
    assert s.blocks == (4, 4, 3) and s.need == (3, 3, 2) and s.columns == (2, 3) and s.workers == 11
    u = bulk.uncorrelated(9, 3, (1, 3), 3)
    assert u.need == (3 * 2 - 4 + 1,) * 3
    with pytest.raises(ValueError, match="hybrid"):
        bulk.hybrid(10, 3, (1, 3))
