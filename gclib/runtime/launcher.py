"""Launch a run: start ``mpiexec`` (the venv's, next to ``sys.executable``), hand the pickled spec to rank 0 on
its standard input, follow the master's progress lines and the workers' guards' reports (and pass the deaths on
to the master, on the same standard input), enforce a job timeout, and return a
:class:`~gclib.runtime.spec.RunResult`. No rank reads a file the launcher wrote: the run directory (the ranks'
stderr, the state file) stays on the launching host, and runs across hosts need no shared file system.

``mpiexec`` is started with ``-disable-auto-cleanup`` so that a worker that *exits* does not take the job down
with it, and every worker rank runs under a guard process that turns a death by signal into an exit (Hydra
kills the whole host when a process it started dies by a signal); see :mod:`gclib.runtime.mpi_main`. The master
treats a dead worker as a straggler that never answers (the code tolerates it, or the master stops with a clear
error), and the surviving ranks then exit without ``MPI_Finalize``. See ``docs/runtime.md``.

Everything the caller passes is checked before anything is created or started. A run directory the launcher
made itself (under the temporary directory) is removed after a successful run and kept, with the state file in
it, after a failed or interrupted one. Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the job, leave no rank behind,
and save a resumable state.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from gclib import checks
from gclib.runtime.master import MARK
from gclib.runtime.protocol import RANK, REPORT, STOPPED
from gclib.runtime.spec import RunResult, RunSpec, RuntimeFailure
from gclib.runtime.state import comparable, load_state

ROOT = Path(__file__).resolve().parents[2]
#: Seconds the job may take to exit after the master reported its end (``MPI_Finalize``) before it is killed.
END_GRACE = 10.0
#: ... when a worker never said goodbye (stopped, or unreachable): the job cannot exit by itself, and the ranks
#: that said it leave without ``MPI_Finalize``, at once.
END_GRACE_SILENT = 2.0
#: Times a job is started again when a rank died by a signal, was stopped, or did not get through ``MPI_Init``
#: in time (a collective: the others would wait there for it forever). Nothing is lost: no iteration ran.
START_RETRIES = 2
#: Default seconds from the job's start until every rank is through ``MPI_Init`` (see :func:`launch`).
STARTUP_TIMEOUT = 60.0
#: Seconds a rank may stay stopped (SIGSTOP, ...) before every rank is through ``MPI_Init`` before the job is
#: started again (the other ranks wait for it there; a short stop, a debugger's, is waited out).
STOPPED_AT_START = 1.0
#: Signals that stop a run like Ctrl-C does (the state is saved and the job killed).
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupted(Exception):
    """The launching process got a stop signal (Ctrl-C)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


#: How a job is started: ``auto`` (see :func:`choose_launcher`), a Hydra ``mpiexec``, or SLURM's ``srun``.
LAUNCHERS = ("auto", "mpiexec", "srun")


@dataclasses.dataclass(frozen=True)
class Launcher:
    """The program that starts the ranks, as :func:`choose_launcher` chose it.

    Attributes:
        kind: ``"mpiexec"`` (a Hydra ``mpiexec``: MPICH's, the ``mpich`` wheel's, Intel MPI's, MVAPICH's) or
            ``"srun"``.
        program: its path.
        hosts: for ``mpiexec`` inside a SLURM allocation without a hostfile: the allocation's hosts as Hydra's
            ``-hosts`` list (``node1:4,node2:4``); else ``None``.
        why: how it was chosen, in words (for messages).
    """

    kind: str
    program: str
    hosts: str | None = None
    why: str = ""


