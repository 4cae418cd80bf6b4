"""The runtime's bell: futex words in a host-local shared-memory file that end a rank's wait when rung."""
from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from gclib.runtime import wakeup

@pytest.fixture
def made():
    b = wakeup.make()
    if b is None:
        pytest.skip("no futex bell on this system")
    yield b
    b.unlink()


def _waiter(path, seen, seconds, out):
    b = wakeup.join(path)
    t = time.monotonic()
    b.wait(wakeup.TO_WORKERS, seen, seconds)
    out.put(time.monotonic() - t)


def test_a_ring_wakes_a_rank_of_another_process_before_its_timeout(made):
    seen = made.value(wakeup.TO_WORKERS)
    out = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_waiter, args=(made.path, seen, 60.0, out))
    child.start()
    try:
        time.sleep(0.5)  # the child is asleep on the word by now (a ring before its wait also ends it: below)
        made.ring(wakeup.TO_WORKERS)
        waited = out.get(timeout=30)
    finally:
        child.join(timeout=30)
    assert waited < 30.0  # woken by the ring, not by its 60 s timeout
    assert made.value(wakeup.TO_WORKERS) == seen + 1


def test_a_ring_before_the_wait_is_not_lost(made):
    seen = made.value(wakeup.TO_MASTER)
    made.ring(wakeup.TO_MASTER)  # rung between reading the count and waiting: the wait must return at once
    t = time.monotonic()
    made.wait(wakeup.TO_MASTER, seen, 60.0)
    assert time.monotonic() - t < 30.0
    assert made.value(wakeup.TO_MASTER) != seen and made.value(wakeup.TO_WORKERS) == 0  # the words are separate


def test_an_unrung_wait_times_out(made):
    t = time.monotonic()
    made.wait(wakeup.TO_WORKERS, made.value(wakeup.TO_WORKERS), 0.05)
    assert time.monotonic() - t >= 0.04


def test_a_rank_that_cannot_open_the_bell_polls_instead(made, tmp_path):
    assert wakeup.join(str(tmp_path / "not-there")) is None  # another host: no such file
    assert wakeup.join(None) is None  # the master made none
    other = wakeup.join(made.path)
    assert other is not None and other.value(wakeup.TO_WORKERS) == made.value(wakeup.TO_WORKERS)
    made.unlink()
    assert not os.path.exists(made.path)  # the name is gone ...
    made.ring(wakeup.TO_WORKERS)
    assert other.value(wakeup.TO_WORKERS) == made.value(wakeup.TO_WORKERS)  # ... and the mapping still shared
    assert wakeup.join(made.path) is None  # a late worker polls
    made.unlink()  # twice is harmless


def _bells():
    return {p for p in os.listdir("/dev/shm") if p.startswith("gclib-bell-")} if os.path.isdir("/dev/shm") else set()


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_runs_leave_no_bell_behind_whether_they_end_well_or_lose_a_worker():
    from gclib import schemes
    from gclib.learning import TandonAGD, make_problem
    from gclib.runtime import RunSpec, launch
    from gclib.stragglers import ShiftedExponential

    before = _bells()
    made = wakeup.make()
    can_ring = made is not None
    if can_ring:
        made.unlink()
    code = schemes.build("crc", workers=4, stragglers=1)
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=0, n_samples=400, dim=10)
    for kill in ({}, {2: 1}):  # a clean run, and one whose worker 2 dies at iteration 1 (CRC tolerates it)
        spec = RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(mu=10, alpha=0.01),
                       iterations=4, seed=3, time_scale=0.01, timeout=5.0, stop_timeout=3.0, kill=kill)
        res = launch(spec, job_timeout=60)
        assert res.ok, res.error
        assert max(r["grad_error"] for r in res.records) < 1e-9
        assert _bells() <= before, "a run left its bell in /dev/shm"
        assert res.bells == ([0, 1, 2, 3] if can_ring else [])  # one host: every worker shared the master's bell
