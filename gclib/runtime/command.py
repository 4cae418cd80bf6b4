"""The command that starts a job's ranks and the environment they get: ``mpiexec`` (or ``srun``) with its options,
then the guard of each rank (:mod:`gclib.runtime.guard`), which starts the rank's program.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from gclib import checks
from gclib.runtime.hosts import Launcher, check_hostfile, choose_launcher

#: The folder that holds the package (the ranks start there, and find the package on their path).
ROOT = Path(__file__).resolve().parents[2]


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
    return cmd + [sys.executable, "-I", str(Path(__file__).with_name("guard.py")), str(spec_path)]


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


def job_env() -> dict:
    """The ranks' environment: this process's, with the package's folder first on ``PYTHONPATH`` and one thread per
    rank for the linear algebra libraries (unless set)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(k, "1")
    return env
