"""The arms of the runtime's A/B benchmarks: runs with some mechanisms of the MPI runtime left out, to measure what
each buys (``benchmarks/bench_runtime_ab.py``, ``benchmarks/faults_ab.py``). The runtime itself knows nothing of
them: an arm is a :class:`~gclib.runtime.spec.RunSpec` whose ranks run subclasses of the master and the worker
(:class:`ArmSpec`, through :meth:`RunSpec.roles <gclib.runtime.spec.RunSpec.roles>`), and the arm without guards
is an ``mpiexec`` that starts each rank's program itself (:func:`unguarded_mpiexec`).

Every mechanism left out gives the plain behaviour of :data:`MECHANISMS`: the master's and the workers' constants
of a look (two probes, two tests), their waits (the bell, the spin, the yield, the lead), the master's decodes (the
cache of coefficients, decoding ahead), the settling after the warm-up (garbage frozen, timer slack), and the guard.
"""
from __future__ import annotations

import contextlib
import shlex
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gclib.runtime.decoding import Collect
from gclib.runtime.hosts import find_mpiexec
from gclib.runtime.master import Master
from gclib.runtime.processes import job_commands, rank_processes
from gclib.runtime.spec import RunSpec
from gclib.runtime.worker import Worker

#: The mechanisms of the runtime beyond its plainest loop, each of which an arm can leave out: name -> what the run
#: does without it.
MECHANISMS = {
    "bell": "no futex bell: the master waits in slices of one poll, the workers in slices of 5 polls",
    "probe2": "one probe per look of the master, one test per look of a worker (not two)",
    "spin": "a worker sleeps up to a task's end (no polling without sleep in its last 0.1 ms)",
    "yield": "a worker starts its first task as soon as it takes the parameters in (no 0.5 ms sleep first)",
    "lead": "a worker computes a task at the start of its window and sleeps the rest (not at the end)",
    "cache": "every decode is computed (no coefficients remembered by the contents received)",
    "ahead": "the master decodes only once the set is decodable (nothing while it waits)",
    "freeze": "no garbage collection and gc.freeze after the warm-up",
    "slack": "the kernel's default timer slack (not 1 ns)",
    "guard": "mpiexec starts every rank's program itself (no guard per rank: gclib.runtime.guard)",
}


