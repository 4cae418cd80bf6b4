"""What a message costs, measured with the runtime's own sends after a profile's iterations (``RunSpec.network``).

Both sides use what an iteration uses: the master posts a small request with a non-blocking send and rings the
workers' bell; a worker takes it in through its control receive and answers with non-blocking sends of gradient
messages' kind (``float64``), ringing the master's bell; the master takes them in with a matched probe and a tested
receive, waiting on its bell between looks. Every time is the master's own clock (clocks are never compared across
hosts). For every message size (in floats):

* **ping**: to one worker at a time, a request for one answer of that size; the round trip, :data:`PINGS` times
  per worker after one untimed round (MPICH posts the first message of a size more slowly than the next);
* **flood**: to every worker at once, a request for :data:`FLOOD` answers each (:data:`FLOODS` times); the times
  at which the master took in the first and the last of them (the master takes messages in one at a time: their
  spacing is its time per message when they queue).

:mod:`gclib.message_cost` fits the latency, the master's time per message and the bandwidth to these numbers and writes
them beside the trace; ``gclib advise`` charges them.
"""
from __future__ import annotations

import time

import numpy as np

from gclib.runtime import protocol as P
from gclib.runtime import wakeup

#: Round trips per worker and size (after one untimed round).
PINGS = 5
#: Seconds the master waits at least for an exchange's answers before it leaves the silent workers out; longer
#: where what was measured of the smaller sizes says the answers need longer (a slow link, large messages).
WAIT = 2.0
#: How many times the time the smaller sizes predict for an exchange the master waits for it.
MARGIN = 4.0
#: Answers per worker in a flood, and floods per size.
FLOOD = 4
FLOODS = 3


def answer(worker, request) -> None:
    """A worker's side: send ``request[1]`` messages of ``request[0]`` float64 zeros to the master (tag
    :data:`~gclib.runtime.protocol.TAG_ECHO`), non-blocking; the worker keeps each buffer until its send
    completes."""
    size, count = int(request[0]), int(request[1])
    for _ in range(count):
        worker._isend(np.zeros(size), 0, P.TAG_ECHO)


def _take(master, n: int, size: int, deadline: float) -> list:
    """The master's side of one exchange: take in ``n`` answers of ``size`` floats; returns the
    ``perf_counter`` times at which each receive completed (fewer when ``deadline`` passes first: a worker that
    died or never answered). A receive still in flight at the deadline is cancelled and completed before its
    buffer is let go (MPI would write into freed memory)."""
    MPI, comm, bell = master.MPI, master.comm, master.bell
    st = MPI.Status()
    inflight, done = [], []
    while len(done) < n and time.perf_counter() < deadline:
        rung = bell.value(wakeup.TO_MASTER) if bell is not None else 0
        moved = False
        for _ in range(master.probes):  # twice, as the master's iteration probes (see Master._receive_one)
            try:
                msg = comm.Improbe(source=MPI.ANY_SOURCE, tag=P.TAG_ECHO, status=st)
            except MPI.Exception:
                msg = None
            if msg is not None:
                buf = np.empty(st.Get_count(MPI.DOUBLE))
                inflight.append((msg.Irecv(buf), buf))
                moved = True
                break
        keep = []
        for req, buf in inflight:
            if req.Test():
                done.append(time.perf_counter())
                moved = True
            else:
                keep.append((req, buf))
        inflight = keep
        if not moved and len(done) < n:
            if bell is not None:
                bell.wait(wakeup.TO_MASTER, rung, master.slice)
            else:
                time.sleep(master.spec.poll)
    for req, buf in inflight:
        req.Cancel()
        req.Wait()
    return done


def _ask(master, workers, size: int, count: int) -> float:
    """Post a request for ``count`` answers of ``size`` floats to ``workers``; the time just before."""
    t0 = time.perf_counter()
    for w in workers:
        master._isend(np.array([float(size), float(count)]), dest=w + 1, tag=P.TAG_NETWORK)
    if master.bell is not None:
        master.bell.ring(wakeup.TO_WORKERS)
    return t0


def probe(master, sizes) -> dict:
    """The master's side, after the last iteration (the workers are idle, waiting for parameters).

    Returns:
        a dict: ``ping``, every timed round trip as ``[bytes, worker, seconds]``; ``flood``, per size and flood
        ``[bytes, messages, first, last]``: the answers it brought in and the seconds from the requests to the
        first and to the last of them; ``workers`` (those that answered), ``pings`` and ``flood_messages``.
    """
    master.check_deaths(force=True)
    alive = [w for w in range(master.K) if w not in master.dead]
    pings, floods = [], []
    floor = min(master.spec.timeout, WAIT)
    per_byte = 0.0  # the round trip per byte of the last size measured: what the next size's waits scale with
    for size in sorted({int(s) for s in sizes}):
        nbytes = 8 * size
        wait = max(floor, MARGIN * per_byte * nbytes)
        for w in list(alive):
            for i in range(PINGS + 1):
                t0 = _ask(master, [w], size, 1)
                got = _take(master, 1, size, t0 + wait)
                if not got:  # this worker no longer answers: leave it out of what follows
                    alive.remove(w)
                    break
                if i:
                    pings.append([nbytes, w, got[0] - t0])
            master._reap()
        if not alive:
            break
        mine = [p[2] for p in pings if p[0] == nbytes]
        if mine:
            per_byte = float(np.median(mine)) / nbytes
        flood_wait = max(floor, MARGIN * per_byte * nbytes * FLOOD * len(alive))
        for _ in range(FLOODS):
            t0 = _ask(master, alive, size, FLOOD)
            got = _take(master, FLOOD * len(alive), size, t0 + flood_wait)
            if got:
                floods.append([nbytes, len(got), got[0] - t0, got[-1] - t0])
            master._reap()
    return {"ping": pings, "flood": floods, "workers": len(alive), "pings": PINGS, "flood_messages": FLOOD}
