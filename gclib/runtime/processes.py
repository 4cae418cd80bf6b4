"""The processes of a job on this host, found by its run directory in their command lines (Linux ``/proc``): for
killing what is left of a job, and for tests and users who want to signal one rank.
"""
from __future__ import annotations

import os
from pathlib import Path

from gclib.runtime.guard import RANK


def command_line(pid) -> list | None:
    """The command line of process ``pid`` as its arguments (bytes; Linux ``/proc``), or ``None`` when it cannot
    be read (the process is gone, or this is not Linux)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().split(b"\0")
    except OSError:
        return None


def job_commands(run_dir) -> dict:
    """``{pid: command line}`` (:func:`command_line`) on this host of the ranks (and guards) of the job whose run
    directory is ``run_dir`` (its name in their command lines; Linux ``/proc``; empty elsewhere)."""
    needle = os.fsencode(str(Path(run_dir).absolute()))
    out = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for e in entries:
        if not e.isdigit() or int(e) == os.getpid():
            continue
        cmd = command_line(e)
        if cmd and needle in cmd and any(c.endswith((b"gclib.runtime.rank", b"guard.py")) for c in cmd):
            out[int(e)] = cmd
    return out


def job_processes(run_dir) -> list:
    """Process ids on this host of the ranks (and guards) of the job whose run directory is ``run_dir`` (see
    :func:`job_commands`)."""
    return list(job_commands(run_dir))


def rank_processes(run_dir) -> dict:
    """``{rank: pid}`` of the rank processes of a running job on this host (the children of the guards,
    ``... gclib.runtime.rank RUN_DIR --rank R``; worker ``R - 1``); for tests and for users who want to kill one."""
    out = {}
    for pid, cmd in job_commands(run_dir).items():
        cmd = [c.decode() for c in cmd]
        if RANK in cmd:
            out[int(cmd[cmd.index(RANK) + 1])] = pid
    return out


def open_files(pid) -> list:
    """The paths process ``pid`` holds open on this host (Linux ``/proc/PID/fd``; empty when they cannot be
    read)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    out = []
    for fd in fds:
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return out


#: Where Hydra's proxy writes the machine's topology for the ranks (``hwloc``); it removes the file when it exits,
#: not when it is killed (a lost proxy leaves it behind).
HYDRA_TOPOLOGY = "/tmp/hydra_hwloc_xmlfile_"


def descendants(pid: int) -> list:
    """The processes descended from ``pid`` on this host (Linux ``/proc``: each process's parent; empty
    elsewhere)."""
    parent = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for e in entries:
        try:
            with open(f"/proc/{e}/stat") as fh:
                parent[int(e)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    children = {}
    for child, par in parent.items():
        children.setdefault(par, []).append(child)
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def hydra_files(pid: int) -> set:
    """The topology files (:data:`HYDRA_TOPOLOGY`) that the processes descended from ``pid`` (an ``mpiexec``: its
    proxies, which start sessions of their own, and its ranks) hold open on this host (Linux ``/proc``; empty
    elsewhere): the files of this job, told apart from other jobs' by who holds them."""
    return {f for child in descendants(pid) for f in open_files(child) if f.startswith(HYDRA_TOPOLOGY)}


#: Where MPICH keeps the shared memory of a host's ranks; it removes the file in ``MPI_Finalize``, so a job whose
#: ranks leave without it (a dead peer) leaves the file behind, in memory (``/dev/shm`` is a tmpfs).
MPICH_SHM = "/dev/shm/mpich_shm_"


def shm_segments(pids) -> set:
    """The MPICH shared-memory files (:data:`MPICH_SHM`) that processes ``pids`` have mapped (Linux
    ``/proc/PID/maps``; empty elsewhere): a job's, told apart from other jobs' by who maps them."""
    out = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                out.update(line.split(None, 5)[5].strip() for line in f if MPICH_SHM in line)
        except (OSError, IndexError):
            continue
    return {f for f in out if f.startswith(MPICH_SHM) and not f.endswith("(deleted)")}


def remove_files(paths) -> None:
    """Remove the files ``paths`` that are still there (what a killed job's proxies left)."""
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass
