"""A worker rank: compute the real partial gradients in its order, take the injected delays, send each message as
soon as it is ready, and abandon an iteration as soon as newer parameters arrive or the master says it is decoded
(:data:`~gclib.runtime.protocol.TAG_DONE`). When it stops working on an iteration (every task done, or
abandoned), it reports the finish time of every task it completed in one small message
(:data:`~gclib.runtime.protocol.TAG_TASKS`), on its own clock (seconds since the parameters arrived).

Task ``j`` ends at its injected finish time ``finish[j]`` after the parameters arrived (or when its real work is
done, if that is later). The real work of a task (its partial gradient and the messages it readies) is placed at
the end of the task's window, starting :attr:`Worker.lead` seconds before ``finish[j]``, not at its start: when
new parameters arrive, every worker of a host then only takes them in, instead of all of them computing at once
and queueing for the host's cores, and a worker whose iteration is interrupted (newer parameters, or the master's
word that it is decoded) has not spent the time.
``lead`` follows the recent work times (:data:`LEAD_MARGIN` times the longest of the last :data:`LEAD_MEMORY`).

Right after it takes new parameters in, before anything else of the iteration, a worker sleeps
:data:`TAKE_IN_YIELD` seconds (less if its first task ends sooner): the workers of a host wake at the same
moment, and on a host with fewer cores than ranks every bit of work one of them does before it sleeps delays
another's take-in, and with it the start of that worker's clock.

The worker never blocks inside MPI (MPICH spins in blocking calls, stealing the CPU that the other ranks of an
oversubscribed host need): every wait is a sleep between tests of its posted control receive, in slices of
``5 * spec.poll`` seconds (``20 * spec.poll`` on the master's host, where the master's bell ends a slice when it
sends), except the last :data:`END_SPIN` seconds before a task's end, which it spends polling without sleeping
(a sleep may end late).

In a run of the two-phase exchange (``RunSpec.exchange``, :mod:`gclib.runtime.two_phase`) a worker sends, for
each message a task readies, a small progress report instead (:data:`~gclib.runtime.protocol.TAG_PROGRESS`), and
keeps the partial gradients of its newest iteration: when the master's instruction
(:data:`~gclib.runtime.protocol.TAG_SUM`) comes, in the middle of the iteration or after it, it answers at once with
one vector, the sum of the chunks named, tagged like a gradient message of that iteration.
"""
from __future__ import annotations

import collections
import enum
import os
import socket
import sys
import time
import traceback
from typing import NamedTuple

import numpy as np

from gclib.codes.base import split_pieces
from gclib.learning.model import part_gradient
from gclib.runtime import message_probe
from gclib.runtime import protocol as P
from gclib.runtime import wakeup
from gclib.runtime.guard import hand_over_sockets

#: A task's real work starts this many times its recent longest duration before the task's injected end ...
LEAD_MARGIN = 1.5
#: ... over this many recent tasks.
LEAD_MEMORY = 32
#: The lead before any task was timed (seconds).
LEAD_START = 1e-3
#: A worker's sleep slice, in master polls (``spec.poll``), without the master's bell (with it, the slice is
#: :data:`~gclib.runtime.protocol.BELL_SLICE_POLLS` polls: the bell ends it when the master sends).
SLICE_POLLS = 5
#: Longest wait (seconds) for the hello to be sent before the connections are handed to the guard.
HAND_OVER_WAIT = 5.0
#: Seconds before a task's end that a worker polls without sleeping.
END_SPIN = 1e-4
#: Seconds a worker sleeps right after taking new parameters in, so that the workers woken with it take theirs in.
TAKE_IN_YIELD = 5e-4
#: :attr:`Worker.current` of a worker that works on no iteration.
IDLE = 1 << 62
#: A worker that hears nothing from the master for this long exits (the master died).
IDLE_EXIT = 600.0


class _Stop(Exception):
    pass


class Params(NamedTuple):
    """New parameters from the master: the iteration they are for, and the point ``theta`` to compute at."""

    iteration: int
    theta: np.ndarray


class LastWord(enum.Enum):
    """What the master said last (:data:`~gclib.runtime.protocol.TAG_FINAL`): nothing yet (``AWAITED``), leave
    through ``MPI_Finalize`` (``CLEAN``), or leave without it (``HARD``: a peer died)."""

    AWAITED = "awaited"
    CLEAN = "clean"
    HARD = "hard"


