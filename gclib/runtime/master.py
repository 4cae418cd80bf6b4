"""The master rank: send the parameters, receive messages until the received set decodes, decode, step, repeat.

Every wait polls (``Improbe`` + a sleep of ``spec.poll``): MPICH spins inside blocking calls, and on a host with
more ranks than cores a spinning master steals the time the workers' injected delays are measured in. The master
never waits on one request: a message is received with a matched probe and a non-blocking receive that is
tested, not waited for, so a worker that dies in the middle of a large message holds up nothing; sends are
tested, never waited for, too.

What the master prints on stdout (one JSON object per line after the marker :data:`MARK`, read by the launcher):
``init`` (from :mod:`gclib.runtime.rank`: every rank is through ``MPI_Init``), ``start`` (the predicted
times, the workers' process ids), ``iter`` (one per finished iteration, with the
parameters and the update's state, so the launcher keeps a resumable state even if the job is killed), and
``end`` (status, error, dead workers).

An iteration (:meth:`Master.iteration`) is the same for every exchange: before its clock, take in what came since
the last one and make its *book* (:meth:`Master.book`); send the parameters; receive with the one loop
(:func:`gclib.runtime.receive.receive`) until the book says the iteration can end; make the gradient, step, and
tell the workers it is done. The book of the messages exchange decodes (:class:`gclib.runtime.decoding.Collect`,
decoding ahead while nothing arrives); the two-phase exchange's adds picked vectors
(:class:`gclib.runtime.two_phase.TwoPhaseMaster`); a sequential run has rounds of its own
(:class:`gclib.runtime.rounds.RoundMaster`).

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
arrives (a stopped one: until its guard says it continued), and then gets what it missed of the present (the
iteration's parameters, or the stop). Nothing of the master grows with the iterations a frozen worker does not
answer. When the launcher is gone (it closed the master's standard input), the master stops the run: nobody
records it.
"""
from __future__ import annotations

import json
import os
import select
import sys
import time
import traceback
from typing import NamedTuple

import numpy as np

from gclib.jsonable import jsonable
from gclib.runtime import message_probe
from gclib.runtime import protocol as P
from gclib.runtime import wakeup
from gclib.runtime.decoding import Collect, Decoding
from gclib.runtime.protocol import pack_step_state, unpack_step_state
from gclib.runtime.receive import ORPHANED, Gradient, IterationTimeout, Poll, Report, receive

MARK = P.MARK
#: Seconds between two looks for the launcher's death notices.
DEATHS_EVERY = 0.02
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
#: Seconds more the master waits at the start for workers that are neither ready nor known dead or stopped, when
#: no model is to be built: a rank's imports take a fraction of a second alone, but seconds on a host whose cores
#: many processes share, and a worker that starts after the first iterations would owe answers, be silent, and be
#: reported at the end as one that never said goodbye.
START_WAIT = 30.0


class DeathNotices:
    """The launcher's notices of dead workers, read without blocking from ``fd`` (the master's standard input,
    forwarded by ``mpiexec``): one JSON line ``{"worker": w, "signal": ..., "code": ..., ...}`` per dead worker,
    after the spec, and ``{"worker": w, "stopped": "SIGSTOP"}`` / ``{"worker": w, "continued": true}`` when a
    worker's process is stopped by a signal or continued. Only JSON is parsed here, nothing is unpickled.
    :attr:`open` turns false when the launcher closes the input (it is gone). ``read_before``: lines already read
    from ``fd`` (between two runs of a series), parsed first."""

    def __init__(self, fd=0, read_before=b""):
        self.fd = fd
        self.open = True
        self.rest = read_before

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


class Stopped(NamedTuple):
    """How the run's stop ended (:meth:`Master.stop`): the workers found dead, and how the master leaves."""

    dead: list
    exit: P.Exit


