"""The two-phase exchange of the partial-straggler protocol (``RunSpec.exchange = "two-phase"``), after
:mod:`gclib.codes.rmg`: the upload of one exact recovery is one vector per picked worker, not one per chunk.

1. **Progress.** A worker computes its chunks in its order and keeps their partial gradients; for every finished
   chunk it sends a small report (:data:`~gclib.runtime.protocol.TAG_PROGRESS`: the message id, whose chunk the
   code's decoder names), not the chunk's gradient.
2. **Picks.** The master reads the reports as the received set of the one data model: its coverage rule decides
   when they cover every chunk. Then it picks one finisher per chunk (:meth:`Picks.pick`: the greedy set cover of
   :func:`gclib.codes.rmg.decode_plan`, so few workers upload) and tells each picked worker which of its finished
   chunks to add (:data:`~gclib.runtime.protocol.TAG_SUM`).
3. **Vectors.** Each picked worker uploads the sum of those chunks' partial gradients, one full-size vector tagged
   with the iteration's gradient tag (a late one drains like a late gradient); the master adds the vectors, every
   chunk exactly once. The iteration ends when the last picked vector is in: the round trip is on its clock.

A picked worker that dies (the launcher's notice), goes silent, or does not answer within
:data:`ANSWER_FRACTION` of the iteration's timeout is dropped for the rest of the iteration: the chunks it was to
add are picked again among the other finishers, once every one of them has a live finisher (until then the master
waits for more progress). A vector of a dropped worker that comes after all is not added (its chunks may be
picked elsewhere already), so that no chunk is added twice.

:class:`Picks` is the master's book of one iteration, free of MPI (the master drives it; the tests drive it by
hand); :func:`check_exchange` is the spec's check of the option.
"""
from __future__ import annotations

from collections import deque

import numpy as np

#: The exchanges a run can use (``RunSpec.exchange``).
EXCHANGES = ("messages", "two-phase")
#: A picked worker whose vector has not come this fraction of ``RunSpec.timeout`` after its instruction is dropped
#: for the iteration, and its chunks picked among the other finishers.
ANSWER_FRACTION = 0.25


def check_exchange(exchange, code, dim: int, wait_all: bool = False) -> str:
    """``exchange`` checked for ``code`` (ValueError naming what is wrong): one of :data:`EXCHANGES`;
    ``"two-phase"`` only for a code whose decoder names the chunk of every message (``rmg``'s
    :class:`~gclib.codes.rmg.CoverDecoder`), with unit messages of whole partial gradients, an instruction that
    fits the worker's control buffer (``load <= dim``), and not for a profile (``wait_all``)."""
    from gclib.codes.rmg import CoverDecoder

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
        :func:`gclib.codes.rmg.decode_plan` (most needed chunks first, ties: lowest id; each worker's chunks in its
        order). Empty when nothing is needed, or when a needed chunk has no such finisher yet (wait for more
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
