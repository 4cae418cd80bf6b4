"""The program every MPI rank runs: ``mpiexec -n K+1 python -m gclib.runtime.mpi_main SPEC.pkl``.

Rank 0 reads the pickled :class:`~gclib.runtime.spec.RunSpec` (only rank 0 needs to see the file), samples the
injected delays from the seed, and broadcasts both; then rank 0 runs the master and the others the workers.
Ranks that know a peer died leave without ``MPI_Finalize`` (it would wait for the dead rank forever).
"""
from __future__ import annotations

import os
import pickle
import sys
import traceback


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    payload = None
    if rank == 0:
        from .master import emit
        from .protocol import sample_finish

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
    payload = comm.bcast(payload, root=0)
    if payload is None:
        return
    spec, finish = payload
    if rank == 0:
        from .master import run_master

        how = run_master(comm, spec, finish)
    else:
        from .worker import run_worker

        how = run_worker(comm, spec, finish)
    if how == "hard":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
