"""Compute-time models, closed forms and the Monte Carlo simulator."""
import numpy as np
import pytest

import gclib
from gclib import codes, simulator
from gclib.simulator import Communication, arrival_times, simulate
from gclib.stats import mean_ci
from gclib.sweeps import sweep
from gclib.stragglers import (Exponential, Pareto, Persistent, Replay, ShiftedExponential,
                              expected_max_of_group_minima, expected_order_statistic, make_model)
from gclib.theory import expected_time


def _cycle(times):
    """The recorded iterations replayed in turn."""
    return Replay(times, by="cycle")


# ------------------------------------------------------------------------------------------------ models
@pytest.mark.parametrize("model", [ShiftedExponential(10, 0.01), ShiftedExponential(2, 0.1, per_task=True),
                                   Exponential(3.0), Pareto(1.0, 2.5), Pareto(0.5, 1.2, per_task=True)])
def test_models_are_monotone_and_seeded(model):
    a = model.sample(np.random.default_rng(3), 50, 4, 5)
    b = model.sample(np.random.default_rng(3), 50, 4, 5)
    assert a.shape == (50, 4, 5)
    np.testing.assert_array_equal(a, b)
    assert np.all(np.diff(a, axis=2) >= 0) and np.all(a > 0)


def test_gc_mmc_eq5_convention():
    """A worker's s-th result is at s * (alpha + X/mu): the ratio of task times is exactly s."""
    t = ShiftedExponential(10, 0.01).sample(np.random.default_rng(0), 10, 3, 4)
    np.testing.assert_allclose(t / t[..., :1], np.broadcast_to(np.arange(1, 5), t.shape))
    assert np.all(t[..., 0] >= 0.01)


def test_pareto_tail():
    x = Pareto(2.0, 3.0).sample(np.random.default_rng(1), 200_000, 1, 1).ravel()
    assert x.min() >= 2.0
    assert abs(np.mean(x > 4.0) - (2.0 / 4.0) ** 3) < 0.003


@pytest.mark.parametrize("n,k,ref", [(10, 10, 3.928968), (10, 6, 1.845635), (10, 7, 2.095635),
                                     (30, 30, 4.994987), (30, 27, 3.161654), (50, 47, 3.665872)])
def test_order_statistic_reference_values(n, k, ref):
    """Shifted exponential with shift 1 and scale 1: 1 + sum_{i=n-k+1}^{n} 1/i (reference values)."""
    assert expected_order_statistic(ShiftedExponential(mu=1.0, alpha=1.0), n, k) == pytest.approx(ref, abs=1e-6)


def test_pareto_order_statistic_closed_form_matches_monte_carlo():
    m = Pareto(1.0, 3.0)
    x = np.sort(m.sample(np.random.default_rng(2), 100_000, 6, 1)[..., 0], axis=1)
    for k in (1, 3, 6):
        assert x[:, k - 1].mean() == pytest.approx(expected_order_statistic(m, 6, k), rel=0.01)


def test_persistent_stragglers():
    m = Persistent(ShiftedExponential(), count=2)
    t = m.sample(np.random.default_rng(0), 100, 6, 3)
    assert np.all(np.isinf(t).all(axis=2).sum(axis=1) == 2)
    t = Persistent(Exponential(), workers=[1, 4]).sample(np.random.default_rng(0), 5, 6, 2)
    assert np.isinf(t[:, [1, 4]]).all() and np.isfinite(t[:, [0, 2, 3, 5]]).all()
    with pytest.raises(ValueError, match="exceeds"):
        Persistent(Exponential(), count=7).sample(np.random.default_rng(0), 5, 6, 2)


@pytest.mark.parametrize("bad", [dict(mu=0), dict(mu=-1), dict(alpha=-0.1), dict(mu=float("nan"))])
def test_bad_model_parameters(bad):
    with pytest.raises(ValueError, match=list(bad)[0]):
        ShiftedExponential(**bad)


def test_make_model_names():
    assert isinstance(make_model("pareto", shape=1.5, mu=3), Pareto)
    with pytest.raises(ValueError, match="model must be one of"):
        make_model("weibull")


# ------------------------------------------------------------------------------------------------ simulator
def _oracle_completion(code, arrival_row):
    """Earliest time at which the received set decodes, by the exact span test on sorted arrivals."""
    order = np.argsort(arrival_row, kind="stable")
    got = np.zeros(code.n_messages, dtype=bool)
    for j in order:
        if not np.isfinite(arrival_row[j]):
            break
        got[j] = True
        if code.is_decodable(got):
            return arrival_row[j]
    return np.inf


@pytest.mark.parametrize("code", [codes.crc(7, 2, seed=1), codes.frc(8, 3), codes.uncoded(5),
                                  codes.partial_stragglers(5, 1, pieces=4), codes.rs(6, 2),
                                  codes.clustered([codes.crc(4, 1), codes.crc(4, 2, seed=4)])],
                         ids=lambda c: c.name)
def test_rule_completion_equals_oracle_earliest_decodable_time(code):
    model = Persistent(ShiftedExponential(5, 0.05, per_task=True), count=1)
    finish = model.sample(np.random.default_rng(7), 40, code.n_workers, code.load)
    arr = arrival_times(code, finish)
    fast = code.rule.completion(arr)
    slow = np.array([_oracle_completion(code, row) for row in arr])
    np.testing.assert_array_equal(fast, slow)


def test_simulate_matches_closed_forms():
    m = ShiftedExponential(10, 0.01)
    for code in [codes.uncoded(20), codes.ignore_stragglers(20, 4), codes.frc(20, 4), codes.crc(20, 4)]:
        s = simulate(code, m, 20_000, seed=3).summary()
        cf = expected_time(code, m)
        assert abs(s["mean_time"] - cf) < 4 * s["ci95_time"] / 1.96, code.name


def test_simulate_is_reproducible():
    code, m = codes.crc(10, 3), Pareto(1, 1.5)
    a = simulate(code, m, 12_345, seed=9)
    b = simulate(code, m, 12_345, seed=9)
    c = simulate(code, m, 12_345, seed=10)
    np.testing.assert_array_equal(a.time, b.time)
    assert not np.array_equal(a.time, c.time)
    assert a.trials == 12_345


def test_accounting_on_a_hand_example():
    """Two workers, uncoded; worker 0 finishes at 1, worker 1 at 3: done at 3, 2 messages, 2 computations."""
    code = codes.uncoded(2)
    res = simulate(code, _cycle(np.array([[[1.0], [3.0]]])), trials=1)
    assert res.time[0] == 3.0 and res.messages[0] == 2 and res.computations[0] == 2 and res.volume[0] == 2.0
    # FRC n=2, s=1 with per-task times: worker 0 finishes its 2 parts at 1+1=2, worker 1 at 3+3=6
    code = codes.frc(2, 1)
    res = simulate(code, _cycle(np.array([[[1.0, 1.0], [3.0, 3.0]]])), trials=1)
    assert res.time[0] == 2.0 and res.messages[0] == 1 and res.computations[0] == 2  # worker 1 did 0 parts


def test_communication_delay_shifts_arrivals():
    code = codes.uncoded(3)
    tr = _cycle(np.array([[[1.0], [2.0], [4.0]]]))
    base = simulate(code, tr, 1).time[0]
    delayed = simulate(code, tr, 1, comm=Communication(latency=0.5, bandwidth=4.0)).time[0]
    assert delayed == pytest.approx(base + 0.5 + 1 / 4)
    with pytest.raises(ValueError, match="bandwidth"):
        Communication(bandwidth=0)


def test_too_many_persistent_stragglers_never_complete():
    code = codes.crc(6, 1)
    res = simulate(code, Persistent(ShiftedExponential(), count=2), 200, seed=0)
    assert np.isinf(res.time).all() and res.summary()["failed"] == 200
    assert res.summary()["mean_time"] is None  # JSON-ready: no NaN/inf
    ok = simulate(code, Persistent(ShiftedExponential(), count=1), 200, seed=0)
    assert np.isfinite(ok.time).all()


def test_cluster_message_accounting():
    """Per-cluster counting never exceeds counting until the whole iteration completes."""
    code = codes.clustered([codes.crc(5, 1), codes.crc(5, 2)])
    res = simulate(code, ShiftedExponential(10, 0.01, per_task=True), 2000, seed=1)
    assert np.all(res.cluster_messages <= res.messages)
    assert np.any(res.cluster_messages < res.messages)