def find_mpiexec(env=None, python=None) -> str:
    """The ``mpiexec`` of the running interpreter's environment (the ``mpich`` wheel puts it next to python),
    else the first one on ``PATH`` (``env``: the environment to look in, default ``os.environ``; ``python``: the
    interpreter, default ``sys.executable``)."""
    here = Path(python or sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec", path=(os.environ if env is None else env).get("PATH", os.defpath))
    if not found:
        raise ValueError("no mpiexec found next to the Python interpreter or on PATH; install the 'mpi' extra "
                         "(mpi4py + mpich), or give the site's with --mpiexec PATH")
    return found


def check_mpiexec(name, path) -> str:
    """An ``mpiexec`` given by the user: an existing executable file (a bare name is looked up on ``PATH``) that
    is Hydra's (:func:`check_hydra`). Returns its path; raises ``ValueError`` naming ``name`` (``None`` for the
    option's check)."""
    subject = f"{name} {str(path)!r}" if name else repr(str(path))
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not text:
        raise checks.ParameterTypeError(f"{checks.must_be(name)} the path of an mpiexec program, got {path!r}")
    if os.sep not in text:
        found = shutil.which(text)
        if not found:
            raise ValueError(f"{subject} is not a program on PATH")
        return check_hydra(subject, found)
    p = Path(text)
    if not p.is_file():
        raise ValueError(f"{subject} does not exist" if not p.exists() else f"{subject} is not a file")
    if not os.access(p, os.X_OK):
        raise ValueError(f"{subject} is not executable")
    return check_hydra(subject, str(p))


#: What ``mpiexec --version`` of a Hydra ``mpiexec`` says: MPICH's and MVAPICH's ``HYDRA build details``, Intel
#: MPI's ``Intel(R) MPI Library``.
HYDRA_VERSION = re.compile(r"HYDRA|Hydra|Intel[(]R[)] MPI Library")
#: Seconds ``mpiexec --version`` may take.
VERSION_TIMEOUT = 10.0


def check_hydra(subject: str, program: str) -> str:
    """``program`` if it is a Hydra ``mpiexec`` (the runtime passes it ``-disable-auto-cleanup``, which Open MPI's
    does not know): its ``--version`` runs, exits 0 and names Hydra (:data:`HYDRA_VERSION`). Checked before the job
    starts, so that a wrong program (``/bin/false``, Open MPI's ``mpiexec``) is one line, not a failed job.
    Raises ``ValueError`` starting with ``subject``."""
    try:
        out = subprocess.run([program, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             errors="replace", timeout=VERSION_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ValueError(f"{subject} is not a Hydra mpiexec: '{program} --version' did not answer within "
                         f"{VERSION_TIMEOUT:g} s") from None
    except OSError as e:
        raise ValueError(f"{subject} cannot be run: {_os_reason(e)}") from None
    said = (out.stdout + out.stderr).strip()
    if out.returncode == 0 and HYDRA_VERSION.search(said):
        return program
    first = " ".join(said.splitlines()[0].split())[:80] if said else ""
    why = f"exited with code {out.returncode}" if out.returncode else (f"says {first!r}" if first else "says nothing")
    raise ValueError(f"{subject} is not a Hydra mpiexec (MPICH, Intel MPI, MVAPICH; the runtime needs Hydra's "
                     f"-disable-auto-cleanup): '{program} --version' {why}")


def expand_nodelist(text: str) -> list[str]:
    """SLURM's compressed host list (``node[01-03,07],gpu1``) as host names (``node01 node02 node03 node07
    gpu1``), the way ``scontrol show hostnames`` expands it (ranges keep their zero padding)."""
    hosts, i, n = [], 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in ",[":
            j += 1
        prefix = text[i:j]
        if j < n and text[j] == "[":
            k = text.find("]", j)
            if k < 0:
                raise ValueError(f"SLURM host list {text!r}: unclosed '['")
            suffix_end = k + 1
            while suffix_end < n and text[suffix_end] != ",":
                suffix_end += 1
            suffix = text[k + 1:suffix_end]
            if "[" in suffix:
                raise ValueError(f"SLURM host list {text!r}: one bracket per name is supported")
            for part in text[j + 1:k].split(","):
                lo, sep, hi = part.partition("-")
                if not lo.isdigit() or (sep and not hi.isdigit()):
                    raise ValueError(f"SLURM host list {text!r}: bad range {part!r}")
                for v in range(int(lo), int(hi or lo) + 1):
                    hosts.append(f"{prefix}{v:0{len(lo)}d}{suffix}")
            i = suffix_end + 1
        else:
            if prefix:
                hosts.append(prefix)
            i = j + 1
    return hosts


def expand_tasks_per_node(text: str) -> list[int]:
    """SLURM's ``SLURM_TASKS_PER_NODE`` (``2(x3),1``) as one count per node (``2 2 2 1``)."""
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", item)
        if not m:
            raise ValueError(f"SLURM_TASKS_PER_NODE {text!r}: bad item {item!r}")
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def slurm_allocation(env=None) -> dict | None:
    """The SLURM allocation this process runs in (``SLURM_JOB_ID`` and ``SLURM_JOB_NODELIST`` or
    ``SLURM_NODELIST`` set), else ``None``: ``{"job": id, "hosts": [(host, tasks), ...], "tasks": total}``.
    Tasks per host come from ``SLURM_TASKS_PER_NODE``; the total from ``SLURM_NTASKS`` when set."""
    env = os.environ if env is None else env
    job = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not job or not nodelist:
        return None
    nodes = expand_nodelist(nodelist)
    per = expand_tasks_per_node(env["SLURM_TASKS_PER_NODE"]) if env.get("SLURM_TASKS_PER_NODE") else [1] * len(nodes)
    if len(per) != len(nodes):
        raise ValueError(f"SLURM_TASKS_PER_NODE {env['SLURM_TASKS_PER_NODE']!r} does not give one count per host "
                         f"of {nodelist!r} ({len(nodes)} hosts)")
    ntasks = env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS")
    total = int(ntasks) if ntasks and ntasks.isdigit() else sum(per)
    return {"job": job, "hosts": list(zip(nodes, per)), "tasks": total}


def choose_launcher(launcher: str = "auto", mpiexec=None, hosts=None, ranks: int | None = None, env=None,
                    python=None) -> Launcher:
    """The program that starts a job of ``ranks`` ranks.

    * ``mpiexec``: ``mpiexec`` (a path, the site's), else the ``mpich`` wheel's next to ``python``, else the first
      ``mpiexec`` on ``PATH``. With a hostfile (``hosts``) it gets ``-f FILE``; else, inside a SLURM allocation,
      the allocation's hosts (``-hosts node1:N1,...``).
    * ``srun``: SLURM's ``srun`` on ``PATH``, inside an allocation (it places the ranks on the allocation's
      hosts; no ``hosts``, no ``mpiexec``).
    * ``auto``: ``mpiexec`` as above when one is given or found, else ``srun`` inside a SLURM allocation.

    Inside an allocation, a job needs no more ranks than its tasks. ``env`` is the environment to read
    (``os.environ``), ``python`` the interpreter whose wheel ``mpiexec`` is looked for (``sys.executable``).
    Raises ``ValueError`` (one line) when what is asked for is missing.
    """
    env = os.environ if env is None else env
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    if launcher == "srun" and mpiexec is not None:
        raise ValueError("launcher srun starts the ranks itself: do not give mpiexec with it")
    if mpiexec is not None:
        mpiexec = check_mpiexec("mpiexec", mpiexec)
    alloc = slurm_allocation(env)
    path = env.get("PATH", os.defpath)
    if launcher == "auto":
        if mpiexec is not None or hosts is not None:
            launcher = "mpiexec"
        else:
            try:
                mpiexec = find_mpiexec(env, python)
                launcher = "mpiexec"
            except ValueError:
                if alloc is None or not shutil.which("srun", path=path):
                    raise
                launcher = "srun"
    if launcher == "srun":
        if hosts is not None:
            raise ValueError("launcher srun runs on the SLURM allocation's hosts: do not give a hostfile with it")
        if alloc is None:
            raise ValueError("launcher srun needs a SLURM allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST are not "
                             "set; run inside sbatch or salloc)")
        srun = shutil.which("srun", path=path)
        if not srun:
            raise ValueError("launcher srun: no srun on PATH")
        _check_tasks(alloc, ranks)
        return Launcher("srun", srun, why=f"srun in SLURM job {alloc['job']}")
    prog = mpiexec or find_mpiexec(env, python)
    if hosts is None and alloc is not None:
        _check_tasks(alloc, ranks)
        listed = ",".join(f"{h}:{n}" for h, n in alloc["hosts"])
        return Launcher("mpiexec", prog, hosts=listed, why=f"mpiexec on the hosts of SLURM job {alloc['job']}")
    return Launcher("mpiexec", prog, why="mpiexec")


def _check_tasks(alloc, ranks):
    if ranks is not None and ranks > alloc["tasks"]:
        raise ValueError(f"the run needs {ranks} MPI ranks (1 master + {ranks - 1} workers) but SLURM job "
                         f"{alloc['job']} has {alloc['tasks']} tasks; allocate at least {ranks} (sbatch --ntasks "
                         f"{ranks})")


def mpiexec_command(spec_path, ranks: int, hosts=None, mpiexec=None, extra=()) -> list[str]:
    """The command line of a run (``hosts``: an MPICH hostfile, passed through with ``-f``; ``mpiexec``: a
    :class:`Launcher`, or the path of a Hydra ``mpiexec``; default :func:`choose_launcher`'s; ``extra``: more
    options of the launcher, placed before the program; ``spec_path``: the job's name in the ranks' command
    lines, the run directory, which no rank reads)."""
    if isinstance(mpiexec, Launcher):
        how = mpiexec
    else:
        how = Launcher("mpiexec", mpiexec) if mpiexec else choose_launcher(hosts=hosts, ranks=ranks)
    if how.kind == "srun":
        # every task of the allocation's runs to its end whatever the others do (a dead worker is a straggler)
        cmd = [how.program, f"--ntasks={ranks}", "--kill-on-bad-exit=0", "--wait=0"]
    else:
        cmd = [how.program, "-disable-auto-cleanup", "-n", str(ranks)]
        if hosts:
            cmd += ["-f", str(check_hostfile("hosts", hosts))]
        elif how.hosts:
            cmd += ["-hosts", how.hosts]
    cmd += list(extra)
    if "guard" in without():  # the A/B arm without guards: Hydra starts the rank itself
        return cmd + [sys.executable, "-m", "gclib.runtime.mpi_main", str(spec_path)]
    return cmd + [sys.executable, "-I", str(Path(__file__).with_name("guard.py")), str(spec_path)]


#: Environment variable naming runtime mechanisms to leave out, for A/B measurements (a comma list).
WITHOUT = "GCLIB_RUNTIME_WITHOUT"
#: The names it may hold: the launcher acts on ``guard`` (the ranks start without their guards); the others are
#: mechanisms of the master and the workers, read there.
WITHOUT_NAMES = ("bell", "probe2", "yield", "spin", "cache", "ahead", "gcfreeze", "slack", "lead", "guard")


def without(env=None) -> frozenset:
    """The mechanisms :data:`WITHOUT` leaves out (empty when unset). Raises ``ValueError`` for a name not in
    :data:`WITHOUT_NAMES`, so that a misspelt arm of an A/B is not silently the other arm."""
    text = (os.environ if env is None else env).get(WITHOUT, "")
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    unknown = sorted(names - set(WITHOUT_NAMES))
    if unknown:
        raise ValueError(f"{WITHOUT} names unknown mechanisms {', '.join(unknown)}; known: {', '.join(WITHOUT_NAMES)}")
    return names


def _os_reason(e: OSError) -> str:
    return e.strerror or type(e).__name__


#: A host name of a hostfile: letters, digits, '.', '-' and '_', starting and ending with a letter, digit or '_'
#: (so never an option of ``ssh``), at most 253 characters (DNS names, IPv4 addresses, cluster node names).
HOST_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9_])?")
#: A Hydra option after a host in a hostfile: ``name=value`` without spaces or shell characters.
HOST_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9._:@/+,-]+")


