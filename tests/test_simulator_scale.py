"""The simulator's eq. 5 path (one draw per worker, no per-task array) and its chunking: the same numbers as
sampling every task, exactly."""
import numpy as np
import pytest

from gclib import codes, simulator
from gclib.codes import lcc, mmc
from gclib.simulator import (
    CHUNK, CHUNK_BYTES, Communication, Schedule, chunk_bytes, chunk_trials, chunks_of, simulate, simulate_chunk,
    tasks_done)
from gclib.stragglers import Exponential, Pareto, Persistent, ShiftedExponential


def every_task(code, model, trials, seed, comm=None, chunk=CHUNK):
    """The reference: every task's finish time materialized, chunk by chunk."""
    rng = np.random.default_rng(seed)
    parts = [simulate_chunk(code, model.sample(rng, c, code.n_workers, code.load), comm)
             for c in chunks_of(trials, chunk)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


CODES = [lambda: codes.crc(12, 3), lambda: codes.frc(12, 2), lambda: codes.uncoded(7),
         lambda: codes.ignore_stragglers(9, 2), lambda: codes.rs(10, 3), lambda: mmc.gc_mmc_correlated(24, 4, 2, 3),
         lambda: mmc.gc_mmc_uncorrelated(20, 5, (2, 4), 2), lambda: mmc.hybrid(20, 5, (2, 5)),
         lambda: lcc.lcc_code(12, 4), lambda: codes.ye_abbe(8, 2, 3), lambda: codes.kadhe(8, 1, 3),
         lambda: codes.partial_stragglers(8, 2, 4), lambda: mmc.uc_mmc(10, 3)]
MODELS = [ShiftedExponential(10, 0.01), Pareto(1, 1.5), Exponential(2.0), ShiftedExponential(3, 0.0),
          Persistent(ShiftedExponential(), count=2), Persistent(Exponential(), workers=[0, 3]),
          ShiftedExponential(10, 0.01, per_task=True)]


@pytest.mark.parametrize("build", CODES)
def test_eq5_path_equals_every_task(build):
    code = build()
    for model in MODELS:
        for comm in (None, Communication(0.01, 7.0)):
            fast = simulate(code, model, 700, 5, comm=comm)
            ref = every_task(code, model, 700, 5, comm)
            for k, v in ref.items():
                got = getattr(fast, k)
                assert got.dtype == v.dtype and np.array_equal(got, v), (code.name, model, comm, k)


def test_tasks_done_counts_the_rounded_products():
    rng = np.random.default_rng(0)
    x = rng.exponential(1.0, (400, 6))
    x[0, 0], x[1, 1], x[2, 2] = 0.0, np.inf, 0.1  # done at once, never, and 3 * 0.1 != 0.3 in float64
    lengths = np.array([1, 2, 3, 5, 8, 13])
    t = np.sort(x * 3, axis=1)[:, 3]  # a completion time equal to some worker's third task
    t[2] = 0.3
    t[5] = np.inf
    for dtype in (np.float64, np.float32):
        for L in (lengths, np.ones(6, dtype=int)):  # the general count and the one-task shortcut
            j = np.arange(1, 14)
            f = (x[:, :, None] * j).astype(dtype)
            ref = ((f <= t.astype(dtype)[:, None, None]) & np.isfinite(f) & (j <= L[:, None])).sum(axis=(1, 2))
            assert np.array_equal(tasks_done(x, t.astype(dtype), L, dtype), ref)
    # by hand: 0.1 * 3 = 0.30000000000000004 > 0.3 (two tasks), 0 * j = 0 (both), never (none), 0.25 (one)
    assert tasks_done(np.array([[0.1, 0.0, np.inf, 0.25]]), np.array([0.3]), np.array([3, 2, 4, 4]))[0] == 5


def test_chunks_follow_the_problem_size_not_the_machine(monkeypatch):
    assert chunk_trials(40, 10, 400) == CHUNK  # every problem of the notebooks keeps the 10,000-trial chunk
    big = chunk_trials(1000, 101, 1000, per_worker=True)
    assert big < CHUNK and chunk_bytes(1000, 101, 1000, big, per_worker=True) <= CHUNK_BYTES
    assert chunk_trials(10 ** 7, 1, 10 ** 7) == 1
    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", "64G")
    assert chunk_trials(1000, 101, 1000, per_worker=True) == big


def test_chunking_does_not_change_the_numbers_of_continuous_draws():
    code = codes.crc(10, 2)
    for model in (ShiftedExponential(), Pareto(1, 2), ShiftedExponential(per_task=True)):
        a = every_task(code, model, 900, 3, chunk=CHUNK)
        b = every_task(code, model, 900, 3, chunk=250)
        assert all(np.array_equal(a[k], b[k]) for k in a)


def test_schedule_simulates_like_its_code():
    code = mmc.gc_mmc_correlated(20, 4, 2, 2)
    a = simulate(code, Pareto(1, 1.5), 500, 2)
    b = simulate(Schedule.of(code), Pareto(1, 1.5), 500, 2)
    assert np.array_equal(a.time, b.time) and a.summary() == b.summary()
    with pytest.raises(TypeError, match="code must be a GradientCode"):
        Schedule.of("crc")


def test_per_worker_refuses_per_task_models_and_overflow():
    with pytest.raises(ValueError, match="one draw per worker"):
        ShiftedExponential(per_task=True).per_worker(np.random.default_rng(0), 2, 3, 4)
    with pytest.raises(ValueError, match="beyond the float64 range"):
        Pareto(1e300, 1.0).per_worker(np.random.default_rng(0), 20, 3, 10 ** 10)


def test_design_evaluate_eq5_path_equals_every_task_in_float32():
    from gclib import design
    from gclib.stats import mean_ci

    cands = design.candidates(12, 3, max_orders=2)
    for model in (ShiftedExponential(), Pareto(0.05, 2.0), Persistent(ShiftedExponential(), count=2)):
        table = design.evaluate(cands, model, 12, 1500, 4)
        rng = np.random.default_rng(4)
        finish = model.sample(rng, 1500, 12, 3).astype(np.float32)
        for cand, row in zip(cands, table.itertuples()):
            ref = simulator.simulate_chunk(cand.build(), finish)
            done = np.isfinite(ref["time"])
            for k in ("time", "messages", "cluster_messages", "computations"):
                got = (getattr(row, f"mean_{k}"), getattr(row, f"ci95_{k}"))
                assert np.array_equal(got, mean_ci(ref[k][done]), equal_nan=True), (cand.label, k)


def test_design_evaluate_refuses_a_request_above_the_budget(monkeypatch):
    from gclib import design

    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", "1M")
    with pytest.raises(ValueError, match=r"evaluate with \d+ candidates, trials = 100000 needs about"):
        design.evaluate(design.candidates(12, 3), ShiftedExponential(), 12, 100_000)


def test_sweep_is_refused_before_its_first_point(monkeypatch):
    from gclib.simulator import simulate_bytes
    from gclib.sweeps import sweep

    model = ShiftedExponential()
    small = codes.crc(10, 1)
    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", str(simulate_bytes(codes.crc(200, 1), 5000, model)))
    calls = []
    import sys

    monkeypatch.setattr(sys.modules["gclib.sweeps"], "simulate", lambda *a, **k: calls.append(a))  # sweep's simulate
    with pytest.raises(ValueError, match=r"sweep with trials = 5000, 2 points, the largest 'crc' with 400 workers"):
        sweep({"crc": lambda n: codes.crc(n, 1)}, [10, 400], model, trials=5000)
    assert not calls and small.n_workers == 10
