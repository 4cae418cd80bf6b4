"""The program of every MPI rank: ``python -m gclib.runtime.rank JOB --rank R``, started by the rank's
guard (:mod:`gclib.runtime.guard`, what ``mpiexec`` runs). ``JOB`` only names the job in ``ps`` (the launcher
passes its run directory, which no rank reads: the run directory may not even exist on the rank's host).

Rank 0 receives the pickled :class:`~gclib.runtime.spec.RunSpec` from the launcher on its standard input (Hydra
forwards ``mpiexec``'s standard input to rank 0, on whichever host it runs; see :func:`read_spec`), samples the
injected delays from the seed, and sends both to every worker, point to point; then rank 0 runs the master and
the others the workers. A model named by its import path reaches every rank as that name, and each rank builds it
(:meth:`~gclib.runtime.spec.RunSpec.build_model`; a rank that cannot says so,
:func:`~gclib.runtime.protocol.report_failure`, and the launcher ends the run). After the spec, the launcher writes
one line per dead worker on the same channel (see :class:`gclib.runtime.master.DeathNotices`). Ranks that know a
peer died leave without ``MPI_Finalize`` (it would wait for the dead rank forever).

Every rank runs under a guard that turns its death by a signal into an exit Hydra tolerates and reports it
(see :mod:`gclib.runtime.guard` and ``docs/runtime.md``). Python would turn SIGINT into ``KeyboardInterrupt``,
after which a rank hangs in ``MPI_Finalize`` at exit: here SIGINT kills a rank like any other signal.
"""
from __future__ import annotations

import fcntl
import json
import os
import pickle
import signal
import sys
import time
import traceback

from gclib.runtime.wakeup import join
from gclib.runtime.master import DeathNotices, emit, run_master
from gclib.runtime.protocol import MARK, TAG_SPEC, Exit, report_failure, sample_finish
from gclib.runtime.worker import run_worker

#: Seconds a worker waits for the spec from the master before it gives up.
SPEC_WAIT = 120.0
#: Bytes rank 0 asks for as the buffer of its standard input (a pipe from Hydra's proxy).
STDIN_BUFFER = 1 << 20
#: Linux ``fcntl`` commands that set and get the size of a pipe's buffer.
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032