def check_hostfile(name: str, path) -> Path:
    """Check an MPICH hostfile: an existing, readable, regular text file whose every line (``#`` starts a comment)
    is ``HOST`` or ``HOST:N`` with ``HOST`` a host name (:data:`HOST_NAME`) and ``N`` a positive number of
    processes, optionally followed by Hydra options ``name=value`` (:data:`HOST_OPTION`); at least one host.
    Returns the path; raises ``ValueError`` naming ``name``, the file, the line and what is wrong (instead of an
    ``mpiexec`` failure), never what the line holds (the file may be any file). ``name`` is ``None`` for the
    option's check (``checks.option``)."""
    p = checks.input_path(name, path, kind="file", must_exist=True)
    subject = f"{name} {str(path)!r}" if name else repr(str(path))
    try:
        text = p.read_text()
    except OSError as e:
        raise ValueError(f"{subject} cannot be read: {_os_reason(e)}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{subject} must be a text hostfile, not binary") from None
    hosts = 0
    for no, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, sep, count = words[0].partition(":")
        if not HOST_NAME.fullmatch(host):
            raise ValueError(f"{subject}: line {no} must start with a host name (letters, digits, '.', '-' and '_', "
                             f"not starting with '-' or '.'), then optionally :N")
        if sep and not (count.isdigit() and int(count) > 0):
            raise ValueError(f"{subject}: line {no} must be HOST or HOST:N with N a positive number of processes")
        if not all(HOST_OPTION.fullmatch(w) for w in words[1:]):
            raise ValueError(f"{subject}: line {no} may follow its host only with Hydra options name=value (no "
                             f"spaces or shell characters in a value)")
        hosts += 1
    if not hosts:
        raise ValueError(f"{subject} names no host")
    return p


#: Memory of one rank besides its copy of the data: Python, numpy, SciPy, mpi4py and MPICH (about 75 MB measured
#: for a worker, 120 MB for the master, 11 MB for a guard), rounded up.
RANK_BYTES = 100e6