def mechanisms(names) -> tuple:
    """The mechanisms to leave out, checked: names of :data:`MECHANISMS` (an iterable, or one comma-separated
    string), as a sorted tuple. An unknown name raises ``ValueError`` listing the known ones."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",")]
    out = {str(n) for n in names if str(n)}
    unknown = sorted(out - MECHANISMS.keys())
    if unknown:
        raise ValueError(f"unknown runtime mechanisms {unknown}; the known ones are {', '.join(MECHANISMS)}")
    return tuple(sorted(out))


@dataclass
class ArmSpec(RunSpec):
    """A run with the mechanisms ``left_out`` (names of :data:`MECHANISMS`) left out; the ranks get it with the spec,
    so every rank of the run, on every host, leaves out the same ones. ``guard`` is the launcher's to leave out:
    launch the spec with ``mpiexec=`` :func:`unguarded_mpiexec`."""

    left_out: tuple = ()

    def __post_init__(self):
        super().__post_init__()
        self.left_out = mechanisms(self.left_out)
        if self.exchange != "messages" or self.sequential is not None:
            raise ValueError("the arms leave mechanisms out of the messages exchange only")

    def roles(self) -> tuple:
        left = frozenset(self.left_out)
        return (type("ArmMaster", (ArmMaster,), {"left_out": left}),
                type("ArmWorker", (ArmWorker,), {"left_out": left}))

    def describe(self) -> dict:
        return {**super().describe(), "left_out": list(self.left_out)}


class _Settled:
    """The settling after the warm-up, without ``freeze`` or ``slack``."""

    left_out = frozenset()

    def collect_garbage(self):
        if "freeze" not in self.left_out:
            super().collect_garbage()

    def tighten_timers(self):
        if "slack" not in self.left_out:
            super().tighten_timers()


class ArmMaster(_Settled, Master):
    """The master without the mechanisms :attr:`left_out`: ``bell``, ``probe2``, ``cache``, ``ahead``, ``freeze``,
    ``slack``."""

    @classmethod
    def make_bell(cls):
        return None if "bell" in cls.left_out else super().make_bell()

    def __init__(self, comm, spec, finish, sends=(), deaths=None, bell=None):
        super().__init__(comm, spec, finish, sends=sends, deaths=deaths, bell=bell)
        if "probe2" in self.left_out:
            self.probes = 1
        if "cache" in self.left_out:
            self.decoding.kept = 0

    def book(self, it: int) -> Collect:
        return NotAhead(self, it) if "ahead" in self.left_out else super().book(it)


class NotAhead(Collect):
    """The messages of an iteration, decoded only once they are decodable (nothing decoded ahead)."""

    def plan_ahead(self, messages) -> None:
        pass


class ArmWorker(_Settled, Worker):
    """A worker without the mechanisms :attr:`left_out`: ``probe2``, ``spin``, ``yield``, ``lead``, ``freeze``,
    ``slack`` (without the master's bell it finds none to open)."""

    def __init__(self, comm, spec, finish, bell=None):
        super().__init__(comm, spec, finish, bell=bell)
        if "spin" in self.left_out:
            self.end_spin = 0.0
        if "yield" in self.left_out:
            self.take_in_yield = 0.0
        if "probe2" in self.left_out:
            self.tests = 1
        if "lead" in self.left_out:  # the work of a task starts as soon as its window does (an infinite lead)
            self.lead = np.inf

    def learn_lead(self, took: float) -> None:
        if "lead" not in self.left_out:
            super().learn_lead(took)


#: The program :func:`unguarded_mpiexec` writes: the real ``mpiexec`` with each rank's guard replaced by the rank's
#: program (``python -I .../guard.py RUN_DIR`` becomes ``python -m gclib.runtime.rank RUN_DIR``).
UNGUARD = '''import os
import sys

real, args = sys.argv[1], sys.argv[2:]
for i in range(len(args) - 1):
    if args[i] == "-I" and args[i + 1].endswith("guard.py"):
        args[i:i + 2] = ["-m", "gclib.runtime.rank"]
        break
os.execv(real, [real, *args])
'''


@contextlib.contextmanager
def unguarded_mpiexec(mpiexec=None):
    """The path of an ``mpiexec`` (a temporary wrapper of ``mpiexec``, default the one the runtime finds) that
    starts every rank's program itself, with no guard (the arm without ``guard``), for
    ``gclib.runtime.launch(spec, mpiexec=...)``; removed on exit."""
    real = str(mpiexec or find_mpiexec())
    with tempfile.TemporaryDirectory(prefix="gclib-unguarded-") as folder:
        script = Path(folder) / "unguard.py"
        script.write_text(UNGUARD)
        exe = Path(folder) / "mpiexec"
        exe.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -I {shlex.quote(str(script))} '
                       f'{shlex.quote(real)} "$@"\n')
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        yield str(exe)


def rank_pids(run_dir) -> dict:
    """``{rank: pid}`` of a running job's rank processes on this host, whether under a guard
    (:func:`gclib.runtime.processes.rank_processes`) or started by ``mpiexec`` itself (their rank is in their
    environment)."""
    out = rank_processes(run_dir)
    for pid, cmd in job_commands(run_dir).items():
        if pid in out.values():
            continue
        if not any(c.endswith(b"guard.py") for c in cmd):  # a rank started without a guard
            rank = environ_rank(pid)
            if rank is not None:
                out[rank] = pid
    return out


def environ_rank(pid: int):
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
