"""Sequential gradient coding over MPI: the schemes of :mod:`gclib.sequential` run live, round by round.

The replay of :mod:`gclib.sequential` judges a scheme on a delay matrix; here the same scheme runs: the master
(rank 0) plans every worker's tasks of each round with the scheme's own round logic (:class:`gclib.sequential.
Rounds`, the one the replay steps through), sends each worker its plan and the parameters of every job in it,
applies the deadline rule to the results as they arrive, and decodes job ``r - T`` at the end of round ``r`` from
the real partial gradients the workers computed, then steps the model with it (gradient descent with a delay of
``T`` rounds: job ``j`` is computed at the parameters after the gradients of jobs ``0 .. j - 1 - T``).

A round, on the master's clock from its sends:

* every worker computes its tasks' partial gradients at once, then waits until its injected delay of the round
  (``SequentialRun.delays[w, r]`` seconds after the plan arrived; ``inf``: it never answers that round) and sends one
  message per task (an empty one when the round gave it none);
* the first worker whose messages are all in sets the deadline, ``(1 + mu)`` times its time; at the deadline the
  workers not in yet are the round's stragglers, and the scheme's model says whether the round goes on without
  them (it ends at the deadline, or earlier when every worker is in) or waits for every worker;
* a worker that never answers (killed, dead, or ``inf``) is a straggler in every round: a scheme whose model absorbs
  it goes on (GC and SR-SGC with ``s >= 1``), one that must wait for it stops the run with an error naming the
  round, the stragglers and the dead workers (no coding; M-SGC, whose bursts last at most ``B`` rounds).

Each round's record carries the rule's duration (``round``), the replay's duration on the injected matrix
(``predicted``), the arrival time of every worker (``arrivals``, ``None`` for one not in when the round ended)
and the stragglers; :func:`measured_delays` makes the delay matrix the run measured, whose replay
(:func:`gclib.sequential.replay`) gives back the run's rounds exactly: the live run and the replay are one logic.

Messages: the plan is the parameters' message (tag ``TAG_PARAMS``) ``[round, k, (job, kind, index) x k,
theta of each task's job x k]``; a result is a gradient message of the round (``grad_tag(round)``) whose message id
is ``worker * tasks + task`` (``-1 - worker`` for a worker with no task in the round); the rest (hello, ready, done,
stop, goodbye, death notices, frozen workers) is the runtime's (:mod:`gclib.runtime.protocol`).

Data: no coding, GC and SR-SGC split the data in ``n`` parts and use a GC(``s``) code of gclib (cyclic repetition,
:func:`gclib.codes.repetition.crc`; ``s`` is SR-SGC's ``ceil(B lambd / (W - 1 + B))``); M-SGC splits a job's data in
``n (W - 1)`` uncoded pieces of ``lambd + 1`` parts each (worker ``i``'s piece ``k``) and ``B`` groups of ``n``
parts coded by a GC(``lambd``) code, so that a piece and a coded task of a group are the same work.
"""
from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from gclib import checks, schemes
from gclib import sequential as sq
from gclib.codes.base import GradientCode
from gclib.codes.conditioning import decoding_amplification
from gclib.learning.model import part_gradient, step_size
from gclib.learning.problems import make_problem
from gclib.learning.steps import GD
from gclib.runtime import protocol as P
from gclib.runtime import wakeup
from gclib.runtime.master import SILENT_AFTER, Master, emit
from gclib.runtime.protocol import pack_step_state
from gclib.runtime.receive import Book, IterationTimeout, receive
from gclib.runtime.spec import RunSpec
from gclib.runtime.worker import Worker


