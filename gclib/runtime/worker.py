"""A worker rank: compute the real partial gradients in its order, sleep the injected delays, send each message as
soon as it is ready, and abandon an iteration as soon as newer parameters arrive.

The worker never blocks inside MPI (MPICH spins in blocking calls, stealing the CPU that the other ranks of an
oversubscribed host need). It waits in ``select`` on its wake-up channel to the master (:mod:`gclib.runtime.wake`),
with the injected delay as the timeout: the master writes one byte there after every message it sends, and the
worker writes one after each of its own. Without a channel every wait is a sleep in slices of ``spec.poll * 2``
seconds between ``Iprobe`` calls.
"""
from __future__ import annotations

import os
import sys
import time
import traceback

import numpy as np

from ..codes.base import split_pieces
from . import protocol as P
from . import wake
from .guard import hand_over_sockets

#: A worker that hears nothing from the master for this long exits (the master died).
IDLE_EXIT = 600.0
#: Seconds a worker waits for the master's offer of a wake-up channel at start-up.
OFFER_WAIT = 60.0


class _Stop(Exception):
    pass


class Worker(P.Rank):
    """State of worker ``w`` (rank ``w + 1``) for one run."""

    def __init__(self, comm, spec, finish):
        super().__init__(comm, spec)
        self.w = comm.Get_rank() - 1
        self.order = self.code.order[self.w]
        self.msgs = self.code.messages_of(self.w)
        self.finish = finish[:, self.w, :] * spec.time_scale  # (iterations, n_tasks) seconds
        self.slice = 2 * spec.poll
        self.sent = 0
        self.abandoned = 0
        self.final = None
        self.handed = False
        self.params_buf = np.empty(self.dim + 1)
        self.wake_sock = None  # the wake-up channel to the master, None: poll
        self.owed = 0  # wake-up bytes read whose control message has not been received yet

    # ------------------------------------------------------------------ control channel
    def _receive_control(self):
        """Receive every control message waiting; return the newest ``(iteration, theta)``, or raise _Stop."""
        MPI, st = self.MPI, self.MPI.Status()
        newest = None
        while self.comm.Iprobe(source=0, tag=MPI.ANY_TAG, status=st):
            tag = st.Get_tag()
            self.owed = max(0, self.owed - 1)
            if tag == P.TAG_PARAMS:
                self.comm.Recv([self.params_buf, MPI.DOUBLE], source=0, tag=tag)
                newest = (int(self.params_buf[0]), self.params_buf[1:].copy())
            else:
                buf = np.empty(1)
                self.comm.Recv([buf, MPI.DOUBLE], source=0, tag=tag)
                if tag == P.TAG_STOP:
                    raise _Stop
                if tag == P.TAG_FINAL:
                    self.final = bool(buf[0])
                    raise _Stop
        return newest

    def _wait_until(self, deadline):
        """Wait until ``deadline`` (``perf_counter`` seconds, may be ``inf``) for new parameters; return them if
        they arrive first, else ``None``.

        With a wake-up channel: block in ``select`` on it until the deadline, at most :data:`wake.CAP` s; in
        short slices of ``spec.poll`` only while a byte read is owed its message or a send of ours is pending
        (MPI moves data only inside MPI calls). Without: sleep in slices of ``2 * spec.poll``."""
        while True:
            new = self._receive_control()
            if new is not None:
                return new
            now = time.perf_counter()
            if now >= deadline:
                return None
            left = deadline - now
            sock = self.wake_sock
            if sock is None:
                time.sleep(min(self.slice, left))
                continue
            self._reap()
            short = self.owed > 0 or bool(self.sends)
            try:
                ready = wake.wait([sock], min(self.spec.poll if short else wake.CAP, left))
            except (ValueError, OSError) as e:
                self._wake_off(f"cannot wait on it: {e}")
                continue
            if ready:
                n = wake.drain(sock)
                if n < 0:
                    self._wake_off("the master closed it")
                else:
                    self.owed += n

    def _wake_off(self, why):
        """Fall back to polling (the socket stays open: the guard may hold it after our death)."""
        if self.wake_sock is not None:
            self.wake_sock = None
            print(f"gclib: note: worker {self.w}: wake-up channel lost ({why}); polling", file=sys.stderr,
                  flush=True)

    def _isend(self, arr, dest, tag):
        super()._isend(arr, dest, tag)
        if self.wake_sock is not None and not wake.notify(self.wake_sock):
            self._wake_off("the master's end is gone")

    def _set_up_wake(self):
        """Receive the master's offer of a wake-up channel and its hello (both sent before any other message
        to us), and connect; on failure say why on stderr (the run's log) and poll."""
        MPI, st = self.MPI, self.MPI.Status()
        deadline = time.monotonic() + OFFER_WAIT
        offer = b""
        for tag in (P.TAG_WAKE, P.TAG_HELLO):
            while not self.comm.Iprobe(source=0, tag=tag, status=st):
                if time.monotonic() > deadline:
                    return
                time.sleep(1e-3)
            buf = bytearray(st.Get_count(MPI.BYTE))
            self.comm.Recv([buf, MPI.BYTE], source=0, tag=tag)
            if tag == P.TAG_WAKE:
                offer = bytes(buf)
        sock, why = wake.connect(offer, self.w)
        if sock is None:
            print(f"gclib: note: worker {self.w}: no wake-up channel ({why}); polling", file=sys.stderr,
                  flush=True)
        self.wake_sock = sock

    # ------------------------------------------------------------------ one iteration
    def iterate(self, it, theta):
        """Work on iteration ``it``; return newer parameters if they interrupt it, else ``None``."""
        if self.spec.kill.get(self.w) == it:
            sys.stdout.flush()
            os._exit(17)  # fault injection: the process dies without a word
        t0 = time.perf_counter()
        problem, code = self.spec.problem, self.code
        G = np.zeros((code.n_parts, self.dim))
        finish = self.finish[it] if it < len(self.finish) else np.full(len(self.order), np.inf)
        compute = 0.0
        for j, part in enumerate(self.order):
            new = self._receive_control()
            if new is None:
                c0 = time.perf_counter()
                G[part] = problem.partial_gradient(theta, part)
                compute += time.perf_counter() - c0
                new = self._wait_until(t0 + finish[j])
            if new is not None:  # newer parameters: abandon this iteration
                self.abandoned += 1
                return new
            ready = [m for m in self.msgs if code.ready[m] == j + 1]
            if ready:
                pieces = split_pieces(G, code.n_pieces)
                for m in ready:
                    buf = np.empty(P.HEADER + self.width, dtype=self.dtype)
                    buf[P.HEADER:] = code.B[m] @ pieces
                    buf[:P.HEADER] = (it, m, time.perf_counter() - t0, compute)
                    self._isend(buf, 0, P.grad_tag(it))
                    self.sent += 1
            self._reap()
        return None

    def warm_up(self):
        """Compute one partial gradient and one message untimed, so that first-call costs (imports, BLAS
        set-up) do not land in the first iteration."""
        G = np.zeros((self.code.n_parts, self.dim))
        G[self.order[0]] = self.spec.problem.partial_gradient(np.zeros(self.dim), self.order[0])
        if self.msgs.size:
            self.code.B[self.msgs[0]] @ split_pieces(G, self.code.n_pieces)
        self._set_up_wake()
        # The master learns our pid and whether we wait on the wake-up channel (no byte: it polls at start-up).
        P.Rank._isend(self, np.array([float(os.getpid()), 0.0 if self.wake_sock is None else 1.0]), 0,
                      P.TAG_HELLO)
        self.settle()

    def run(self):
        self.warm_up()
        idle_since = time.perf_counter()
        try:
            new = None
            while True:
                if new is None:
                    new = self._wait_until(time.perf_counter() + 0.05)
                    if new is None:
                        self._reap()
                        if time.perf_counter() - idle_since > IDLE_EXIT:
                            return "hard"
                        continue
                idle_since = time.perf_counter()
                if not self.handed:  # the connection with the master is made: the guard keeps it after a death
                    self.handed = True
                    hand_over_sockets()
                new = self.iterate(*new)
        except _Stop:
            pass
        # Goodbye: every send of ours completes (the master drains them), then tell the master how many.
        deadline = time.perf_counter() + IDLE_EXIT
        while self.sends and time.perf_counter() < deadline:
            self._reap()
            time.sleep(self.slice)
        bye = np.array([float(self.sent), float(self.abandoned)])
        req = self.comm.Isend(bye, dest=0, tag=P.TAG_BYE)
        if self.wake_sock is not None:
            wake.notify(self.wake_sock)
        while not req.Test() and time.perf_counter() < deadline:
            time.sleep(self.slice)
        while self.final is None and time.perf_counter() < deadline:
            try:
                self._receive_control()
            except _Stop:
                break
            time.sleep(self.slice)
        return "hard" if self.final in (None, True) else "clean"


def run_worker(comm, spec, finish) -> str:
    """Run the worker loop; returns ``"clean"`` (finalize normally) or ``"hard"`` (exit without finalize)."""
    try:
        return Worker(comm, spec, finish).run()
    except Exception:  # a bug or a broken problem: say so, and die like a crashed worker
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
