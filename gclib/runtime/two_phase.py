"""The two-phase exchange of the partial-straggler protocol (``RunSpec.exchange = "two-phase"``), after
:mod:`gclib.codes.partial_work`: the upload of one exact recovery is one vector per picked worker, not one per chunk.

1. **Progress.** A worker computes its chunks in its order and keeps their partial gradients; for every finished
   chunk it sends a small report (:data:`~gclib.runtime.protocol.TAG_PROGRESS`: the message id, whose chunk the
   code's decoder names), not the chunk's gradient.
2. **Picks.** The master reads the reports as the received set of the one data model: its coverage rule decides
   when they cover every chunk. Then it picks one finisher per chunk (:meth:`Picks.pick`: the greedy set cover of
   :func:`gclib.codes.partial_work.decode_plan`, so few workers upload) and tells each picked worker which of its
   finished chunks to add (:data:`~gclib.runtime.protocol.TAG_SUM`).
3. **Vectors.** Each picked worker uploads the sum of those chunks' partial gradients, one full-size vector tagged
   with the iteration's gradient tag (a late one drains like a late gradient); the master adds the vectors, every
   chunk exactly once. The iteration ends when the last picked vector is in: the round trip is on its clock.

A picked worker that dies (the launcher's notice), goes silent, or does not answer within
:data:`ANSWER_FRACTION` of the iteration's timeout is dropped for the rest of the iteration: the chunks it was to
add are picked again among the other finishers, once every one of them has a live finisher (until then the master
waits for more progress). A vector of a dropped worker that comes after all is not added (its chunks may be
picked elsewhere already), so that no chunk is added twice.

The master of such a run is :class:`TwoPhaseMaster`: its iterations are the messages exchange's, with
:class:`Exchange` for their book (the reports, the picks, the vectors, in the master's one receive loop:
:func:`gclib.runtime.receive.receive`). :class:`Picks` is its record of one iteration, free of MPI (the book drives
it; the tests drive it by hand); :func:`check_exchange` is the spec's check of the option. Nothing is decoded
ahead: there is nothing to decode (the vectors are added).
"""
from __future__ import annotations

import time
from collections import deque

import numpy as np

from gclib.codes.conditioning import decoding_amplification
from gclib.codes.partial_work import CoverDecoder
from gclib.runtime import protocol as P
from gclib.runtime import wakeup
from gclib.runtime.master import Master
from gclib.runtime.receive import Book, Collected, IterationTimeout, Report

#: The exchanges a run can use (``RunSpec.exchange``).
EXCHANGES = ("messages", "two-phase")
#: A picked worker whose vector has not come this fraction of ``RunSpec.timeout`` after its instruction is dropped
#: for the iteration, and its chunks picked among the other finishers.
ANSWER_FRACTION = 0.25


def check_exchange(exchange, code, dim: int, wait_all: bool = False) -> str:
    """``exchange`` checked for ``code`` (ValueError naming what is wrong): one of :data:`EXCHANGES`;
    ``"two-phase"`` only for a code whose decoder names the chunk of every message (``rmg``'s
    :class:`~gclib.codes.partial_work.CoverDecoder`), with unit messages of whole partial gradients, an instruction that
    fits the worker's control buffer (``load <= dim``), and not for a profile (``wait_all``)."""
    if not isinstance(exchange, str) or exchange not in EXCHANGES:
        raise ValueError(f"exchange must be one of {', '.join(map(repr, EXCHANGES))}, got {exchange!r}")
    if exchange == "messages":
        return exchange
    if not isinstance(code.decoder, CoverDecoder) or len(code.decoder.chunk) != code.n_messages:
        raise ValueError(f"exchange 'two-phase' needs a code whose decoder names the chunk of every message (the "
                         f"partial-straggler scheme 'rmg'); code '{code.name}' does not: run it with exchange "
                         f"'messages'")
    if code.n_pieces != 1:
        raise ValueError(f"exchange 'two-phase' needs messages of whole partial gradients; code '{code.name}' cuts "
                         f"them into {code.n_pieces} pieces")
    if code.load > dim:
        raise ValueError(f"exchange 'two-phase' sends an instruction of up to load + 1 = {code.load + 1} numbers, "
                         f"more than the worker's control buffer of dim + 1 = {dim + 1}: use a load of at most "
                         f"{dim} or the exchange 'messages'")
    if wait_all:
        raise ValueError("exchange 'two-phase' waits for the picked vectors, not for every message: it does not "
                         "go with wait_all (a profile)")
    return exchange