@dataclass
class SequentialRun:
    """A sequential scheme to run over MPI: ``scheme`` (one of :data:`gclib.sequential.SCHEMES` but ``no-wait``) with
    its ``params``, the injected ``delays`` ``(workers, rounds)`` seconds (``inf``: the worker never answers that
    round), the deadline factor ``mu`` and the number of ``jobs`` (default: as many as the rounds allow)."""

    scheme: str
    delays: np.ndarray
    params: dict = field(default_factory=dict)
    mu: float = sq.MU
    jobs: int | None = None

    def __post_init__(self):
        d = sq._delays(self.delays)
        self.delays = d
        n = d.shape[0]
        self.params = sq.check_params(self.scheme, n, **dict(self.params))
        if self.scheme == "no-wait":
            raise ValueError("scheme 'no-wait' decodes nothing: it is the replay's lower bound, not a scheme to run")
        if self.scheme == "m-sgc" and self.params["lambd"] >= n:
            raise ValueError(f"lambd must be at most n - 1 = {n - 1} for m-sgc over MPI (its coded groups use a "
                             f"GC(lambd) code of the {n} workers), got {self.params['lambd']}")
        self.mu = checks.real("mu", self.mu, low=0)
        self.T = sq.delay(self.scheme, **self.params)
        _, self.jobs = sq._matrix(d, self.jobs, self.T)

    @property
    def workers(self) -> int:
        return int(self.delays.shape[0])

    @property
    def rounds(self) -> int:
        return self.jobs + self.T

    @property
    def s(self) -> int:
        """The GC parameter of its code: ``s`` of GC, SR-SGC's, ``lambd`` of M-SGC's groups, 0 for no coding."""
        p = self.params
        if self.scheme == "gc":
            return p["s"]
        if self.scheme == "sr-sgc":
            return sq.sr_sgc_s(p["B"], p["W"], p["lambd"])
        return p["lambd"] if self.scheme == "m-sgc" else 0

    @property
    def tasks(self) -> int:
        """The most tasks of a worker in a round: one, or M-SGC's ``W - 1 + B`` minitasks."""
        return self.params["W"] - 1 + self.params["B"] if self.scheme == "m-sgc" else 1

    def parts(self) -> int:
        """The data parts the problem needs: ``n``, or M-SGC's ``n ((W - 1)(lambd + 1) + B)``."""
        n = self.workers
        if self.scheme == "m-sgc":
            p = self.params
            return n * ((p["W"] - 1) * (p["lambd"] + 1) + p["B"])
        return n

    def code(self, seed: int = 0) -> GradientCode:
        """The GC code of its coded tasks, built by :func:`gclib.schemes.build` as the scheme's registry entry says
        (:meth:`gclib.schemes.SequentialScheme.code`: cyclic repetition with :attr:`s`; uncoded for ``s = 0``)."""
        return schemes.SEQUENTIAL[self.scheme].code(self.workers, seed, **self.params)

    def state(self) -> sq.Rounds:
        return sq.rounds_of(self.scheme, self.workers, self.jobs, **self.params)

    def predicted(self, kill=None) -> np.ndarray:
        """``(rounds,)`` the replay's round durations on the injected delays (a worker of ``kill``, ``{worker:
        round}``, never answers from that round on); ``inf`` from the round where the replay would wait for a
        worker that never answers."""
        return self.replayed(kill)[0]

    def replayed(self, kill=None):
        """The replay of the injected delays (a worker of ``kill`` never answering from that round on), stopped at
        the first round that waits for a worker that never answers: :func:`gclib.sequential.step`'s ``(durations,
        waited, skipped, late)``."""
        d = self.delays[:, :self.rounds].copy()
        for w, r in (kill or {}).items():
            d[int(w), int(r):] = math.inf
        return sq.step(self.state(), d, self.mu, stop=True)

    def label(self) -> str:
        return sq.label(self.scheme, self.params)

    def describe(self) -> dict:
        return {"scheme": self.scheme, "label": self.label(), "params": dict(self.params), "mu": self.mu,
                "jobs": self.jobs, "T": self.T, "rounds": self.rounds, "workers": self.workers}

    def check_spec(self, spec) -> None:
        """A :class:`~gclib.runtime.spec.RunSpec` that runs it: ``spec.iterations`` is its rounds, the code its
        :meth:`code`'s workers, the problem has :meth:`parts` parts, no injected model, no resume."""
        if spec.code.n_workers != self.workers:
            raise ValueError(f"the code has {spec.code.n_workers} workers, the delay matrix {self.workers}")
        if spec.problem.n_parts != self.parts():
            raise ValueError(f"problem has {spec.problem.n_parts} parts but {self.label()} on {self.workers} workers "
                             f"needs {self.parts()}")
        if spec.iterations != self.rounds:
            raise ValueError(f"iterations must be the scheme's rounds, jobs + T = {self.jobs} + {self.T} = "
                             f"{self.rounds}, got {spec.iterations}")
        if spec.model is not None:
            raise ValueError("a sequential run takes its injected delays from its delay matrix: model must be None")
        if spec.start or spec.wait_all or spec.network:
            raise ValueError("a sequential run cannot be resumed, profiled (wait_all) or measure the network")

    def roles(self) -> tuple:
        """The classes the ranks of its run run (:meth:`gclib.runtime.spec.RunSpec.roles`): a plan per worker and
        round."""
        return RoundMaster, RoundWorker


