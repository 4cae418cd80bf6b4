"""The master rank: send the parameters, receive messages until the received set decodes, decode, step, repeat.

Every wait polls (``Iprobe`` + a sleep of ``spec.poll``): MPICH spins inside blocking calls, and on a host with
more ranks than cores a spinning master steals the time the workers' injected delays are measured in.

What the master prints on stdout (one JSON object per line after the marker :data:`MARK`, read by the launcher):
``start`` (the predicted times), ``iter`` (one per finished iteration, with the parameters, so the launcher
keeps the state even if the job is killed), and ``end`` (status, error, dead workers).
"""
from __future__ import annotations

import json
import sys
import time
import traceback

import numpy as np

from . import protocol as P
from .spec import _jsonable

MARK = "@gclib "


def emit(kind: str, **payload):
    print(MARK + json.dumps(_jsonable({"kind": kind, **payload})), flush=True)


class IterationTimeout(RuntimeError):
    pass


class Master(P.Rank):
    def __init__(self, comm, spec, finish):
        super().__init__(comm, spec)
        self.K = self.code.n_workers
        self.predicted = P.predicted_times(self.code, finish, spec.time_scale)
        self.byes = {}  # worker -> (messages sent, iterations abandoned)
        self.received_total = 0
        self.stale = 0
        self.drain_time = 0.0
        self.buf = np.empty(P.HEADER + self.width, dtype=self.dtype)

    # ------------------------------------------------------------------ receiving
    def _receive_one(self, current):
        """Receive one waiting message if any. Returns ``(message id, payload, header)`` for a gradient of
        iteration ``current``, ``False`` when nothing waits, ``None`` when something else was handled."""
        MPI, st = self.MPI, self.MPI.Status()
        if not self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st):
            return False
        src, tag = st.Get_source(), st.Get_tag()
        if tag == P.TAG_BYE:
            b = np.empty(2)
            self.comm.Recv([b, MPI.DOUBLE], source=src, tag=tag)
            self.byes[src - 1] = (int(b[0]), int(b[1]))
            return None
        if tag == P.TAG_HELLO:  # a start-up hello that came after warm_up stopped waiting: not a gradient
            self.comm.Recv([np.empty(1), MPI.DOUBLE], source=src, tag=tag)
            return None
        t0 = time.perf_counter()
        self.comm.Recv(self.buf, source=src, tag=tag)
        self.received_total += 1
        if P.tag_iteration(tag) != current:  # a late gradient of an earlier iteration: drain it
            self.stale += 1
            self.drain_time += time.perf_counter() - t0
            return None
        head = self.buf[:P.HEADER].real
        return int(head[1]), self.buf[P.HEADER:].copy(), head

    # ------------------------------------------------------------------ one iteration
    def iteration(self, it, state):
        spec, code = self.spec, self.code
        stale0, drain0 = self.stale, self.drain_time
        t_start = time.perf_counter()
        y = spec.step.query(state)
        params = np.concatenate([[float(it)], y])
        for w in range(self.K):
            self._isend(params, dest=w + 1, tag=P.TAG_PARAMS)
        t_bcast = time.perf_counter() - t_start
        received = np.zeros(code.n_messages, dtype=bool)
        payload = {}
        check_time = 0.0
        deadline = t_start + spec.timeout
        while True:
            got = self._receive_one(it)
            if got is False:
                now = time.perf_counter()
                if now > deadline:
                    heard = sorted({int(code.sender[m]) for m in np.flatnonzero(received)})
                    raise IterationTimeout(
                        f"iteration {it}: no decodable set of messages after {spec.timeout:g} s "
                        f"(received {int(received.sum())} of {code.n_messages} messages, from workers {heard}; "
                        f"code '{code.name}' tolerates {code.stragglers} stragglers; the simulator predicts "
                        f"{'never' if not np.isfinite(self.predicted[it]) else f'{self.predicted[it]:.3g} s'} "
                        f"for this iteration's delays)")
                time.sleep(spec.poll)
                continue
            if got is None:
                continue
            m, data, _ = got
            if received[m]:
                continue
            d0 = time.perf_counter()
            received[m] = True
            payload[m] = data
            done = bool(code.rule.decodable(received))
            check_time += time.perf_counter() - d0
            if done:
                break
        idx = np.flatnonzero(received)
        A = code.decode(idx, warn=False)
        grad = code.combine(A, np.stack([payload[m] for m in idx]), self.dim)
        t_decoded = time.perf_counter()
        # On the critical path: the rule check of the last message, the decode and the combination.
        decode_time = t_decoded - d0
        t_wait_end = d0
        theta, state = spec.step.step(state, grad)
        t_end = time.perf_counter()
        self._reap()
        rec = {"iteration": it, "time": t_end - t_start, "predicted": float(self.predicted[it]),
               "messages": int(idx.size), "stale": self.stale - stale0, "bcast": t_bcast,
               "wait": t_wait_end - t_start - t_bcast, "decode": decode_time, "step": t_end - t_decoded,
               "drain": self.drain_time - drain0, "checks": check_time,
               "workers": sorted({int(code.sender[m]) for m in idx})}
        return rec, grad, y, theta, state

    def warm_up(self):
        """Decode once from every message, untimed (first-call costs of LAPACK and the rule stay out of the
        first iteration)."""
        code = self.code
        every = np.ones(code.n_messages, dtype=bool)
        code.rule.decodable(every)
        try:
            A = code.decode(np.arange(code.n_messages), warn=False)
            code.combine(A, np.zeros((code.n_messages, self.width), dtype=self.dtype), self.dim)
        except Exception:  # a decoder that insists on its own minimal sets: nothing to warm
            pass
        self.spec.problem.loss(np.zeros(self.dim))
        # One message each way with every worker (MPICH connects lazily); workers ignore ours.
        hello = np.zeros(1)
        for w in range(self.K):
            self._isend(hello, dest=w + 1, tag=P.TAG_HELLO)
        got, st = set(), self.MPI.Status()
        deadline = time.perf_counter() + self.spec.stop_timeout
        while len(got) < self.K and time.perf_counter() < deadline:
            if self.comm.Iprobe(source=self.MPI.ANY_SOURCE, tag=P.TAG_HELLO, status=st):
                self.comm.Recv([np.empty(1), self.MPI.DOUBLE], source=st.Get_source(), tag=P.TAG_HELLO)
                got.add(st.Get_source())
            else:
                time.sleep(self.spec.poll)

    # ------------------------------------------------------------------ the run
    def run(self):
        spec = self.spec
        problem = spec.problem
        theta0 = np.zeros(self.dim) if spec.theta0 is None else np.asarray(spec.theta0, dtype=float)
        state = spec.step.init(theta0)
        theta = theta0
        self.warm_up()
        emit("start", predicted=self.predicted, spec=spec.describe())
        status, error, wall = "ok", "", 0.0
        try:
            for it in range(spec.iterations):
                rec, grad, y, theta, state = self.iteration(it, state)
                wall += rec["time"]
                full = problem.gradient(y)  # outside the timed region, like the metrics
                rec["grad_error"] = float(np.linalg.norm(grad - full) / max(np.linalg.norm(full), 1e-300))
                rec["wall"] = wall
                rec["loss"] = problem.loss(theta)
                rec.update(problem.test_metrics(theta))
                emit("iter", record=rec, theta=theta)
        except IterationTimeout as e:
            status, error = "error", str(e)
        except Exception as e:  # a bug: keep what we have, stop the workers, say why
            traceback.print_exc()
            status, error = "error", f"master failed: {type(e).__name__}: {e}"
        dead = self.stop()
        emit("end", status=status, error=error, dead_workers=dead, theta=theta, stale=self.stale,
             messages_sent=sum(b[0] for b in self.byes.values()), messages_received=self.received_total,
             abandoned={w: b[1] for w, b in sorted(self.byes.items())})
        return "hard" if dead else "clean"

    def stop(self):
        """Stop every worker, drain every message still in flight, and find the workers that died."""
        MPI = self.MPI
        stop = np.zeros(1)
        for w in range(self.K):
            self._isend(stop, dest=w + 1, tag=P.TAG_STOP)
        deadline = time.perf_counter() + self.spec.stop_timeout
        while len(self.byes) < self.K and time.perf_counter() < deadline:
            if self._receive_one(-1) is False:
                time.sleep(self.spec.poll)
        dead = sorted(set(range(self.K)) - set(self.byes))
        final = np.array([1.0 if dead else 0.0])
        for w in sorted(self.byes):
            self._isend(final, dest=w + 1, tag=P.TAG_FINAL)
        # Our sends to live workers complete; sends to dead ones never will (we then exit without finalize).
        deadline = time.perf_counter() + self.spec.stop_timeout
        while self.sends and time.perf_counter() < deadline:
            self._reap()
            if self.sends:
                time.sleep(self.spec.poll)
        if not dead:
            # Anything still unmatched would make MPICH fail at finalize.
            st = MPI.Status()
            while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st):
                self._receive_one(-1)
        return dead


def run_master(comm, spec, finish) -> str:
    try:
        return Master(comm, spec, finish).run()
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
        emit("end", status="error", error="master crashed (see stderr)", dead_workers=[], theta=None, stale=0)
        return "hard"
