"""The program of every MPI rank: ``python -m gclib.runtime.mpi_main SPEC.pkl --rank R``, started by the rank's
guard (:mod:`gclib.runtime.guard`, what ``mpiexec`` runs).

Rank 0 reads the pickled :class:`~gclib.runtime.spec.RunSpec` (only rank 0 needs to see the file), samples the
injected delays from the seed, and sends both to every worker, point to point; then rank 0 runs the master and
the others the workers. Ranks that know a peer died leave without ``MPI_Finalize`` (it would wait for the dead
rank forever).

Every rank runs under a guard that turns its death by a signal into an exit Hydra tolerates and reports it
(see :mod:`gclib.runtime.guard` and ``docs/runtime.md``). Python would turn SIGINT into ``KeyboardInterrupt``,
after which a rank hangs in ``MPI_Finalize`` at exit: here SIGINT kills a rank like any other signal.
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import sys
import time
import traceback

from .protocol import MARK, RANK

#: Seconds a worker waits for the spec from the master before it gives up.
SPEC_WAIT = 120.0


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
    if RANK in argv:
        argv = argv[:argv.index(RANK)]
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # (the guard ignored it while Python imported)
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
