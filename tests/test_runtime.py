"""The MPI runtime: real runs with 5 ranks (marked ``mpi``), plus the pure parts (no MPI)."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import gclib.runtime as runtime_package
from gclib import schemes
from gclib.codes import rs
from gclib.codes.mmc import uc_mmc
from gclib.learning import TandonAGD, make_problem
from gclib.runtime import RunSpec, RuntimeFailure, launch, launch_series, predicted_times, sample_finish
from gclib.runtime.command import mpiexec_command
from gclib.simulator import arrival_times
from gclib.stragglers import Persistent, ShiftedExponential

ROOT = Path(__file__).resolve().parents[1]
MODEL = ShiftedExponential(mu=10, alpha=0.01)


@pytest.fixture(autouse=True)
def _temporary_run_dirs_in_tmp_path(tmp_path, monkeypatch):
    """Run directories the launcher makes go under the test's tmp_path (a failed run keeps its own)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def _spec(code, iterations=3, model=MODEL, dim=10, cls=RunSpec, **kw):
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=0, n_samples=400, dim=dim)
    kw.setdefault("time_scale", 0.01)
    kw.setdefault("timeout", 5.0)
    kw.setdefault("stop_timeout", 3.0)
    return cls(code, problem, TandonAGD(1.0 / problem.smoothness), model, iterations=iterations, seed=3, **kw)


# ---------------------------------------------------------------------------------------------- no MPI
def test_predicted_times_are_the_simulator_on_the_same_delays():
    code = schemes.build("crc", workers=4, stragglers=1)
    finish = sample_finish(MODEL, 5, 4, code.load, seed=7)
    again = sample_finish(MODEL, 5, 4, code.load, seed=7)
    np.testing.assert_array_equal(finish, again)
    pred = predicted_times(code, finish, 0.5)
    # by hand: CRC decodes at the (n - s)-th arrival; each worker sends after its last (s + 1 = 2nd) task
    by_hand = np.sort(finish[:, :, 1] * 0.5, axis=1)[:, 2]
    np.testing.assert_allclose(pred, by_hand)
    np.testing.assert_allclose(pred, code.rule.completion(arrival_times(code, finish * 0.5)))


