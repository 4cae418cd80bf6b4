"""Checks made before a job starts, so that a wrong setting is one line rather than a failed job: the ``mpiexec``
given is an executable Hydra ``mpiexec`` (:func:`check_mpiexec`), and the ranks fit in this host's memory
(:func:`check_ranks_memory`).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from gclib import checks
from gclib.runtime.spec import RunSpec


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
        raise ValueError(f"{subject} cannot be run: {os_reason(e)}") from None
    said = (out.stdout + out.stderr).strip()
    if out.returncode == 0 and HYDRA_VERSION.search(said):
        return program
    first = " ".join(said.splitlines()[0].split())[:80] if said else ""
    why = f"exited with code {out.returncode}" if out.returncode else (f"says {first!r}" if first else "says nothing")
    raise ValueError(f"{subject} is not a Hydra mpiexec (MPICH, Intel MPI, MVAPICH; the runtime needs Hydra's "
                     f"-disable-auto-cleanup): '{program} --version' {why}")


def os_reason(e: OSError) -> str:
    """What went wrong, in words, for a message."""
    return e.strerror or type(e).__name__


#: Memory of one rank besides its copy of the data: Python, numpy, SciPy, mpi4py and MPICH (about 75 MB measured
#: for a worker, 120 MB for the master, 11 MB for a guard), rounded up.
RANK_BYTES = 100e6


def check_host_memory(spec: RunSpec) -> None:
    """Refuse a run whose ranks cannot all fit in this host's memory (every rank holds the whole model: its
    ``nbytes``), as :func:`gclib.checks.need_memory` judges it (``GCLIB_MEMORY_LIMIT`` sets the budget)."""
    check_ranks_memory(spec.workers, float(getattr(spec.problem, "nbytes", 0) or 0))


def check_ranks_memory(workers: int, data_bytes: float = 0.0) -> None:
    """Refuse a run of ``workers`` workers (and a master) on this host when their ranks, each with
    ``data_bytes`` of data, cannot fit in its memory. Known from the number of workers alone (``data_bytes=0``),
    it is checked before the code and the data are built, which for thousands of workers takes long."""
    ranks = workers + 1
    checks.need_memory("a run on this host", ranks * (RANK_BYTES + data_bytes),
                       sizes=f"{ranks} MPI ranks (1 + workers = {workers})"
                             + (f", each with {checks.format_bytes(data_bytes)} of data" if data_bytes else ""),
                       lower="workers (--workers) or the data, or spread the ranks over machines (--hosts)")