def measured_delays(result) -> np.ndarray:
    """``(workers, rounds)`` the delays a sequential run measured: each worker's arrival in each round (seconds from
    the round's sends), ``inf`` where it was not in when the round ended (a straggler of an accepted round, a dead
    worker), ``nan`` for a skipped round. Its replay gives back the run's rounds (:func:`check_replay`)."""
    recs = result.records
    K = int(result.spec["sequential"]["workers"])
    out = np.full((K, len(recs)), np.nan)
    for r, rec in enumerate(recs):
        if rec.get("skipped"):
            continue
        out[:, r] = [math.inf if a is None else a for a in rec["arrivals"]]
    return out


def check_replay(result) -> dict:
    """Replay the delays a sequential run measured (:func:`measured_delays`) with the run's scheme, over the rounds
    it ran (all, or those before it stopped): the rounds' durations, waits and skips as the replay gives them beside
    the run's, and whether they agree (the durations to 1e-9 s)."""
    desc = result.spec["sequential"]
    d = measured_delays(result)
    n = d.shape[1]  # the rounds that ran (all of them, unless the run stopped)
    state = sq.rounds_of(desc["scheme"], int(desc["workers"]), int(desc["jobs"]), **desc["params"])
    d = np.where(np.isnan(d), 0.0, d)  # a skipped round's column is never read
    dur, waited, skipped, _ = sq.step(state, d, float(desc["mu"]), rounds=min(n, state.rounds))
    run_dur = np.array([rec["round"] for rec in result.records])
    run_waited = np.array([bool(rec["waited"]) for rec in result.records])
    run_skipped = np.array([bool(rec["skipped"]) for rec in result.records])
    agree = (n <= state.rounds and np.allclose(dur, run_dur, rtol=0, atol=1e-9)
             and np.array_equal(waited, run_waited) and np.array_equal(skipped, run_skipped))
    return {"agree": bool(agree), "replay": dur, "run": run_dur, "replay_waited": waited, "run_waited": run_waited,
            "replay_skipped": skipped, "run_skipped": run_skipped}


# ------------------------------------------------------------------------------------------------ the data layout
def task_vector(problem, code, seq: SequentialRun, w: int, task, theta) -> np.ndarray:
    """Worker ``w``'s result of one task ``(job, kind, index)`` at ``theta``: its coded combination of partial
    gradients (:data:`gclib.sequential.GC_TASK`, :data:`~gclib.sequential.GROUP`) or the sum of its uncoded piece's
    (:data:`~gclib.sequential.PIECE`)."""
    _, kind, index = (int(x) for x in task)
    n = seq.workers
    if kind == sq.PIECE:
        lam1 = seq.params["lambd"] + 1
        first = (w * (seq.params["W"] - 1) + index) * lam1
        return sum(part_gradient(problem, theta, p) for p in range(first, first + lam1))
    offset = 0 if kind == sq.GC_TASK else n * (seq.params["W"] - 1) * (seq.params["lambd"] + 1) + index * n
    out = np.zeros(problem.dim)
    for p in code.order[w]:
        out += code.B[w, p] * part_gradient(problem, theta, offset + p)
    return out


