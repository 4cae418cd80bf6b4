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

One job may run several specs one after the other (:func:`gclib.runtime.launcher.launch_series`): after a run that
ended cleanly (every worker said goodbye and every message was drained), rank 0 reads the next spec from the
launcher, or a length of 0 when there is none, and every rank starts the next run, or leaves through
``MPI_Finalize``. A series thus pays for the ranks' start-up (Python, the model's framework, ``MPI_Init``) once.

Every rank runs under a guard that turns its death by a signal into an exit Hydra tolerates and reports it
(see :mod:`gclib.runtime.guard` and ``docs/runtime.md``). Python would turn SIGINT into ``KeyboardInterrupt``,
after which a rank hangs in ``MPI_Finalize`` at exit: here SIGINT kills a rank like any other signal.
"""
from __future__ import annotations

import fcntl
import json
import os
import pickle
import select
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
#: Longest line rank 0 reads before a spec: its length, or a notice of the launcher between two runs.
LINE_MAX = 4096
#: Seconds rank 0 waits after a run's end for the launcher's next spec (or its word that none follows) before it
#: ends the job as if none followed; below :data:`SPEC_WAIT`, so that the workers hear it first.
NEXT_WAIT = 60.0
#: What rank 0 sends every worker when the series is over: no run follows, leave through ``MPI_Finalize``.
DONE = "done"
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


def read_spec(fd=0, window=None, notices=None) -> bytes:
    """Rank 0: read the pickled spec from the launcher on ``fd`` (its standard input).

    The launcher sends ``b"<length>\\n"``, then the bytes in windows of ``window`` bytes; after each window
    (and at the end) rank 0 prints ``MARK {"kind": "spec", "received": n}`` on stdout and the launcher sends the
    next one only then. A length of 0 says that no run follows (empty bytes are returned). Between the runs of a
    series a notice of the launcher (a JSON line, see :class:`gclib.runtime.master.DeathNotices`) may come before
    the length: it is appended to ``notices`` (given to the next run's master), or refused when ``notices`` is
    ``None``. Raises ``EOFError`` when the input ends first."""
    window = window or stdin_window(fd)
    while True:
        head = _line(fd)
        if head.startswith(b"{") and notices is not None:
            notices.append(head)
            continue
        try:
            total = int(head)
        except ValueError:
            raise ValueError(f"rank 0's standard input does not start with the spec's length: {head[:24]!r}") from None
        break
    data = bytearray()
    while len(data) < total:
        chunk = os.read(fd, min(total - len(data), window - len(data) % window))
        if not chunk:
            raise EOFError(f"the launcher closed rank 0's standard input after {len(data)} of {total} bytes")
        data += chunk
        if len(data) % window == 0 or len(data) == total:
            print(MARK + json.dumps({"kind": "spec", "received": len(data)}), flush=True)
    return bytes(data)


def _line(fd) -> bytes:
    """One line of ``fd`` with its newline (a spec's length, or a notice: at most :data:`LINE_MAX` bytes)."""
    head = b""
    while not head.endswith(b"\n"):
        c = os.read(fd, 1)
        if not c:
            raise EOFError("the launcher closed rank 0's standard input before the spec's length")
        head += c
        if len(head) > LINE_MAX:
            raise ValueError(f"rank 0's standard input does not start with the spec's length: {head[:24]!r}")
    return head


def _start(comm, MPI, window, notices=None, last=False):
    """Rank 0: receive the spec from the launcher (:func:`read_spec`; the notices that came before it go to
    ``notices``), sample the delays, make the host's bell (:mod:`gclib.runtime.wakeup`) and send all three to every
    worker (non-blocking: a worker that died holds up nobody). Workers: receive them, and open the bell if they can.

    Returns ``(payload, sends, bell)``: ``payload`` is ``(spec, finish, the bell's path or None)``; :data:`DONE`
    when no run follows (the launcher sent a length of 0); ``None`` when the run cannot start (rank 0 said why on
    stdout) or ``False`` when no spec came within :data:`SPEC_WAIT` (a worker whose master is gone) or the worker
    cannot build the model (it said why on stdout); ``sends`` is rank 0's list of ``(request, buffer)`` still to
    complete; ``bell`` the rank's :class:`~gclib.runtime.wakeup.Bell`, or ``None``. ``last``: rank 0 reads nothing
    and sends :data:`DONE`."""
    if comm.Get_rank() == 0:
        payload, bell = (DONE, None) if last else _master_payload(comm, window, notices)
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
    if not payload or payload == DONE:
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


def _master_payload(comm, window, notices=None) -> tuple:
    """Rank 0: what goes to every worker, ``(spec, finish, the bell's path or None)`` (:data:`DONE` when no run
    follows; ``None`` when the run cannot start: said on stdout), and rank 0's bell (made by the master's class:
    :meth:`gclib.runtime.master.Master.make_bell`)."""
    try:
        try:
            if notices is not None and not select.select([0], [], [], NEXT_WAIT)[0]:
                raise EOFError("no word from the launcher after the run's end")
            data = read_spec(0, window, notices)
        except EOFError:
            if notices is None:  # (the first run: no spec at all)
                raise
            data = b""  # the launcher is gone, or silent, between two runs: none follows
        if not data:
            return DONE, None
        spec = pickle.loads(data)
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
    notices = []  # rank 0: the launcher's notices that came before the spec (between two runs), for its master
    while True:
        if payload == DONE:  # the series is over: every rank leaves through MPI_Finalize
            _complete(MPI, sends, 5.0)  # rank 0: let the workers hear it
            return
        if not payload:  # the run cannot start (rank 0 said why), or no spec came (the master is gone)
            _complete(MPI, sends, 5.0)  # rank 0: let the workers hear that there is nothing to do
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1 if payload is False else 0)
        how = _run(comm, payload, sends, bell, notices)
        if how is Exit.HARD:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        # every worker said goodbye, nothing in flight: the next run of the series, if any (rank 0 reads the
        # launcher's word only after a run that finished: LAST, none follows)
        notices = []
        payload, sends, bell = _start(comm, MPI, window, notices, last=how is Exit.LAST)


def _run(comm, payload, sends, bell, notices) -> Exit:
    """Run one spec: the master on rank 0 (``notices``: the launcher's lines read before the spec, for it), a
    worker on the others; returns how the rank leaves it."""
    spec, finish, _ = payload
    master, worker = spec.roles()
    if comm.Get_rank() != 0:
        return run_worker(comm, spec, finish, bell=bell, cls=worker)
    try:
        return run_master(comm, spec, finish, sends=sends, deaths=DeathNotices(0, b"".join(notices)), bell=bell,
                          cls=master)
    finally:
        if bell is not None:
            bell.unlink()


if __name__ == "__main__":
    main()