def stdin_window(fd=0) -> int:
    """Bytes the launcher may have in flight to rank 0 (on ``fd``) before rank 0 acknowledges them: half the
    buffer of rank 0's standard input, enlarged first (to :data:`STDIN_BUFFER` when allowed).

    Hydra's proxy gives up the whole job ("process reading stdin too slowly") when it cannot write what it
    forwards at once, so the launcher never sends more than fits in the pipe; see :func:`read_spec`."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, STDIN_BUFFER)
    except OSError:
        pass
    try:
        size = fcntl.fcntl(fd, F_GETPIPE_SZ)
    except OSError:  # not a pipe (a terminal, a file): the smallest pipe Linux makes
        size = 4096
    return max(1024, size // 2)


def read_spec(fd=0, window=None) -> bytes:
    """Rank 0: read the pickled spec from the launcher on ``fd`` (its standard input).

    The launcher sends ``b"<length>\\n"``, then the bytes in windows of ``window`` bytes; after each window
    (and at the end) rank 0 prints ``MARK {"kind": "spec", "received": n}`` on stdout and the launcher sends the
    next one only then. Raises ``EOFError`` when the input ends first."""
    window = window or stdin_window(fd)
    head = b""
    while not head.endswith(b"\n"):
        c = os.read(fd, 1)
        if not c:
            raise EOFError("the launcher closed rank 0's standard input before the spec's length")
        head += c
        if len(head) > 24:
            raise ValueError(f"rank 0's standard input does not start with the spec's length: {head!r}")
    total = int(head)
    data = bytearray()
    while len(data) < total:
        chunk = os.read(fd, min(total - len(data), window - len(data) % window))
        if not chunk:
            raise EOFError(f"the launcher closed rank 0's standard input after {len(data)} of {total} bytes")
        data += chunk
        if len(data) % window == 0 or len(data) == total:
            print(MARK + json.dumps({"kind": "spec", "received": len(data)}), flush=True)
    return bytes(data)


def _start(comm, MPI, window):
    """Rank 0: receive the spec from the launcher (:func:`read_spec`), sample the delays, make the host's bell
    (:mod:`gclib.runtime.wakeup`) and send all three to every worker (non-blocking: a worker that died holds up
    nobody). Workers: receive them, and open the bell if they can.

    Returns ``(payload, sends, bell)``: ``payload`` is ``(spec, finish, the bell's path or None)``, ``None`` when
    the run cannot start (rank 0 said why on stdout) or ``False`` when no spec came within :data:`SPEC_WAIT` (a
    worker whose master is gone) or the worker cannot build the model (it said why on stdout); ``sends`` is rank
    0's list of ``(request, buffer)`` still to complete; ``bell`` the rank's :class:`~gclib.runtime.wakeup.Bell`, or
    ``None``."""
    if comm.Get_rank() == 0:
        payload, bell = _master_payload(comm, window)
        data = bytearray(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        sends = []
        for dest in range(1, comm.Get_size()):
            try:
                sends.append((comm.Isend([data, MPI.BYTE], dest=dest, tag=TAG_SPEC), data, dest))
            except MPI.Exception:
                pass
        return payload, sends, bell
    st = MPI.Status()
    deadline = time.monotonic() + SPEC_WAIT
    while not comm.Iprobe(source=0, tag=TAG_SPEC, status=st):
        if time.monotonic() > deadline:
            return False, [], None
        time.sleep(1e-3)
    data = bytearray(st.Get_count(MPI.BYTE))
    comm.Recv([data, MPI.BYTE], source=0, tag=TAG_SPEC)
    payload = pickle.loads(data)
    if not payload:
        return payload, [], None
    try:
        payload[0].build_model()
    except Exception as e:  # the model cannot be built here: say so, and wait for the launcher to end the job
        traceback.print_exc()
        report_failure(comm.Get_rank() - 1, "build", e)
        sys.stdout.flush()
        time.sleep(SPEC_WAIT)  # alive, not dead: the master waits for us, and no iteration starts meanwhile
        return False, [], None
    return payload, [], join(payload[2])


def _master_payload(comm, window) -> tuple:
    """Rank 0: what goes to every worker, ``(spec, finish, the bell's path or None)`` (``None`` when the run cannot
    start: said on stdout), and rank 0's bell (made by the master's class:
    :meth:`gclib.runtime.master.Master.make_bell`)."""
    try:
        spec = pickle.loads(read_spec(0, window))
        try:
            spec.build_model()  # a model named by its import path is built here, on every rank
        except Exception as e:
            report_failure(None, "build", e)
            raise
        if comm.Get_size() != spec.ranks:
            raise ValueError(f"the job has {comm.Get_size()} ranks, the run needs {spec.ranks} "
                             f"(1 master + {spec.workers} workers)")
        finish = sample_finish(spec.model, spec.iterations, spec.workers, spec.code.load, spec.seed)
        bell = spec.roles()[0].make_bell()
        return (spec, finish, bell.path if bell else None), bell
    except Exception as e:
        traceback.print_exc()
        emit("end", status="error", error=f"could not start: {type(e).__name__}: {e}", dead_workers=[],
             theta=None, stale=0)
        return None, None


def _complete(MPI, sends, seconds) -> None:
    """Wait up to ``seconds`` for non-blocking sends to complete (polling: never blocked on a dead peer)."""
    deadline = time.monotonic() + seconds
    while sends and time.monotonic() < deadline:
        try:
            sends = [s for s in sends if not s[0].Test()]
        except MPI.Exception:
            return
        time.sleep(1e-3)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # (the guard ignored it while Python imported)
    from mpi4py import MPI

    # Hydra sends SIGUSR1 to the ranks when some rank ends, and MPICH's handler for it (installed in MPI_Init)
    # makes the rank's next MPI call ask Hydra's PMI server which processes died, waiting for the answer in a
    # blocking read. After a worker's death that answer sometimes never came, and a worker of the dead one's
    # host stopped for good inside MPI_Test. The runtime learns of deaths from the guards and the launcher, not
    # from MPI: every rank ignores the signal again.
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)

    comm = MPI.COMM_WORLD
    window = None
    if comm.Get_rank() == 0:  # every rank is through MPI_Init (a collective): a death from now on is survivable
        window = stdin_window(0)  # and the launcher may send the spec, this many bytes at a time
        print(MARK + json.dumps({"kind": "init", "window": window}), flush=True)
    # An MPI error (a peer that died, say) raises MPI.Exception where we can handle it, instead of aborting.
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    payload, sends, bell = _start(comm, MPI, window)
    if not payload:  # the run cannot start (rank 0 said why), or no spec came (the master is gone)
        _complete(MPI, sends, 5.0)  # rank 0: let the workers hear that there is nothing to do
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1 if payload is False else 0)
    spec, finish, _ = payload
    master, worker = spec.roles()
    if comm.Get_rank() == 0:
        try:
            how = run_master(comm, spec, finish, sends=sends, deaths=DeathNotices(0), bell=bell, cls=master)
        finally:
            if bell is not None:
                bell.unlink()
    else:
        how = run_worker(comm, spec, finish, bell=bell, cls=worker)
    if how is Exit.HARD:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
