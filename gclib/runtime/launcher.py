"""Launch a run: pickle the spec, start ``mpiexec`` (the venv's, next to ``sys.executable``), follow the master's
progress lines, enforce a job timeout, and return a :class:`~gclib.runtime.spec.RunResult`.

``mpiexec`` is started with ``-disable-auto-cleanup`` so that a worker process that dies does not take the job
down with it: the master treats it as a straggler that never answers (the code tolerates it, or the master stops
with a clear error), and the surviving ranks then exit without ``MPI_Finalize``. See ``docs/runtime.md``.
"""
from __future__ import annotations

import json
import math
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .master import MARK
from .spec import RunResult, RunSpec, RuntimeFailure

ROOT = Path(__file__).resolve().parents[2]


def find_mpiexec() -> str:
    """The ``mpiexec`` of the running interpreter's environment (the ``mpich`` wheel puts it next to python),
    else the first one on ``PATH``."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if not found:
        raise ValueError("no mpiexec found next to the Python interpreter or on PATH; install the 'mpi' extra "
                         "(mpi4py + mpich)")
    return found


def mpiexec_command(spec_path, ranks: int, hosts=None, mpiexec=None) -> list[str]:
    """The command line of a run (``hosts``: an MPICH hostfile, passed through with ``-f``)."""
    cmd = [mpiexec or find_mpiexec(), "-disable-auto-cleanup", "-n", str(ranks)]
    if hosts:
        hosts = Path(hosts)
        if not hosts.is_file():
            raise ValueError(f"hosts must be an existing hostfile, got {str(hosts)!r}")
        check_hostfile(hosts)
        cmd += ["-f", str(hosts)]
    return cmd + [sys.executable, "-m", "gclib.runtime.mpi_main", str(spec_path)]


def check_hostfile(path) -> int:
    """Check an MPICH hostfile: every line (``#`` starts a comment) is ``HOST`` or ``HOST:N`` with ``N`` a
    positive number of processes, optionally followed by Hydra options; at least one host. Returns the number of
    hosts; raises ``ValueError`` naming the file, the line and what is wrong (instead of an ``mpiexec`` failure)."""
    hosts = 0
    for no, line in enumerate(Path(path).read_text().splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        host, sep, count = text.split()[0].partition(":")
        if not host or (sep and not (count.isdigit() and int(count) > 0)):
            raise ValueError(f"hosts: line {no} of {str(path)!r} must be HOST or HOST:N with N a positive "
                             f"number of processes, got {line.strip()!r}")
        hosts += 1
    if not hosts:
        raise ValueError(f"hosts: the hostfile {str(path)!r} names no host")
    return hosts


def default_job_timeout(spec: RunSpec) -> float:
    """A backstop for the whole job: start-up, every iteration at its straggler timeout, and the stop."""
    return 60.0 + spec.iterations * spec.timeout + 2 * spec.stop_timeout


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(k, "1")
    return env


def launch(spec: RunSpec, *, hosts=None, job_timeout: float | None = None, state_file=None, run_dir=None,
           check: bool = True, progress=None, mpiexec=None) -> RunResult:
    """Run ``spec`` over MPI and return what it measured.

    Args:
        spec: the run.
        hosts: optional MPICH hostfile; rank 0 (the master) must be able to read ``run_dir``, so on several
            machines put ``run_dir`` on a shared file system.
        job_timeout: seconds after which the whole job is killed (default :func:`default_job_timeout`).
        state_file: where to write the parameters and the log (always written when the run fails; default
            ``run_dir/state.json``).
        check: raise :class:`~gclib.runtime.spec.RuntimeFailure` (carrying the result) when the run stops early.
        progress: optional callback ``progress(record)`` called after every iteration.
    Returns:
        :class:`~gclib.runtime.spec.RunResult`.
    """
    if not isinstance(spec, RunSpec):
        raise ValueError("spec must be a RunSpec")
    run_dir = Path(run_dir or tempfile.mkdtemp(prefix="gclib-run-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    spec_path = run_dir / "spec.pkl"
    with open(spec_path, "wb") as fh:
        pickle.dump(spec, fh)
    cmd = mpiexec_command(spec_path, spec.ranks, hosts, mpiexec)
    job_timeout = default_job_timeout(spec) if job_timeout is None else float(job_timeout)
    events = {"records": [], "theta": spec.theta0, "start": None, "end": None}
    other = []
    err_path = run_dir / "stderr.txt"
    t0 = time.perf_counter()
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True,
                                env=_env(), start_new_session=True)

        def read():
            for line in proc.stdout:
                if line.startswith(MARK):
                    ev = json.loads(line[len(MARK):])
                    if ev["kind"] == "iter":
                        events["records"].append(ev["record"])
                        events["theta"] = ev["theta"]
                        if progress:
                            progress(ev["record"])
                    else:
                        events[ev["kind"]] = ev
                else:
                    other.append(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        killed = False
        try:
            proc.wait(timeout=job_timeout)
        except subprocess.TimeoutExpired:
            killed = True
            _kill(proc)
        reader.join(timeout=10)
    seconds = time.perf_counter() - t0
    end = events["end"] or {}
    status, error = end.get("status", "error"), end.get("error", "")
    theta = end.get("theta") if end.get("theta") is not None else events["theta"]
    if killed:
        status, error = "error", (f"job killed after the job timeout of {job_timeout:g} s "
                                  f"({len(events['records'])} iterations finished)")
    elif not end:
        tail = err_path.read_text()[-2000:]
        status, error = "error", f"mpiexec exited with code {proc.returncode} without a result: {tail.strip()}"
    start = events["start"] or {}
    predicted = start.get("predicted")
    res = RunResult(records=events["records"],
                    theta=np.asarray(theta if theta is not None else [], dtype=float),
                    status=status, error=error,
                    predicted=None if predicted is None else np.array([math.inf if p is None else p
                                                                       for p in predicted]),
                    dead_workers=end.get("dead_workers", []), messages_sent=end.get("messages_sent", 0),
                    messages_received=end.get("messages_received", 0),
                    abandoned={int(k): v for k, v in (end.get("abandoned") or {}).items()},
                    drained=end.get("stale", 0), spec=start.get("spec", spec.describe()),
                    returncode=proc.returncode, seconds=seconds)
    if res.dead_workers:
        res.error = (res.error + "; " if res.error else "") + (
            f"worker processes {res.dead_workers} died (MPI ranks {[w + 1 for w in res.dead_workers]}); the run "
            f"treated them as stragglers that never answer")
    if state_file is not None or not res.ok:
        res.save(state_file or run_dir / "state.json")
        res.spec["state_file"] = str(state_file or run_dir / "state.json")
    if check and not res.ok:
        raise RuntimeFailure(f"{res.error} (state saved to {res.spec['state_file']})", res)
    return res


def _kill(proc):
    """Kill the job we started (its own process group: mpiexec and the ranks it spawned)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