def test_a_rank_imports_what_a_rank_runs_and_not_the_launcher(tmp_path):
    """What ``python -m gclib.runtime.rank`` loads before it runs the master or a worker (its packages, its own
    module, the spec it unpickles), in a fresh interpreter: the ranks' modules, never the launcher's stack, nor the
    optimizers and training schemes of the simulated clock."""
    path = tmp_path / "spec.pkl"
    path.write_bytes(pickle.dumps(_spec(schemes.build("crc", workers=4, stragglers=1))))
    code = ("import importlib, pickle, sys; importlib.import_module('gclib.runtime.rank'); "
            f"pickle.loads(open({str(path)!r}, 'rb').read()); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith(('gclib.runtime', 'gclib.learning')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = set(out.stdout.split())
    assert {f"gclib.runtime.{m}" for m in ("rank", "master", "worker", "spec", "protocol", "wakeup")} <= loaded
    launcher = {f"gclib.runtime.{m}" for m in ("launcher", "job", "result", "resume", "hosts", "preflight",
                                               "command", "processes", "signals", "namespace_hosts", "measure")}
    assert not loaded & launcher, sorted(loaded & launcher)
    training = {f"gclib.learning.{m}" for m in ("optim", "lazy", "training_schemes")}
    assert "gclib.learning.model" in loaded and not loaded & training, sorted(loaded & training)
    # ... while the package's names are all there for a user, each loaded from its module when first used
    names = {"launch", "RunSpec", "RunResult", "RuntimeFailure", "predicted_times", "sample_finish"}
    assert names <= set(dir(runtime_package))
    assert (runtime_package.launch, runtime_package.RuntimeFailure, runtime_package.sample_finish) == (
        launch, RuntimeFailure, sample_finish)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        runtime_package.nope


def test_spec_validates_its_parameters():
    code = schemes.build("uncoded", workers=4)
    with pytest.raises(ValueError, match="iterations"):
        _spec(code, iterations=0)
    with pytest.raises(ValueError, match="time_scale"):
        _spec(code, time_scale=-1.0)
    problem = make_problem("tandon-logistic", parts=5, seed=0, n_samples=100, dim=5)
    with pytest.raises(ValueError, match="parts"):
        RunSpec(code, problem, TandonAGD(1.0), MODEL)
    with pytest.raises(ValueError, match="kill"):
        _spec(code, kill={9: 1})
    with pytest.raises(ValueError, match=r"persistent straggler ids \[9\]"):  # before any job is launched
        _spec(code, model=Persistent(MODEL, workers=[9]))


def test_mpiexec_command_passes_the_hostfile(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("nodeA:2\nnodeB:3\n")
    cmd = mpiexec_command(tmp_path / "spec.pkl", 5, hosts=hosts)
    assert cmd[cmd.index("-f") + 1] == str(hosts)
    assert cmd[cmd.index("-n") + 1] == "5"
    assert Path(cmd[0]).name == "mpiexec"
    with pytest.raises(ValueError, match="hosts '.*missing' does not exist"):
        mpiexec_command(tmp_path / "spec.pkl", 5, hosts=tmp_path / "missing")
    for bad, what in (("nodeA:two\n", "line 1"), ("# only a comment\n\n", "names no host"),
                      ("nodeA:2\n:3\n", "line 2"), ("nodeA:0\n", "line 1")):
        hosts.write_text(bad)
        with pytest.raises(ValueError, match=what):
            mpiexec_command(tmp_path / "spec.pkl", 5, hosts=hosts)
    hosts.write_text("# cluster\nnodeA:2  # two slots\nnodeB\n")
    assert "-f" in mpiexec_command(tmp_path / "spec.pkl", 5, hosts=hosts)


def test_uc_mmc_decodes_from_one_copy_of_every_part():
    code = uc_mmc(4, 2)
    assert code.n_messages == 8 and sorted(code.ready.tolist()) == [1] * 4 + [2] * 4
    first = np.flatnonzero(code.ready == 1)
    assert code.rule.decodable(np.isin(np.arange(8), first))
    assert code.is_decodable(first)
    assert not code.rule.decodable(np.isin(np.arange(8), first[:3]))


# ---------------------------------------------------------------------------------------------- MPI runs
mpi = [pytest.mark.mpi, pytest.mark.timeout(90)]


def _codes():
    return {"uncoded": schemes.build("uncoded", workers=4), "crc": schemes.build("crc", workers=4, stragglers=1),
            "frc": schemes.build("frc", workers=4, stragglers=1), "rs": rs(4, 1),
            "partial": schemes.build("partial", workers=4, stragglers=1, pieces=3),
            # two pieces per gradient (odd dimension: padded), and complex messages
            "ye-abbe": schemes.build("ye-abbe", workers=4, stragglers=1, comm=2),
            "rs-complex": schemes.build("rs", workers=4, stragglers=1, points="roots-of-unity"),
            "multimessage": uc_mmc(4, 2)}


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_decoded_gradients_equal_the_full_gradient():
    codes = _codes()  # (in one series: one job, the same ranks, runs every code)
    results = launch_series([_spec(code, iterations=2, dim=11) for code in codes.values()], job_timeout=60)
    assert len({tuple(sorted(r.pids.items())) for r in results}) == 1
    assert results[-1].returncode == 0 and all(r.returncode is None for r in results[:-1])  # the job's exit: the last's
    for (name, code), res in zip(codes.items(), results):
        assert res.ok, (name, res.error)
        assert len(res.records) == 2 and res.run_dir is None
        assert max(r["grad_error"] for r in res.records) < 1e-9, name
        # every decode's error amplification is recorded, and these small codes are well conditioned
        assert all(1 <= r["amplification"] < 1e3 for r in res.records), name
        assert res.warnings() == [] and res.summary()["untrusted_iterations"] == []
        # the decoded set really was decodable, and no more messages than the code has were used
        assert all(1 <= r["messages"] <= code.n_messages for r in res.records)
        # nothing lost: every message sent was used or drained
        assert res.messages_sent == res.messages_received == sum(r["messages"] for r in res.records) + res.drained


@pytest.mark.mpi
@pytest.mark.timeout(90)
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads signal masks from /proc")
def test_every_rank_ignores_hydras_sigusr1_once_mpi_is_up(tmp_path):
    # MPICH's handler of SIGUSR1 (Hydra's notice that a rank ended) makes the next MPI call wait for Hydra's PMI
    # server, which after a worker's death sometimes never answered: a rank must not run it.
    import signal

    from gclib.runtime.processes import rank_processes

    run_dir = tmp_path / "run"
    ignored = {}

    def look(record):
        if record["iteration"] == 0:
            for rank, pid in rank_processes(run_dir).items():
                fields = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                              if line.startswith("Sig"))
                bit = 1 << (signal.SIGUSR1 - 1)
                ignored[rank] = bool(int(fields["SigIgn"], 16) & bit) and not int(fields["SigCgt"], 16) & bit

    res = launch(_spec(schemes.build("crc", workers=3, stragglers=1), iterations=3), job_timeout=60,
                 run_dir=run_dir, progress=look)
    assert res.ok, res.error
    assert ignored == {0: True, 1: True, 2: True, 3: True}


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_runs_replay_from_their_seed():
    code = schemes.build("crc", workers=4, stragglers=1)
    a = launch(_spec(code, iterations=4), job_timeout=60)
    b = launch(_spec(code, iterations=4), job_timeout=60)
    np.testing.assert_array_equal(a.predicted, b.predicted)
    expect = predicted_times(code, sample_finish(MODEL, 4, 4, code.load, 3), 0.01)
    np.testing.assert_allclose(a.predicted, expect)
    np.testing.assert_allclose([r["loss"] for r in a.records], [r["loss"] for r in b.records], rtol=1e-10)
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-9, atol=1e-12)
    # measured times follow the injected delays (each iteration at least its predicted time)
    assert all(r["time"] >= r["predicted"] * 0.99 for r in a.records)


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_persistent_stragglers_within_tolerance_are_survived():
    code = schemes.build("crc", workers=4, stragglers=1)
    res = launch(_spec(code, iterations=3, model=Persistent(MODEL, workers=[2])), job_timeout=60)
    assert res.ok and len(res.records) == 3
    assert all(2 not in r["workers"] for r in res.records)
    assert max(r["grad_error"] for r in res.records) < 1e-9
    # the straggler abandoned every iteration when the master said it was decoded (the last one unless the master's
    # STOP came in the same look as its DONE: the worker then stops at once)
    assert res.abandoned[2] in (2, 3)
    # every message sent was received: used, or drained late
    assert res.messages_sent == res.messages_received > 0


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_too_many_stragglers_stop_with_a_clear_error_and_the_state_saved(tmp_path):
    code = schemes.build("crc", workers=4, stragglers=1)
    state = tmp_path / "state.json"
    with pytest.raises(RuntimeFailure, match="no decodable set") as err:
        launch(_spec(code, iterations=3, model=Persistent(MODEL, workers=[1, 2]), timeout=1.0),
               job_timeout=60, state_file=state)
    assert "tolerates 1 stragglers" in str(err.value)
    res = err.value.result
    assert res.status == "error" and res.records == [] and res.dead_workers == []
    saved = json.loads(state.read_text())
    assert saved["summary"]["status"] == "error" and len(saved["theta"]) == 10


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_a_dead_worker_is_a_straggler_that_never_answers(monkeypatch):
    import gclib.runtime.job as J
    from gclib.runtime.processes import shm_segments

    noted = []
    monkeypatch.setattr(J, "shm_segments", lambda pids: noted.append(shm_segments(pids)) or noted[-1])
    code = schemes.build("crc", workers=4, stragglers=1)
    res = launch(_spec(code, iterations=3, kill={3: 1}), job_timeout=60, check=False)
    # the ranks left without MPI_Finalize, which removes MPICH's shared memory: the launcher removed it after them
    if Path("/dev/shm").is_dir():  # (looked for at every watch of the job until found)
        assert set().union(*noted) and not any(Path(f).exists() for f in set().union(*noted)), noted
    assert res.ok, res.error
    assert len(res.records) == 3 and res.dead_workers == [3]
    assert res.returncode == 17  # mpiexec reports the dead rank's exit code (its guard exits with it)
    assert "died" in res.error and res.deaths[3]["code"] == 17 and res.deaths[3]["signal"] is None
    assert all(3 not in r["workers"] for r in res.records[1:])


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_series_runs_each_spec_as_alone_and_goes_on_in_a_new_job_after_a_run_that_lost_a_worker():
    code = schemes.build("crc", workers=4, stragglers=1)
    specs = [_spec(code, iterations=3), _spec(code, iterations=3, kill={3: 1}), _spec(code, iterations=3)]
    first, killed, after = launch_series(specs, job_timeout=60)
    alone = launch(specs[0], job_timeout=60)
    # the same injected delays, hence the same predicted times, and the same decoded updates as the run alone
    assert [r["predicted"] for r in first.records] == [r["predicted"] for r in alone.records]
    np.testing.assert_allclose(first.theta, alone.theta, rtol=1e-9, atol=1e-12)
    assert killed.ok and killed.dead_workers == [3] and killed.returncode == 17  # the first job ended with it
    assert first.pids == killed.pids and set(after.pids.values()).isdisjoint(first.pids.values())
    assert after.ok and after.dead_workers == [] and after.returncode == 0 and len(after.records) == 3


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_run_of_a_series_that_stops_early_ends_its_job_through_finalize_and_the_next_runs_in_a_new_one():
    from gclib.learning import GD

    code = schemes.build("crc", workers=4, stragglers=1)
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=0, n_samples=400, dim=10)
    diverges = RunSpec(code, problem, GD(1e308), MODEL, iterations=3, seed=3, time_scale=0.01, timeout=5.0)
    bad, good = launch_series([diverges, _spec(code, iterations=3)], job_timeout=60, check=False)
    assert bad.status == "diverged" and bad.dead_workers == [] and bad.returncode == 0  # every rank finalized
    assert good.ok and len(good.records) == 3 and good.returncode == 0
    assert set(good.pids.values()).isdisjoint(bad.pids.values())
    assert bad.run_dir is not None and (Path(bad.run_dir) / "stderr.txt").exists() and good.run_dir is None
    shutil.rmtree(bad.run_dir)  # (kept for the failed run, in the temporary directory)


def test_a_series_refuses_no_spec_and_specs_of_different_sizes():
    with pytest.raises(ValueError, match="at least one run"):
        launch_series([])
    small, large = schemes.build("crc", workers=4, stragglers=1), schemes.build("crc", workers=5, stragglers=1)
    with pytest.raises(ValueError, match=r"same number of ranks, got \[5, 6\]"):
        launch_series([_spec(small), _spec(large)])


@pytest.mark.mpi
@pytest.mark.timeout(60)
def test_the_launcher_kills_a_job_that_overruns():
    code = schemes.build("crc", workers=4, stragglers=1)
    spec = _spec(code, iterations=3, model=Persistent(MODEL, workers=[1, 2]), timeout=60.0)
    with pytest.raises(RuntimeFailure, match="job killed"):
        launch(spec, job_timeout=4.0)


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_cli_run_prints_json_per_iteration_and_total():
    cmd = [sys.executable, "-m", "gclib", "run", "--scheme", "crc", "--workers", "4", "--stragglers", "1",
           "--problem", "logistic", "--samples", "400", "--dim", "10", "--iterations", "3", "--time-scale",
           "0.01", "--seed", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=80, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["records"]) == 3
    for key in ("time", "predicted", "messages", "loss", "auc"):
        assert key in doc["records"][0]
    assert doc["summary"]["iterations"] == 3 and doc["summary"]["total_time"] > 0


def test_cli_rejects_bad_arguments():
    cmd = [sys.executable, "-m", "gclib", "run", "--scheme", "crc", "--workers", "4", "--stragglers", "1",
           "--problem", "nope"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and out.stderr.startswith("gclib: error: argument --problem: invalid choice: 'nope'")


@pytest.mark.mpi
@pytest.mark.timeout(60)
def test_a_hostfile_is_passed_through(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost:5\n")
    res = launch(_spec(schemes.build("crc", workers=4, stragglers=1), iterations=2), hosts=hosts, job_timeout=40)
    assert res.ok and len(res.records) == 2


class _FakeComm:
    """Just enough of an MPI communicator for the master's receive path: a queue of (source, tag, data); data
    ``None`` is a message whose receive never completes (its sender died in the middle of it)."""

    def __init__(self, queue):
        self.queue = list(queue)

    def Improbe(self, source, tag, status):
        if not self.queue:
            return None
        status.source, status.tag, data = self.queue.pop(0)
        status.count = 0 if data is None else len(data)
        return _FakeMessage(data)


class _FakeMessage:
    def __init__(self, data):
        self.data = data

    def Irecv(self, buf):
        arr = buf[0] if isinstance(buf, list) else buf
        if self.data is not None:
            arr[:len(self.data)] = self.data
        return _FakeRequest(self.data is not None)


class _FakeRequest:
    def __init__(self, done):
        self.done = done

    def Test(self):
        return self.done


class _FakeStatus:
    def Get_source(self):
        return self.source

    def Get_tag(self):
        return self.tag

    def Get_count(self, datatype=None):
        return self.count


def _receiving_master(queue, width):
    """A master without MPI whose receive path takes in ``queue`` (see :class:`_FakeComm`), gradient payloads
    ``width`` long."""
    from types import SimpleNamespace

    from gclib.runtime import protocol as P
    from gclib.runtime.master import Master

    m = object.__new__(Master)
    m.MPI = SimpleNamespace(Status=_FakeStatus, ANY_SOURCE=-1, ANY_TAG=-1, DOUBLE=None, Exception=RuntimeError)
    m.comm, m.byes, m.pids, m.received_total, m.stale = _FakeComm(queue), {}, {}, 0, 0
    m.hosts, m.tasks, m.belled, m.ready = {}, [], set(), set()
    m.inflight, m.dead, m.width_buf, m.dtype = [], {}, P.HEADER + width, float
    m.K, m.owed, m.silent, m.skip, m.probes, m.frozen = 8, [0] * 8, {}, set(), 2, set()
    return m


def test_master_receive_path_tells_late_hellos_byes_and_stale_gradients_from_gradients():
    from gclib.runtime import protocol as P
    from gclib.runtime.master import Gradient, Poll

    grad = np.array([0.0, 2.0, 0.1, 0.2, 7.0, 8.0, 9.0])  # iteration 0, message 2, clock, compute, payload
    m = _receiving_master([(3, P.TAG_HELLO, [1234.0, 1.0, 2.0, 104.0, 49.0, 0.0, 0.0]), (3, P.TAG_READY, [0.0]),
                           (1, P.grad_tag(0), grad),
                           (2, P.TAG_BYE, [5.0, 1.0]), (1, P.TAG_TASKS, [0.0, 0.5, 0.75]),
                           (4, P.grad_tag(0), grad), (2, P.grad_tag(1), None), (3, P.grad_tag(1), grad)], width=3)
    assert m._receive_one(0) is Poll.BUSY and m.received_total == 0 and m.stale == 0  # the hello is not a gradient
    # ... it carries the worker's pid, whether it shares the master's bell, and its host name
    assert m.pids == {2: 1234} and m.belled == {2} and m.hosts == {2: "h1"}
    assert m._receive_one(0) is Poll.BUSY and m.ready == {2} and m.received_total == 0  # its start-up is over
    got = m._receive_one(0)
    assert isinstance(got, Gradient)
    msg, payload, _ = got
    assert msg == 2 and payload.tolist() == [7.0, 8.0, 9.0] and m.received_total == 1
    assert m._receive_one(0) is Poll.BUSY and m.byes == {1: (5, 1)}
    # a task report is stored, not counted as a gradient
    assert m._receive_one(0) is Poll.BUSY and m.received_total == 1
    assert [[w, it, t.tolist()] for w, it, t in m.take_tasks()] == [[0, 0, [0.5, 0.75]]] and m.tasks == []
    # in iteration 1, a gradient of iteration 0 is late: drained and counted, not returned
    assert m._receive_one(1) is Poll.BUSY and m.stale == 1 and m.received_total == 2
    # a message whose data never comes (its sender died in the middle) holds up nothing: it stays in flight
    assert m._receive_one(1) is Poll.BUSY and len(m.inflight) == 1
    msg, payload, _ = m._receive_one(1)
    assert msg == 2 and len(m.inflight) == 1
    # the stuck receive is tested again and again, never waited for: "nothing happened", so the master sleeps
    assert m._receive_one(1) is Poll.IDLE and m._receive_one(1) is Poll.IDLE and len(m.inflight) == 1


class _LateComm(_FakeComm):
    """A :class:`_FakeComm` whose messages arrive only ``after`` seconds from now (a rank still importing)."""

    def __init__(self, queue, after):
        super().__init__(queue)
        self.at = time.perf_counter() + after

    def Improbe(self, source, tag, status):
        return super().Improbe(source, tag, status) if time.perf_counter() >= self.at else None


def _starting_master(K, comm):
    """A master without MPI at its start, ``K`` workers, messages from ``comm``, nobody telling it of deaths."""
    from types import SimpleNamespace

    m = _receiving_master([], width=1)
    m.K, m.owed, m._deaths, m.comm = K, [0] * K, None, comm
    m.spec = SimpleNamespace(stop_timeout=0.01, named=False, poll=1e-4)
    return m


def test_the_master_waits_at_the_start_for_a_worker_slower_than_the_stop_timeout(monkeypatch):
    """A worker whose start-up ends after ``stop_timeout`` (its imports on a crowded host) is still waited for
    before the first iteration, up to START_WAIT more, so that it is not silent from the start and reported as never
    having said goodbye; a worker known dead is not waited for, and neither is anyone once START_WAIT is spent."""
    from gclib.runtime import master as M
    from gclib.runtime import protocol as P

    m = _starting_master(3, _LateComm([(1, P.TAG_READY, [0.0]), (2, P.TAG_READY, [0.0])], after=0.2))
    m.dead, m.skip = {2: {"signal": 9}}, {2}  # worker 2 died: the wait ends when 0 and 1 are ready
    t0 = time.perf_counter()
    m.await_ready()
    assert m.ready == {0, 1} and time.perf_counter() - t0 >= 0.2
    monkeypatch.setattr(M, "START_WAIT", 0.05)  # a worker that never starts: the wait ends all the same
    m = _starting_master(2, _FakeComm([(1, P.TAG_READY, [0.0])]))
    t0 = time.perf_counter()
    m.await_ready()
    assert m.ready == {0} and 0.06 <= time.perf_counter() - t0 < 5


class _FakeControl:
    """Just enough of a worker's persistent control receive: each ``Test`` of a started request completes with
    the next queued ``(tag, data)`` (written into the buffer), else fails; ``Start`` posts it again."""

    def __init__(self, buf, queue):
        self.buf, self.queue, self.active, self.starts = buf, list(queue), True, 0

    def Test(self, status):
        if not self.active or not self.queue:
            return False
        status.tag, data = self.queue.pop(0)
        self.buf[:len(data)] = data
        self.active = False
        return True

    def Start(self):
        assert not self.active, "a receive started twice"
        self.active, self.starts = True, self.starts + 1


def _controlled_worker(queue, monkeypatch):
    from gclib.runtime import worker as W

    w = object.__new__(W.Worker)
    w.params_buf = np.zeros(4)
    w.control, w.control_status, w.control_posted = _FakeControl(w.params_buf, queue), _FakeStatus(), True
    w.final, w.handed, w.sends, w.slice, w.received_at = W.LastWord.AWAITED, False, [], 1e-3, 0.0
    w.tests, w.end_spin, w.take_in_yield = 2, W.END_SPIN, W.TAKE_IN_YIELD
    handed = []
    monkeypatch.setattr(W, "hand_over_sockets", lambda: handed.append(1) or 0)
    return w, handed


def test_worker_takes_control_messages_through_its_posted_receive(monkeypatch):
    from gclib.runtime import protocol as P
    from gclib.runtime.worker import LastWord, Params, _Stop

    # the master's hello, then two parameters in a row: the newest wins, and the hello hands over the sockets once
    w, handed = _controlled_worker([(P.TAG_HELLO, [0.0]), (P.TAG_PARAMS, [3.0, 1.0, 2.0, 3.0]),
                                    (P.TAG_PARAMS, [4.0, 5.0, 6.0, 7.0])], monkeypatch)
    got = w._receive_control()
    assert isinstance(got, Params)
    it, theta = got
    assert it == 4 and theta.tolist() == [5.0, 6.0, 7.0] and w.received_at > 0
    assert handed == [1] and w.handed and w.control.starts == 3 and w.control.active  # posted again each time
    theta_copy = theta.copy()
    w.params_buf[:] = -1.0  # the next message overwrites the buffer: what was returned is a copy
    assert theta.tolist() == theta_copy.tolist()
    assert w._receive_control() is None  # nothing waiting
    # stop: say goodbye with the receive posted again (the last word follows); final: the receive is left done
    w, _ = _controlled_worker([(P.TAG_STOP, [0.0]), (P.TAG_FINAL, [0.0])], monkeypatch)
    with pytest.raises(_Stop):
        w._receive_control()
    assert w.control.active and w.control_posted and w.final is LastWord.AWAITED
    with pytest.raises(_Stop):
        w._receive_control()
    assert w.final is LastWord.CLEAN and not w.control_posted and not w.control.active
    assert w._receive_control() is None  # no receive posted any more: nothing is tested


class _TimedControl(_FakeControl):
    """A control receive whose queued ``(time, tag, data)`` messages arrive at ``time`` (``perf_counter``)."""

    def Test(self, status):
        if self.active and self.queue and time.perf_counter() >= self.queue[0][0]:
            self.queue[0] = self.queue[0][1:]
            return super().Test(status)
        return False


def _working_worker(finish, control, monkeypatch):
    """Worker 1 of CRC (4 workers, 1 straggler) without MPI, its tasks ending ``finish[it]`` seconds after the
    parameters arrived, its control messages from ``control`` (``(time, tag, data)``); returns it and the list
    of what it sends, ``(tag, data)``."""
    import collections
    from types import SimpleNamespace

    from gclib.runtime import protocol as P
    from gclib.runtime import worker as W

    code = schemes.build("crc", workers=4, stragglers=1)
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=0, n_samples=400, dim=3)
    w, _ = _controlled_worker([], monkeypatch)
    w.control = _TimedControl(w.params_buf, control)
    sent = []
    w.comm = SimpleNamespace(Isend=lambda arr, dest, tag: sent.append((tag, np.array(arr)))
                             or SimpleNamespace(Test=lambda: True))
    w.spec, w.code, w.w, w.dim = SimpleNamespace(kill={}, problem=problem), code, 1, problem.dim
    w.order, w.msgs = code.order[1], code.messages_of(1)
    w.width, w.dtype = P.message_width(code, problem.dim), P.message_dtype(code)
    w.finish, w.lead, w.recent = np.asarray(finish, dtype=float), 0.0, collections.deque(maxlen=4)
    w.decoded, w.current, w.bell, w.sent, w.abandoned = -1, W.IDLE, None, 0, 0
    return w, sent


def test_a_worker_stops_an_iteration_when_the_master_says_it_is_decoded(monkeypatch):
    from gclib.runtime import protocol as P
    from gclib.runtime import worker as W

    theta = np.zeros(3)
    # the first task ends at 0.05 s, the second would at 5 s; the master's DONE of the iteration comes at 0.3 s
    t0 = time.perf_counter()
    w, sent = _working_worker([[0.05, 5.0]], [(t0 + 0.3, P.TAG_DONE, [0.0])], monkeypatch)
    w.received_at = t0
    assert w.iterate(0, theta) is None and time.perf_counter() - t0 < 2.0
    assert w.abandoned == 1 and w.current == W.IDLE and w.decoded == 0
    assert [tag for tag, _ in sent] == [P.TAG_TASKS]  # CRC sends after its last task: nothing but the report
    report = sent[0][1]
    assert report[0] == 0 and len(report) == 2 and 0.05 <= report[1] < 0.3  # the first task only
    # a DONE of an older iteration stops nothing: iteration 1 runs to its end
    t0 = time.perf_counter()
    w, sent = _working_worker([[5.0, 5.0], [0.02, 0.04]], [(t0, P.TAG_DONE, [0.0])], monkeypatch)
    w.received_at = t0
    assert w.iterate(1, theta) is None and w.abandoned == 0 and w.decoded == 0
    tags = [tag for tag, _ in sent]
    assert tags == [P.grad_tag(1), P.TAG_TASKS] and len(sent[1][1]) == 3 and sent[1][1][0] == 1
    # parameters taken in with their iteration's DONE already there (a late worker): no task is computed
    t0 = time.perf_counter()
    w, sent = _working_worker([[0.0, 0.0]], [(t0, P.TAG_DONE, [0.0])], monkeypatch)
    w.received_at = t0
    assert w._receive_control() is None and w.decoded == 0
    assert w.iterate(0, theta) is None and w.abandoned == 1
    assert [(tag, data.tolist()) for tag, data in sent] == [(P.TAG_TASKS, [0.0])]


def test_a_worker_takes_newer_parameters_and_reports_a_never_in_its_first_sleep(monkeypatch):
    from gclib.runtime import protocol as P

    theta = np.zeros(3)
    # newer parameters already waiting when the worker starts iteration 0: it returns them from its first sleep,
    # computes and sends nothing of iteration 0 but the report of no task
    t0 = time.perf_counter()
    w, sent = _working_worker([[0.01, 0.02]], [(t0, P.TAG_PARAMS, [1.0, 4.0, 5.0, 6.0])], monkeypatch)
    w.received_at = t0
    it, new_theta = w.iterate(0, theta)
    assert it == 1 and new_theta.tolist() == [4.0, 5.0, 6.0] and w.abandoned == 1
    assert [(tag, data.tolist()) for tag, data in sent] == [(P.TAG_TASKS, [0.0])]
    # an injected "never" from the first task on is reported as such even when the iteration stops before it
    w, sent = _working_worker([[np.inf, np.inf]], [(t0, P.TAG_DONE, [0.0])], monkeypatch)
    w.received_at = time.perf_counter()
    assert w.iterate(0, theta) is None and w.abandoned == 1
    assert [(tag, data.tolist()) for tag, data in sent] == [(P.TAG_TASKS, [0.0, np.inf, np.inf])]
    # ... and once only when it was reported before the stop: a persistent straggler waiting for its DONE
    t0 = time.perf_counter()
    w, sent = _working_worker([[np.inf, np.inf]], [(t0 + 0.05, P.TAG_DONE, [0.0])], monkeypatch)
    w.received_at = t0
    assert w.iterate(0, theta) is None and w.abandoned == 1
    assert [(tag, data.tolist()) for tag, data in sent] == [(P.TAG_TASKS, [0.0, np.inf, np.inf])]


def test_the_master_takes_in_what_came_between_iterations_before_the_clock():
    from gclib.runtime import protocol as P

    grad = np.array([0.0, 1.0, 0.1, 0.2, 7.0])
    m = _receiving_master([(1, P.grad_tag(0), grad), (2, P.TAG_TASKS, [0.0, 0.5]), (3, P.grad_tag(0), grad)],
                          width=1)
    t0 = time.perf_counter()
    m.take_in_late(limit=5.0)  # returns as soon as nothing waits, long before its limit
    assert time.perf_counter() - t0 < 2.0
    assert m.stale == 2 and m.received_total == 2 and len(m.tasks) == 1 and m.inflight == [] and not m.comm.queue
    # a message whose data never comes (its sender died in the middle) holds the master up no longer than the limit
    m.comm = _FakeComm([(1, P.grad_tag(1), None)])
    t0 = time.perf_counter()
    m.take_in_late(limit=0.05)
    assert 0.05 <= time.perf_counter() - t0 < 2.0 and len(m.inflight) == 1
    # ... and not at all once the master knows that sender is dead
    m.dead, m.skip = {0: {"cause": "killed"}}, {0}
    t0 = time.perf_counter()
    m.take_in_late(limit=5.0)
    assert time.perf_counter() - t0 < 2.0 and len(m.inflight) == 1


class _SendingComm(_FakeComm):
    """A fake communicator that also records the master's sends: ``sent[dest]`` is the list of their tags; the
    sends never complete (as to a rank that never takes them in)."""

    def __init__(self, queue=()):
        super().__init__(queue)
        self.sent = {}

    def Isend(self, arr, dest, tag):
        self.sent.setdefault(dest, []).append(tag)
        return _FakeRequest(False)


def test_the_master_stops_sending_to_a_worker_that_does_not_answer_and_starts_again_when_it_does():
    """A frozen worker (alive, answering nothing) is sent at most SILENT_AFTER messages however long the run: the
    MPI send buffers of the master are few and shared by every destination. Once it answers, it gets what it
    missed of the present: the parameters of the iteration under way, or the stop."""
    from gclib.runtime import protocol as P
    from gclib.runtime.master import SILENT_AFTER, Poll

    m = _receiving_master([], width=1)
    m.K, m.owed, m.bell, m.sends = 3, [0] * 3, None, []
    m.comm = _SendingComm()
    for it in range(100):  # worker 1 never answers; workers 0 and 2 answer every iteration
        m._send_all(np.array([float(it), 0.0]), P.TAG_PARAMS)
        m._send_all(np.array([float(it)]), P.TAG_DONE)
        m.comm.queue += [(1, P.TAG_TASKS, [float(it), 0.1]), (3, P.TAG_TASKS, [float(it), 0.1])]
        while m._receive_one(it) is not Poll.IDLE:
            pass
    sent = m.comm.sent
    assert len(sent[2]) == SILENT_AFTER and len(sent[1]) == len(sent[3]) == 200
    assert m.silent.keys() == {1} and "no message for the last 6 sent to it" in m.silent[1]
    assert len(m.sends) == 200 + 200 + SILENT_AFTER  # nothing grows with the iterations worker 1 does not answer
    # it answers during an iteration: it gets that iteration's parameters at once, then everything again
    m.params = np.array([100.0, 0.0])
    m.comm.queue = [(2, P.TAG_TASKS, [3.0, 0.1])]
    m._receive_one(100)
    assert m.silent == {} and m.skip == set() and sent[2][SILENT_AFTER:] == [P.TAG_PARAMS] and m.owed[1] == 1
    m.params = None
    m._send_all(np.array([100.0]), P.TAG_DONE)
    assert sent[2][-1] == P.TAG_DONE
    # silent again, then it answers during the stop: it gets the stop
    for _ in range(SILENT_AFTER + 2):
        m._send_all(np.array([0.0]), P.TAG_DONE)
        m.comm.queue += [(1, P.TAG_TASKS, [3.0, 0.1]), (3, P.TAG_TASKS, [3.0, 0.1])]
        while m._receive_one(-1) is not Poll.IDLE:
            pass
    assert m.silent.keys() == {1}
    m.stopping = True
    m.comm.queue = [(2, P.TAG_TASKS, [3.0, 0.1])]
    m._receive_one(-1)
    assert sent[2][-1] == P.TAG_STOP and m.silent == {}


def test_the_master_silences_a_stopped_worker_at_once_and_stops_when_the_launcher_is_gone():
    """The launcher passes on the guards' word that a worker was stopped (SIGSTOP) or continued, and its deaths;
    when it closes the master's standard input (it is gone), the master knows nobody follows the run."""
    from gclib.runtime import protocol as P
    from gclib.runtime.master import DeathNotices, IterationTimeout, ORPHANED
    from gclib.runtime.receive import Book, receive

    r, w = os.pipe()
    m = _receiving_master([], width=1)
    m.K, m.owed, m.bell, m.sends, m._deaths, m._deaths_seen = 3, [0] * 3, None, [], DeathNotices(r), 0.0
    m.comm = _SendingComm()
    m.code, m.spec = schemes.build("crc", workers=3, stragglers=1), SimpleNamespace(time_scale=0.01)
    m.finish = np.ones((2, 3, m.code.load))
    m.finish[:, 1] = 10.0  # worker 1 is the slow one: without worker 0, every iteration waits for it
    m.predicted = predicted_times(m.code, m.finish, 0.01)
    before = m.predicted.copy()
    os.write(w, b'{"worker": 2, "stopped": "SIGSTOP"}\n')
    assert m.check_deaths(force=True) and m.silent == {2: "stopped (SIGSTOP)"} and m.dead == {}
    m._send_all(np.zeros(2), P.TAG_PARAMS)
    assert 3 not in m.comm.sent and m.comm.sent.keys() == {1, 2}
    # a message it sent before it stopped, arriving after the notice (from another host), leaves it silent
    m.comm.queue = [(3, P.TAG_TASKS, [0.0, 0.1])]
    m._receive_one(0)
    assert m.silent == {2: "stopped (SIGSTOP)"} and 3 not in m.comm.sent
    m.params, m.stopping = np.zeros(2), False
    os.write(w, b'{"worker": 2, "continued": true}\n{"worker": 0, "signal": 9, "name": "SIGKILL"}\n')
    assert m.check_deaths(force=True) and m.silent == {} and m.dead.keys() == {0} and m.skip == {0}
    assert m.comm.sent[3] == [P.TAG_PARAMS]  # once it continues, it gets the parameters it missed
    assert (m.predicted > before).all()  # from now on the prediction takes worker 0 as a straggler
    assert not m.orphaned
    os.close(w)
    assert m.check_deaths(force=True) and m.orphaned
    m.code, m.spec = m.code, SimpleNamespace(wait_all=False, poll=0.0, timeout=1.0, time_scale=0.01)
    with pytest.raises(IterationTimeout, match="the launcher is gone"):
        receive(m, 0, Book(), time.perf_counter() + 5)
    assert "nobody records the run" in ORPHANED
    os.close(r)


def test_a_worker_rings_the_master_for_messages_but_not_for_task_reports():
    from types import SimpleNamespace

    from gclib.runtime import wakeup as B
    from gclib.runtime import protocol as P
    from gclib.runtime.worker import Worker

    rings = []
    w = object.__new__(Worker)
    w.comm = SimpleNamespace(Isend=lambda arr, dest, tag: SimpleNamespace(Test=lambda: True))
    w.sends, w.bell = [], SimpleNamespace(ring=rings.append)
    w._isend(np.zeros(3), 0, P.TAG_TASKS)
    assert rings == [] and len(w.sends) == 1  # sent, silently: the master takes it in at its next look
    w._isend(np.zeros(3), 0, P.grad_tag(5))
    assert rings == [B.TO_MASTER] and len(w.sends) == 2


def test_the_master_sleeps_long_only_when_every_worker_alive_rings_its_bell():
    from types import SimpleNamespace

    from gclib.runtime import protocol as P
    from gclib.runtime.master import Master

    m = object.__new__(Master)
    m.K, m.spec, m.dead = 3, SimpleNamespace(poll=1e-4), {}
    m.bell, m.belled = object(), {0, 1, 2}
    assert m._wait_slice() == pytest.approx(P.BELL_SLICE_POLLS * 1e-4)
    m.belled = {0, 2}  # worker 1 is on another host: it sends without ringing
    assert m._wait_slice() == pytest.approx(1e-4)
    m.dead = {1: "killed"}  # ... unless it is dead
    assert m._wait_slice() == pytest.approx(P.BELL_SLICE_POLLS * 1e-4)
    m.bell = None  # no bell at all
    assert m._wait_slice() == pytest.approx(1e-4)


def _collecting_master(code, arrivals, cls=None, kept=None):
    """A master (of class ``cls``, default :class:`~gclib.runtime.master.Master`) without MPI whose receive path hands
    out ``arrivals`` (``None``: nothing arrived this poll; ``(message id, payload)``: a gradient of the current
    iteration), its decodes remembering ``kept`` sets (default :data:`~gclib.runtime.decoding.DECODERS_KEPT`)."""
    from types import SimpleNamespace

    from gclib.runtime import protocol as P
    from gclib.runtime.decoding import DECODERS_KEPT, Decoding
    from gclib.runtime.master import Gradient, Master, Poll

    m = object.__new__(cls or Master)
    m.code, m.dead, m._deaths, m.bell = code, {}, None, None
    m.decoding = Decoding(code, kept=DECODERS_KEPT if kept is None else kept)
    m.silent, m.skip, m.orphaned, m.frozen = {}, set(), False, set()
    m.spec = SimpleNamespace(wait_all=False, poll=0.0)
    m.width, m.dtype = 1, P.message_dtype(code)
    script = iter(Poll.IDLE if a is None else Gradient(a[0], a[1], None) for a in arrivals)
    m._receive_one = lambda it: next(script, Poll.IDLE)
    return m


def _collect(master):
    """The messages of iteration 0 until they decode, through the master's one receive loop and its book."""
    from gclib.runtime.receive import receive

    return receive(master, 0, master.book(0), np.inf)


def _first_decodable(code, order):
    received = np.zeros(code.n_messages, dtype=bool)
    for k, msg in enumerate(order):
        received[msg] = True
        if code.rule.decodable(received):
            return received, k
    raise AssertionError("the order never decodes")


class _Batched:
    """A rule without a tracker (the master's other path): it answers many sets at once."""

    def __init__(self, rule):
        self.rule = rule

    def decodable(self, received):
        return self.rule.decodable(received)


class _OneAtATime(_Batched):
    """A rule without a tracker that answers one set at a time."""

    def decodable(self, received):
        received = np.asarray(received)
        if received.ndim != 1:
            raise ValueError("one set at a time")
        return self.rule.decodable(received)


def _with_rule(code, rule):
    """A copy of ``code`` with ``rule`` as its rule."""
    import copy

    code = copy.copy(code)
    object.__setattr__(code, "rule", rule)
    return code


@pytest.mark.parametrize("tracked", [True, False], ids=["tracker", "batched"])
@pytest.mark.parametrize("scheme", ["uncoded", "crc", "gc-mmc", "uc-mmc", "rs"])
def test_master_decodes_ahead_while_idle_and_stops_at_the_first_decodable_set(scheme, tracked):
    from benchmarks.bench_runtime import scheme_codes

    code = scheme_codes(8, 1)[scheme]
    assert hasattr(code.rule, "tracker")
    if not tracked:
        code = _with_rule(code, _Batched(code.rule))
    rng = np.random.default_rng(3)
    G = rng.standard_normal((code.n_parts, 1))
    messages = code.encode(G)  # (n_messages, 1)
    for trial in range(20):
        order = rng.permutation(code.n_messages)
        want, last = _first_decodable(code, order)
        idle = trial % 2 == 0  # every other trial: messages back to back, no idle poll to decode ahead in
        arrivals = []
        for msg in order:
            arrivals.append((int(msg), messages[msg]))
            if idle:
                arrivals.extend([None] * code.n_messages)  # time for every completing set
        master = _collecting_master(code, arrivals)
        got = _collect(master)
        received, payload, ahead = got.received, got.payload, got.ahead
        assert received.tolist() == want.tolist()  # the same set as the rule's first decodable prefix
        ids, A = master.decoding.decode(np.flatnonzero(received)) if ahead is None else ahead
        if idle and last > 0:
            assert ahead is not None, "the completing set was not decoded while the master was idle"
        assert set(ids.tolist()) <= set(np.flatnonzero(received).tolist())
        assert np.allclose(A @ code.B[ids], code.target, atol=1e-8)
        grad = code.combine(A, payload[ids], 1)
        assert np.allclose(grad, G.sum(axis=0), atol=1e-8)


def test_master_asks_the_rule_set_by_set_when_it_cannot_answer_many_at_once():
    from benchmarks.bench_runtime import scheme_codes

    code = scheme_codes(8, 1)["gc-mmc"]
    code = _with_rule(code, _OneAtATime(code.rule))
    rng = np.random.default_rng(5)
    order = rng.permutation(code.n_messages)
    want, _ = _first_decodable(code, order)
    G = rng.standard_normal((code.n_parts, 1))
    messages = code.encode(G)
    arrivals = [x for msg in order for x in ((int(msg), messages[msg]), None)]
    master = _collecting_master(code, arrivals)
    got = _collect(master)
    assert got.received.tolist() == want.tolist() and got.ahead is None


def test_an_iteration_takes_in_late_messages_before_its_clock_and_says_done_after_its_step(monkeypatch):
    from types import SimpleNamespace

    from gclib.runtime import master as M
    from gclib.runtime import protocol as P
    from gclib.runtime.receive import Collected

    code = schemes.build("uncoded", workers=2)
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=0, n_samples=40, dim=2)
    step = TandonAGD(1.0 / problem.smoothness)
    events = []  # what the master did, in order, with the clock's readings in between
    clock = iter(range(100, 1000))
    monkeypatch.setattr(M.time, "perf_counter", lambda: events.append("clock") or float(next(clock)))
    m = object.__new__(M.Master)
    m.spec, m.code, m.dim, m.stale, m.drain_time = SimpleNamespace(step=step, timeout=5.0), code, 2, 0, 0.0
    m.predicted, m.sends = np.array([1.0]), []
    m.take_in_late = lambda: events.append("late")
    received = np.ones(code.n_messages, dtype=bool)
    payload = np.ones((code.n_messages, 2))

    class Book:  # what the iteration asks its book, in order
        def gradient(self, got):
            events.append("gradient")
            return got.payload.sum(axis=0)

        def record(self):
            return {"messages": int(received.sum()), "workers": [0, 1], "amplification": 1.0}

    m.book = lambda it: events.append("prepare") or Book()
    m._send_all = lambda arr, tag: events.append((tag, arr.tolist()))
    monkeypatch.setattr(M, "receive", lambda master, it, book, deadline: events.append("collect")
                        or Collected(received, payload, 0.0, 0.0, 0.0))
    rec, grad, y, theta, state = m.iteration(0, step.init(np.zeros(2)))
    sends = [e for e in events if isinstance(e, tuple)]
    assert [tag for tag, _ in sends] == [P.TAG_PARAMS, P.TAG_DONE] and sends[1][1] == [0.0]
    # the late messages and the set's preparation come before the clock starts; DONE goes after it stops
    start = events.index("clock")
    assert events.index("late") < events.index("prepare") < start < events.index(sends[0])
    done = events.index(sends[1])
    assert "clock" in events[events.index("collect"):done] and "clock" not in events[done:]
    assert rec["time"] > 0 and rec["messages"] == code.n_messages and grad.tolist() == [2.0, 2.0]
    assert list(rec) == ["iteration", "time", "predicted", "messages", "stale", "bcast", "wait", "decode", "step",
                         "drain", "checks", "workers", "amplification"]  # the order --json prints them in


