"""Faults of a real run and what the user sees: workers killed from outside by a signal, a job killed from
outside and resumed, Ctrl-C, bad arguments of ``gclib run``, the state file, and the run directory.

The MPI tests (marked ``mpi``) run 4 workers for a few short iterations; every kill is a real signal sent from
this process to a rank found among the job's processes.
"""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gclib import checks, schemes
from gclib.cli import main
from gclib.learning import TandonAGD, make_problem
from gclib.runtime import RunResult, RunSpec, RuntimeFailure, launch
from gclib.runtime.processes import job_processes, rank_processes
from gclib.runtime.protocol import pack_step_state, unpack_step_state
from gclib.runtime.resume import FORMAT, VERSION, load_state, resume_spec, state_document
from gclib.stragglers import ShiftedExponential

import fault_helpers

ROOT = Path(__file__).resolve().parents[1]
MODEL = ShiftedExponential(mu=10, alpha=0.01)
# the same run on the command line: 4 workers, CRC tolerating one straggler, Tandon's data, small
RUN = ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--samples", "400", "--dim", "10",
       "--seed", "1"]


@pytest.fixture(autouse=True)
def _temporary_run_dirs_in_tmp_path(tmp_path, monkeypatch):
    """Run directories the launcher makes go under the test's tmp_path (so that none is left in /tmp)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def _spec(iterations=6, time_scale=0.05, stragglers=1, cls=RunSpec, **kw):
    code = schemes.build("crc", workers=4, stragglers=stragglers)
    problem = make_problem("tandon-logistic", parts=4, seed=0, n_samples=400, dim=10)
    kw.setdefault("timeout", 5.0)
    kw.setdefault("stop_timeout", 3.0)
    return cls(code, problem, TandonAGD(1.0 / problem.smoothness), MODEL, iterations=iterations,
                   time_scale=time_scale, seed=3, **kw)


def _killer(job_dir, ranks, sig, at=1):
    """A progress callback that sends ``sig`` to the given ranks' processes once iteration ``at`` is reported."""
    done = []

    def progress(rec):
        if rec["iteration"] == at and not done:
            found = rank_processes(job_dir)
            for r in ranks:
                os.kill(found[r], sig)
            done.append({r: found[r] for r in ranks})
    return progress, done


def _cli_env(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))
    return env


def _start_cli(args, tmp_path):
    return subprocess.Popen([sys.executable, "-m", "gclib", *args], cwd=ROOT, env=_cli_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _read_until(proc, text, limit=60.0):
    """Lines of ``proc``'s stdout up to the first that contains ``text``."""
    lines, t0 = [], time.monotonic()
    while time.monotonic() - t0 < limit:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"no line with {text!r} in {lines}")


