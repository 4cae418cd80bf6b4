"""The master rank: send the parameters, receive messages until the received set decodes, decode, step, repeat.

Every wait polls (``Improbe`` + a sleep of ``spec.poll``): MPICH spins inside blocking calls, and on a host with
more ranks than cores a spinning master steals the time the workers' injected delays are measured in. The master
never waits on one request: a message is received with a matched probe and a non-blocking receive that is
tested, not waited for, so a worker that dies in the middle of a large message holds up nothing; sends are
tested, never waited for, too.

What the master prints on stdout (one JSON object per line after the marker :data:`MARK`, read by the launcher):
``init`` (from :mod:`gclib.runtime.mpi_main`: every rank is through ``MPI_Init``), ``start`` (the predicted
times, the workers' process ids), ``iter`` (one per finished iteration, with the
parameters and the update's state, so the launcher keeps a resumable state even if the job is killed), and
``end`` (status, error, dead workers).

Decoding ahead: after every arrival that does not make the received set decodable, the master asks the code's
rule, in one batched question, which single messages would complete it; while nothing arrives it decodes those
sets, one per poll, instead of sleeping. When such a message arrives, the iteration's gradient is the combination
of coefficients already made (over a subset of the received messages: as exact as a decode of them all), and the
decode is off the critical path. Every decode uses one message of each distinct content (copies of a coded
message add nothing), and its coefficients are remembered by the contents present (:data:`DECODERS_KEPT`), so
that a set seen before (uncoded's every iteration, or a multi-message code's few patterns) is not decoded again.

Once an iteration is decoded and stepped, outside its timed window, the master tells every worker
(:data:`~gclib.runtime.protocol.TAG_DONE`): a straggler stops working on it then, not when the next parameters
arrive, and before the next iteration's clock starts the master takes in, untimed, what the workers sent since
(late gradients, task reports; :meth:`Master.take_in_late`). The next iteration then starts with the workers
asleep and little of the last one left to drain (a worker in the middle of a partial gradient finishes it
first, and its report may still come in the next iteration).

Dead workers: the launcher passes on what it learns from the workers' guards (see :mod:`gclib.runtime.guard`)
as lines on the master's standard input, after the spec (:class:`DeathNotices`); the master reads them between
polls, stops waiting for those workers, and stops the run at once when the workers left can no longer decode. No
rank reads a file: the run directory stays on the launching host.

Frozen workers (alive, holding their connections, answering nothing): every message to a rank that does not take
it in holds one of the sender's MPI send buffers, and MPICH's shared-memory transport has a fixed number of them
per process, shared by every destination. So the master counts, per worker, the messages it sent since it last
heard from it, and sends nothing more to a worker that owes :data:`SILENT_AFTER` of them, or whose guard said it
was stopped by a signal: the worker is *silent* (a straggler, as far as decoding goes) until a message of its own
arrives, and then gets what it missed of the present (the iteration's parameters, or the stop). Nothing of the
master grows with the iterations a frozen worker does not answer. When the launcher is gone (it closed the
master's standard input), the master stops the run: nobody records it.

The two-phase exchange (``RunSpec.exchange = "two-phase"``, :mod:`gclib.runtime.two_phase`) is a path of its own
(:meth:`Master._iteration_two_phase`): the workers' progress reports are the received set the code's rule reads;
once it decodes, the master picks one finisher per chunk, instructs the picked workers, and adds the one vector
each of them uploads. A picked worker that dies, goes silent or does not answer in time has its chunks picked
again among the others. Nothing is decoded ahead (there is nothing to decode: the vectors are added).
"""
from __future__ import annotations

import enum
import json
import os
import select
import sys
import time
import traceback
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from gclib.codes.conditioning import decoding_amplification
from gclib.runtime import bell as bell_mod
from gclib.runtime import network
from gclib.runtime import protocol as P
from gclib.runtime.protocol import pack_step_state, unpack_step_state
from gclib.runtime import two_phase as T
from gclib.jsonable import jsonable

MARK = P.MARK
#: Seconds between two looks for the launcher's death notices.
DEATHS_EVERY = 0.02
#: Decoding coefficients remembered, by the contents received, before the memory is emptied.
DECODERS_KEPT = 4096
#: Longest time (seconds) the master spends taking in late messages before an iteration's clock starts.
LATE_LIMIT = 2e-3
#: Messages the master sends a worker without hearing from it before it stops sending to that worker (the
#: worker is *silent* until a message of its own arrives). A live worker answers every iteration's parameters
#: with at least a task report, and owes at most two or three; a stopped (frozen) one never does, and every message
#: to it waits in the master's MPI: MPICH's shared-memory transport has 64 send cells per process (shared by every
#: destination), so that after 64 unanswered messages to one rank the master could send to nobody.
SILENT_AFTER = 6
#: Seconds more the master waits at the start, before the first iteration, for workers still building a model
#: named by its import path (each rank imports the model's framework: PyTorch takes seconds per rank on a host
#: whose cores the ranks share). A worker that dies, or cannot build the model, is not waited for.
BUILD_WAIT = 120.0