# ---------------------------------------------------------------------------------------------- the A/B arms
def test_an_arm_leaves_out_only_mechanisms_it_knows_by_name():
    """The arms of the A/B benchmarks (benchmarks/runtime_arms.py) are specs of their own; the runtime's spec knows
    nothing of them."""
    from benchmarks.runtime_arms import MECHANISMS, ArmSpec

    code = schemes.build("uncoded", workers=4)
    assert _spec(code, cls=ArmSpec).left_out == ()  # every mechanism on by default
    assert _spec(code, cls=ArmSpec, left_out=["probe2", "bell"]).left_out == ("bell", "probe2")
    assert _spec(code, cls=ArmSpec, left_out="lead, cache").left_out == ("cache", "lead")
    with pytest.raises(ValueError, match=r"unknown runtime mechanisms \['nope'\]; the known ones are bell, probe2, "
                                         r"spin, yield, lead, cache, ahead, freeze, slack, guard"):
        _spec(code, cls=ArmSpec, left_out=["bell", "nope"])
    spec = _spec(code, cls=ArmSpec, left_out=",".join(MECHANISMS))
    assert set(spec.left_out) == set(MECHANISMS) and spec.describe()["left_out"] == sorted(MECHANISMS)
    plain = _spec(code)
    assert "left_out" not in plain.describe() and "without" not in plain.describe()
    with pytest.raises(TypeError):
        _spec(code, without=["bell"])  # (the runtime's spec has no switch)