def test_mean_ci():
    m, c = mean_ci(np.array([1.0, 2.0, 3.0, np.inf]))
    assert m == 2.0 and c == pytest.approx(1.959963984540054 * 1.0 / np.sqrt(3))


def test_sweep_skips_invalid_points_and_reports_closed_forms():
    df = sweep({"frc": lambda s: codes.frc(12, s), "crc": lambda s: codes.crc(12, s)}, [1, 2, 4],
               ShiftedExponential(), trials=500, seed=0)
    assert set(df[df.scheme == "frc"].value) == {1, 2}  # s = 4: 5 does not divide 12
    assert df["closed_form_time"].notna().all()


def test_group_minima_closed_form():
    m = Exponential(2.0)
    assert expected_max_of_group_minima(m, 1, 3) == pytest.approx(1 / 6)
    assert gclib.stragglers.harmonic(3) == pytest.approx(11 / 6)


def test_closed_form_includes_communication_delay():
    # sweep(comm=...) used to report the compute-only closed form beside a simulated time that includes the delay.
    m, comm = ShiftedExponential(10, 0.01), Communication(latency=0.5, bandwidth=4.0)
    code = codes.crc(12, 2)
    assert expected_time(code, m, comm) == pytest.approx(expected_time(code, m) + 0.5 + 1 / 4)
    s = simulate(code, m, 20_000, seed=5, comm=comm).summary()
    assert abs(s["mean_time"] - expected_time(code, m, comm)) < 4 * s["ci95_time"] / 1.96
    df = sweep({"crc": lambda s: codes.crc(12, s)}, [2], m, trials=500, seed=0, comm=comm)
    assert df["closed_form_time"].iloc[0] == pytest.approx(expected_time(code, m, comm))
    # messages of different sizes are shifted by different delays: no closed form
    from dataclasses import replace

    unequal = replace(code, size=np.r_[np.ones(11), 2.0])
    assert np.isfinite(expected_time(unequal, m)) and np.isnan(expected_time(unequal, m, comm))


def test_persistent_takes_workers_or_count_not_both():
    # Both used to be accepted; the random count then often re-killed a fixed worker (fewer dead than asked).
    with pytest.raises(ValueError, match="either workers .* or count"):
        Persistent(Exponential(), count=1, workers=[0])
    with pytest.raises(ValueError, match="count must be a non-negative integer, got True"):
        Persistent(Exponential(), count=True)
    t = Persistent(Exponential(), workers=[0]).sample(np.random.default_rng(0), 3, 4, 1)
    assert np.isinf(t[:, 0]).all() and np.isfinite(t[:, 1:]).all()