class Picks:
    """The master's book of one iteration of the two-phase exchange: the progress reported, the instructions
    pending, the chunks added. Made once per run (:meth:`reset` starts an iteration).

    Attributes (counts of the iteration): ``reports`` received, ``instructions`` sent, ``vectors`` received,
    ``used`` vectors added.
    """

    def __init__(self, code):
        self.chunk = np.asarray(code.decoder.chunk, dtype=np.int64)
        self.sender = np.asarray(code.sender, dtype=np.int64)
        self.n_parts = int(code.n_parts)
        self.message = {(int(w), int(c)): m for m, (w, c) in enumerate(zip(self.sender, self.chunk))}
        self.reset()

    def reset(self):
        self.done = {}  # worker -> the chunks it reported finished, in its order
        self.pending = {}  # worker -> deque of (chunks, sent at) of its instructions not answered, in order
        self.assigned = {}  # chunk -> the worker whose pending instruction lists it
        self.added = set()  # chunks whose vector was added
        self.lost = set()  # workers dropped for this iteration
        self.summed = []  # (worker, chunks) of every vector added
        self.reports = self.instructions = self.vectors = self.used = 0

    def report(self, m: int) -> int:
        """Message ``m`` reported ready: its sender finished its chunk. Returns the sender."""
        w, c = int(self.sender[m]), int(self.chunk[m])
        self.reports += 1
        got = self.done.setdefault(w, [])
        if c not in got:
            got.append(c)
        return w

    def needed(self) -> set:
        """The chunks neither added nor in a pending instruction."""
        return set(range(self.n_parts)) - self.added - set(self.assigned)

    def pick(self, exclude=()) -> dict:
        """``{worker: chunks}``: a finisher for every needed chunk (:meth:`needed`) among the workers not dropped
        and not in ``exclude`` (dead or silent ones), by the greedy set cover of
        :func:`gclib.codes.partial_work.decode_plan` (most needed chunks first, ties: lowest id; each worker's chunks in
        its order). Empty when nothing is needed, or when a needed chunk has no such finisher yet (wait for more
        progress)."""
        left = self.needed()
        if not left:
            return {}
        skip = self.lost | set(exclude)
        cand = {w: set(cs) & left for w, cs in self.done.items() if w not in skip}
        if not left <= set().union(*cand.values()):
            return {}
        plan = {}
        while left:
            w = min(cand, key=lambda v: (-len(cand[v] & left), v))
            plan[w] = tuple(c for c in self.done[w] if c in left)
            left -= cand[w]
        return dict(sorted(plan.items()))

    def instruct(self, w: int, chunks, now: float):
        """The instruction to worker ``w`` to add ``chunks`` went out at ``now``."""
        chunks = tuple(int(c) for c in chunks)
        self.pending.setdefault(int(w), deque()).append((chunks, now))
        for c in chunks:
            self.assigned[c] = int(w)
        self.instructions += 1

    def answer(self, w: int):
        """A vector from worker ``w`` came: the chunks it holds, to be added, or ``None`` when it is not to be
        added (a dropped worker's, or one nobody asked for)."""
        self.vectors += 1
        queue = self.pending.get(int(w))
        if int(w) in self.lost or not queue:
            return None
        chunks, _ = queue.popleft()
        for c in chunks:
            self.assigned.pop(c, None)
        self.added.update(chunks)
        self.summed.append((int(w), chunks))
        self.used += 1
        return chunks

    def lose(self, w: int) -> bool:
        """Drop worker ``w`` for this iteration: it is picked no more, and the chunks of its pending instructions
        are needed again. True when it had some."""
        w = int(w)
        if w in self.lost:
            return False
        self.lost.add(w)
        queue = self.pending.pop(w, ())
        for chunks, _ in queue:
            for c in chunks:
                if self.assigned.get(c) == w:
                    del self.assigned[c]
        return bool(queue)

    def waiting(self) -> list:
        """The workers whose vector is awaited."""
        return sorted(w for w, q in self.pending.items() if q)

    def overdue(self, before: float) -> list:
        """The workers with an instruction sent before ``before`` and not answered."""
        return sorted(w for w, q in self.pending.items() if q and q[0][1] < before)

    def complete(self) -> bool:
        """Every chunk added."""
        return len(self.added) == self.n_parts

    def messages_used(self) -> np.ndarray:
        """The message ids whose chunks were added (one per chunk: the data model's view of the decode)."""
        return np.array(sorted(self.message[(w, c)] for w, cs in self.summed for c in cs), dtype=np.int64)

    def possible(self, dead) -> np.ndarray:
        """``(n_messages,)`` bool: the messages that may still count, the workers in ``dead`` gone (their added
        chunks stay added)."""
        gone = np.isin(self.sender, list(dead))
        return ~gone | np.isin(self.chunk, list(self.added))


class TwoPhaseMaster(Master):
    """The master of a run of the two-phase exchange: its iterations are :class:`gclib.runtime.master.Master`'s,
    each with an :class:`Exchange` for its book and one :class:`Picks` for the run."""

    def __init__(self, comm, spec, finish, sends=(), deaths=None, bell=None):
        super().__init__(comm, spec, finish, sends=sends, deaths=deaths, bell=bell)
        self.picks = Picks(self.code)

    def book(self, it: int) -> "Exchange":
        return Exchange(self, it)


