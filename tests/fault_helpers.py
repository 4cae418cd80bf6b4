"""Helpers shared by the fault tests over MPI (imported like ``notebook_fixtures``: pytest puts ``tests/`` on the
path)."""
import os
import signal
import threading
import time

from gclib.runtime.processes import rank_processes


def stop_at_start(job_dir, ranks):
    """A thread (not started) that stops (SIGSTOP) the given ranks' processes as soon as they exist in the job
    ``job_dir`` (while Python starts, before MPI_Init), for at most 60 s; ``stopped`` gets ``{rank: pid}``.

    Returns:
        ``(thread, stopped)``.
    """
    stopped = {}

    def stop():
        t0 = time.monotonic()
        while len(stopped) < len(ranks) and time.monotonic() - t0 < 60:
            for r, pid in rank_processes(job_dir).items():
                if r in ranks and r not in stopped:
                    os.kill(pid, signal.SIGSTOP)
                    stopped[r] = pid
            time.sleep(0.002)

    return threading.Thread(target=stop, daemon=True), stopped