# ------------------------------------------------------------------------------------------------ the worker
class RoundWorker(Worker):
    """A worker of a sequential run: per round, its plan's tasks, then its injected delay, then its results."""

    def __init__(self, comm, spec, finish, bell=None):
        self.seq = spec.sequential
        super().__init__(comm, spec, finish, bell=bell)
        self.delays = self.seq.delays[self.w]

    def control_size(self) -> int:
        k = self.seq.tasks
        return 2 + 3 * k + k * self.dim

    def _iterate(self, r, plan, t0):  # a round's work (Worker.iterate: the kill, the failure's round)
        k = int(plan[0])
        labels = plan[1:1 + 3 * k].reshape(k, 3)
        thetas = plan[1 + 3 * k:1 + 3 * k + k * self.dim].reshape(k, self.dim)
        c0 = time.perf_counter()
        out = [task_vector(self.spec.problem, self.code, self.seq, self.w, labels[i], thetas[i]) for i in range(k)]
        compute = time.perf_counter() - c0
        delay = float(self.delays[r]) if r < len(self.delays) else math.inf
        new = self._wait_until(t0 + delay, spin=self.end_spin)
        if new is not None or self.decoded >= r or not math.isfinite(delay):
            # The round went on without us: one empty message of it, which the master drains, says we are alive
            # (the master counts the messages a worker leaves unanswered, and stops sending to one that owes many).
            self.abandoned += 1
            self._send(r, [-1 - self.w], [np.zeros(self.dim)], t0, compute)
            return new
        ids = [self.w * self.seq.tasks + i for i in range(k)] or [-1 - self.w]
        self._send(r, ids, out or [np.zeros(self.dim)], t0, compute)
        return None

    def _send(self, r, ids, vecs, t0, compute):
        for m, v in zip(ids, vecs):
            buf = np.zeros(P.HEADER + self.width, dtype=self.dtype)
            buf[:P.HEADER] = (r, m, time.perf_counter() - t0, compute)
            buf[P.HEADER:P.HEADER + self.dim] = v
            self._isend(buf, 0, P.grad_tag(r))
            self.sent += 1
        self._reap()


# ------------------------------------------------------------------------------------------------ the master
class WaitsForDead(RuntimeError):
    """A round waits for every worker (beyond the scheme's straggler model), and some died."""