class Master(P.Rank):
    """The master of a run: its workers' state (alive, dead, silent), its looks for messages and sends, its
    iterations (:meth:`iteration`, the messages exchange) and the run from the warm-up to the stop."""

    probes = 2  # matched probes per look (see _receive_one)
    params = None  # the parameters of the iteration under way (a worker that answers again gets them)
    stopping = False  # the master said STOP (a worker that answers again gets it)
    orphaned = False  # the launcher closed the master's standard input: nobody follows the run any more

    def __init__(self, comm, spec, finish, sends=(), deaths=None, bell=None):
        super().__init__(comm, spec)
        self.bell = bell  # gclib.runtime.wakeup.Bell shared with the workers of this host, or None
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
        self.frozen = set()  # the silent workers whose guard saw them stopped: silent until they continue
        self.owed = [0] * self.K  # worker -> messages sent to it since the last message from it
        self.skip = set()  # the workers sent nothing: dead or silent
        self._deaths = deaths  # DeathNotices, or None: nobody tells us
        self._deaths_seen = 0.0
        self.width_buf = P.HEADER + self.width
        self.tasks = []  # (worker, [iteration, finish times...]) reports not yet passed on to the launcher
        self.decoding = Decoding(self.code)  # the run's decodes, their coefficients remembered

    @classmethod
    def make_bell(cls):
        """Rank 0, before the run starts: the bell the master shares with the workers of its host
        (:func:`gclib.runtime.wakeup.make`; ``None`` where there is none to make)."""
        return wakeup.make()

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
            if info.get("stopped"):  # alive but frozen: nothing more is sent to it until it continues
                self.frozen.add(w)
                if w not in self.silent:
                    self._silence(w, f"stopped ({info['stopped']})")
                    new = True
            elif info.get("continued"):  # it may answer again: it gets messages until it owes too many
                self.frozen.discard(w)
                if w in self.silent:
                    self._rejoin(w)
            else:
                self.dead[w] = info
                self.silent.pop(w, None)
                self.frozen.discard(w)
                self.skip.add(w)
                new = died = True
        if died:
            self._predict_without_dead()
        if not self._deaths.open and not self.orphaned:
            self.orphaned = new = True
        return new

    def _silence(self, w, why):
        """Send nothing more to worker ``w`` until a message of its own arrives (:meth:`_heard`), or, when it was
        stopped, until it continues (:meth:`check_deaths`)."""
        self.silent[w] = why
        self.skip.add(w)

    def _heard(self, w):
        """A message from worker ``w`` arrived: it owes nothing, and a silent worker is sent to again, starting
        with what it missed of the present (the parameters of the iteration under way, or the stop). A worker seen
        stopped stays silent until the notice that it continued: what arrives from it meanwhile (a message still on
        its way to another host) was sent before it stopped."""
        if not 0 <= w < self.K:
            return
        self.owed[w] = 0
        if w in self.silent and w not in self.frozen:
            self._rejoin(w)

    def _rejoin(self, w):
        """Send to the silent worker ``w`` again, starting with what it missed of the present (the parameters of
        the iteration under way, or the stop)."""
        self.silent.pop(w, None)
        if w in self.dead:
            return
        self.skip.discard(w)
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
            # Twice (probes): MPICH's first probe after a message lands only moves it in (see
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
            self.bell.ring(wakeup.TO_WORKERS)

    def _send_to(self, w, arr, tag):
        try:
            self._isend(arr, dest=w + 1, tag=tag)
            self.owed[w] += 1
        except self.MPI.Exception:
            self._mark_dead(w, "MPI error while sending")

    # ------------------------------------------------------------------ one iteration
    def book(self, it: int) -> Collect:
        """The book of iteration ``it`` (:mod:`gclib.runtime.receive`): its messages until they decode."""
        return Collect(self, it)

    def iteration(self, it, state):
        """Iteration ``it`` from the update's ``state``: the broadcast, the messages until :meth:`book` says they
        are enough, the gradient and the step, timed from just before the parameters go out to just after the step.
        Returns ``(record, gradient, query point, parameters, state)``."""
        spec = self.spec
        self.take_in_late()
        stale0 = self.stale
        book = self.book(it)  # before the clock: nothing of it depends on the iteration
        t_start = time.perf_counter()
        predicted = float(self.predicted[it])  # before this iteration: a worker that dies during it counts alive
        y = spec.step.query(state)
        params = np.concatenate([[float(it)], y])
        self.params = params
        self._send_all(params, P.TAG_PARAMS)
        t_bcast = time.perf_counter() - t_start
        try:
            got = receive(self, it, book, t_start + spec.timeout)
        finally:
            self.params = None
        self.drain_time += got.drain
        # On the critical path: the rule check of the last message (in got.checks), the decode (unless made ahead)
        # and the combination, or the two-phase exchange's sum of vectors.
        grad = book.gradient(got)
        t_decoded = time.perf_counter()
        theta, state = spec.step.step(state, grad)
        t_end = time.perf_counter()
        self._send_all(np.array([float(it)]), P.TAG_DONE)  # stragglers stop now (untimed, like what follows)
        self._reap()
        used = book.record()  # messages, workers, amplification, ...
        rec = {"iteration": it, "time": t_end - t_start, "predicted": predicted, "messages": used.pop("messages"),
               "stale": self.stale - stale0, "bcast": t_bcast, "wait": got.arrived - t_start - t_bcast,
               "decode": t_decoded - got.arrived, "step": t_end - t_decoded, "drain": got.drain, "checks": got.checks,
               **used}
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

    def _rung(self) -> int:
        """The count of the master's bell, read before a look for messages (0 without a bell): :meth:`_idle` then
        wakes at a ring after it."""
        return self.bell.value(wakeup.TO_MASTER) if self.bell is not None else 0

    def _idle(self, rung: int) -> None:
        """Nothing arrived: sleep one slice, or until a worker of this host rings the bell after ``rung``."""
        if self.bell is not None:
            self.bell.wait(wakeup.TO_MASTER, rung, self.slice)
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
        self.await_ready()
        self._reap()
        if self.bell is not None:  # every worker that will open the bell has (before its hello): remove its name
            self.bell.unlink()
        self.slice = self._wait_slice()
        self.settle()

    def await_ready(self):
        """Take in the workers' start-up messages until every worker is ready or known dead or stopped, for at
        most ``stop_timeout`` + :data:`START_WAIT` seconds (+ :data:`BUILD_WAIT` instead when the model is
        named by its import path), or until the launcher is gone."""
        deadline = time.perf_counter() + self.spec.stop_timeout + (BUILD_WAIT if self.spec.named else START_WAIT)
        self._take_in(lambda: len(self.ready | self.skip) >= self.K or self.orphaned, deadline)

    def _take_in(self, done, deadline: float) -> None:
        """Take in messages until ``done()`` or the ``deadline`` (of ``time.perf_counter``), looking for dead
        workers and sleeping ``poll`` seconds whenever none waits."""
        while not done() and time.perf_counter() < deadline:
            if self._receive_one(-1) is Poll.IDLE:
                self.check_deaths()
                time.sleep(self.spec.poll)

    # ------------------------------------------------------------------ the run
    def run(self):
        spec = self.spec
        if spec.state0 is not None:  # resuming: the update's state after iteration spec.start - 1
            state = unpack_step_state(spec.state0)
            theta = np.asarray(state["theta"], dtype=float)
        else:
            theta = np.zeros(self.dim) if spec.theta0 is None else np.asarray(spec.theta0, dtype=float)
            state = spec.step.init(theta)
        self.warm_up()
        self.emit_start(spec.start)
        theta, status, error = self.iterations(state, theta)
        if status == "ok" and spec.network:  # a profile: what a message costs (gclib.runtime.message_probe)
            emit("network", measured=message_probe.probe(self, spec.network))
        return self.finish_run(status, error, theta)

    def iterations(self, state, theta) -> tuple:
        """Every iteration left, each reported to the launcher with its metrics (outside the timed window) and the
        update's state. Returns ``(parameters, status, error)``: ``"ok"``; ``"diverged"`` when the loss is not
        finite (every later iteration would be NaN); ``"error"`` when an iteration cannot end, or the master fails."""
        spec, problem = self.spec, self.spec.problem
        wall = float(spec.wall0)
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
                    return theta, "diverged", (f"the loss is not finite after iteration {it} (the parameters "
                                               f"overflowed: lower the learning rate)")
        except IterationTimeout as e:
            return theta, "error", str(e)
        except Exception as e:  # a bug: keep what we have, stop the workers, say why
            traceback.print_exc()
            return theta, "error", f"master failed: {type(e).__name__}: {e}"
        return theta, "ok", ""

    def emit_start(self, start: int) -> None:
        """Tell the launcher the run starts at iteration ``start``: the predicted times, the spec, the workers."""
        emit("start", predicted=self.predicted, spec={**self.spec.describe(), "metrics": self.metrics},
             pids=self.pids, hosts=self.hosts, bells=sorted(self.belled), start=start)

    def finish_run(self, status: str, error: str, theta, tasks: bool = True) -> P.Exit:
        """Stop the workers (:meth:`stop`) and tell the launcher how the run ended, with the task reports that came
        until then (``tasks``), and whether rank 0 now reads its next word (``reads_next``: the next spec of a
        series, or that none follows; only after a run that finished with every worker alive and every message
        drained); returns how to leave."""
        stopped = self.stop()
        reads_next = stopped.exit is P.Exit.CLEAN and status == "ok"
        emit("end", status=status, error=error, dead_workers=stopped.dead, theta=theta, stale=self.stale,
             silent={w: why for w, why in sorted(self.silent.items()) if w in stopped.dead},
             tasks=self.take_tasks() if tasks else [],
             messages_sent=sum(b[0] for b in self.byes.values()), messages_received=self.received_total,
             abandoned={w: b[1] for w, b in sorted(self.byes.items())}, reads_next=reads_next)
        return stopped.exit if reads_next or stopped.exit is P.Exit.HARD else P.Exit.LAST

    def stop(self) -> Stopped:
        """Stop every worker, drain every message still in flight, and find the workers that died."""
        MPI = self.MPI
        self.stopping = True
        self._send_all(np.zeros(1), P.TAG_STOP)
        # (a silent worker is not waited for: it gets the stop if it answers meanwhile)
        self._take_in(lambda: len(set(self.byes) | self.skip) >= self.K, time.perf_counter() + self.spec.stop_timeout)
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