def check_host_memory(spec: RunSpec) -> None:
    """Refuse a run whose ranks cannot all fit in this host's memory (every rank holds the whole data set), as
    :func:`gclib.checks.need_memory` judges it (``GCLIB_MEMORY_LIMIT`` sets the budget)."""
    p = spec.problem
    check_ranks_memory(spec.workers, sum(a.nbytes for a in (p.X, p.y, p.X_test, p.y_test) if a is not None))


def check_ranks_memory(workers: int, data_bytes: float = 0.0) -> None:
    """Refuse a run of ``workers`` workers (and a master) on this host when their ranks, each with
    ``data_bytes`` of data, cannot fit in its memory. Known from the number of workers alone (``data_bytes=0``),
    it is checked before the code and the data are built, which for thousands of workers takes long."""
    ranks = workers + 1
    checks.need_memory("a run on this host", ranks * (RANK_BYTES + data_bytes),
                       sizes=f"{ranks} MPI ranks (1 + workers = {workers})"
                             + (f", each with {checks.format_bytes(data_bytes)} of data" if data_bytes else ""),
                       lower="workers (--workers) or the data, or spread the ranks over machines (--hosts)")


def default_job_timeout(spec: RunSpec) -> float:
    """A backstop for the whole job: start-up, every iteration left at its straggler timeout, and the stop."""
    return 60.0 + (spec.iterations - spec.start) * spec.timeout + 2 * spec.stop_timeout + END_GRACE


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(k, "1")
    return env


def resume_spec(spec: RunSpec, state) -> tuple:
    """``spec`` set to continue the run saved in ``state`` (a path, or a document of
    :func:`gclib.runtime.state.load_state`), without the injected kills due by then (:func:`kills_left`). Returns
    ``(spec, document)``; raises ``ValueError`` when the state belongs to another run or has nothing left to do."""
    doc = state if isinstance(state, dict) else load_state(state)
    where = "" if isinstance(state, dict) else f" {str(state)!r}"
    mine, saved = comparable(spec.describe()), comparable(doc["spec"])
    if mine != saved:
        diff = sorted(k for k in set(mine) | set(saved) if mine.get(k) != saved.get(k))
        raise ValueError(f"resume: the state{where} belongs to another run (it differs in {', '.join(diff)})")
    nxt = doc["next_iteration"]
    if nxt >= spec.iterations:
        raise ValueError(f"resume: the run in {where.strip() or 'the state'} already finished its "
                         f"{spec.iterations} iterations; nothing to resume")
    kill = kills_left(spec.kill, nxt)
    if nxt == 0:
        return dataclasses.replace(spec, kill=kill), doc
    wall = doc["records"][-1].get("wall") or 0.0
    return dataclasses.replace(spec, start=nxt, state0=doc["step_state"], wall0=float(wall), kill=kill), doc


def kills_left(kill: dict, next_iteration: int) -> dict:
    """The injected kills (``RunSpec.kill``) a run resumed at ``next_iteration`` still makes: those due at a later
    iteration. A kill due at or before it is not made again: it fired (a run stopped by the kills it injected
    stops in the iteration they were due), or the run stopped in that iteration before it; injecting it again
    would stop the resumed run the same way."""
    return {w: it for w, it in kill.items() if it > next_iteration}