class RoundMaster(Master):
    """The master of a sequential run (see the module's docstring)."""

    def __init__(self, comm, spec, finish, sends=(), deaths=None, bell=None):
        super().__init__(comm, spec, finish, sends=sends, deaths=deaths, bell=bell)
        self.seq = spec.sequential
        self.predicted = self.seq.predicted(spec.kill)

    def _predict_without_dead(self):  # the prediction is the replay of the injected matrix, kills included
        pass

    def _send_plan(self, w, arr):
        if self.owed[w] >= SILENT_AFTER:
            self._silence(w, f"no message for the last {self.owed[w]} sent to it")
            return
        self._send_to(w, arr, P.TAG_PARAMS)

    def _plan_message(self, r, tasks, thetas) -> np.ndarray:
        k = len(tasks)
        head = [float(r), float(k)] + [float(x) for t in tasks for x in t]
        return np.concatenate([head] + [thetas[t[0]] for t in tasks]) if k else np.array(head)

    def _decode_job(self, job, got):
        """Job ``job``'s gradient from the results ``got`` ``{(job, kind, index, worker): vector}``, and the
        decodes' largest error amplification."""
        n, code = self.seq.workers, self.code
        if self.seq.scheme == "m-sgc":
            total = np.zeros(self.dim)
            for w in range(n):
                for k in range(self.seq.params["W"] - 1):
                    total += got[(job, sq.PIECE, k, w)]
            groups = range(self.seq.params["B"])
        else:
            total, groups = np.zeros(self.dim), [None]
        amp = 1.0
        for b in groups:
            kind, index = (sq.GC_TASK, 0) if b is None else (sq.GROUP, b)
            have = sorted(w for w in range(n) if (job, kind, index, w) in got)[:n - code.stragglers]
            ids = np.array(have)
            A = code.decode(ids, warn=False)
            payload = np.array([got[(job, kind, index, w)] for w in have])
            total += code.combine(A, payload, self.dim)
            a = decoding_amplification(code.B[ids], A, code.target)
            amp = math.inf if a is None else max(amp, a)
        return total, amp

    def run(self):
        spec = self.spec
        theta = np.zeros(self.dim) if spec.theta0 is None else np.asarray(spec.theta0, dtype=float)
        step_state = spec.step.init(theta)
        self.state = self.seq.state()
        self.thetas = {}  # job -> the parameters it is computed at
        self.got = {}  # (job, kind, index, worker) -> result
        self.warm_up()
        self.emit_start(0)
        theta, status, error = self.rounds(step_state, theta)
        return self.finish_run(status, error, theta, tasks=False)

    def rounds(self, step_state, theta) -> tuple:
        """Every round, each reported to the launcher with its metrics and the update's state. Returns
        ``(parameters, status, error)``: ``"ok"``, or ``"error"`` when a round cannot end (it waits for a dead
        worker, or its time is up) or the master fails."""
        problem = self.spec.problem
        wall = 0.0
        try:
            for r in range(self.seq.rounds):
                rec, theta, step_state = self.round(r, step_state, theta)
                wall += rec["time"]
                rec["wall"] = wall
                rec["loss"] = problem.loss(theta)
                rec.update(problem.test_metrics(theta))
                rec["dead"] = sorted(self.dead)
                rec["silent"] = sorted(self.silent)
                emit("iter", record=rec, state=pack_step_state(step_state), tasks=[])
        except (IterationTimeout, WaitsForDead) as e:
            return theta, "error", str(e)
        except Exception as e:
            traceback.print_exc()
            return theta, "error", f"master failed: {type(e).__name__}: {e}"
        return theta, "ok", ""

    def round(self, r: int, step_state, theta) -> tuple:
        """Round ``r``: its plans sent and its results received under the deadline rule (:meth:`play`), then the
        job due decoded and stepped. Returns ``(record, parameters, update's state)``."""
        spec, seq = self.spec, self.seq
        self.take_in_late()
        stale0 = self.stale
        plan = self.state.begin(r)
        if r < seq.jobs:
            self.thetas[r] = np.asarray(spec.step.query(step_state), dtype=float).copy()
        rec = {"iteration": r, "predicted": float(self.predicted[r]), "skipped": plan is None,
               "waited": False, "late": [], "arrivals": [None] * seq.workers, "bcast": 0.0, "wait": 0.0,
               "round": 0.0, "drain": 0.0, "checks": 0.0, "messages": 0, "workers": []}
        if plan is not None:
            rec.update(self.play(r, plan))
        t_dec = time.perf_counter()
        job = self.state.due()
        rec["job"] = job
        rec["grad_error"], rec["amplification"] = math.nan, 1.0
        if job is not None:
            if not self.state.decodable(job):
                raise RuntimeError(f"{seq.label()}: job {job} not decodable at the end of round {r}")
            grad, rec["amplification"] = self._decode_job(job, self.got)
            rec["decode"] = time.perf_counter() - t_dec
            t_step = time.perf_counter()
            theta, step_state = spec.step.step(step_state, grad)
            rec["step"] = time.perf_counter() - t_step
            full = spec.problem.gradient(self.thetas[job])
            rec["grad_error"] = float(np.linalg.norm(grad - full) / max(np.linalg.norm(full), 1e-300))
            for key in [key for key in self.got if key[0] == job]:
                del self.got[key]
            del self.thetas[job]
        else:
            rec["decode"] = rec["step"] = 0.0
        rec["time"] = rec["round"] + rec["decode"] + rec["step"]
        rec["stale"] = self.stale - stale0
        return rec, theta, step_state

    def play(self, r: int, plan) -> dict:
        """Send round ``r``'s ``plan`` to every worker not dead or silent, receive its results under the deadline
        rule (:class:`Round`), keep them, and tell the workers the round is over. Returns the record's
        ``waited``, ``late``, ``arrivals``, ``bcast``, ``round``, ``wait``, ``messages`` and ``workers``."""
        t_start = time.perf_counter()
        for w in range(self.seq.workers):
            if w not in self.skip:
                self._send_plan(w, self._plan_message(r, plan[w], self.thetas))
        if self.bell is not None:  # the workers of this host wake at once
            self.bell.ring(wakeup.TO_WORKERS)
        bcast = time.perf_counter() - t_start
        ok, late, arrivals, results, t_rule = receive(self, r, Round(self, r, plan, t_start),
                                                      t_start + self.spec.timeout)
        counted = np.array([a is not None for a in arrivals])
        self.state.end(counted, late, ok)
        for (w, i), v in results.items():
            self.got[tuple(plan[w][i]) + (w,)] = v
        self._send_all(np.array([float(r)]), P.TAG_DONE)  # its stragglers stop now
        return {"waited": not ok, "late": np.flatnonzero(late).tolist(), "arrivals": arrivals, "bcast": bcast,
                "round": t_rule - t_start, "wait": t_rule - t_start - bcast, "messages": len(results),
                "workers": np.flatnonzero(counted).tolist()}


