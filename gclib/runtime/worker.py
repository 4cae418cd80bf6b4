"""A worker rank: compute the real partial gradients in its order, sleep the injected delays, send each message as
soon as it is ready, and abandon an iteration as soon as newer parameters arrive.

The worker never blocks inside MPI (MPICH spins in blocking calls, stealing the CPU that the other ranks of an
oversubscribed host need): every wait is a sleep in slices of ``spec.poll * 2`` seconds between ``Iprobe`` calls.
"""
from __future__ import annotations

import os
import sys
import time
import traceback

import numpy as np

from ..codes.base import split_pieces
from . import protocol as P
from .guard import hand_over_sockets

#: A worker that hears nothing from the master for this long exits (the master died).
IDLE_EXIT = 600.0


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

    # ------------------------------------------------------------------ control channel
    def _receive_control(self):
        """Receive every control message waiting; return the newest ``(iteration, theta)``, or raise _Stop."""
        MPI, st = self.MPI, self.MPI.Status()
        newest = None
        while self.comm.Iprobe(source=0, tag=MPI.ANY_TAG, status=st):
            tag = st.Get_tag()
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
        """Sleep until ``deadline`` (``perf_counter`` seconds, may be ``inf``), polling for new parameters;
        return them if they arrive first, else ``None``."""
        while True:
            new = self._receive_control()
            if new is not None:
                return new
            now = time.perf_counter()
            if now >= deadline:
                return None
            time.sleep(min(self.slice, deadline - now))

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
        self._isend(np.array([float(os.getpid())]), 0, P.TAG_HELLO)  # the master learns our pid
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