def mpiexec_options(name: str, value) -> list:
    """More options of ``mpiexec``: a list of strings, or one string split as a shell would (``"-launcher ssh
    -iface eth1"``). Raises ``ValueError`` naming ``name`` (``None`` for the option's own check)."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as e:
            raise ValueError(f"{checks.must_be(name)} mpiexec options as a shell would split them, got {value!r} "
                             f"({e})") from None
    if not isinstance(value, (list, tuple)) or not all(isinstance(x, str) for x in value):
        raise checks.ParameterTypeError(f"{checks.must_be(name)} a list of strings or one string, got {value!r}")
    return list(value)


def launch(spec: RunSpec, *, hosts=None, job_timeout: float | None = None, state_file=None, run_dir=None,
           check: bool = True, progress=None, mpiexec=None, launcher: str = "auto", resume=None, args=None,
           mpiexec_args=None, startup_timeout: float | None = None) -> RunResult:
    """Run ``spec`` over MPI and return what it measured.

    Args:
        spec: the run.
        hosts: optional MPICH hostfile. No file system needs to be shared: the spec reaches rank 0 on its
            standard input, and everything the ranks report comes back through ``mpiexec``.
        job_timeout: seconds after which the whole job is killed (default :func:`default_job_timeout`).
        state_file: where to write the state (always written when the run fails or is interrupted; default
            ``run_dir/state.json``); ``launch(spec, resume=state_file)`` continues from it.
        run_dir: directory for the logs (the ranks' stderr) and the state file, on this host (no rank reads
            it); default a new temporary directory, removed after a successful run (a given one is kept).
        check: raise :class:`~gclib.runtime.spec.RuntimeFailure` (carrying the result) when the run stops early.
        progress: optional callback ``progress(record)`` called after every iteration.
        mpiexec: the path of a Hydra ``mpiexec`` (the site's); default the ``mpich`` wheel's, else the first on
            ``PATH``.
        launcher: ``"auto"``, ``"mpiexec"`` or ``"srun"`` (SLURM); see :func:`choose_launcher`.
        resume: a state file (or its loaded document) of an earlier run of the same ``spec``: continue from its
            last completed iteration, with its update state and the same injected delays.
        args: the command line's parameters, stored in the state file so that ``gclib run --resume`` can rebuild
            the run (the library leaves it ``None``).
        mpiexec_args: more options of ``mpiexec`` (a list, or one string split as a shell would), e.g.
            ``"-launcher ssh -launcher-exec PROGRAM -iface eth1"`` (see ``docs/runtime.md``).
        startup_timeout: seconds from the job's start until every rank must be through ``MPI_Init`` (a
            collective: a rank that never gets there, frozen or on a host that does not answer, holds every other
            rank in it); past it the job is killed and started again, twice at most, then the run fails with a
            one-line error (default :data:`STARTUP_TIMEOUT`). A rank stopped by a signal during the start-up
            (its guard says so) does not wait for it: the job is started again after :data:`STOPPED_AT_START`.
    Returns:
        :class:`~gclib.runtime.spec.RunResult`.
    """
    # ---- every check first: nothing is created or started for a refused run
    spec, prior, hosts, run_dir, state_file, job_timeout, pickled = _check_launch(
        spec, hosts=hosts, job_timeout=job_timeout, state_file=state_file, run_dir=run_dir, resume=resume)
    startup_timeout = STARTUP_TIMEOUT if startup_timeout is None else checks.seconds("startup_timeout",
                                                                                      startup_timeout)
    extra = mpiexec_options("mpiexec_args", mpiexec_args)
    exe = choose_launcher(launcher, mpiexec, hosts, spec.ranks)
    job_timeout = default_job_timeout(spec) if job_timeout is None else job_timeout
    # ---- the run directory, then the job
    own = run_dir is None
    run_dir = _make_run_dir(run_dir)
    job, restarts = _run_job(spec, pickled, run_dir, hosts, exe, job_timeout, progress, prior, args, extra,
                             startup_timeout=startup_timeout)
    # ---- what it measured, and the state file when asked or when the run failed
    res = job.result(*prior)
    res.run_dir = str(run_dir)
    if restarts:
        _note_restarts(res, restarts)
    if not res.ok or state_file is not None:
        _save_state(res, state_file or run_dir / "state.json", run_dir, args)
    if res.ok and own:
        shutil.rmtree(run_dir, ignore_errors=True)
        res.run_dir = None
    if check and not res.ok:
        raise RuntimeFailure(f"{res.error} (state saved to {res.spec['state_file']}; run directory "
                             f"{res.run_dir})", res)
    return res


def _check_launch(spec, *, hosts, job_timeout, state_file, run_dir, resume):
    """The arguments of :func:`launch` checked, before anything is created: ``(spec, (prior records, prior task
    reports), hosts, run_dir, state_file, job_timeout, pickled spec)``; a resumed run's spec starts where the state
    file ends."""
    if not isinstance(spec, RunSpec):
        raise TypeError(f"spec must be a RunSpec, got {type(spec).__name__}")
    if job_timeout is not None:
        job_timeout = checks.seconds("job_timeout", job_timeout)
    if hosts is not None:  # absolute: mpiexec runs in the package's folder (it exists on every host)
        hosts = check_hostfile("hosts", hosts).absolute()
    if run_dir is not None:
        run_dir = checks.output_dir("run_dir", run_dir).absolute()
    if state_file is not None:
        state_file = checks.output_file("state_file", state_file)
    prior, prior_tasks = [], []
    if resume is not None:
        spec, doc = resume_spec(spec, resume)
        prior = doc["records"][:spec.start]
        prior_tasks = doc.get("tasks") or []
    if hosts is None:
        check_host_memory(spec)
    try:  # the ranks get the spec pickled: a code or problem that does not pickle fails here, not in the job
        pickled = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        raise ValueError(f"spec must pickle (decoders and rules must be module-level functions or classes): "
                         f"{type(e).__name__}: {e}") from None
    return spec, (prior, prior_tasks), hosts, run_dir, state_file, job_timeout, pickled


def _make_run_dir(run_dir) -> Path:
    """The given run directory (created if missing), or a new temporary one when ``None``."""
    if run_dir is None:
        return Path(tempfile.mkdtemp(prefix="gclib-run-")).absolute()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"run_dir {str(run_dir)!r} cannot be created: {_os_reason(e)}") from None
    return run_dir


def _run_job(spec, pickled, run_dir, hosts, exe, job_timeout, progress, prior, args, extra=(),
             startup_timeout=STARTUP_TIMEOUT):
    """Run the MPI job, started again (up to ``START_RETRIES`` times) when a rank was killed by a signal, was
    stopped, or did not get through ``MPI_Init`` within ``startup_timeout`` seconds. Returns ``(job, restarts)``:
    the job that ran and, per job started again, what happened to its ranks (``{worker: what}``, ``{}`` when
    nobody knows which rank held the start-up)."""
    restarts = []  # what stopped each start-up, before the job that ran
    while True:
        job = _Job(spec, run_dir, hosts, exe, job_timeout, progress, append=bool(restarts), extra=extra,
                   startup_timeout=startup_timeout)
        try:
            job.run(pickled)
        except BaseException:  # a bug of ours: no rank left, and what the job reported is kept
            job.kill()
            try:
                job.result(*prior).save(run_dir / "state.json", args=args)
            except Exception:
                pass
            raise
        restartable = (job.killed in ("startup-stopped", "startup-timeout") or
                       (job.killed == "startup" and all(d.get("signal") for d in job.deaths.values())))
        if not (restartable and len(restarts) < START_RETRIES):
            return job, restarts
        restarts.append(job.startup_report())


def _note_restarts(res: RunResult, restarts: list) -> None:
    """Say in the result's error which start-ups were killed and that the job was started again."""
    res.restarts = restarts
    note = "; ".join(("before MPI_Init, " + deaths_text(r)) if r else
                     "a start-up did not get through MPI_Init in time (no rank of it said why)" for r in restarts)
    res.error = note + f"; the job was started again ({len(restarts)}x)" + ("; " + res.error if res.error else "")


def _save_state(res: RunResult, path, run_dir, args) -> None:
    """Write the state file to ``path``; when that fails, to the run directory, saying so in the error."""
    try:
        res.save(path, args=args)
        res.spec["state_file"] = str(path)
    except OSError as e:  # the state cannot be written where asked: keep it in the run directory
        fallback = run_dir / "state.json"
        res.save(fallback, args=args)
        res.spec["state_file"] = str(fallback)
        res.error = (res.error + "; " if res.error else "") + (
            f"could not write the state to {str(path)!r} ({_os_reason(e)}), wrote {str(fallback)!r}")