class Round(Book):
    """The book of round ``r`` of a sequential run (:func:`gclib.runtime.receive.receive`): the results of the
    workers' tasks of ``plan`` under the deadline rule, from ``t_start`` (``perf_counter``) when the plans went
    out. The first worker whose results are all in sets the deadline, ``(1 + mu)`` times its time; at the deadline
    the workers not in are the round's stragglers, and the scheme's model (``master.state.accept``) says whether
    the round ends there or waits for every worker. Its end: ``(ok, late, arrivals, results, t_end)``, the rule's
    decision, the stragglers ``(n,)`` (none when it waited), ``arrivals[w]`` seconds from ``t_start`` of the
    workers counted in (``None`` for the others), their results ``{(w, i): vector}``, and the rule's end of the
    round (``perf_counter``)."""

    def __init__(self, master, r: int, plan, t_start: float):
        self.master, self.r, self.t_start = master, r, t_start
        self.n, self.mu, self.tasks = master.seq.workers, master.seq.mu, master.seq.tasks
        self.need = [max(len(p), 1) for p in plan]
        self.count = [0] * self.n
        self.arrivals = [None] * self.n
        self.results = {}
        self.deadline = math.inf  # seconds from t_start
        self.ok = None  # the rule's decision, once made

    def take(self, got):
        now = time.perf_counter()
        m = int(got.message)
        w, i = (-1 - m, None) if m < 0 else divmod(m, self.tasks)
        if 0 <= w < self.n:
            if i is not None:
                self.results[(w, i)] = got.payload[:self.master.dim].real.copy()
            self.count[w] += 1
            if self.count[w] == self.need[w] and self.arrivals[w] is None:
                self.arrivals[w] = now - self.t_start
                if not math.isfinite(self.deadline):
                    self.deadline = (1.0 + self.mu) * self.arrivals[w]
        return self.decide(now)

    def busy(self):
        return self.decide(time.perf_counter())

    def idle(self, now, deadline):
        end = self.decide(now)
        if end is not None:
            return end
        r, n, arrivals = self.r, self.n, self.arrivals
        if self.ok is False:  # waiting for every worker: one that is dead never comes
            dead = sorted(w for w in self.master.dead if arrivals[w] is None)
            if dead:
                waited = [w for w in range(n) if arrivals[w] is None]
                raise WaitsForDead(
                    f"round {r}: {self.master.seq.label()} cannot go on without workers {waited} (late at the "
                    f"deadline: beyond its straggler model), so it waits for every worker, and workers {dead} "
                    f"died: the run cannot go on")
        if now > deadline:
            missing = [w for w in range(n) if arrivals[w] is None]
            raise IterationTimeout(f"round {r}: workers {missing} not in after {self.master.spec.timeout:g} s and "
                                   f"{self.master.seq.label()} waits for them")
        return None

    def decide(self, now: float):
        """The deadline rule at ``now``: the round's end once the deadline passed and the model accepts its
        stragglers, or once every worker is in; else ``None``."""
        arrivals, n = self.arrivals, self.n
        if self.ok is None and now - self.t_start >= self.deadline:  # who is late, and does the round go on?
            late = np.array([a is None or a > self.deadline for a in arrivals])
            self.ok = self.master.state.accept(late)
            if self.ok:
                arrivals = [None if lt else a for a, lt in zip(arrivals, late)]
                results = {key: v for key, v in self.results.items() if not late[key[0]]}
                return True, late, arrivals, results, self.t_start + self.deadline
        if all(a is not None for a in arrivals):  # every worker is in (before the deadline, or waited for)
            if self.ok is None:
                self.ok = self.master.state.accept(np.zeros(n, bool))
            return self.ok, np.zeros(n, bool), arrivals, self.results, self.t_start + max(arrivals)
        return None