class Exchange(Book):
    """The book of one iteration of the two-phase exchange: the progress reports of iteration ``it`` until the
    code's rule says they cover every chunk, then the picks, the instructions to the picked workers and their
    vectors, added until every chunk is. A picked worker that dies, goes silent or does not answer within
    :data:`ANSWER_FRACTION` of the timeout is dropped and its chunks picked again. Made before the clock."""

    def __init__(self, master, it: int):
        self.master, self.it, self.code, self.picks = master, it, master.code, master.picks
        code = self.code
        self.picks.reset()
        self.tracker = code.rule.tracker() if hasattr(code.rule, "tracker") else None
        self.reports = np.zeros(code.n_messages, dtype=bool)  # the progress reported
        self.total = np.zeros(master.width, dtype=master.dtype)  # the vectors added
        self.covered = False  # the reports cover every chunk
        self.answer_wait = ANSWER_FRACTION * master.spec.timeout
        self.checks = self.drain = 0.0

    def take(self, got):
        code, picks = self.code, self.picks
        d0 = time.perf_counter()
        if isinstance(got, Report):
            m = got.message
            if not 0 <= m < code.n_messages or self.reports[m]:
                return None
            self.reports[m] = True
            picks.report(m)
            if not self.covered:
                self.covered = bool(self.tracker.add(m) if self.tracker is not None else
                                    code.rule.decodable(self.reports))
            if self.covered and picks.needed():
                self.instruct()
            self.checks += time.perf_counter() - d0
            return None
        if picks.answer(int(got.header[1])) is not None:  # a picked vector: added
            self.total += got.payload
            if picks.complete():
                return Collected(self.reports, self.total, d0, self.checks, self.drain)
        return None

    def idle(self, now, deadline):
        picks = self.picks
        if self.covered:
            lost = ({w for w in picks.waiting() if w in self.master.skip}
                    | set(picks.overdue(now - self.answer_wait)))
            if lost:
                for w in sorted(lost):
                    picks.lose(w)
                self.instruct()
        if now > deadline:
            raise IterationTimeout(self.timeout_text())
        return None

    def instruct(self) -> None:
        """Pick a finisher for every chunk needed (:meth:`Picks.pick`; none until each has a live one) and send each
        picked worker the chunks it adds."""
        master, picks = self.master, self.picks
        while True:
            plan = picks.pick(exclude=master.skip)
            if not plan:
                return
            now = time.perf_counter()
            for w, chunks in plan.items():
                picks.instruct(w, chunks, now)
                master._send_to(w, np.array([float(self.it), *chunks]), P.TAG_SUM)
            if master.bell is not None:
                master.bell.ring(wakeup.TO_WORKERS)
            failed = [w for w in plan if w in master.skip]  # an MPI error while sending: dead
            if not failed:
                return
            for w in failed:
                picks.lose(w)

    def hopeless(self):
        """An error text if the workers still alive cannot cover every chunk this iteration (the chunks added
        count), else None."""
        code, dead = self.code, self.master.dead
        if code.rule.decodable(self.picks.possible(dead)):
            return None
        return (f"iteration {self.it}: {len(dead)} workers died and code '{code.name}' tolerates "
                f"{code.stragglers} stragglers: the chunks of the others cannot cover every chunk")

    def timeout_text(self) -> str:
        picks, code, master, it = self.picks, self.code, self.master, self.it
        silent = "".join(f"; worker {w} silent: {why}" for w, why in sorted(master.silent.items()))
        return (f"iteration {it}: no exact sum after {master.spec.timeout:g} s (two-phase exchange: "
                f"{int(self.reports.sum())} of {code.n_messages} chunks reported, {len(picks.added)} of "
                f"{code.n_parts} chunks added, vectors awaited from workers {picks.waiting()}, workers dropped "
                f"{sorted(picks.lost)}{silent}; code '{code.name}' tolerates {code.stragglers} stragglers; the "
                f"simulator predicts "
                f"{'never' if not np.isfinite(master.predicted[it]) else f'{master.predicted[it]:.3g} s'} "
                f"for this iteration's delays)")

    def gradient(self, got: Collected) -> np.ndarray:
        """Every chunk added once: the gradient."""
        return self.total[:self.master.dim].real.copy()

    def record(self) -> dict:
        """The record's ``messages`` and ``vectors`` (full-size vectors received), ``workers`` (whose vectors were
        added), ``amplification``, ``reports`` (progress reports received) and ``instructions`` (sent)."""
        picks, code = self.picks, self.code
        ids = picks.messages_used()
        return {"messages": picks.vectors, "workers": sorted({w for w, _ in picks.summed}),
                "amplification": decoding_amplification(code.B[ids], np.ones((1, ids.size)), code.target),
                "vectors": picks.vectors, "reports": picks.reports, "instructions": picks.instructions}