class DeathNotices:
    """The launcher's notices of dead workers, read without blocking from ``fd`` (the master's standard input,
    forwarded by ``mpiexec``): one JSON line ``{"worker": w, "signal": ..., "code": ..., ...}`` per dead worker,
    after the spec, and ``{"worker": w, "stopped": "SIGSTOP"}`` / ``{"worker": w, "continued": true}`` when a
    worker's process is stopped by a signal or continued. Only JSON is parsed here, nothing is unpickled.
    :attr:`open` turns false when the launcher closes the input (it is gone)."""

    def __init__(self, fd=0):
        self.fd = fd
        self.open = True
        self.rest = b""

    def read(self) -> dict:
        """``{worker: info}`` of the notices that arrived since the last call (empty when none did)."""
        if not self.open:
            return {}
        try:
            while select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, 65536)
                if not chunk:  # the launcher closed it: no more notices
                    self.open = False
                    break
                self.rest += chunk
        except (OSError, ValueError):
            self.open = False
        *lines, self.rest = self.rest.split(b"\n")
        out = {}
        for line in lines:
            try:
                info = json.loads(line)
                out[int(info.pop("worker"))] = info
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        return out


def emit(kind: str, **payload):
    print(MARK + json.dumps(jsonable({"kind": kind, **payload})), flush=True)


class IterationTimeout(RuntimeError):
    pass


class Poll(enum.Enum):
    """What a look for messages (:meth:`Master._receive_one`) did when it brought no gradient of the iteration:
    ``IDLE``, nothing (the master may wait), or ``BUSY``, it took in something else or started a receive (look
    again at once)."""

    IDLE = "idle"
    BUSY = "busy"


class Gradient(NamedTuple):
    """A gradient message of the iteration under way: its id, its payload and its header."""

    message: int
    payload: np.ndarray
    header: np.ndarray


class Report(NamedTuple):
    """A progress report of the iteration under way (the two-phase exchange): message ``message`` is ready."""

    message: int


class Decoded(NamedTuple):
    """Decoding coefficients ``A`` over the messages ``ids`` (the gradient is ``code.combine(A, payload[ids])``)."""

    ids: np.ndarray
    A: np.ndarray


class Prepared(NamedTuple):
    """What :meth:`Master._collect` starts from, made before the clock (:meth:`Master._prepare`): the empty
    received set, the payloads' array, the rule's tracker of the set (or ``None`` when the rule has none), and the
    messages known to complete the set (``None``: the rule is asked at every arrival)."""

    received: np.ndarray
    payload: np.ndarray
    tracker: object
    completes: Optional[list]


@dataclass
class Collected:
    """What :meth:`Master._collect` received until the set decoded.

    Attributes:
        received: ``(n_messages,)`` bool, the messages received.
        payload: ``(n_messages, width)``: ``payload[m]`` is message ``m`` where received.
        arrived: ``perf_counter`` time the last message was taken in (the decode's clock starts there).
        checks: seconds spent in the rule's checks.
        drain: seconds spent draining stale messages and task reports.
        ahead: the decode made ahead from a subset of the received messages, or ``None`` when none was.
    """

    received: np.ndarray
    payload: np.ndarray
    arrived: float
    checks: float
    drain: float
    ahead: Optional[Decoded] = None


class Stopped(NamedTuple):
    """How the run's stop ended (:meth:`Master.stop`): the workers found dead, and how the master leaves."""

    dead: list
    exit: P.Exit


#: Why the master stops when the launcher is gone.
ORPHANED = ("the launcher is gone (the master's standard input closed): nobody records the run any more, so "
            "the master stopped it")


def message_contents(code) -> np.ndarray:
    """``(n_messages,)`` the content id of every message of ``code``: equal rows of ``B`` (a coded message and its
    copies) share one id, which the master decodes from one copy; every message is its own when the family's
    decoder counts every message received (``Decoder.counts_copies``, a fixed-weight sum)."""
    if code.decoder.counts_copies:
        return np.arange(code.n_messages)
    return np.unique(code.B, axis=0, return_inverse=True)[1].reshape(-1)