class _Job:
    """One ``mpiexec`` job and what it said."""

    def __init__(self, spec, run_dir, hosts, exe, job_timeout, progress, append=False, extra=(),
                 startup_timeout=STARTUP_TIMEOUT):
        self.spec, self.run_dir, self.job_timeout, self.progress = spec, Path(run_dir), job_timeout, progress
        self.startup_timeout = startup_timeout
        self.append = append  # a job started again keeps the stderr of the earlier attempts
        # the job's name in the ranks' command lines (they never read it): how job_processes finds them
        self.cmd = mpiexec_command(self.run_dir, spec.ranks, hosts, exe, extra=extra)
        self.events = {"records": [], "state": None, "init": None, "start": None, "end": None,
                       "tasks": []}
        self.deaths = {}  # worker -> what its guard reported
        self.stopped = {}  # rank -> (what its guard reported, when we heard it): ranks stopped now (SIGSTOP, ...)
        self.master_death = None  # what the master's guard reported
        self.other = []  # stdout lines that are not ours (mpiexec's own report)
        self.lock = threading.Lock()
        self.proc = None
        self.killed = None  # why we killed the job, if we did
        self.interrupted = None
        self.killing = False  # once we kill the job, the guards' reports are our own doing
        self.seconds = math.nan
        self.window = None  # bytes rank 0 takes on its standard input at a time (its "init" line says)
        self.acked = 0  # bytes of the spec rank 0 has read
        self.heard = threading.Condition(self.lock)
        self.notices = queue.Queue()  # lines for the master's standard input (deaths), None to stop

    # ------------------------------------------------------------------ readers
    def _read_stdout(self):
        for line in self.proc.stdout:
            at = line.find(MARK)
            if at < 0:
                self.other.append(line)
                continue
            try:
                ev = json.loads(line[at + len(MARK):])
                kind = ev["kind"]
            except (ValueError, KeyError, TypeError):  # a line cut by another rank's output: not ours to trust
                self.other.append(line)
                continue
            if kind in ("init", "spec"):  # rank 0 is ready for (more of) the spec
                with self.heard:
                    if kind == "init":
                        self.window = int(ev.get("window") or 4096)
                    else:
                        self.acked = max(self.acked, int(ev.get("received") or 0))
                    self.heard.notify_all()
            if kind == "iter":
                with self.lock:
                    self.events["records"].append(ev["record"])
                    self.events["state"] = ev.get("state")
                    self.events["tasks"].extend(ev.get("tasks") or [])
                if self.progress:
                    try:
                        self.progress(ev["record"])
                    except Exception:  # a broken callback must not stop the reader
                        pass
            else:
                if kind == "end":
                    with self.lock:
                        self.events["tasks"].extend(ev.get("tasks") or [])
                self.events[kind] = ev

    def _read_stderr(self, err):
        for line in self.proc.stderr:
            err.write(line)
            err.flush()
            at = line.find(STOPPED)
            if at >= 0:
                self._stopped(line[at + len(STOPPED):])
                continue
            at = line.find(REPORT)
            if at < 0:
                continue
            try:
                rep = json.loads(line[at + len(REPORT):])
                w = int(rep["rank"]) - 1
            except (ValueError, KeyError, TypeError):
                continue
            if self.killing:
                continue
            sig = rep.get("signal")
            info = {"signal": sig, "name": _signal_name(sig) if sig else None, "code": rep.get("code"),
                    "pid": rep.get("pid"), "host": rep.get("host"),
                    "iteration": self.spec.start + len(self.events["records"])}
            if w < 0:  # the master: the run is over (the main thread kills the job)
                if self.events["end"] is None:
                    self.master_death = info
                continue
            with self.lock:
                new = w not in self.deaths
                self.deaths.setdefault(w, info)
                self.stopped.pop(w + 1, None)
            if new:  # tell the master (it reads its standard input between polls)
                self.notices.put(json.dumps({"worker": w, **info}).encode() + b"\n")

    def _stopped(self, text):
        """A guard's line: its rank was stopped by a signal, or continued. Kept, and passed on to the master (a
        stopped worker is silent at once)."""
        try:
            rep = json.loads(text)
            rank = int(rep["rank"])
        except (ValueError, KeyError, TypeError):
            return
        if self.killing:
            return
        how = rep.get("stopped")
        info = {"stopped": how, "pid": rep.get("pid"), "host": rep.get("host"),
                "iteration": self.spec.start + len(self.events["records"])}
        with self.lock:
            if how:
                self.stopped[rank] = (info, time.monotonic())
            else:
                self.stopped.pop(rank, None)
        if rank > 0:
            note = {"worker": rank - 1, **({"stopped": how} if how else {"continued": True})}
            self.notices.put(json.dumps(note).encode() + b"\n")

    def startup_report(self) -> dict:
        """``{worker: what}`` of a start-up that was killed: the workers that died by a signal, and those whose
        process was stopped (``{"stopped": "SIGSTOP", ...}``)."""
        out = {w: dict(d, restarted=True) for w, d in self.deaths.items()}
        for rank, (info, _) in self.stopped.items():
            if rank > 0 and rank - 1 not in out:
                out[rank - 1] = {"signal": None, "name": None, "code": None, **info, "restarted": True}
        return out

    def _wait_for(self, test) -> bool:
        """Wait until ``test()`` holds (under the lock), or the job ended; True if it holds."""
        with self.heard:
            while not test():
                if self.proc.poll() is not None or self.killing:
                    return False
                self.heard.wait(0.1)
            return True

    def _feed(self, pickled: bytes):
        """Write to rank 0's standard input (through ``mpiexec``): the spec once rank 0 is through ``MPI_Init``,
        a window at a time, each once rank 0 has read the one before (Hydra's proxy gives up when rank 0's pipe
        is full); then the death notices as they come."""
        out = self.proc.stdin.buffer  # bytes, under the text wrapper
        try:
            if not self._wait_for(lambda: self.window is not None):
                return
            window = self.window
            out.write(b"%d\n" % len(pickled))
            for at in range(0, len(pickled), window):
                piece = pickled[at:at + window]
                out.write(piece)
                out.flush()
                if not self._wait_for(lambda: self.acked >= at + len(piece)):
                    return
            while True:
                line = self.notices.get()
                if line is None:
                    return
                out.write(line)
                out.flush()
        except (OSError, ValueError):  # the job ended: nobody reads any more
            return

    # ------------------------------------------------------------------ the job
    def run(self, pickled: bytes):
        t0 = time.perf_counter()
        handlers = _catch_stop_signals()
        readers = []
        try:
            with open(self.run_dir / "stderr.txt", "a" if self.append else "w") as err:
                try:
                    # the ranks start in the package's folder (which every host has), not in ours
                    self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                 stdin=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
                                                 start_new_session=True)
                    readers = [threading.Thread(target=self._read_stdout, daemon=True),
                               threading.Thread(target=self._read_stderr, args=(err,), daemon=True),
                               threading.Thread(target=self._feed, args=(pickled,), daemon=True)]
                    for r in readers:
                        r.start()
                    self._wait()
                except Interrupted as e:
                    self.interrupted = e.signum
                    self.kill()
                self.notices.put(None)
                for r in readers:
                    r.join(timeout=10)
                if self.proc is not None:
                    try:
                        self.proc.stdin.close()
                    except (OSError, ValueError):
                        pass
        finally:
            _restore(handlers)
            self.seconds = time.perf_counter() - t0

    def _wait(self):
        started = time.monotonic()
        deadline = started + self.job_timeout
        ended = grace = None
        while True:
            try:
                self.proc.wait(timeout=0.1)
                return
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if self.master_death is not None and self.events["end"] is None:
                self.killed = "master"
                self.kill()
                return
            if self.events["init"] is None:  # the other ranks wait in MPI_Init for any that is not there
                why = None
                if self.deaths:
                    why = "startup"
                elif any(now - t > STOPPED_AT_START for _, t in list(self.stopped.values())):
                    why = "startup-stopped"
                elif now - started > self.startup_timeout:
                    why = "startup-timeout"
                if why:
                    self.killed = why
                    self.kill()
                    return
            if self.events["end"] is not None and ended is None:
                ended = now
                end = self.events["end"]
                # a worker that never said goodbye (and is not known dead) keeps the job from exiting by itself
                silent = set(end.get("dead_workers") or []) - set(self.deaths)
                grace = END_GRACE_SILENT if silent else END_GRACE + self.spec.stop_timeout
            if ended is not None and now - ended > grace:
                self.killed = "end"  # the result is complete; the job did not exit (a finalize that hangs)
                self.kill()
                return
            if now > deadline:
                self.killed = "timeout"
                self.kill()
                return

    def kill(self):
        """Kill the job: mpiexec (Hydra forwards the signal to its proxies, which kill the ranks), then any rank
        process of this run still on this host."""
        self.killing = True
        proc = self.proc
        if proc is not None and proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        for pid in job_processes(self.run_dir):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    # ------------------------------------------------------------------ the result
    def result(self, prior, prior_tasks=()) -> RunResult:
        ev, spec = self.events, self.spec
        end = ev["end"] or {}
        start = ev["start"] or {}
        records = list(prior) + ev["records"]
        n_new = len(ev["records"])
        status, error = end.get("status", "error"), end.get("error", "")
        # the update's state after the last iteration finished: this job's, else the one it resumed from
        step_state = ev["state"] if ev["state"] is not None else spec.state0
        theta = end.get("theta")
        if theta is None:  # the master ended without a word: the parameters of that state, or where the run began
            if step_state is not None:
                theta = _unpacked_theta(step_state)
            else:
                theta = np.zeros(spec.problem.dim) if spec.theta0 is None else spec.theta0
        done = spec.start + n_new
        returncode = self.proc.returncode if self.proc is not None else None
        if self.interrupted is not None:
            status, error = "interrupted", (f"interrupted by {_signal_name(self.interrupted)} after {done} of "
                                            f"{spec.iterations} iterations")
        elif self.killed == "master":
            d = self.master_death
            how = d["name"] or f"exit code {d['code']}"
            status, error = "error", (f"the master (MPI rank 0, pid {d['pid']} on {d['host']}) died ({how}) after "
                                      f"{done} of {spec.iterations} iterations")
        elif self.killed == "startup":
            status, error = "error", ("the run could not start: a worker died before every rank was through "
                                      "MPI_Init, where the others wait for it")
        elif self.killed == "startup-stopped":
            which = ", ".join(f"MPI rank {r} ({i['stopped']}, pid {i['pid']} on {i['host']})"
                              for r, (i, _) in sorted(self.stopped.items()))
            status, error = "error", (f"the run could not start: {which} was stopped before every rank was through "
                                      f"MPI_Init, where the others wait for it")
        elif self.killed == "startup-timeout":
            status, error = "error", (f"the run could not start: not every rank was through MPI_Init "
                                      f"{self.startup_timeout:g} s after the job started (a rank that is frozen, "
                                      f"or a host that does not answer, holds the others there; --startup-timeout "
                                      f"sets the limit)")
        elif self.killed == "timeout":
            status, error = "error", (f"job killed after the job timeout of {self.job_timeout:g} s "
                                      f"({done} of {spec.iterations} iterations finished)")
        elif not end:
            status, error = "error", self._no_result(done)
        deaths = {w: dict(info) for w, info in self.deaths.items()}
        dead = sorted(set(end.get("dead_workers", [])) | set(deaths))
        silent = {int(k): v for k, v in (end.get("silent") or {}).items()}
        for w in dead:
            if w in deaths:
                continue
            stop = self.stopped.get(w + 1)
            if stop is not None:
                deaths[w] = {"signal": None, "name": None, "code": None, **stop[0],
                             "cause": f"stopped ({stop[0]['stopped']}) and never said goodbye"}
            else:
                deaths[w] = {"signal": None, "name": None, "code": None,
                             "cause": "never said goodbye, and its guard reported no death"
                                      + (f" (silent: {silent[w]})" if w in silent else "")}
        res = RunResult(records=records, theta=np.asarray(theta, dtype=float), status=status, error=error,
                        predicted=None if start.get("predicted") is None else
                        np.array([math.inf if p is None else p for p in start["predicted"]]),
                        dead_workers=dead, messages_sent=end.get("messages_sent", 0),
                        messages_received=end.get("messages_received", 0),
                        abandoned={int(k): v for k, v in (end.get("abandoned") or {}).items()},
                        drained=end.get("stale", 0), spec=start.get("spec", spec.describe()),
                        returncode=returncode, seconds=self.seconds, deaths=deaths,
                        pids={int(k): v for k, v in (start.get("pids") or {}).items()}, start=spec.start,
                        hosts={int(k): v for k, v in (start.get("hosts") or {}).items()},
                        bells=[int(w) for w in start.get("bells") or []],
                        tasks=[t for t in prior_tasks if t[1] < spec.start] + ev["tasks"],
                        step_state=step_state, network=(ev.get("network") or {}).get("measured"))
        if dead:
            res.error = (res.error + "; " if res.error else "") + deaths_text(deaths) + (
                "; the run treated them as stragglers that never answer" if status == "ok" else "")
        return res

    def _no_result(self, done) -> str:
        text = "".join(self.other)
        said = re.search(r"EXIT STRING:\s*(.+?)\s*$", text, re.M) or re.search(r"EXIT CODE:\s*(\d+)", text)
        log = (self.run_dir / "stderr.txt").read_text(errors="replace")[-4000:]
        tail = " ".join(log[-600:].split())
        rc = self.proc.returncode
        lost = re.search(r"control_cb .*assert \(!closed\) failed", log)  # Hydra's words for a lost proxy
        why = (f"mpiexec reports '{said.group(1)}' (a process it started died: a rank's guard)" if said else
               f"mpiexec was killed by {_signal_name(-rc)}" if rc is not None and rc < 0 else
               f"mpiexec exited with code {rc}" + (" after it lost the connection to the proxy of a host "
                                                   "(hydra_pmi_proxy ended, or its host is gone)" if lost else ""))
        return (f"the job ended without a result after {done} of {self.spec.iterations} iterations: {why}"
                + (f"; stderr ends: {tail[-300:]}" if tail else ""))


