"""The program every MPI rank runs: ``mpiexec -n K+1 python -m gclib.runtime.mpi_main SPEC.pkl``.

Rank 0 reads the pickled :class:`~gclib.runtime.spec.RunSpec` (only rank 0 needs to see the file), samples the
injected delays from the seed, and sends both to every worker, point to point; then rank 0 runs the master and
the others the workers. Ranks that know a peer died leave without ``MPI_Finalize`` (it would wait for the dead
rank forever).

**Guards.** Hydra's proxy kills every rank of its host (SIGKILL) when it sees one of the processes it started
die by a signal, whatever ``-disable-auto-cleanup`` says; it only lets the others run on when a process *exits*.
So no rank runs in the process Hydra starts: that process (the guard) forks, the child becomes the MPI rank
(``... mpi_main SPEC --rank R``, so that ``ps`` tells them apart), and the guard waits for it. When the child dies
by a signal, the guard reports it on stderr (one line after :data:`~gclib.runtime.protocol.REPORT`, read by the
launcher) and exits with ``128 + signal``: Hydra sees an exit, and the rest of the job runs on. A dead worker is
a straggler that never answers; a dead master ends the run, and the launcher, told by the master's guard, kills
the job (Hydra itself may never notice: it looks for dead processes only when some output arrives). The guard
passes on the catchable signals it gets; the child dies with its guard (``PR_SET_PDEATHSIG``), so killing the job
leaves no rank behind. See ``docs/runtime.md``.
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import sys
import time
import traceback

from .protocol import MARK, RANK, REPORT

#: Signals a guard passes on to its rank (SIGKILL and SIGSTOP cannot be caught).
FORWARD = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGALRM", "SIGPIPE")
#: Seconds a worker waits for the spec from the master before it gives up.
SPEC_WAIT = 120.0


def env_rank() -> int | None:
    """This process's MPI rank as Hydra's environment tells it before ``MPI_Init`` (``None`` outside
    ``mpiexec``)."""
    for key in ("PMI_RANK", "PMI_ID"):
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
    """Fork and run the MPI rank in the child, as ``python -m gclib.runtime.mpi_main SPEC --rank R`` (so that
    ``ps`` tells the rank from its guard); the parent waits for the child and exits with it.

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


def _start(comm, MPI, argv):
    """Rank 0: read the spec, sample the delays and send both to every worker (non-blocking: a worker that died
    holds up nobody). Workers: receive them.

    Returns ``(payload, sends)``: ``payload`` is ``(spec, finish)``, ``None`` when the run cannot start (rank 0
    said why on stdout) or ``False`` when no spec came within :data:`SPEC_WAIT` (a worker whose master is gone);
    ``sends`` is rank 0's list of ``(request, buffer)`` still to complete."""
    from .protocol import TAG_SPEC

    if comm.Get_rank() == 0:
        from .master import emit
        from .protocol import sample_finish

        payload = None
        try:
            with open(argv[0], "rb") as fh:
                spec = pickle.load(fh)
            if comm.Get_size() != spec.ranks:
                raise ValueError(f"the job has {comm.Get_size()} ranks, the run needs {spec.ranks} "
                                 f"(1 master + {spec.workers} workers)")
            finish = sample_finish(spec.model, spec.iterations, spec.workers, spec.code.load, spec.seed)
            payload = (spec, finish)
        except Exception as e:
            traceback.print_exc()
            emit("end", status="error", error=f"could not start: {type(e).__name__}: {e}", dead_workers=[],
                 theta=None, stale=0)
        data = bytearray(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        sends = []
        for dest in range(1, comm.Get_size()):
            try:
                sends.append((comm.Isend([data, MPI.BYTE], dest=dest, tag=TAG_SPEC), data, dest))
            except MPI.Exception:
                pass
        return payload, sends
    st = MPI.Status()
    deadline = time.monotonic() + SPEC_WAIT
    while not comm.Iprobe(source=0, tag=TAG_SPEC, status=st):
        if time.monotonic() > deadline:
            return False, []
        time.sleep(1e-3)
    data = bytearray(st.Get_count(MPI.BYTE))
    comm.Recv([data, MPI.BYTE], source=0, tag=TAG_SPEC)
    return pickle.loads(data), []


def _complete(MPI, sends, seconds) -> None:
    """Wait up to ``seconds`` for non-blocking sends to complete (polling: never blocked on a dead peer)."""
    deadline = time.monotonic() + seconds
    while sends and time.monotonic() < deadline:
        try:
            sends = [s for s in sends if not s[0].Test()]
        except MPI.Exception:
            return
        time.sleep(1e-3)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if RANK in argv:  # the rank process, under its guard
        argv = argv[:argv.index(RANK)]
        # Python turns SIGINT into KeyboardInterrupt, after which the rank would hang in MPI_Finalize at exit:
        # let it kill the rank like any other signal (the guard reports it).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    else:
        rank = env_rank()
        if rank is not None:  # under mpiexec: run the rank under a guard (see the module docstring)
            guard(rank, argv)  # never returns: the guard exits, the rank execs
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    if comm.Get_rank() == 0:  # every rank is through MPI_Init (a collective): a death from now on is survivable
        print(MARK + json.dumps({"kind": "init"}), flush=True)
    # An MPI error (a peer that died, say) raises MPI.Exception where we can handle it, instead of aborting.
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    payload, sends = _start(comm, MPI, argv)
    if not payload:  # the run cannot start (rank 0 said why), or no spec came (the master is gone)
        _complete(MPI, sends, 5.0)  # rank 0: let the workers hear that there is nothing to do
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1 if payload is False else 0)
    spec, finish = payload
    if comm.Get_rank() == 0:
        from .master import run_master

        how = run_master(comm, spec, finish, sends=sends, run_dir=os.path.dirname(os.path.abspath(argv[0])))
    else:
        from .worker import run_worker

        how = run_worker(comm, spec, finish)
    if how == "hard":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