# ---------------------------------------------------------------------------------------------- MPI
@pytest.mark.mpi
@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGTERM])
def test_a_worker_killed_by_a_signal_from_outside_is_a_straggler(tmp_path, sig):
    job_dir = tmp_path / "run"
    progress, killed = _killer(job_dir, [3], sig)  # worker 2 is MPI rank 3
    res = launch(_spec(), run_dir=tmp_path / "run", progress=progress, job_timeout=60)
    assert killed and res.ok, res.error
    assert len(res.records) == 6 and res.dead_workers == [2]
    d = res.deaths[2]
    assert d["signal"] == sig and d["name"] == sig.name and d["pid"] == killed[0][3] == res.pids[2]
    assert f"2 ({sig.name}, MPI rank 3" in res.error
    assert all(2 not in r["workers"] for r in res.records[3:])  # not heard from after it died
    assert max(r["grad_error"] for r in res.records) < 1e-9  # every decode is still the full gradient
    # the master learns of the death a little later (from the launcher): once it knows, it knows for good
    dead = [r["dead"] for r in res.records]
    assert dead == [[]] * dead.count([]) + [[2]] * dead.count([2])
    assert job_processes(job_dir) == []  # no rank left


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_worker_killed_as_it_starts_does_not_stop_the_run(tmp_path):
    """Killed right after it is exec'd, the rank dies before MPI_Init, where the others would wait for it: the
    launcher starts the job again (had it died later, it would be a straggler). Either way the run goes on and
    the result says which worker died of what."""
    job_dir = tmp_path / "run"
    killed = []

    def kill_at_start():
        t0 = time.monotonic()
        while not killed and time.monotonic() - t0 < 60:
            pid = rank_processes(job_dir).get(2)
            if pid:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.002)

    t = threading.Thread(target=kill_at_start)
    t.start()
    res = launch(_spec(iterations=3), run_dir=tmp_path / "run", job_timeout=90)
    t.join()
    assert killed and res.ok and len(res.records) == 3
    seen = [r[1] for r in res.restarts if 1 in r] + ([res.deaths[1]] if 1 in res.deaths else [])
    assert [(d["name"], d["pid"]) for d in seen] == [("SIGKILL", killed[0])]
    assert "worker processes died: 1 (SIGKILL, MPI rank 2" in res.error
    assert job_processes(job_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_cli_a_worker_killed_with_sigkill_the_run_goes_on_and_says_so(tmp_path):
    run_dir = tmp_path / "run"
    proc = _start_cli(RUN + ["--iterations", "8", "--time-scale", "0.5", "--run-dir", str(run_dir)], tmp_path)
    _read_until(proc, "iter    1")
    pid = rank_processes(run_dir)[2]  # worker 1
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert f"note: worker processes died: 1 (SIGKILL, MPI rank 2, pid {pid})" in out
    assert "crc: 8 iterations" in out and "dead workers [1]" in out.splitlines()[-3]
    assert job_processes(run_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_cli_workers_dead_beyond_tolerance_stop_at_once_with_one_line_and_the_state(tmp_path):
    run_dir = tmp_path / "run"
    proc = _start_cli(RUN + ["--iterations", "30", "--time-scale", "0.5", "--timeout", "60",
                             "--run-dir", str(run_dir)], tmp_path)
    _read_until(proc, "iter    1")
    found = rank_processes(run_dir)
    os.kill(found[2], signal.SIGKILL)
    os.kill(found[3], signal.SIGTERM)
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=90)
    assert time.monotonic() - t0 < 30  # the master stops when the workers left cannot decode, not at --timeout
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gclib: error: iteration "), err
    assert "2 workers died and code 'crc' tolerates 1 stragglers" in lines[0]
    assert f"1 (SIGKILL, MPI rank 2, pid {found[2]})" in lines[0] and "2 (SIGTERM, MPI rank 3" in lines[0]
    state = run_dir / "state.json"
    assert f"gclib run --resume {state}" in lines[0]
    doc = load_state(state)
    assert doc["summary"]["status"] == "error" and sorted(doc["deaths"]) == ["1", "2"]
    assert doc["next_iteration"] == len(doc["records"]) >= 2 and doc["args"]["scheme"] == "crc"
    assert job_processes(run_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(180)
def test_a_run_killed_from_outside_resumes_to_the_parameters_of_an_uninterrupted_run(tmp_path):
    whole = launch(_spec(iterations=8), job_timeout=60)
    assert whole.ok and len(whole.records) == 8
    job_dir = tmp_path / "run"
    progress, killed = _killer(job_dir, [0], signal.SIGKILL, at=2)  # the master: the job is over
    state = tmp_path / "state.json"
    with pytest.raises(RuntimeFailure, match=r"the master \(MPI rank 0, pid \d+ on .*\) died \(SIGKILL\)") as e:
        launch(_spec(iterations=8), run_dir=tmp_path / "run", state_file=state, progress=progress, job_timeout=60)
    stopped = e.value.result
    assert killed and stopped.status == "error" and 3 <= len(stopped.records) < 8
    assert job_processes(job_dir) == []  # no rank left
    doc = load_state(state)
    assert doc["next_iteration"] == len(stopped.records) and doc["args"] is None
    resumed = launch(_spec(iterations=8), resume=state, job_timeout=60)
    assert resumed.ok and resumed.start == len(stopped.records) and len(resumed.records) == 8
    # the same injected delays: every iteration predicted alike; the same trajectory (exact decoding)
    np.testing.assert_allclose([r["predicted"] for r in resumed.records], [r["predicted"] for r in whole.records])
    np.testing.assert_allclose([r["loss"] for r in resumed.records], [r["loss"] for r in whole.records],
                               rtol=1e-10)
    np.testing.assert_allclose(resumed.theta, whole.theta, rtol=1e-10, atol=1e-13)
    # ... and not by accident: the resumed job ran only the iterations that were left
    assert resumed.messages_received < whole.messages_received or resumed.start > 0


@pytest.mark.mpi
@pytest.mark.timeout(180)
def test_cli_ctrl_c_says_one_line_leaves_no_rank_and_resumes_to_the_same_parameters(tmp_path):
    args = RUN + ["--iterations", "12", "--time-scale", "0.2"]
    run_dir = tmp_path / "run"
    proc = _start_cli(args + ["--run-dir", str(run_dir)], tmp_path)
    _read_until(proc, "iter    1")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gclib: interrupted by SIGINT after "), err
    state = run_dir / "state.json"
    assert f"continue with: gclib run --resume {state}" in lines[0]
    assert job_processes(run_dir) == []
    done = load_state(state)["next_iteration"]
    assert 2 <= done < 12
    resumed = subprocess.run([sys.executable, "-m", "gclib", "run", "--resume", str(state), "--json"], cwd=ROOT,
                             env=_cli_env(tmp_path), capture_output=True, text=True, timeout=90)
    assert resumed.returncode == 0, resumed.stderr
    whole = subprocess.run([sys.executable, "-m", "gclib", *args, "--json"], cwd=ROOT, env=_cli_env(tmp_path),
                           capture_output=True, text=True, timeout=90)
    a, b = json.loads(resumed.stdout), json.loads(whole.stdout)
    assert a["start"] == done and len(a["records"]) == len(b["records"]) == 12
    np.testing.assert_allclose(a["theta"], b["theta"], rtol=1e-10, atol=1e-13)
    # a successful run leaves no run directory of its own; the interrupted one kept its directory
    assert not list(tmp_path.glob("gclib-run-*")) and run_dir.is_dir()


def _first_with(records, w) -> int:
    """The first record in which the master knew worker ``w`` as silent or dead."""
    return next(i for i, r in enumerate(records) if w in r["silent"] or w in r["dead"])


def _unannounced(monkeypatch):
    """The launcher drops the guards' word that a rank was stopped: a freeze that no signal announces (the master
    finds the worker silent by itself)."""
    from gclib.runtime import job

    monkeypatch.setattr(job.Job, "guard_stopped", lambda self, text: None)


@pytest.mark.mpi
@pytest.mark.timeout(120)
@pytest.mark.parametrize("announced", [True, False], ids=["stop-reported", "unannounced"])
def test_a_frozen_worker_is_a_straggler_for_as_long_as_the_run_lasts(tmp_path, monkeypatch, announced):
    """Stopped (SIGSTOP) after iteration 2 of 60: alive, holding its connections, answering nothing. Every message
    to it would wait in the master's MPI, whose shared send buffers ran out after about 32 iterations; the master
    sends it nothing once it is silent, and the run goes to its end."""
    if not announced:
        _unannounced(monkeypatch)
    job_dir = tmp_path / "run"
    progress, stopped = _killer(job_dir, [3], signal.SIGSTOP, at=2)  # worker 2
    res = launch(_spec(iterations=60, time_scale=0.01), run_dir=job_dir, progress=progress, job_timeout=90)
    assert stopped and res.ok and len(res.records) == 60, res.error
    assert res.dead_workers == [2] and res.deaths[2]["signal"] is None
    if announced:
        assert res.deaths[2]["stopped"] == "SIGSTOP" and res.deaths[2]["pid"] == stopped[0][3]
        assert f"worker processes stopped: 2 (SIGSTOP, MPI rank 3, pid {stopped[0][3]})" in res.error
    else:
        assert "workers never said goodbye (alive but frozen, or unreachable): 2 (MPI rank 3)" in res.error
        assert "silent: no message for the last 6 sent to it" in res.deaths[2]["cause"]
    # once silent (at once when its guard's word came, else after six messages), silent to the end of the run
    known = _first_with(res.records, 2)
    assert known < 30 and all(r["silent"] == [2] and 2 not in r["workers"] for r in res.records[known:])
    assert max(r["grad_error"] for r in res.records) < 1e-9
    assert job_processes(job_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(120)
@pytest.mark.parametrize("second", [signal.SIGSTOP, signal.SIGKILL])
def test_two_workers_frozen_or_frozen_and_killed_within_tolerance_are_survived(tmp_path, second):
    job_dir = tmp_path / "run"
    found = {}

    def progress(rec):
        if rec["iteration"] == 2 and not found:
            found.update(rank_processes(job_dir))
            os.kill(found[2], signal.SIGSTOP)  # worker 1
            os.kill(found[4], second)  # worker 3

    res = launch(_spec(iterations=50, time_scale=0.01, stragglers=2), run_dir=job_dir, progress=progress,
                 job_timeout=90)
    assert found and res.ok and len(res.records) == 50, res.error
    assert res.dead_workers == [1, 3] and res.deaths[1]["stopped"] == "SIGSTOP"
    assert (res.deaths[3].get("stopped") == "SIGSTOP" if second == signal.SIGSTOP else
            res.deaths[3]["name"] == "SIGKILL")
    for w in (1, 3):  # not heard from once the master knew (the iterations before ran as the signals went out)
        known = _first_with(res.records, w)
        assert all(w not in r["workers"] for r in res.records[known:])
    assert max(r["grad_error"] for r in res.records) < 1e-9
    assert job_processes(job_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(120)
@pytest.mark.parametrize("ranks", [[2], [1, 3]], ids=["one", "two"])
def test_workers_frozen_during_start_up_hold_it_only_until_the_job_starts_again(tmp_path, ranks):
    """Stopped while Python starts, before MPI_Init: the others would wait there for them (a collective) until
    the job timeout. Their guards say they are stopped; the launcher starts the job again, whose ranks are new
    processes."""
    job_dir = tmp_path / "run"
    stopper, stopped = fault_helpers.stop_at_start(job_dir, ranks)
    stopper.start()
    res = launch(_spec(iterations=4, time_scale=0.01), run_dir=job_dir, job_timeout=90)
    stopper.join()
    assert sorted(stopped) == ranks and res.ok and len(res.records) == 4, res.error
    assert len(res.restarts) == 1 and res.dead_workers == []
    first = res.restarts[0]
    assert {w: (d["stopped"], d["pid"]) for w, d in first.items()} == {r - 1: ("SIGSTOP", stopped[r]) for r in ranks}
    assert res.error.startswith("before MPI_Init, worker processes stopped: ") and "started again (1x)" in res.error
    assert job_processes(job_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_start_up_that_does_not_get_through_mpi_init_in_time_is_started_again(tmp_path, monkeypatch):
    """A rank frozen before MPI_Init without a word of it (the launcher drops its guard's): the start-up timeout
    ends the wait, and the job is started again."""
    _unannounced(monkeypatch)
    job_dir = tmp_path / "run"
    stopper, stopped = fault_helpers.stop_at_start(job_dir, [2])
    stopper.start()
    res = launch(_spec(iterations=3, time_scale=0.01), run_dir=job_dir, job_timeout=90, startup_timeout=4)
    stopper.join()
    assert stopped and res.ok and len(res.records) == 3 and res.restarts == [{}], res.error
    assert res.error.startswith("a start-up did not get through MPI_Init in time (no rank of it said why); the job "
                                "was started again (1x)")
    assert job_processes(job_dir) == []
    with pytest.raises(ValueError, match="startup_timeout must be a positive finite number of seconds"):
        launch(_spec(), startup_timeout=0)


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_cli_workers_frozen_beyond_tolerance_stop_the_run_at_the_timeout_resumably(tmp_path):
    run_dir = tmp_path / "run"
    proc = _start_cli(RUN + ["--iterations", "10", "--time-scale", "0.02", "--timeout", "2", "--run-dir",
                             str(run_dir)], tmp_path)
    _read_until(proc, "iter    1")
    found = rank_processes(run_dir)
    for r in (2, 3):
        os.kill(found[r], signal.SIGSTOP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gclib: error: iteration "), err
    assert "no decodable set of messages after 2 s" in lines[0]
    assert "worker 1 silent: stopped (SIGSTOP); worker 2 silent: stopped (SIGSTOP)" in lines[0]
    assert f"worker processes stopped: 1 (SIGSTOP, MPI rank 2, pid {found[2]}), 2 (SIGSTOP, MPI rank 3" in lines[0]
    assert job_processes(run_dir) == []
    state = run_dir / "state.json"
    done = load_state(state)["next_iteration"]
    assert 2 <= done < 10
    resumed = subprocess.run([sys.executable, "-m", "gclib", "run", "--resume", str(state), "--json"], cwd=ROOT,
                             env=_cli_env(tmp_path), capture_output=True, text=True, timeout=90)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["start"] == done and len(doc["records"]) == 10 and doc["summary"]["dead_workers"] == []


def _proxy_of(pid) -> int:
    """The process id of the Hydra proxy above a rank (its guard's parent)."""
    def parent(p):
        return int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return parent(parent(pid))


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_lost_proxy_ends_the_job_at_once_with_nothing_left_and_a_resumable_state(tmp_path):
    job_dir = tmp_path / "run"
    killed = []

    def progress(rec):
        if rec["iteration"] == 2 and not killed:
            proxy = _proxy_of(rank_processes(job_dir)[0])
            assert Path(f"/proc/{proxy}/cmdline").read_bytes().split(b"\0")[0].endswith(b"hydra_pmi_proxy")
            os.kill(proxy, signal.SIGKILL)
            killed.append(time.monotonic())

    state = tmp_path / "state.json"
    with pytest.raises(RuntimeFailure, match="lost the connection to the proxy of a host") as e:
        launch(_spec(iterations=40, time_scale=0.05), run_dir=job_dir, state_file=state, progress=progress,
               job_timeout=90)
    assert killed and time.monotonic() - killed[0] < 10  # within seconds, not at a timeout
    assert job_processes(job_dir) == []
    done = load_state(state)["next_iteration"]
    assert done == len(e.value.result.records) >= 3
    resumed = launch(_spec(iterations=40, time_scale=0.05), resume=state, job_timeout=90)
    assert resumed.ok and resumed.start == done and len(resumed.records) == 40


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_cli_a_run_stopped_by_its_injected_kills_resumes_without_them(tmp_path):
    run_dir = tmp_path / "run"
    stopped = subprocess.run([sys.executable, "-m", "gclib", *RUN, "--iterations", "8", "--time-scale", "0.01",
                              "--kill", "1:3,2:3", "--run-dir", str(run_dir)], cwd=ROOT, env=_cli_env(tmp_path),
                             capture_output=True, text=True, timeout=90)
    assert stopped.returncode == 1, stopped.stderr
    assert "iteration 3: 2 workers died and code 'crc' tolerates 1 stragglers" in stopped.stderr
    state = run_dir / "state.json"
    assert load_state(state)["next_iteration"] == 3
    resumed = subprocess.run([sys.executable, "-m", "gclib", "run", "--resume", str(state)], cwd=ROOT,
                             env=_cli_env(tmp_path), capture_output=True, text=True, timeout=90)
    assert resumed.returncode == 0, resumed.stderr
    first = resumed.stdout.splitlines()[0]
    assert first == (f"resuming {state} at iteration 3 of 8 (the kills due by then are not injected again: "
                     f"--kill 1:3,2:3)"), first
    assert "crc: 8 iterations" in resumed.stdout and "died" not in resumed.stdout
    assert job_processes(run_dir) == []


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_an_ill_conditioned_decode_is_recorded_and_the_summary_warns():
    from gclib.codes.base import GradientCode
    from gclib.codes.rules import threshold

    d = 1e-9  # two nearly parallel messages: the decode takes their difference, times 1 / (2 d)
    code = GradientCode(name="skewed", n_workers=2, n_parts=2, order=[[0, 1], [1, 0]], B=[[1, d], [1, -d]],
                        sender=[0, 1], ready=[2, 2], rule=threshold(2, 2), stragglers=0)
    problem = make_problem("tandon-logistic", parts=2, seed=0, n_samples=400, dim=10)
    res = launch(RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), MODEL, iterations=3, time_scale=0.01,
                         seed=1, timeout=5.0, stop_timeout=3.0), job_timeout=60)
    assert res.ok and all(r["amplification"] > 1e8 for r in res.records)
    s = res.summary()
    assert s["untrusted_iterations"] == [0, 1, 2] and s["max_amplification"] > s["amplification_limit"]
    (line,) = res.warnings()
    assert line.startswith("3 of 3 decodes could not be trusted")
    # and rightly so: the decoded gradient is off by far more than float64's rounding
    assert max(r["grad_error"] for r in res.records) > 1e-12


# ---------------------------------------------------------------------------------------------- no MPI
def _cli(args, capsys):
    try:
        rc = main(args)
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("extra, says", [
    (["--samples", "0"], "argument --samples: must be a positive integer, got '0'"),
    (["--dim", "0"], "argument --dim: must be a positive integer, got '0'"),
    (["--samples", "-3"], "argument --samples: must be a positive integer"),
    (["--samples", "3"], "n_samples = 3 must be at least parts = 4"),
    (["--samples", "2000000000", "--dim", "100000"], "lower n_samples (--samples) or dim (--dim)"),
    (["--problem", "breast-cancer", "--samples", "100"], "argument --samples: sizes Tandon's synthetic data only"),
    (["--problem", "nope"], "argument --problem: invalid choice: 'nope'"),
    (["--job-timeout", "nan"], "argument --job-timeout: must be a positive finite number of seconds, got 'nan'"),
    (["--job-timeout", "0"], "argument --job-timeout: must be a positive finite number of seconds, got '0'"),
    (["--job-timeout", "-5"], "argument --job-timeout: must be a positive finite number of seconds, got '-5'"),
    (["--job-timeout", "inf"], "argument --job-timeout: must be a positive finite number of seconds, got 'inf'"),
    (["--kill", "0:-1"], "argument --kill: must be WORKER:ITERATION[,...] with non-negative integers, got '0:-1'"),
    (["--kill", "0:50"], "argument --kill: the iteration of worker 0 must be an integer in [0, 49] (the run has 50 "
                         "iterations), got 50"),
    (["--kill", "4:1"], "argument --kill: a worker must be an integer in [0, 3] (the code has 4 workers), got 4"),
    (["--kill", "1:2,1:3"], "each worker once, got '1:2,1:3' (worker 1 is given twice)"),
    (["--kill", "1-2"], "argument --kill: must be WORKER:ITERATION[,...]"),
    (["--kill", "1:2,"], "without empty items, got '1:2,' (item 1 is empty)"),
    (["--persistent-workers", "1,,2"], "argument --persistent-workers: must be a comma-separated list of integers "
                                       "without empty items, got '1,,2' (item 1 is empty)"),
    (["--persistent-workers", " "], "argument --persistent-workers: must be a comma-separated list of integers "
                                    "without empty items, got ' ' (item 0 is empty)"),
    (["--persistent-workers", "9"], "argument --persistent-workers: a worker id must be an integer in [0, 3] (the "
                                    "code has 4 workers), got 9"),
    (["--persistent-workers", "1,1"], "argument --persistent-workers: must be a list of distinct integers, got "
                                      "'1,1' (1 is given twice)"),
    (["--persistent", "5"], "argument --persistent: must be an integer in [0, 4] (at most the code's 4 workers), "
                            "got 5"),
    (["--lr", "nan"], "argument --lr: must be a positive finite number, got 'nan'"),
    (["--lr", "inf"], "argument --lr: must be a positive finite number, got 'inf'"),
    (["--time-scale", "0"], "argument --time-scale: must be a positive finite number of seconds, got '0'"),
    (["--timeout", "nan"], "argument --timeout: must be a positive finite number of seconds, got 'nan'"),
    (["--iterations", "0"], "argument --iterations: must be a positive integer, got '0'"),
    (["--data-seed", "-1"], "argument --data-seed: must be a non-negative integer, got '-1'"),
])
def test_cli_run_refuses_bad_values_with_one_line_before_anything_starts(tmp_path, capsys, extra, says):
    rc, out, err = _cli(RUN + extra, capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gclib: error: ") and says in err, err
    assert not list(tmp_path.glob("gclib-run-*"))  # a refused run makes no run directory


def test_cli_run_refuses_what_would_not_fit_in_memory_before_anything_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", "4G")  # the budget every memory check of gclib judges by
    for extra, says in ((["--iterations", "1000000000"], "lower iterations (--iterations)"),
                        (["--workers", "100", "--samples", "1000"], "a run on this host with 101 MPI ranks"),
                        (["--samples", "20000000", "--dim", "100"], "lower n_samples (--samples) or dim (--dim)")):
        rc, out, err = _cli(RUN + extra, capsys)
        assert rc == 2 and err.count("\n") == 1 and says in err, err
        assert "more than the budget of 4 GiB (set by GCLIB_MEMORY_LIMIT)" in err, err
    assert not list(tmp_path.iterdir())


def test_cli_run_refuses_bad_paths_before_anything_starts(tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    bad_hosts = tmp_path / "hosts-bad"
    bad_hosts.write_text("node1:2\nnode2:x\n")
    no_hosts = tmp_path / "hosts-empty"
    no_hosts.write_text("# nothing\n")
    shell_hosts = tmp_path / "hosts-shell"  # a host name must be a host name, even if nothing would run it
    shell_hosts.write_text("localhost; touch X\n")
    option_hosts = tmp_path / "hosts-option"  # ... and never an option of ssh
    option_hosts.write_text("node1:2\n-oProxyCommand=x:2\n")
    tail_hosts = tmp_path / "hosts-tail"
    tail_hosts.write_text("node1:2 $(touch X)\n")

    def shown(path):  # how a message names the path it checks (a long one shortened)
        return checks.short_path(str(path))

    cases = [(["--run-dir", str(a_file)], f"argument --run-dir: '{shown(a_file)}' is a file"),
             (["--run-dir", str(a_file / "sub")], f"cannot be a folder: '{a_file}' is a file"),
             (["--run-dir", str(tmp_path / ("x" * 300))], "argument --run-dir:"),
             (["--run-dir", ""], "argument --run-dir: must be a path, got an empty string"),
             (["--state", str(tmp_path)], f"argument --state: '{shown(tmp_path)}' is a folder, not a file"),
             (["--state", str(a_file / "state.json")], f"cannot be created: '{a_file}' is a file"),
             (["--hosts", str(tmp_path / "missing")], "argument --hosts: "),
             (["--hosts", str(tmp_path / "missing")], "does not exist"),
             (["--hosts", str(tmp_path)], "is a folder, not a file"),
             (["--hosts", str(bad_hosts)], "line 2 must be HOST or HOST:N with N a positive number of processes"),
             (["--hosts", str(shell_hosts)], "line 1 must start with a host name (letters, digits"),
             (["--hosts", str(option_hosts)], "line 2 must start with a host name"),
             (["--hosts", str(tail_hosts)], "line 1 may follow its host only with Hydra options name=value"),
             (["--hosts", "/dev/null"], "is not a regular file"),
             (["--mpiexec", "/bin/false"], "argument --mpiexec: '/bin/false' is not a Hydra mpiexec"),
             (["--hosts", str(no_hosts)], "names no host"),
             (["--scheme", "lcc", "--load", "2"], "scheme 'lcc' cannot run over MPI")]
    for extra, says in cases:
        base = RUN
        if "lcc" in extra:  # lcc takes no --stragglers (it is refused before the scheme's MPI check)
            i = RUN.index("--stragglers")
            base = RUN[:i] + RUN[i + 2:]
        rc, out, err = _cli(base + extra, capsys)
        assert rc == 2 and err.count("\n") == 1 and says in err, (extra, err)
        assert "node2:x" not in err and "touch" not in err  # a file's lines are named, not shown
    # nothing created, no run directory
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "hosts-bad", "hosts-empty", "hosts-option",
                                                          "hosts-shell", "hosts-tail"]


def test_cli_resume_refuses_other_parameters_and_foreign_or_broken_state_files(tmp_path, capsys):
    res = RunResult(records=[_record(0)], theta=np.zeros(10), status="error", spec=_spec(iterations=4).describe(),
                    step_state=pack_step_state(TandonAGD(0.1).init(np.zeros(10))))
    good = tmp_path / "state.json"
    res.save(good, args={"scheme": "crc"})
    doc = json.loads(good.read_text())
    broken = {"not-json.json": "{\"format\": ", "other.json": json.dumps({"format": "something else"}),
              "old.json": json.dumps({**doc, "gclib_version": "0.0.0"}),
              "layout.json": json.dumps({**doc, "version": VERSION + 1}),
              "gap.json": json.dumps({**doc, "next_iteration": 3}),
              "theta.json": json.dumps({**doc, "step_state": {"t": 1}}),
              "no-records.json": json.dumps({**doc, "records": [], "next_iteration": 1}),
              "nested.json": "[" * 100_000 + "]" * 100_000,
              "class.json": json.dumps({**doc, "args": {"scheme": "crc", "__class__": "x"}})}
    for name, text in broken.items():
        (tmp_path / name).write_text(text)
        rc, out, err = _cli(["run", "--resume", str(tmp_path / name)], capsys)
        assert rc == 2 and err.count("\n") == 1 and "is not a usable state file" in err, (name, err)
    rc, out, err = _cli(["run", "--resume", str(tmp_path / "missing.json")], capsys)
    assert rc == 2 and "argument --resume: " in err and "missing.json' does not exist" in err
    rc, out, err = _cli(["run", "--resume", str(good), "--iterations", "9", "--workers", "5"], capsys)
    assert rc == 2 and "--iterations, --workers cannot be given with --resume" in err
    rc, out, err = _cli(["run"], capsys)
    assert rc == 2 and "the following arguments are required: --scheme (or --resume STATE" in err


def test_a_resumed_command_line_keeps_its_kill_and_persistent_workers(tmp_path):
    from gclib.cli import build_parser
    from gclib.cli.run import resumed_args, run_args, spec_from_args

    a = build_parser().parse_args(RUN + ["--iterations", "4", "--kill", "2:3", "--persistent-workers", "0"])
    args = run_args(a)
    assert args["kill"] == [[2, 3]] and args["persistent_workers"] == [0]  # JSON-ready: no integer keys
    spec = spec_from_args(a)
    assert spec.kill == {2: 3} and spec.model.workers == [0]
    res = RunResult(records=[_record(0)], theta=np.zeros(10), status="error", spec=spec.describe(),
                    step_state=pack_step_state(TandonAGD(0.1).init(np.zeros(10))))
    state = tmp_path / "state.json"
    # what run_args writes, and the same options as text (what the options held before they were parsed)
    for saved, kill, dead in ((args, {2: 3}, [0]), ({**args, "kill": "2:3", "persistent_workers": "0"}, {2: 3}, [0]),
                              ({**args, "kill": "", "persistent_workers": ""}, {}, None)):
        res.save(state, args=saved)
        ns, doc = resumed_args(build_parser().parse_args(["run", "--resume", str(state)]))
        again = spec_from_args(ns)
        assert again.kill == kill and getattr(again.model, "workers", None) == dead, saved


def _record(it, amplification=2.0):
    return {"iteration": it, "time": 0.01, "predicted": 0.01, "messages": 3, "stale": 0, "bcast": 0.0,
            "wait": 0.0, "decode": 0.0, "step": 0.0, "drain": 0.0, "checks": 0.0, "workers": [0, 1, 2],
            "amplification": amplification, "grad_error": 0.0, "wall": 0.01 * (it + 1), "loss": 0.5,
            "test_loss": 0.5, "auc": 0.9}


def test_step_state_is_stored_exactly():
    state = TandonAGD(0.1).init(np.array([0.1, -1 / 3, 1e-300, np.pi]))
    state["u"][1] = np.inf
    state["y"][2] = np.nan
    state["t"] = 7
    back = unpack_step_state(json.loads(json.dumps(pack_step_state(state))))
    assert back["t"] == 7 and back.keys() == state.keys()
    for k in ("theta", "u", "y"):
        np.testing.assert_array_equal(back[k], state[k])  # bit for bit, nan and inf included
    with pytest.raises(ValueError, match="malformed"):
        unpack_step_state({"theta": {"values": [1]}})
    packed = pack_step_state(state)
    for bad in ("not base64!", packed["theta"]["f64"][:-4], 3):  # not base64, a short array, not a string
        with pytest.raises(ValueError, match="'theta' is malformed"):
            unpack_step_state({**packed, "theta": {"f64": bad, "shape": [4]}})


def test_a_state_of_another_run_is_refused_and_a_finished_one_has_nothing_to_resume(tmp_path):
    spec = _spec(iterations=4)
    res = RunResult(records=[_record(0), _record(1)], theta=np.zeros(10), status="error", spec=spec.describe(),
                    step_state=pack_step_state(TandonAGD(0.1).init(np.zeros(10))))
    path = tmp_path / "state.json"
    res.save(path)
    doc = load_state(path)
    assert doc["format"] == FORMAT and doc["next_iteration"] == 2
    resumed, _ = resume_spec(spec, path)
    assert resumed.start == 2 and resumed.state0 == doc["step_state"] and resumed.wall0 == 0.02
    with pytest.raises(ValueError, match="belongs to another run .*iterations"):
        resume_spec(_spec(iterations=5), path)
    with pytest.raises(ValueError, match="belongs to another run .*seed"):
        resume_spec(RunSpec(spec.code, spec.problem, spec.step, MODEL, iterations=4, seed=4), path)
    full = RunResult(records=[_record(i) for i in range(4)], theta=np.zeros(10), spec=spec.describe(),
                     step_state=doc["step_state"])
    full.save(path)
    with pytest.raises(ValueError, match="already finished its 4 iterations"):
        resume_spec(spec, path)
    assert state_document(full)["next_iteration"] == 4


def test_a_state_that_cannot_be_written_where_asked_is_written_in_the_run_directory(tmp_path):
    from gclib.runtime.resume import save_state

    spec = _spec(iterations=4)
    res = RunResult(records=[_record(0)], theta=np.zeros(10), status="error", spec=spec.describe(),
                    step_state=pack_step_state(TandonAGD(0.1).init(np.zeros(10))), error="worker 2 died")
    save_state(res, tmp_path / "state.json", tmp_path)
    assert res.spec["state_file"] == str(tmp_path / "state.json") and res.error == "worker 2 died"
    (tmp_path / "a file").write_text("")
    asked = tmp_path / "a file" / "state.json"  # under a file: no folder can be made there
    save_state(res, asked, tmp_path / "run")
    assert res.spec["state_file"] == str(tmp_path / "run" / "state.json")
    assert res.error.startswith("worker 2 died; could not write the state to ") and str(asked) in res.error
    assert load_state(tmp_path / "run" / "state.json")["next_iteration"] == 1


def test_a_resumed_run_does_not_inject_again_the_kills_due_by_then(tmp_path):
    """A run stopped by the kills it injected stops in the iteration they were due: resumed there, it would stop
    the same way every time. The kills due at or before the iteration it resumes at are dropped, later ones
    kept."""
    from gclib.runtime.resume import kills_left

    spec = _spec(iterations=6, kill={1: 2, 2: 2, 3: 4})
    res = RunResult(records=[_record(0), _record(1)], theta=np.zeros(10), status="error", spec=spec.describe(),
                    step_state=pack_step_state(TandonAGD(0.1).init(np.zeros(10))))
    path = tmp_path / "state.json"
    res.save(path)
    resumed, _ = resume_spec(spec, path)
    assert resumed.start == 2 and resumed.kill == {3: 4} and spec.kill == {1: 2, 2: 2, 3: 4}
    # a run stopped in its first iteration resumes from the start, without the kills of that iteration either
    RunResult(records=[], theta=np.zeros(10), status="error", spec=spec.describe()).save(path)
    resumed, _ = resume_spec(_spec(iterations=6, kill={0: 0, 1: 3}), path)
    assert resumed.start == 0 and resumed.kill == {1: 3}
    assert kills_left({}, 3) == {} and kills_left({2: 5}, 4) == {2: 5} and kills_left({2: 5}, 5) == {}


def test_the_summary_warns_when_a_decode_could_not_be_trusted(monkeypatch):
    from gclib.codes import conditioning

    res = RunResult(records=[_record(0, 5.0), _record(1, 3e9), _record(2, None)], theta=np.zeros(3))
    assert res.summary()["untrusted_iterations"] == [1, 2]  # above the decoder's threshold (None: infinite)
    (line,) = res.warnings()
    assert line.startswith("2 of 3 decodes could not be trusted") and "iterations 1, 2" in line
    # the threshold is the decoder's, read through gclib.codes.conditioning (it follows the working precision)
    monkeypatch.setattr(conditioning, "amplification_threshold", lambda dtype=np.float64: 4.0)
    assert res.summary()["untrusted_iterations"] == [0, 1, 2] and res.summary()["amplification_limit"] == 4.0
    assert RunResult(records=[_record(0)], theta=np.zeros(3)).warnings() == []


def test_the_spec_refuses_what_cannot_run_before_mpi_starts():
    import dataclasses

    with pytest.raises(ValueError, match=r"kill\[1\] must be an integer in \[0, 5\] \(an iteration of the run's 6\), "
                                         r"got -1"):
        _spec(kill={1: -1})
    with pytest.raises(ValueError, match=r"kill\[1\] must be .*got 6"):
        _spec(kill={1: 6})
    with pytest.raises(ValueError, match=r"kill's worker must be an integer in \[0, 3\] \(the code's 4 workers\), "
                                         r"got 4"):
        _spec(kill={4: 1})
    for name in ("timeout", "time_scale", "poll", "stop_timeout"):
        with pytest.raises(ValueError, match=f"{name} must be a positive finite number of seconds, got nan"):
            _spec(**{name: float("nan")})
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -1"):
        dataclasses.replace(_spec(), seed=-1)
    with pytest.raises(ValueError, match="start and state0 go together"):
        _spec(start=2)
    lcc = schemes.build("lcc", workers=4, stragglers=1, load=2)
    problem = make_problem("tandon-logistic", parts=lcc.n_parts, seed=0, n_samples=400, dim=10)
    with pytest.raises(ValueError, match="scheme 'lcc' cannot run over MPI: the LCC simulator code"):
        RunSpec(lcc, problem, TandonAGD(0.1), MODEL)
    with pytest.raises(ValueError, match="theta0 must hold finite numbers, got nan at index 0"):
        _spec(theta0=np.full(10, np.nan))
    with pytest.raises(ValueError, match=r"theta0 must be 10 finite numbers \(the problem's dimension\), got shape "
                                         r"\(3,\)"):
        _spec(theta0=np.zeros(3))
    with pytest.raises(TypeError, match="spec must be a RunSpec"):
        launch("not a spec")


def test_launch_refuses_before_it_creates_anything(tmp_path):
    import dataclasses

    from gclib.codes.base import lstsq_decode

    spec = _spec()
    code = dataclasses.replace(spec.code, decoder=lambda c, idx: lstsq_decode(c, idx))  # a lambda does not pickle
    with pytest.raises(ValueError, match="spec must pickle"):
        launch(dataclasses.replace(spec, code=code))
    with pytest.raises(ValueError, match="job_timeout must be a positive finite number of seconds, got nan"):
        launch(spec, job_timeout=float("nan"))
    with pytest.raises(ValueError, match="hosts '.*missing' does not exist"):
        launch(spec, hosts=tmp_path / "missing")
    with pytest.raises(ValueError, match="run_dir '.*' is a file"):
        launch(spec, run_dir=__file__)
    with pytest.raises(ValueError, match="state_file '.*' is a folder, not a file"):
        launch(spec, state_file=tmp_path)
    with pytest.raises(ValueError, match="resume: .* is not a usable state file"):
        launch(spec, resume=tmp_path / "missing.json")
    assert not list(tmp_path.iterdir())
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ValueError, match="resume: .*fifo' is not a usable state file: it is not a regular file"):
        launch(spec, resume=tmp_path / "fifo")


def test_problems_refuse_sizes_that_cannot_be_built(monkeypatch):
    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", "4G")  # the budget every memory check of gclib judges by
    with pytest.raises(ValueError, match="n_samples must be a positive integer, got 0"):
        make_problem("tandon-logistic", parts=4, n_samples=0)
    with pytest.raises(ValueError, match="dim must be a positive integer, got 0"):
        make_problem("tandon-logistic", parts=4, dim=0)
    with pytest.raises(ValueError, match=r"test_fraction must be a finite number >= 0 and < 1, got 1.0"):
        make_problem("tandon-logistic", parts=4, n_samples=40, dim=3, test_fraction=1.0)
    with pytest.raises(ValueError, match="tandon-logistic with n_samples = 1000000000 and dim = 100000 needs about "
                                         ".* more than the budget"):
        make_problem("tandon-logistic", parts=4, n_samples=10**9, dim=10**5)
    with pytest.raises(ValueError, match=r"lag-synthetic with workers = 100 and dim = 100000 needs about .* \(set by "
                                         r"GCLIB_MEMORY_LIMIT\); lower workers or dim"):
        make_problem("lag-synthetic", parts=100, workers=100, dim=10**5)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        make_problem("diabetes", parts=4, seed=-1)
    with pytest.raises(ValueError, match="parts must be a positive integer, got 0"):
        make_problem("breast-cancer", parts=0)
    assert make_problem("tandon-logistic", parts=4, n_samples=4, dim=1).n_samples == 4  # the smallest that fits
    assert math.isfinite(make_problem("lag-synthetic", parts=2, workers=2, dim=3).smoothness)


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_a_run_without_every_mechanism_of_its_loops_still_decodes_exactly_and_survives_a_killed_worker(tmp_path):
    """The A/B arm with every mechanism of the master's and the workers' loops beyond the plain polling loop left out
    (benchmarks/runtime_arms.py) still meets the fault targets; the guards stay (without them a killed worker is not
    survived: benchmarks/faults_ab.py)."""
    from benchmarks.runtime_arms import MECHANISMS, ArmSpec

    loops = sorted(set(MECHANISMS) - {"guard"})
    job_dir = tmp_path / "run"
    progress, killed = _killer(job_dir, [3], signal.SIGKILL, at=1)  # worker 2
    res = launch(_spec(iterations=6, cls=ArmSpec, left_out=loops), run_dir=job_dir, progress=progress, job_timeout=60)
    assert killed and res.ok and len(res.records) == 6, res.error
    assert res.dead_workers == [2] and res.deaths[2]["name"] == "SIGKILL"
    assert res.spec["left_out"] == loops
    assert res.bells == []  # no bell was made: every worker polled
    assert max(r["grad_error"] for r in res.records) < 1e-9
    assert all(2 not in r["workers"] for r in res.records[_first_with(res.records, 2):])
    assert job_processes(job_dir) == []