def test_trace_rejects_nan_and_empty_durations():
    # A NaN duration used to pass the check (NaN < 0 is False) and poisoned every arrival time of its worker.
    times = np.ones((2, 3, 2))
    times[0, 1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or negative"):
        _cycle(times)
    with pytest.raises(ValueError, match="non-empty"):
        _cycle(np.ones((0, 3, 2)))
    times[0, 1, 0] = np.inf  # a task that never finishes is allowed
    assert np.isinf(_cycle(times).sample(None, 2, 3, 2)[0, 1]).all()


def test_a_replay_in_order_goes_on_from_draw_to_draw_and_a_cycle_starts_again():
    times = np.arange(1.0, 4.0).reshape(3, 1, 1) * np.ones((3, 2, 1))
    order, cycle = Replay(times, by="order"), _cycle(times)
    assert order.name == "recorded" and cycle.name == "trace" and Replay(times).name == "replay"
    assert order.sample(None, 2, 2, 1)[:, 0, 0].tolist() == [1.0, 2.0]
    assert order.sample(None, 2, 2, 1)[:, 0, 0].tolist() == [3.0, 1.0]
    assert cycle.sample(None, 2, 2, 1)[:, 0, 0].tolist() == cycle.sample(None, 2, 2, 1)[:, 0, 0].tolist() == [1, 2]
    assert order.workers() == cycle.workers() == 2 and Replay(times).workers() is None
    with pytest.raises(ValueError, match=r"trace has 2 workers x 1 tasks, need 3 x 1"):
        order.sample(None, 1, 3, 1)
    with pytest.raises(ValueError, match="by must be one of 'row', 'iteration', 'cycle', 'order', got 'rows'"):
        Replay(times, by="rows")


def test_never_decoding_trials_do_not_count_messages_that_never_arrive():
    # With t = inf, arrival inf <= t was True: the 2 dead workers' messages, their volume and their never-computed
    # tasks were counted as received/computed in every failed trial.
    code = codes.crc(6, 1)
    model = Persistent(ShiftedExponential(), count=2)
    res = simulate(code, model, 50, seed=0)
    assert np.isinf(res.time).all()
    assert (res.messages == 4).all() and (res.volume == 4.0).all() and (res.computations == 4 * 2).all()
    finish = model.sample(np.random.default_rng(1), 50, 6, 2)
    fast = simulator.simulate_chunk(code, finish)
    assert (fast["messages"] == 4).all() and (fast["computations"] == 8).all()


def _queue_by_hand(arrival, service):
    """The master's queue one message at a time, in the order of arrival (ties by index)."""
    out = np.empty(len(arrival))
    free = -np.inf
    for i in sorted(range(len(arrival)), key=lambda i: (arrival[i], i)):
        if np.isinf(arrival[i]):
            out[i] = np.inf
            continue
        free = max(free, arrival[i]) + service[i]
        out[i] = free
    return out


def test_the_masters_queue_by_hand():
    from gclib.simulator import queued

    rng = np.random.default_rng(4)
    a = rng.exponential(1.0, (30, 7))
    a[3, 2] = np.inf
    a[5, :3] = 0.25  # ties are taken in by message index
    s = rng.uniform(0.1, 0.6, 7)
    got = queued(a, s)
    for row, out in zip(a, got):
        assert np.allclose(out, _queue_by_hand(row, s), rtol=1e-12, atol=0)


def test_queue_charges_every_message():
    # three workers done at 1, 2 and 2: uncoded takes the messages in at 1 + 0.5, then 2 + 0.5 and 2 + 1
    tr = _cycle(np.array([[[1.0], [2.0], [2.0]]]))
    comm = Communication(latency=0.5, bandwidth=4.0, overhead=0.25, queue=True)
    res = simulate(codes.uncoded(3), tr, 1, comm=comm)
    assert res.time[0] == pytest.approx(2.5 + 2 * 0.5)  # service 0.25 + 1 / 4 = 0.5 per message
    assert res.messages[0] == 3
    # the independent model charges one delay whatever the others do
    ind = simulate(codes.uncoded(3), tr, 1, comm=Communication(latency=0.5, bandwidth=4.0, overhead=0.25))
    assert ind.time[0] == pytest.approx(2.0 + 1.0)
    # free communication gives the numbers of no communication at all
    m = ShiftedExponential(10, 0.01)
    code = codes.crc(8, 2, seed=1)
    free = Communication(queue=True)
    assert free.free and np.array_equal(simulate(code, m, 300, seed=2, comm=free).time,
                                        simulate(code, m, 300, seed=2).time)
    assert np.isnan(expected_time(code, m, comm))
    with pytest.raises(TypeError, match="queue"):
        Communication(queue="yes")
    with pytest.raises(ValueError, match="overhead"):
        Communication(overhead=-1.0)


def test_queue_makes_more_messages_cost_more():
    # UC-MMC decodes sooner than GC without communication; with a slow master it pays for its extra messages
    from gclib.codes import mmc

    m = ShiftedExponential(10, 0.01)
    uc, gc = mmc.uc_mmc(8, 3), mmc.gc_cyclic(8, 3)
    free = [simulate(c, m, 2000, seed=1).summary() for c in (uc, gc)]
    assert free[0]["mean_time"] < free[1]["mean_time"] and free[0]["mean_messages"] > free[1]["mean_messages"]
    slow = Communication(latency=0.0, bandwidth=20.0, queue=True)
    charged = [simulate(c, m, 2000, seed=1, comm=slow).summary() for c in (uc, gc)]
    assert charged[0]["mean_time"] > charged[1]["mean_time"]