# ------------------------------------------------------------------------------------------------ making a run
def sequential_spec(scheme: str, delays, *, problem=None, samples: int | None = None, dim: int = 10, lr=None,
                    mu: float = sq.MU, jobs: int | None = None, kill=None, seed: int = 0, data_seed: int = 0,
                    timeout: float = 30.0, poll: float = 1e-4, stop_timeout: float = 5.0, **params):
    """The :class:`~gclib.runtime.spec.RunSpec` of a sequential run: ``scheme`` with ``params`` on the injected
    ``delays`` ``(workers, rounds)`` seconds, for ``jobs`` gradients (default: as many as the rounds allow), gradient
    descent with step ``lr`` (default ``1 / L``; needed for a model without ``smoothness``) on ``problem`` (any
    :class:`gclib.learning.model.Model` with the scheme's parts; default Tandon's synthetic logistic regression of
    ``samples`` x ``dim`` split in the scheme's parts). ``kill``: ``{worker: round}``, a worker whose process exits
    when that round's plan arrives. ``timeout``: seconds a round may wait for its workers; ``poll``: the master's
    poll; ``stop_timeout``: seconds the stop waits for every worker's goodbye (a dead worker's never comes)."""
    seq = SequentialRun(scheme, delays, params=params, mu=mu, jobs=jobs)
    if problem is None:
        parts = seq.parts()
        samples = 4 * parts if samples is None else checks.integer(
            "samples", samples, low=parts, why=f" (at least one per data part: {parts})")
        problem = make_problem("tandon-logistic", parts=parts, seed=data_seed, n_samples=samples,
                               dim=checks.integer("dim", dim, low=1))
    lr = step_size(problem, lr)
    return RunSpec(seq.code(seed), problem, GD(lr), None, iterations=seq.rounds, seed=seed, timeout=timeout,
                   poll=poll, stop_timeout=stop_timeout, kill=dict(kill or {}), label=seq.label(), sequential=seq)