class Worker(P.Rank):
    """State of worker ``w`` (rank ``w + 1``) for one run."""

    tests = 2  # tests of the control receive per look (see _receive_control)
    end_spin = END_SPIN  # seconds before a task's end polled without sleep
    take_in_yield = TAKE_IN_YIELD  # seconds slept right after new parameters are taken in
    two_phase = False  # the run's exchange is the two-phase one (gclib.runtime.two_phase)
    kept = None  # two-phase: [iteration, its partial gradients, its clock's start, compute seconds]
    failed_at = None  # the iteration in which the model raised (run_worker reports it)

    def __init__(self, comm, spec, finish, bell=None):
        super().__init__(comm, spec)
        self.bell = bell  # gclib.runtime.wakeup.Bell of the master's host, or None
        self.w = comm.Get_rank() - 1
        self.order = self.code.order[self.w]
        self.msgs = self.code.messages_of(self.w)
        self.finish = finish[:, self.w, :] * spec.time_scale  # (iterations, n_tasks) seconds
        self.slice = spec.poll * (P.BELL_SLICE_POLLS if bell is not None else SLICE_POLLS)
        self.sent = 0
        self.abandoned = 0
        self.final = LastWord.AWAITED
        self.handed = False
        self.pending = None  # parameters taken in during the start-up
        self.params_buf = np.empty(self.control_size())  # every control message lands here (_receive_control)
        self.control_status = self.MPI.Status()
        self.control = comm.Recv_init([self.params_buf, self.MPI.DOUBLE], source=0, tag=self.MPI.ANY_TAG)
        self.control.Start()
        self.control_posted = True
        self.received_at = 0.0  # when the newest parameters were received (perf_counter seconds)
        self.recent = collections.deque(maxlen=LEAD_MEMORY)  # how long the last tasks' real work took
        self.lead = LEAD_START  # a task's work starts this long before its end (see learn_lead)
        self.decoded = -1  # the newest iteration the master said it decoded (TAG_DONE)
        self.current = IDLE  # the iteration being worked on
        self.two_phase = getattr(spec, "exchange", "messages") == "two-phase"

    def control_size(self) -> int:
        """Floats of the longest control message: the parameters' ``[iteration, theta...]``."""
        return self.dim + 1

    # ------------------------------------------------------------------ control channel
    def _receive_control(self):
        """Take in every control message waiting; return the newest :class:`Params`, or ``None`` when no
        parameters came; raise _Stop at the master's stop or last word.

        Every message from the master lands in one receive posted in advance (persistent, any tag, into the
        parameters' buffer), so a wake-up costs one ``Test`` and no probe, match and copy of its own. It is
        tested twice, like the master's probes: a second ``Test`` costs little, and sees a message that the
        first one's progress step only moved in (:attr:`tests` times in all)."""
        req, st, buf = self.control, self.control_status, self.params_buf
        newest = None
        while self.control_posted and (req.Test(st) or (self.tests > 1 and req.Test(st))):
            tag = st.Get_tag()
            if tag == P.TAG_PARAMS:
                self.received_at = time.perf_counter()  # the worker's clock for these parameters starts here
                newest = Params(int(buf[0]), buf[1:].copy())
            elif tag == P.TAG_FINAL:
                self.final = LastWord.HARD if buf[0] else LastWord.CLEAN
                self.control_posted = False  # the master's last word
                raise _Stop
            elif tag == P.TAG_DONE:
                self.decoded = max(self.decoded, int(buf[0]))
            elif tag == P.TAG_SUM:  # two-phase: the master picked some of our finished chunks
                self._answer(buf[:st.Get_count(self.MPI.DOUBLE)])
            elif tag == P.TAG_HELLO and not self.handed:
                self._hand_over()
            elif tag == P.TAG_NETWORK:  # a profile measures what a message costs (gclib.runtime.message_probe)
                message_probe.answer(self, buf)
            req.Start()
            if tag == P.TAG_STOP:
                raise _Stop
        return newest

    def _hand_over(self):
        """The master's hello arrived and ours is sent: the connections with the master exist, and the guard
        keeps them open after this process dies (the master's MPI then sees a silent worker, not a closed
        connection)."""
        deadline = time.perf_counter() + HAND_OVER_WAIT
        while self.sends and time.perf_counter() < deadline:
            self._reap()
            time.sleep(self.slice)
        self.handed = True
        hand_over_sockets()

    def _wait_until(self, deadline, spin=0.0):
        """Sleep until ``deadline`` (``perf_counter`` seconds, may be ``inf``), polling for new parameters;
        return them if they arrive first, else ``None``; return ``None`` at once, too, when the master says the
        iteration being worked on is decoded. The last ``spin`` seconds poll without sleeping."""
        bell = self.bell
        while True:
            rung = bell.value(wakeup.TO_WORKERS) if bell is not None else 0  # before looking
            new = self._receive_control()
            if new is not None or self.decoded >= self.current:
                return new
            now = time.perf_counter()
            if now >= deadline:
                return None
            if deadline - now > spin:
                if bell is not None:
                    bell.wait(wakeup.TO_WORKERS, rung, min(self.slice, deadline - now - spin))
                else:
                    time.sleep(min(self.slice, deadline - now - spin))

    # ------------------------------------------------------------------ one iteration
    def iterate(self, it, theta):
        """Work on iteration ``it``; return newer :class:`Params` if they interrupt it, else ``None`` (every
        task done, or the master said the iteration is decoded)."""
        kill = self.spec.kill.get(self.w)
        if kill is not None and it >= kill:  # (the first iteration from that one on: a late worker skips some)
            sys.stdout.flush()
            os._exit(17)  # fault injection: the process dies without a word
        t0 = self.received_at
        self.current = it
        try:
            return self._iterate(it, theta, t0)
        except _Stop:
            raise
        except Exception:
            self.failed_at = it  # (run_worker names the iteration)
            raise
        finally:
            self.current = IDLE

    def _iterate(self, it, theta, t0):
        n = len(self.order)
        finish = self.finish[it] if it < len(self.finish) else np.full(n, np.inf)
        done = np.empty(1 + n)  # the report of this iteration: [it, finish time of each task]
        done[0] = it
        # First let the workers woken with this one take their parameters in (see TAKE_IN_YIELD).
        new = self._wait_until(t0 + min(self.take_in_yield, finish[0] if n else 0.0))
        if new is not None or self.decoded >= it:
            return self._abandon(done, 0, finish, False, new)
        problem, code = self.spec.problem, self.code
        G = np.zeros((code.n_parts, self.dim))
        compute = 0.0
        if self.two_phase:
            self.kept = [it, G, t0, 0.0]
        reported = False  # the report went out already (at an injected "never")
        for j, part in enumerate(self.order):
            new = self._receive_control()
            if new is None and self.decoded < it:
                if finish[j] == np.inf:  # an injected "never": this task and the rest never finish
                    self._report(done, j, finish)
                    reported = True
                    new = self._wait_until(np.inf)
                else:
                    new = self._wait_until(t0 + finish[j] - self.lead)  # the work goes at the window's end
                    if new is None and self.decoded < it:
                        c0 = time.perf_counter()
                        G[part] = part_gradient(problem, theta, part)
                        out = self._reports(j) if self.two_phase else self._messages(G, j)
                        took = time.perf_counter() - c0
                        compute += took
                        if self.two_phase:
                            self.kept[3] = compute
                        self.learn_lead(took)
                        new = self._wait_until(t0 + finish[j], spin=self.end_spin)
            if new is not None or self.decoded >= it:  # newer parameters, or decoded: abandon this iteration
                return self._abandon(done, j, finish, reported, new)
            done[j + 1] = time.perf_counter() - t0
            if self.two_phase:
                for m, buf in out:
                    buf[:] = (it, m)
                    self._isend(buf, 0, P.TAG_PROGRESS)
                self._reap()
                continue
            for m, buf in out:
                buf[:P.HEADER] = (it, m, time.perf_counter() - t0, compute)
                self._isend(buf, 0, P.grad_tag(it))
                self.sent += 1
            self._reap()
        self._isend(done, 0, P.TAG_TASKS)  # every task done: the worker is idle until newer parameters arrive
        return None

    def learn_lead(self, took: float) -> None:
        """A task's real work took ``took`` seconds: the lead becomes :data:`LEAD_MARGIN` times the longest of the
        last :data:`LEAD_MEMORY`."""
        self.recent.append(took)
        self.lead = LEAD_MARGIN * max(self.recent)

    def _abandon(self, done, j, finish, reported, new):
        """Stop working on the iteration before its task ``j``: report it, unless the report went out already;
        return ``new``."""
        self.abandoned += 1
        if not reported:
            self._report(done, j, finish)
        return new

    def _report(self, done, j, finish):
        """Send the report of an iteration that ends before its task ``j``: the tasks finished, and an injected
        "never" from task ``j`` on (known without waiting)."""
        if j < len(finish) and finish[j] == np.inf:
            done[j + 1:] = np.inf
            self._isend(done, 0, P.TAG_TASKS)
        else:
            self._isend(done[:j + 1], 0, P.TAG_TASKS)

    def _isend(self, arr, dest, tag):
        super()._isend(arr, dest, tag)
        if self.bell is not None and tag != P.TAG_TASKS:  # a report of task times waits for the master's next look
            self.bell.ring(wakeup.TO_MASTER)

    def _messages(self, G, j):
        """``[(message id, buffer)]``: the messages that task ``j`` readies, encoded from the partial gradients
        ``G`` computed so far (the header is filled when each is sent)."""
        code = self.code
        ready = [m for m in self.msgs if code.ready[m] == j + 1]
        if not ready:
            return []
        pieces = split_pieces(G, code.n_pieces)
        out = []
        for m in ready:
            buf = np.empty(P.HEADER + self.width, dtype=self.dtype)
            buf[P.HEADER:] = code.B[m] @ pieces
            out.append((m, buf))
        return out

    def _reports(self, j):
        """Two-phase: ``[(message id, buffer)]``, the progress reports of the messages that task ``j`` readies
        (each buffer is filled with ``[iteration, message id]`` when it is sent)."""
        return [(m, np.empty(2)) for m in self.msgs if self.code.ready[m] == j + 1]

    def _answer(self, instruction):
        """Two-phase: the master's instruction ``[iteration, chunk ids...]``: send the sum of those chunks' partial
        gradients, kept from that iteration, as one vector tagged like its gradient messages (header: iteration,
        this worker, clock, compute seconds). An instruction for an iteration not kept (a newer one began) is not
        answered: the master moved on."""
        it = int(instruction[0])
        if self.kept is None or self.kept[0] != it:
            return
        _, G, t0, compute = self.kept
        chunks = instruction[1:].astype(np.int64)
        buf = np.empty(P.HEADER + self.width, dtype=self.dtype)
        buf[P.HEADER:] = G[chunks].sum(axis=0)
        buf[:P.HEADER] = (it, self.w, time.perf_counter() - t0, compute)
        self._isend(buf, 0, P.grad_tag(it))
        self.sent += 1

    def warm_up(self):
        """Compute one partial gradient and one message untimed, so that first-call costs (imports, BLAS
        set-up) do not land in the first iteration; say hello; once the master's hello is in, hand the
        connections to the guard, settle, and say ready."""
        G = np.zeros((self.code.n_parts, self.dim))
        G[self.order[0]] = part_gradient(self.spec.problem, self.spec.theta0.copy(), self.order[0])
        if self.msgs.size:
            self.code.B[self.msgs[0]] @ split_pieces(G, self.code.n_pieces)
        # the master learns our pid, whether we share its bell, and our host name (its characters' code points),
        # in a message as long as a gradient message (see protocol)
        host = [float(ord(c)) for c in socket.gethostname()]
        size = (P.HEADER + self.width) * np.dtype(self.dtype).itemsize // 8
        hello = np.zeros(max(3 + len(host), size))
        hello[:3 + len(host)] = [float(os.getpid()), float(self.bell is not None), float(len(host)), *host]
        self._isend(hello, 0, P.TAG_HELLO)
        # The master's hello: the connections with it are made, and go to the guard (see _receive_control).
        deadline = time.perf_counter() + IDLE_EXIT
        while not self.handed and self.pending is None and time.perf_counter() < deadline:
            self.pending = self._wait_until(time.perf_counter() + self.slice)
        # Then the garbage collection and ready: the master starts the first iteration when every worker is, so
        # that none of this holds up a worker's taking in the first parameters.
        self.settle()
        self._isend(np.zeros(1), 0, P.TAG_READY)

    def run(self):
        try:
            self.warm_up()  # (the master may stop the run during it)
            idle_since = time.perf_counter()
            new, self.pending = self.pending, None  # parameters that came during the start-up (a late worker)
            while True:
                if new is None:
                    new = self._wait_until(time.perf_counter() + 0.05)
                    if new is None:
                        self._reap()
                        if time.perf_counter() - idle_since > IDLE_EXIT:
                            return P.Exit.HARD
                        continue
                idle_since = time.perf_counter()
                if not self.handed:  # (the master's hello comes first: this is only a safeguard)
                    self._hand_over()
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
        if self.bell is not None:
            self.bell.ring(wakeup.TO_MASTER)
        while not req.Test() and time.perf_counter() < deadline:
            time.sleep(self.slice)
        while self.final is LastWord.AWAITED and time.perf_counter() < deadline:
            try:
                self._receive_control()
            except _Stop:
                break
            time.sleep(self.slice)
        if self.control_posted:  # the master never said its last word: withdraw the receive
            self.control.Cancel()
            self.control.Wait()
        self.control.Free()
        return P.Exit.CLEAN if self.final is LastWord.CLEAN else P.Exit.HARD


def run_worker(comm, spec, finish, bell=None, cls=Worker) -> P.Exit:
    """Run the worker loop of ``cls`` (:class:`Worker`, or a subclass such as
    :class:`gclib.runtime.rounds.RoundWorker`); returns how to leave: through ``MPI_Finalize`` or without it."""
    worker = None
    try:
        worker = cls(comm, spec, finish, bell=bell)
        return worker.run()
    except Exception as e:  # a broken model, or a bug: say so (the launcher ends the run, naming the worker and the
        traceback.print_exc()  # iteration), and die like a crashed worker
        sys.stderr.flush()
        P.report_failure(comm.Get_rank() - 1, "iteration", e, getattr(worker, "failed_at", None))
        os._exit(1)