class Master(P.Rank):
    params = None  # the parameters of the iteration under way (a worker that answers again gets them)
    stopping = False  # the master said STOP (a worker that answers again gets it)
    orphaned = False  # the launcher closed the master's standard input: nobody follows the run any more
    two_phase = False  # the run's exchange is the two-phase one (gclib.runtime.two_phase) ...
    picks = None  # ... and this its book of an iteration

    def __init__(self, comm, spec, finish, sends=(), deaths=None, bell=None):
        super().__init__(comm, spec)
        self.bell = bell  # gclib.runtime.bell.Bell shared with the workers of this host, or None
        self.sends.extend(sends)
        self.K = self.code.n_workers
        self.finish = np.array(finish, dtype=float)
        self.predicted = P.predicted_times(self.code, self.finish, spec.time_scale)
        self.byes = {}  # worker -> (messages sent, iterations abandoned)
        self.pids = {}  # worker -> process id (from its hello)
        self.hosts = {}  # worker -> host name (from its hello)
        self.belled = set()  # the workers that opened the bell (from their hellos)
        self.ready = set()  # the workers whose start-up is over
        self.slice = spec.poll  # how long a wait for messages sleeps (see warm_up)
        self.received_total = 0
        self.stale = 0
        self.drain_time = 0.0
        self.inflight = []  # receives started and not yet complete: [request, buffer, source, tag]
        self.dead = {}  # worker -> what the launcher (or an MPI error) told us
        self.silent = {}  # worker -> why the master does not send to it (see SILENT_AFTER), until it answers
        self.owed = [0] * self.K  # worker -> messages sent to it since the last message from it
        self.skip = set()  # the workers sent nothing: dead or silent
        self._deaths = deaths  # DeathNotices, or None: nobody tells us
        self._deaths_seen = 0.0
        self.width_buf = P.HEADER + self.width
        self.tasks = []  # (worker, [iteration, finish times...]) reports not yet passed on to the launcher
        self.decoders = {}  # distinct contents received (bytes) -> their decoding coefficients
        self._completes0 = None  # the messages that alone decode, for a rule without a tracker (see _prepare) ...
        self._asked0 = False  # ... once asked
        self.probes = 1 if "probe2" in self.without else 2  # probes per look (see _receive_one)
        self.ahead = "ahead" not in self.without  # decode ahead while waiting (see _collect)
        self.kept = 0 if "cache" in self.without else DECODERS_KEPT  # decoders remembered (see _decode)
        self.content = message_contents(self.code)
        self.two_phase = getattr(spec, "exchange", "messages") == "two-phase"
        self.picks = T.Picks(self.code) if self.two_phase else None

    # ------------------------------------------------------------------ dead workers
    def check_deaths(self, force=False) -> bool:
        """Read the launcher's notices (at most every :data:`DEATHS_EVERY` s unless ``force``): a worker that died,
        or whose process was stopped (a signal such as SIGSTOP: it is silent at once) or continued. True if a
        worker newly died or was stopped, or the launcher is gone (:attr:`orphaned`)."""
        if self._deaths is None:
            return False
        now = time.perf_counter()
        if not force and now - self._deaths_seen < DEATHS_EVERY:
            return False
        self._deaths_seen = now
        new = died = False
        for w, info in self._deaths.read().items():
            if not 0 <= w < self.K or w in self.dead:
                continue
            info = info if isinstance(info, dict) else {}
            if info.get("stopped"):  # alive but frozen: nothing more is sent to it until it answers
                if w not in self.silent:
                    self._silence(w, f"stopped ({info['stopped']})")
                    new = True
            elif info.get("continued"):  # it may answer again: it gets messages until it owes too many
                if w in self.silent:
                    self._unsilence(w)
            else:
                self.dead[w] = info
                self.silent.pop(w, None)
                self.skip.add(w)
                new = died = True
        if died:
            self._predict_without_dead()
        if not self._deaths.open and not self.orphaned:
            self.orphaned = new = True
        return new

    def _silence(self, w, why):
        """Send nothing more to worker ``w`` until a message of its own arrives (:meth:`_heard`)."""
        self.silent[w] = why
        self.skip.add(w)

    def _unsilence(self, w):
        self.silent.pop(w, None)
        if w not in self.dead:
            self.skip.discard(w)

    def _heard(self, w):
        """A message from worker ``w`` arrived: it owes nothing, and a silent worker is sent to again, starting
        with what it missed of the present (the parameters of the iteration under way, or the stop)."""
        if not 0 <= w < self.K:
            return
        self.owed[w] = 0
        if w in self.silent:
            self._unsilence(w)
            if w in self.skip:
                return
            if self.stopping:
                self._send_to(w, np.zeros(1), P.TAG_STOP)
            elif self.params is not None:
                self._send_to(w, self.params, P.TAG_PARAMS)

    def _predict_without_dead(self):
        """From now on the simulator's time treats the dead workers as persistent stragglers (the iteration in
        which a worker died keeps the time predicted before)."""
        finish = self.finish.copy()
        finish[:, sorted(self.dead), :] = np.inf
        self.predicted = P.predicted_times(self.code, finish, self.spec.time_scale)

    def _mark_dead(self, w, cause):
        if 0 <= w < self.K and w not in self.dead:
            self.dead[w] = {"cause": cause}
            self.silent.pop(w, None)
            self.skip.add(w)
            self._predict_without_dead()

    def take_tasks(self) -> list:
        """The workers' task reports received since the last call, as ``[worker, iteration, [finish times]]``
        (seconds on the worker's clock; ``inf``, ``None`` in JSON, for a task that never finishes)."""
        out = [[w, int(buf[0]), buf[1:]] for w, buf in self.tasks]
        self.tasks = []
        return out

    # ------------------------------------------------------------------ receiving
    def _buffer(self, tag):
        if tag == P.TAG_BYE:
            return np.empty(2)
        if tag in (P.TAG_HELLO, P.TAG_READY):
            return np.empty(1)
        if tag == P.TAG_PROGRESS:
            return np.empty(2)
        return np.empty(self.width_buf, dtype=self.dtype)

    def _receive_one(self, current):
        """Start receiving the next waiting message, and finish one whose data has arrived. Returns the
        :class:`Gradient` of iteration ``current`` it finished receiving, else :attr:`Poll.BUSY` when it handled
        something else or started a receive, :attr:`Poll.IDLE` when nothing happened."""
        MPI = self.MPI
        started = False
        st = MPI.Status()
        try:
            # Twice (once without "probe2"): MPICH's first probe after a message lands only moves it in (see
            # worker._receive_control).
            msg = self.comm.Improbe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
            if msg is None and self.probes > 1:
                msg = self.comm.Improbe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
        except MPI.Exception:
            msg = None
        if msg is not None:
            src, tag = st.Get_source(), st.Get_tag()
            if self.silent:
                self._heard(src - 1)
            elif 0 < src <= self.K:
                self.owed[src - 1] = 0
            sized = tag in (P.TAG_TASKS, P.TAG_HELLO)  # of varying length
            buf = np.empty(st.Get_count(MPI.DOUBLE)) if sized else self._buffer(tag)
            try:
                self.inflight.append([msg.Irecv(buf), buf, src, tag])
            except MPI.Exception:
                self._mark_dead(src - 1, "MPI error while receiving")
            started = True
        for i, item in enumerate(self.inflight):
            try:
                done = item[0].Test()
            except MPI.Exception:
                self.inflight.pop(i)
                self._mark_dead(item[2] - 1, "MPI error while receiving")
                return Poll.BUSY
            if done:
                self.inflight.pop(i)
                return self._handle(current, *item[1:])
        return Poll.BUSY if started else Poll.IDLE

    def _handle(self, current, buf, src, tag):
        """A message whose receive completed: the :class:`Gradient` if it is one of iteration ``current``, else
        :attr:`Poll.BUSY` (taken in: a start-up or end message, a task report, a late gradient)."""
        if tag == P.TAG_BYE:
            self.byes[src - 1] = (int(buf[0]), int(buf[1]))
            return Poll.BUSY
        if tag == P.TAG_READY:  # the worker's start-up is over
            self.ready.add(src - 1)
            return Poll.BUSY
        if tag == P.TAG_HELLO:  # a start-up hello (with the worker's pid), perhaps late: not a gradient
            self.pids[src - 1] = int(buf[0])
            if buf[1]:
                self.belled.add(src - 1)
            self.hosts[src - 1] = "".join(map(chr, buf[3:3 + int(buf[2])].astype(int)))
            return Poll.BUSY
        if tag == P.TAG_TASKS:  # a worker's finish times of one iteration: stored, looked at after the run
            self.tasks.append((src - 1, buf))
            return Poll.BUSY
        if tag == P.TAG_PROGRESS:  # two-phase: a worker finished a chunk (of an earlier iteration: dropped)
            return Report(int(buf[1])) if int(buf[0]) == current >= 0 else Poll.BUSY
        if tag < P.GRAD_BASE:
            return Poll.BUSY
        self.received_total += 1
        if P.tag_iteration(tag) != current:  # a late gradient of an earlier iteration: drained
            self.stale += 1
            return Poll.BUSY
        head = buf[:P.HEADER].real
        return Gradient(int(head[1]), buf[P.HEADER:].copy(), head)

    def _send_all(self, arr, tag):
        """Send ``arr`` to every worker but the dead and the silent ones; a worker that owes
        :data:`SILENT_AFTER` messages becomes silent instead (nothing of the master's grows with the iterations
        a frozen worker does not answer)."""
        skip, owed, sends, isend = self.skip, self.owed, self.sends, self.comm.Isend
        for w in range(self.K):
            if w in skip:
                continue
            if owed[w] >= SILENT_AFTER:
                self._silence(w, f"no message for the last {owed[w]} sent to it")
                continue
            try:  # (self._send_to, inlined: this loop is on the broadcast's clock)
                sends.append((isend(arr, dest=w + 1, tag=tag), arr, w + 1))
                owed[w] += 1
            except self.MPI.Exception:
                self._mark_dead(w, "MPI error while sending")
        if self.bell is not None:
            self.bell.ring(bell_mod.TO_WORKERS)

    def _send_to(self, w, arr, tag):
        try:
            self._isend(arr, dest=w + 1, tag=tag)
            self.owed[w] += 1
        except self.MPI.Exception:
            self._mark_dead(w, "MPI error while sending")

    def _cannot_decode(self, it, received):
        """An error text if the workers still alive cannot complete a decodable set this iteration, else None."""
        code = self.code
        if self.spec.wait_all:  # a profile: whatever the others send is fine, unless nobody is left
            return None if len(self.dead) < self.K else f"iteration {it}: every worker died"
        possible = received | ~np.isin(code.sender, list(self.dead))
        if code.rule.decodable(possible):
            return None
        return (f"iteration {it}: {len(self.dead)} workers died and code '{code.name}' tolerates "
                f"{code.stragglers} stragglers: the messages of the others cannot decode")

    # ------------------------------------------------------------------ one iteration
    def iteration(self, it, state):
        if self.two_phase:
            return self._iteration_two_phase(it, state)
        spec, code = self.spec, self.code
        self.take_in_late()
        stale0 = self.stale
        prepared = self._prepare()  # before the clock: nothing of it depends on the iteration
        t_start = time.perf_counter()
        predicted = float(self.predicted[it])  # before this iteration: a worker that dies during it counts alive
        y = spec.step.query(state)
        params = np.concatenate([[float(it)], y])
        self.params = params
        self._send_all(params, P.TAG_PARAMS)
        t_bcast = time.perf_counter() - t_start
        try:
            got = self._collect(it, t_start + spec.timeout, prepared)
        finally:
            self.params = None
        self.drain_time += got.drain
        idx = np.flatnonzero(got.received)
        ids, A = self._decode(idx) if got.ahead is None else got.ahead  # over a subset of the received messages
        grad = code.combine(A, got.payload[ids], self.dim)
        t_decoded = time.perf_counter()
        # On the critical path: the rule check of the last message, the decode (unless made ahead) and the
        # combination.
        decode_time = t_decoded - got.arrived
        t_wait_end = got.arrived
        theta, state = spec.step.step(state, grad)
        t_end = time.perf_counter()
        self._send_all(np.array([float(it)]), P.TAG_DONE)  # stragglers stop now (untimed, like what follows)
        self._reap()
        rec = {"iteration": it, "time": t_end - t_start, "predicted": predicted,
               "messages": int(idx.size), "stale": self.stale - stale0, "bcast": t_bcast,
               "wait": t_wait_end - t_start - t_bcast, "decode": decode_time, "step": t_end - t_decoded,
               "drain": got.drain, "checks": got.checks,
               "workers": sorted({int(code.sender[m]) for m in idx}),
               # outside the timed window: how much this decode amplifies rounding errors of the messages
               "amplification": decoding_amplification(code.B[ids], A, code.target)}
        return rec, grad, y, theta, state

    def take_in_late(self, limit=LATE_LIMIT):
        """Take in every message waiting (late gradients, drained; task reports, stored), for at most ``limit``
        seconds: called before an iteration's clock starts, so that what the workers sent after the last
        iteration was decoded is not drained in the next one's timed window."""
        end = time.perf_counter() + limit
        while time.perf_counter() < end:
            # done when nothing waits, but for receives whose sender died in the middle (they never complete)
            if self._receive_one(-1) is Poll.IDLE and all(item[2] - 1 in self.skip for item in self.inflight):
                return

    # ------------------------------------------------------------------ the two-phase exchange
    def _iteration_two_phase(self, it, state):
        """One iteration of the two-phase exchange (:mod:`gclib.runtime.two_phase`): the timed window and the record
        of :meth:`iteration`, from the parameters' broadcast to the step, with the arrival of the last picked vector
        where a decode would end; the record adds ``vectors`` (full-size vectors received: ``messages`` too),
        ``reports`` (progress reports received) and ``instructions`` (sent)."""
        spec, code, picks = self.spec, self.code, self.picks
        self.take_in_late()
        stale0 = self.stale
        picks.reset()  # before the clock, like _prepare
        tracker = code.rule.tracker() if hasattr(code.rule, "tracker") else None
        reports = np.zeros(code.n_messages, dtype=bool)
        total = np.zeros(self.width, dtype=self.dtype)
        t_start = time.perf_counter()
        predicted = float(self.predicted[it])
        y = spec.step.query(state)
        params = np.concatenate([[float(it)], y])
        self.params = params
        self._send_all(params, P.TAG_PARAMS)
        t_bcast = time.perf_counter() - t_start
        try:
            got = self._exchange(it, t_start + spec.timeout, reports, tracker, total)
        finally:
            self.params = None
        self.drain_time += got.drain
        grad = total[:self.dim].real.copy()  # every chunk added once: the gradient
        t_decoded = time.perf_counter()
        theta, state = spec.step.step(state, grad)
        t_end = time.perf_counter()
        self._send_all(np.array([float(it)]), P.TAG_DONE)  # stragglers stop now (untimed, like what follows)
        self._reap()
        ids = picks.messages_used()
        rec = {"iteration": it, "time": t_end - t_start, "predicted": predicted,
               "messages": picks.vectors, "stale": self.stale - stale0, "bcast": t_bcast,
               "wait": got.arrived - t_start - t_bcast, "decode": t_decoded - got.arrived, "step": t_end - t_decoded,
               "drain": got.drain, "checks": got.checks,
               "workers": sorted({w for w, _ in picks.summed}),
               "amplification": decoding_amplification(code.B[ids], np.ones((1, ids.size)), code.target),
               "vectors": picks.vectors, "reports": picks.reports, "instructions": picks.instructions}
        return rec, grad, y, theta, state

    def _exchange(self, it, deadline, reports, tracker, total) -> Collected:
        """Take in the progress reports of iteration ``it`` (into the mask ``reports``) until the code's rule says
        they cover every chunk (``tracker``: the rule's incremental check, or ``None``), then pick finishers,
        instruct them and add their vectors into ``total`` until every chunk is added. A picked worker that dies,
        goes silent or does not answer within :data:`~gclib.runtime.two_phase.ANSWER_FRACTION` of the timeout is
        dropped and its chunks picked again. Raises :class:`IterationTimeout` when the workers alive cannot cover
        every chunk any more, or at ``deadline``."""
        code, picks = self.code, self.picks
        covered = False
        check_time = drain = 0.0
        answer_wait = T.ANSWER_FRACTION * self.spec.timeout
        if self.dead:
            why = self._cannot_finish(it)
            if why:
                raise IterationTimeout(why)
        if self.orphaned:
            raise IterationTimeout(ORPHANED)
        while True:
            rung = self._rung()  # before looking
            r0 = time.perf_counter()
            got = self._receive_one(it)
            if got is Poll.IDLE:
                if self.check_deaths():
                    self._stop_if_hopeless(lambda: self._cannot_finish(it))
                now = time.perf_counter()
                if covered:
                    lost = {w for w in picks.waiting() if w in self.skip} | set(picks.overdue(now - answer_wait))
                    if lost:
                        for w in sorted(lost):
                            picks.lose(w)
                        self._instruct(it)
                if now > deadline:
                    raise IterationTimeout(self._two_phase_timeout_text(it, reports))
                self._idle(rung)
                continue
            if got is Poll.BUSY:
                drain += time.perf_counter() - r0
                continue
            d0 = time.perf_counter()
            if isinstance(got, Report):
                m = got.message
                if not 0 <= m < code.n_messages or reports[m]:
                    continue
                reports[m] = True
                picks.report(m)
                if not covered:
                    covered = bool(tracker.add(m) if tracker is not None else code.rule.decodable(reports))
                if covered and picks.needed():
                    self._instruct(it)
                check_time += time.perf_counter() - d0
                continue
            if picks.answer(int(got.header[1])) is not None:  # a picked vector: added
                total += got.payload
                if picks.complete():
                    return Collected(reports, total, d0, check_time, drain)

    def _instruct(self, it):
        """Pick a finisher for every chunk needed (:meth:`~gclib.runtime.two_phase.Picks.pick`; none until each
        has a live one) and send each picked worker the chunks it adds."""
        picks = self.picks
        while True:
            plan = picks.pick(exclude=self.skip)
            if not plan:
                return
            now = time.perf_counter()
            for w, chunks in plan.items():
                picks.instruct(w, chunks, now)
                self._send_to(w, np.array([float(it), *chunks]), P.TAG_SUM)
            if self.bell is not None:
                self.bell.ring(bell_mod.TO_WORKERS)
            failed = [w for w in plan if w in self.skip]  # an MPI error while sending: dead
            if not failed:
                return
            for w in failed:
                picks.lose(w)

    def _cannot_finish(self, it):
        """Two-phase: an error text if the workers still alive cannot cover every chunk this iteration (the chunks
        added count), else None."""
        code = self.code
        if code.rule.decodable(self.picks.possible(self.dead)):
            return None
        return (f"iteration {it}: {len(self.dead)} workers died and code '{code.name}' tolerates "
                f"{code.stragglers} stragglers: the chunks of the others cannot cover every chunk")

    def _two_phase_timeout_text(self, it, reports):
        picks, code, spec = self.picks, self.code, self.spec
        silent = "".join(f"; worker {w} silent: {why}" for w, why in sorted(self.silent.items()))
        return (f"iteration {it}: no exact sum after {spec.timeout:g} s (two-phase exchange: {int(reports.sum())} "
                f"of {code.n_messages} chunks reported, {len(picks.added)} of {code.n_parts} chunks added, vectors "
                f"awaited from workers {picks.waiting()}, workers dropped {sorted(picks.lost)}{silent}; code "
                f"'{code.name}' tolerates {code.stragglers} stragglers; the simulator predicts "
                f"{'never' if not np.isfinite(self.predicted[it]) else f'{self.predicted[it]:.3g} s'} "
                f"for this iteration's delays)")

    def _decode(self, idx) -> Decoded:
        """Decoding coefficients over the messages ``ids``, a subset of the received ``idx`` (sorted): one
        message of each distinct content (messages with equal rows of ``B``, copies of one coded message, add
        nothing to one another). The coefficients are remembered by the contents present (up to :attr:`kept`
        sets, none in a run without ``cache``), so that a set seen before, whichever copies of it arrived, is not
        decoded again."""
        cls = self.content[idx]
        kinds, first = np.unique(cls, return_index=True)
        ids = idx[first]  # one copy of each content, in the order of ``kinds``
        key = kinds.tobytes()
        A = self.decoders.get(key)
        if A is None:
            order = np.argsort(ids)
            try:
                A_sorted = self.code.decode(ids[order], warn=False)
            except Exception:  # a family decoder that wants the set as received: decode it whole
                return Decoded(idx, self.code.decode(idx, warn=False))
            A = np.empty_like(A_sorted)
            A[:, order] = A_sorted
            if len(self.decoders) >= self.kept:
                self.decoders.clear()
            if self.kept:
                self.decoders[key] = A
        return Decoded(ids, A)

    def _completing(self, received, known):
        """The messages not received and not in ``known`` whose arrival alone would make ``received`` decodable
        (one batched question to the rule), or ``None`` when the rule cannot answer for many sets at once."""
        cand = np.flatnonzero(~received)
        if known:
            cand = cand[[int(m) not in known for m in cand]]
        if cand.size == 0:
            return []
        masks = np.repeat(received[None, :], cand.size, axis=0)
        masks[np.arange(cand.size), cand] = True
        try:
            ok = np.asarray(self.code.rule.decodable(masks), dtype=bool).reshape(cand.size)
        except Exception:
            return None
        return [int(m) for m in cand[ok]]

    def _prepare(self) -> Prepared:
        """What :meth:`_collect` starts from, for an empty set.

        Made before the iteration's parameters go out, not after: once the master rings, the workers need the
        host's cores to take the parameters in, and any work of the master then delays some of them."""
        code = self.code
        received = np.zeros(code.n_messages, dtype=bool)
        payload = np.empty((code.n_messages, self.width), dtype=self.dtype)
        # The rule's incremental check of the set, where it has one (threshold rules: no array work per arrival).
        tracker = None if self.spec.wait_all or not hasattr(code.rule, "tracker") else code.rule.tracker()
        # Messages known to complete the received set (the set only grows, so they stay so); None: the rule is
        # asked at every arrival (a profile's wait_all, or a rule that answers one set at a time).
        if self.spec.wait_all:
            completes = None
        elif tracker is not None:
            completes = tracker.completing()
        else:  # the same for every iteration: asked once
            if not self._asked0:
                self._completes0 = self._completing(received, ())
                self._asked0 = True
            completes = self._completes0
        return Prepared(received, payload, tracker, completes)

    def _collect(self, it, deadline, prepared: Prepared) -> Collected:
        """Receive messages of iteration ``it`` until the received set decodes; returns what came
        (:class:`Collected`). While nothing arrives it decodes ahead the sets that one more message would
        complete (not in a run without ``ahead``). Raises :class:`IterationTimeout` when the workers alive cannot
        decode any more or at ``deadline``.
        """
        code = self.code
        received, payload, tracker, completes = prepared  # (see _prepare)
        # completing messages whose set is not decoded yet
        todo = [] if completes is None or not self.ahead else list(completes)
        completes = None if completes is None else set(completes)
        ahead = {}  # message id -> Decoded: the decode of the set that message completes
        check_time = drain = 0.0
        if self.dead:
            why = self._cannot_decode(it, received)
            if why:
                raise IterationTimeout(why)
        if self.orphaned:
            raise IterationTimeout(ORPHANED)
        while True:
            rung = self._rung()  # before looking
            r0 = time.perf_counter()
            got = self._receive_one(it)
            if got is Poll.IDLE:
                if self.check_deaths():
                    self._stop_if_hopeless(lambda: self._cannot_decode(it, received))
                    if self.spec.wait_all and received.any() and self._all_in(received):
                        return Collected(received, payload, time.perf_counter(), check_time, drain)
                if time.perf_counter() > deadline:
                    raise IterationTimeout(self._timeout_text(it, received))
                if todo:  # nothing arrived: decode ahead instead of sleeping
                    m = todo.pop()
                    ids = np.flatnonzero(received)
                    ids = np.insert(ids, np.searchsorted(ids, m), m)
                    try:
                        ahead[m] = self._decode(ids)
                    except Exception:  # the decoder refuses the set: it is decoded after the arrival instead
                        pass
                    continue
                self._idle(rung)
                continue
            if got is Poll.BUSY:
                drain += time.perf_counter() - r0
                continue
            m = got.message
            if received[m]:
                continue
            d0 = time.perf_counter()
            received[m] = True
            payload[m] = got.payload
            if self.spec.wait_all:
                done = self._all_in(received)
            elif tracker is not None:
                done = tracker.add(m)
            elif completes is not None:
                done = m in completes
            else:
                done = bool(code.rule.decodable(received))
            if done:
                check_time += time.perf_counter() - d0
                return Collected(received, payload, d0, check_time, drain, ahead.get(m))
            if completes is not None:
                new = (self._completing(received, completes) if tracker is None else
                       [c for c in tracker.completing() if c not in completes])
                if new is None:
                    completes = None
                else:
                    completes.update(new)
                    if self.ahead:
                        todo.extend(new)
            check_time += time.perf_counter() - d0

    def _rung(self) -> int:
        """The count of the master's bell, read before a look for messages (0 without a bell): :meth:`_idle` then
        wakes at a ring after it."""
        return self.bell.value(bell_mod.TO_MASTER) if self.bell is not None else 0

    def _idle(self, rung: int) -> None:
        """Nothing arrived: sleep one slice, or until a worker of this host rings the bell after ``rung``."""
        if self.bell is not None:
            self.bell.wait(bell_mod.TO_MASTER, rung, self.slice)
        else:
            time.sleep(self.spec.poll)

    def _stop_if_hopeless(self, why) -> None:
        """After news of a death or stop (:meth:`check_deaths`): raise :class:`IterationTimeout` when the launcher is
        gone, or when ``why()`` says why the workers alive cannot finish the iteration (``None``: they can)."""
        if self.orphaned:
            raise IterationTimeout(ORPHANED)
        text = why()
        if text:
            raise IterationTimeout(text)

    def _wait_slice(self) -> float:
        """How long a wait for messages sleeps: when every worker alive rings the bell after each message, a
        long slice (a message ends it at once); otherwise one poll, as a worker of another host sends silently."""
        if self.bell is not None and all(w in self.belled or w in self.dead for w in range(self.K)):
            return P.BELL_SLICE_POLLS * self.spec.poll
        return self.spec.poll

    def _all_in(self, received) -> bool:
        """Every message of every worker still alive and not silent received (``wait_all``)."""
        if self.skip:
            return bool((received | np.isin(self.code.sender, list(self.skip))).all())
        return bool(received.all())

    def _timeout_text(self, it, received):
        code, spec = self.code, self.spec
        heard = sorted({int(code.sender[m]) for m in np.flatnonzero(received)})
        silent = "".join(f"; worker {w} silent: {why}" for w, why in sorted(self.silent.items()))
        return (f"iteration {it}: no decodable set of messages after {spec.timeout:g} s "
                f"(received {int(received.sum())} of {code.n_messages} messages, from workers {heard}{silent}; "
                f"code '{code.name}' tolerates {code.stragglers} stragglers; the simulator predicts "
                f"{'never' if not np.isfinite(self.predicted[it]) else f'{self.predicted[it]:.3g} s'} "
                f"for this iteration's delays)")

    def warm_up(self):
        """Decode once from every message, untimed (first-call costs of LAPACK and the rule stay out of the
        first iteration), and trade one message with every worker (its pid comes back)."""
        code = self.code
        every = np.ones(code.n_messages, dtype=bool)
        code.rule.decodable(every)
        try:
            A = code.decode(np.arange(code.n_messages), warn=False)
            code.combine(A, np.zeros((code.n_messages, self.width), dtype=self.dtype), self.dim)
        except Exception:  # a decoder that insists on its own minimal sets: nothing to warm
            pass
        theta0 = self.spec.theta0
        self.spec.problem.loss(theta0.copy())
        self.metrics = sorted(self.spec.problem.test_metrics(theta0.copy()))  # the names the records will carry
        # One message each way with every worker (MPICH connects lazily), as long as the timed messages that way
        # (the first message of a size costs more to post); a worker takes ours as the sign to hand its
        # connections to its guard, and says it is ready when its start-up is over (a model named by its import
        # path is built first: a dead worker, or one that cannot build it, is not waited for).
        self._send_all(np.zeros(self.dim + 1), P.TAG_HELLO)
        deadline = time.perf_counter() + self.spec.stop_timeout + (BUILD_WAIT if self.spec.named else 0.0)
        while len(self.ready | self.skip) < self.K and time.perf_counter() < deadline and not self.orphaned:
            if self._receive_one(-1) is Poll.IDLE:
                self.check_deaths()
                time.sleep(self.spec.poll)
        self._reap()
        if self.bell is not None:  # every worker that will open the bell has (before its hello): remove its name
            self.bell.unlink()
        self.slice = self._wait_slice()
        self.settle()

    # ------------------------------------------------------------------ the run
    def run(self):
        spec = self.spec
        problem = spec.problem
        if spec.state0 is not None:  # resuming: the update's state after iteration spec.start - 1
            state = unpack_step_state(spec.state0)
            theta = np.asarray(state["theta"], dtype=float)
        else:
            theta = np.zeros(self.dim) if spec.theta0 is None else np.asarray(spec.theta0, dtype=float)
            state = spec.step.init(theta)
        wall = float(spec.wall0)
        self.warm_up()
        emit("start", predicted=self.predicted, spec={**spec.describe(), "metrics": self.metrics}, pids=self.pids,
             hosts=self.hosts, bells=sorted(self.belled), start=spec.start)
        status, error = "ok", ""
        try:
            for it in range(spec.start, spec.iterations):
                rec, grad, y, theta, state = self.iteration(it, state)
                wall += rec["time"]
                full = problem.gradient(y)  # outside the timed region, like the metrics
                rec["grad_error"] = float(np.linalg.norm(grad - full) / max(np.linalg.norm(full), 1e-300))
                rec["wall"] = wall
                rec["loss"] = problem.loss(theta)
                rec.update(problem.test_metrics(theta))
                rec["dead"] = sorted(self.dead)
                rec["silent"] = sorted(self.silent)
                emit("iter", record=rec, state=pack_step_state(state), tasks=self.take_tasks())  # theta: in the state
                if not np.isfinite(rec["loss"]):  # the step overflowed: every later iteration would be NaN
                    status, error = "diverged", (f"the loss is not finite after iteration {it} (the parameters "
                                                 f"overflowed: lower the learning rate)")
                    break
        except IterationTimeout as e:
            status, error = "error", str(e)
        except Exception as e:  # a bug: keep what we have, stop the workers, say why
            traceback.print_exc()
            status, error = "error", f"master failed: {type(e).__name__}: {e}"
        if status == "ok" and spec.network:  # a profile: what a message costs (gclib.runtime.network)
            emit("network", measured=network.probe(self, spec.network))
        stopped = self.stop()
        emit("end", status=status, error=error, dead_workers=stopped.dead, theta=theta, stale=self.stale,
             silent={w: why for w, why in sorted(self.silent.items()) if w in stopped.dead},
             tasks=self.take_tasks(),
             messages_sent=sum(b[0] for b in self.byes.values()), messages_received=self.received_total,
             abandoned={w: b[1] for w, b in sorted(self.byes.items())})
        return stopped.exit

    def stop(self) -> Stopped:
        """Stop every worker, drain every message still in flight, and find the workers that died."""
        MPI = self.MPI
        self.stopping = True
        self._send_all(np.zeros(1), P.TAG_STOP)
        deadline = time.perf_counter() + self.spec.stop_timeout
        # (a silent worker is not waited for: it gets the stop if it answers meanwhile)
        while time.perf_counter() < deadline and len(set(self.byes) | self.skip) < self.K:
            if self._receive_one(-1) is Poll.IDLE:
                self.check_deaths()
                time.sleep(self.spec.poll)
        self.check_deaths(force=True)
        dead = sorted(set(range(self.K)) - set(self.byes) | set(self.dead))
        final = np.array([1.0 if dead else 0.0])
        for w in sorted(set(self.byes) - set(dead)):
            try:
                self._isend(final, dest=w + 1, tag=P.TAG_FINAL)
            except MPI.Exception:
                dead.append(w)
        # Our sends to live workers complete; sends to dead ones never will (we then exit without finalize).
        deadline = time.perf_counter() + self.spec.stop_timeout
        while time.perf_counter() < deadline:
            self._reap()
            if all(d - 1 in dead for _, _, d in self.sends):
                break
            time.sleep(self.spec.poll)
        hard = bool(dead) or bool(self.sends) or bool(self.inflight)
        if not hard:
            # Anything still unmatched would make MPICH fail at finalize.
            deadline = time.perf_counter() + self.spec.stop_timeout
            while (self._receive_one(-1) is not Poll.IDLE or self.inflight) and time.perf_counter() < deadline:
                pass
            hard = bool(self.inflight)
        return Stopped(sorted(set(dead)), P.Exit.HARD if hard else P.Exit.CLEAN)


def run_master(comm, spec, finish, sends=(), deaths=None, bell=None, cls=Master) -> P.Exit:
    """Run the master ``cls`` (:class:`Master`, or a subclass such as
    :class:`gclib.runtime.rounds.RoundMaster`); returns how to leave."""
    try:
        return cls(comm, spec, finish, sends=sends, deaths=deaths, bell=bell).run()
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
        emit("end", status="error", error="master crashed (see stderr)", dead_workers=[], theta=None, stale=0)
        return P.Exit.HARD