def _mpi_free(monkeypatch):
    """Rank.__init__ without MPI: a fake communicator and MPI module (for the ranks' classes' own set-up)."""
    from gclib.runtime import protocol as P

    class Request:
        def Start(self):
            pass

    def init(self, comm, spec):
        self.MPI = SimpleNamespace(Status=_FakeStatus, ANY_TAG=-1, DOUBLE=None, Exception=RuntimeError)
        self.comm, self.spec, self.code, self.dim = comm, spec, spec.code, spec.problem.dim
        self.width, self.dtype, self.sends = P.message_width(self.code, self.dim), P.message_dtype(self.code), []

    monkeypatch.setattr(P.Rank, "__init__", init)
    return SimpleNamespace(Get_rank=lambda: 1, Recv_init=lambda *a, **k: Request())


def test_an_arms_ranks_leave_out_their_mechanisms_and_the_baselines_keep_them(monkeypatch):
    import gc

    from benchmarks.runtime_arms import MECHANISMS, ArmSpec, NotAhead
    from gclib.runtime import protocol, wakeup, worker
    from gclib.runtime.decoding import DECODERS_KEPT

    comm = _mpi_free(monkeypatch)
    settled = []
    monkeypatch.setattr(gc, "freeze", lambda: settled.append("freeze"))
    slack = SimpleNamespace(prctl=lambda *a: settled.append("slack"))
    monkeypatch.setattr(protocol.ctypes, "CDLL", lambda *a, **k: slack)
    monkeypatch.setattr(wakeup, "make", lambda: "a bell")
    code = schemes.build("crc", workers=4, stragglers=1)
    for left in ((), tuple(MECHANISMS)):
        spec = _spec(code, cls=ArmSpec, left_out=left)
        master_cls, worker_cls = spec.roles()
        finish = sample_finish(MODEL, spec.iterations, 4, code.load, 3)
        m, w = master_cls(comm, spec, finish), worker_cls(comm, spec, finish)
        settled.clear()
        m.settle()
        w.settle()
        if not left:  # the baseline: every mechanism of the runtime's own classes
            assert master_cls.make_bell() == "a bell" and m.probes == 2 and m.decoding.kept == DECODERS_KEPT
            assert type(m.book(0)).__name__ == "Collect" and settled == ["freeze", "slack"] * 2
            assert (w.tests, w.end_spin, w.take_in_yield, w.lead) == (2, worker.END_SPIN, worker.TAKE_IN_YIELD,
                                                                      worker.LEAD_START)
            w.learn_lead(0.01)
            assert w.lead == pytest.approx(worker.LEAD_MARGIN * 0.01)
        else:  # every one left out: the plain polling loop
            assert master_cls.make_bell() is None and m.probes == 1 and m.decoding.kept == 0
            assert isinstance(m.book(0), NotAhead) and m.book(0).todo == [] and settled == []
            assert (w.tests, w.end_spin, w.take_in_yield, w.lead) == (1, 0.0, 0.0, np.inf)
            w.learn_lead(0.01)
            assert w.lead == np.inf


class _CountingComm(_FakeComm):
    def __init__(self, queue=()):
        super().__init__(queue)
        self.probes = 0

    def Improbe(self, source, tag, status):
        self.probes += 1
        return super().Improbe(source, tag, status)


def test_without_the_double_probe_the_master_probes_once_and_a_worker_tests_once(monkeypatch):
    from gclib.runtime.master import Poll

    m = _receiving_master([], width=1)
    m.comm = _CountingComm()
    assert m._receive_one(0) is Poll.IDLE and m.comm.probes == 2
    m.probes, m.comm.probes = 1, 0
    assert m._receive_one(0) is Poll.IDLE and m.comm.probes == 1

    class Counting(_FakeControl):
        tested = 0

        def Test(self, status):
            self.tested += 1
            return super().Test(status)

    w, _ = _controlled_worker([], monkeypatch)
    w.control = Counting(w.params_buf, [])
    assert w._receive_control() is None and w.control.tested == 2
    w.tests, w.control.tested = 1, 0
    assert w._receive_control() is None and w.control.tested == 1


@pytest.mark.parametrize("scheme", ["uncoded", "gc-mmc", "rs"])
def test_without_the_decoder_cache_and_decoding_ahead_the_master_decodes_after_the_arrival_as_exactly(scheme):
    from benchmarks.bench_runtime import scheme_codes
    from benchmarks.runtime_arms import ArmMaster

    NotAheadMaster = type("ArmMaster", (ArmMaster,), {"left_out": frozenset({"cache", "ahead"})})

    code = scheme_codes(8, 1)[scheme]
    rng = np.random.default_rng(7)
    G = rng.standard_normal((code.n_parts, 1))
    messages = code.encode(G)
    for trial in range(6):
        order = rng.permutation(code.n_messages)
        want, _ = _first_decodable(code, order)
        arrivals = [x for msg in order for x in ((int(msg), messages[msg]), *[None] * code.n_messages)]
        master = _collecting_master(code, arrivals, cls=NotAheadMaster, kept=0)
        got = _collect(master)
        assert got.received.tolist() == want.tolist()
        assert got.ahead is None  # idle polls in plenty, yet nothing was decoded ahead
        ids, A = master.decoding.decode(np.flatnonzero(got.received))
        assert master.decoding.known == {}  # nothing remembered
        assert np.allclose(code.combine(A, got.payload[ids], 1), G.sum(axis=0), atol=1e-8)