def _unpacked_theta(packed):
    from gclib.runtime.state import unpack_step_state

    return unpack_step_state(packed)["theta"]


def _signal_name(sig) -> str:
    try:
        return signal.Signals(int(sig)).name
    except (ValueError, TypeError):
        return f"signal {sig}"


def deaths_text(deaths: dict) -> str:
    """``"worker processes died: 2 (SIGKILL, MPI rank 3, pid 1234)"``, the worker processes stopped by a signal
    (``"worker processes stopped: 1 (SIGSTOP, MPI rank 2, pid 1233)"``), and the workers that never said goodbye
    although their guard reported nothing (a process frozen without a signal, or unreachable)."""
    died, stopped, silent = [], [], []
    for w in sorted(deaths):
        d = deaths[w]
        how = d.get("name") or (f"exit code {d['code']}" if d.get("code") is not None else None)
        pid = f", pid {d['pid']})" if d.get("pid") else ")"
        if how is not None:
            died.append(f"{w} ({how}, MPI rank {w + 1}{pid}")
        elif d.get("stopped"):
            stopped.append(f"{w} ({d['stopped']}, MPI rank {w + 1}{pid}")
        else:
            silent.append(f"{w} (MPI rank {w + 1})")
    parts = ([f"worker processes died: {', '.join(died)}"] if died else []) + (
        [f"worker processes stopped: {', '.join(stopped)}"] if stopped else []) + (
        [f"workers never said goodbye (alive but frozen, or unreachable): {', '.join(silent)}"] if silent else [])
    return "; ".join(parts)


