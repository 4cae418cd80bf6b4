"""What ``mpiexec`` runs on every rank: a small guard that starts the real rank and outlives it.

    mpiexec -disable-auto-cleanup -n K+1 python -I .../gclib/runtime/guard.py RUN_DIR

Hydra's proxy kills every process it started on its host (SIGKILL) when it sees one of them die by a signal,
whatever ``-disable-auto-cleanup`` says; it lets the others run on only when a process *exits*. So the process
Hydra starts is this guard: it forks, the child execs the rank (``python -m gclib.runtime.mpi_main RUN_DIR --rank
R``, so that ``ps`` tells the two apart) and the guard waits for it. When the rank dies by a signal (or exits
with a non-zero code), the guard writes one line after :data:`REPORT` on stderr (``mpiexec`` forwards it to the
launcher, from every host) and exits with ``128 + signal``: Hydra sees an exit, and the rest of the job runs on.
This is how the launcher learns which rank died of which signal. A dead worker is then a straggler that never
answers; a dead master ends the run (the launcher kills the job).

The guard passes on the catchable signals it gets; the rank dies with its guard (``PR_SET_PDEATHSIG``), so
killing the job leaves no rank behind. SIGUSR1, Hydra's notice to every rank that some rank ended, is ignored
until MPICH installs its handler in ``MPI_Init`` (it would kill a rank that is still importing), and SIGINT until
the rank's ``main`` sets it back. The guard imports nothing but the standard library and runs as a script
(``-I``: nothing beside it on the path), not as part of the package: it costs about 11 MB per rank.
See ``docs/runtime.md``.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time

#: Prefix of a guard's report line on stderr:
#: ``REPORT {"rank": r, "pid": p, "signal": s, "code": c, "host": h, "time": t}``.
REPORT = "@gclib-rank-exit "
#: Argument that marks the rank process under a guard (``... mpi_main RUN_DIR --rank R``; worker ``R - 1``, or the
#: master for ``R = 0``).
RANK = "--rank"
#: Signals a guard passes on to its rank (SIGKILL and SIGSTOP cannot be caught).
FORWARD = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGALRM", "SIGPIPE")


def env_rank() -> int | None:
    """This process's MPI rank as Hydra's (or ``srun``'s) environment tells it before ``MPI_Init`` (``None``
    outside ``mpiexec`` and ``srun``)."""
    for key in ("PMI_RANK", "PMI_ID", "SLURM_PROCID"):
        v = os.environ.get(key, "")
        if v.isdigit():
            return int(v)
    return None


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent (the guard) dies."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the worker's idle timeout is the backstop
        pass


def guard(rank: int, argv) -> None:
    """Fork and exec the MPI rank in the child, as ``python -m gclib.runtime.mpi_main RUN_DIR --rank R``; wait for
    it and exit with it (never returns).

    The parent closes its copy of Hydra's PMI socket, so that the socket closes when the *rank* ends and Hydra
    notices the end at once; it passes on catchable signals, reports a death by signal or a non-zero exit, and
    exits with ``128 + signal`` (or the child's exit code).
    """
    # SIGUSR1 is Hydra's notice to every rank's process group that some rank ended. A rank that has not yet
    # reached MPI_Init (where MPICH installs its handler) would die of it: ignore it in both processes (the
    # disposition survives exec; MPICH installs its own handler in the rank).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        _die_with_parent()
        if os.getppid() != parent:  # the guard died before the request took effect
            os._exit(1)
        # Ignored until the rank's main() sets it back: a SIGINT while Python imports would end the rank with
        # a traceback and exit code 1 instead of a death by signal.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            os.execv(sys.executable, [sys.executable, "-m", "gclib.runtime.mpi_main", *argv, RANK, str(rank)])
        except OSError:
            os._exit(1)
    fd = os.environ.get("PMI_FD", "")
    if fd.isdigit():
        try:
            os.close(int(fd))
        except OSError:
            pass

    def forward(sig, frame):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    for name in FORWARD:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), forward)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(1)
    if os.WIFSIGNALED(status):
        sig, code, exit_code = os.WTERMSIG(status), None, 128 + os.WTERMSIG(status)
    else:
        sig, code = None, os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
        exit_code = code
    if sig is not None or code:
        line = REPORT + json.dumps({"rank": rank, "pid": pid, "signal": sig, "code": code,
                                    "host": os.uname().nodename, "time": time.time()})
        try:
            os.write(2, (line + "\n").encode())
        except OSError:
            pass
    os._exit(exit_code)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    rank = env_rank()
    if rank is None:
        sys.stderr.write("gclib guard: no PMI_RANK or SLURM_PROCID in the environment; run under mpiexec or srun\n")
        os._exit(2)
    guard(rank, argv)


if __name__ == "__main__":
    main()