def test_the_ab_benchmark_judges_each_mechanism_by_its_paired_difference_and_renders_its_table():
    from benchmarks import bench_runtime_ab as AB
    from benchmarks import render_runtime_ab as R
    from benchmarks.runtime_arms import MECHANISMS

    rng = np.random.default_rng(0)
    runs = []
    for rnd in range(3):
        for scheme in ("uncoded", "crc"):
            drift = rng.normal(0.0, 0.5)  # the host's load, shared by every arm of the round
            swing = 1.0 if (rnd + len(scheme)) % 2 else -1.0  # a wide spread either way
            for arm, extra, noise in (("baseline", 0.0, 0.0), ("bell", 2.0, 0.0), ("spin", 0.0, rng.normal(0, 0.01)),
                                      ("slack", swing, 0.0), ("all", 5.0, 0.0)):
                runs.append({"round": rnd, "scheme": scheme, "arm": arm, "ok": True,
                             "median_overhead_ms": 1.0 + drift + extra + noise, "relative_error": 0.02 + noise / 10})
    runs.append({"round": 3, "scheme": "crc", "arm": "spin", "ok": False, "error": "no iteration recorded"})
    out = AB.summarize(runs, ["uncoded", "crc"])
    bell, spin = out["arms"]["bell"], out["arms"]["spin"]
    # the drift of the rounds cancels in the pairs: the bell's 2 ms stands out, the spin's nothing
    assert bell["overhead_ms_vs_baseline"]["value"] == pytest.approx(2.0) and bell["overhead_ms_vs_baseline"]["n"] == 6
    assert out["mechanisms"]["bell"]["earns"] and out["mechanisms"]["bell"]["verdict"] == "earns its place"
    # a difference known to be within 0.1 ms and 1 point of % of zero is nothing; a wide interval tells nothing
    spin_v, slack_v = out["mechanisms"]["spin"], out["mechanisms"]["slack"]
    assert not spin_v["earns"] and spin_v["nothing"] and spin_v["verdict"] == "buys nothing measurable"
    assert not slack_v["earns"] and not slack_v["nothing"] and "too noisy" in slack_v["verdict"]
    assert spin["failed"] == 1 and spin["runs"] == 7 and spin["overhead_ms_vs_baseline"]["n"] == 6
    assert "all" not in out["mechanisms"] and set(out["mechanisms"]) <= set(MECHANISMS)
    data = {**out, "rounds": 3, "iterations": 30, "time_scale": 0.05, "schemes": ["uncoded", "crc"], "workers": 8,
            "stragglers": 1, "seconds": 12.0, "rule": AB.RULE, "load": {"before": 1.0, "after": 1.0, "cores": 2}}
    doc = "# Runtime\n\ntext\n\n<!-- runtime-ab: begin -->\nold table\n<!-- runtime-ab: end -->\n\nmore text\n"
    new = R.render(doc, data)
    assert "old table" not in new and new.startswith("# Runtime\n\ntext\n\n") and new.endswith("\n\nmore text\n")
    rows = [line for line in new.splitlines() if line.startswith("| `")]
    assert [r.split("|")[1].strip() for r in rows] == ["`bell`", "`spin`", "`slack`", "`all`"]
    assert "+2.00 [" in rows[0] and "earns its place" in rows[0] and "1 of 7" in rows[1]
    assert R.render(new, data) == new  # rendering again changes nothing
    with pytest.raises(SystemExit, match="no lines"):
        R.render("# no markers\n", data)
    with pytest.raises(SystemExit, match="runtime-ab-group: begin"):  # another block's markers are its own
        R.render(new, data, "runtime-ab-group")


def test_the_ab_benchmark_mirrors_its_rounds_so_that_a_steady_drift_cancels():
    from benchmarks.bench_runtime_ab import arms, round_order

    names = list(arms())
    for first in (0, 2, 4):
        a, b = round_order(names, first), round_order(names, first + 1)
        assert sorted(a) == sorted(names) and b == a[::-1]
        # every arm's two positions add up alike: a load rising steadily over the pair adds the same to each
        assert {a.index(n) + b.index(n) for n in names} == {len(names) - 1}
    assert round_order(names, 2)[0] == names[1] != round_order(names, 0)[0]  # each pair starts further on


def test_the_guides_tables_of_the_mechanisms_are_the_ones_the_saved_runs_render():
    """docs/runtime.md's two tables of what the mechanisms buy are rendered from benchmarks/runtime_ab.json and
    benchmarks/runtime_ab_group.json (never typed by hand): rendering them again changes nothing."""
    from benchmarks import render_runtime_ab as R

    doc = (ROOT / "docs" / "runtime.md").read_text()
    for saved, block in (("runtime_ab.json", "runtime-ab"), ("runtime_ab_group.json", "runtime-ab-group")):
        data = json.loads((ROOT / "benchmarks" / saved).read_text())
        assert R.render(doc, data, block) == doc, f"the table {block} of docs/runtime.md is not the one {saved} renders"


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_an_approximate_code_runs_like_ignore_and_survives_a_killed_worker():
    # the expander code on the only 2-regular graph on 4 vertices, the 4-cycle: with one straggler the opposite
    # worker holds the same two parts, so the least-squares decode of any 3 workers is exact
    code = schemes.build("expander", workers=4, stragglers=1, load=2)
    assert not code.exact
    res = launch(_spec(code, iterations=3, kill={3: 1}), job_timeout=60, check=False)
    assert res.ok, res.error
    assert len(res.records) == 3 and res.dead_workers == [3]
    assert all(r["messages"] >= 3 for r in res.records)
    assert max(r["grad_error"] for r in res.records) < 1e-9


def test_the_master_decodes_a_fixed_weight_sum_from_every_copy_received():
    # the expander code on the 4-cycle: workers 0 and 2 hold the same parts {1, 3}; the fixed decoder weights each
    # of three messages by 4/3, so the copy counts: (2/3) [1, 2, 1, 2], not the exact sum a single copy would give
    from gclib.codes.approximate import expander

    cycle = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=float)
    code = expander(4, 1, 2, "fixed", adjacency=cycle)
    assert np.array_equal(code.B[0], code.B[2])
    G = np.arange(1.0, 5.0)[:, None]
    messages = code.encode(G)
    master = _collecting_master(code, [(m, messages[m]) for m in (2, 1, 0)])
    got = _collect(master)
    ids, A = master.decoding.decode(np.flatnonzero(got.received)) if got.ahead is None else got.ahead
    assert sorted(ids.tolist()) == [0, 1, 2]
    assert code.combine(A, got.payload[ids], 1) == pytest.approx([(2 / 3) * (1 + 2 * 2 + 3 + 2 * 4)])