def job_processes(run_dir) -> list:
    """Process ids on this host of the ranks (and guards) of the job whose run directory is ``run_dir`` (its
    name in their command lines; Linux ``/proc``; empty elsewhere)."""
    needle = os.fsencode(str(Path(run_dir).absolute()))
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for e in entries:
        if not e.isdigit() or int(e) == os.getpid():
            continue
        try:
            with open(f"/proc/{e}/cmdline", "rb") as fh:
                cmd = fh.read().split(b"\0")
        except OSError:
            continue
        if needle in cmd and any(c.endswith((b"gclib.runtime.mpi_main", b"guard.py")) for c in cmd):
            out.append(int(e))
    return out


def rank_processes(run_dir) -> dict:
    """``{rank: pid}`` of the rank processes of a running job on this host (the children of the guards,
    ``... mpi_main RUN_DIR --rank R``; worker ``R - 1``); for tests and for users who want to kill one."""
    out = {}
    for pid in job_processes(run_dir):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = [c.decode() for c in fh.read().split(b"\0")]
        except OSError:
            continue
        if RANK in cmd:
            out[int(cmd[cmd.index(RANK) + 1])] = pid
        elif not any(c.endswith("guard.py") for c in cmd):  # a rank started without its guard (an A/B arm)
            rank = _environ_rank(pid)
            if rank is not None:
                out[rank] = pid
    return out


def _environ_rank(pid):
    """The MPI rank Hydra (or ``srun``) gave process ``pid`` in its environment, or ``None``."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = dict(x.split(b"=", 1) for x in fh.read().split(b"\0") if b"=" in x)
    except OSError:
        return None
    for key in (b"PMI_RANK", b"PMI_ID", b"SLURM_PROCID"):
        if env.get(key, b"").isdigit():
            return int(env[key])
    return None


def _catch_stop_signals():
    """Turn Ctrl-C (and SIGTERM, SIGHUP) into :class:`Interrupted` while the job runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        for name in STOP_SIGNALS:  # a second Ctrl-C while we clean up must not break the clean-up
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        raise Interrupted(signum)

    old = {}
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            old[sig] = signal.signal(sig, handler)
    return old


def _restore(old):
    if old:
        for sig, h in old.items():
            signal.signal(sig, h)
