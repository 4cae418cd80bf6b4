"""The master's messages of an iteration until they decode (:class:`Collect`, the book of the one receive loop,
:func:`gclib.runtime.receive.receive`), and its decodes over a run (:class:`Decoding`).

Decoding ahead: after every arrival that does not make the received set decodable, the master asks the code's
rule which single messages would complete it (a rule's tracker answers without array work; any other rule gets one
batched question); while nothing arrives it decodes those sets, one per idle look, instead of sleeping. When such a
message arrives, the iteration's gradient is the combination of coefficients already made (over a subset of the
received messages: as exact as a decode of them all), and the decode is off the critical path. Every decode uses
one message of each distinct content (copies of a coded message add nothing), and its coefficients are remembered
by the contents present (:data:`DECODERS_KEPT`), so that a set seen before (uncoded's every iteration, or a
multi-message code's few patterns) is not decoded again.
"""
from __future__ import annotations

import time

import numpy as np

from gclib.codes.conditioning import decoding_amplification
from gclib.runtime.receive import AGAIN, Book, Collected, Decoded, IterationTimeout

#: Decoding coefficients remembered, by the contents received, before the memory is emptied.
DECODERS_KEPT = 4096


def message_contents(code) -> np.ndarray:
    """``(n_messages,)`` the content id of every message of ``code``: equal rows of ``B`` (a coded message and its
    copies) share one id, which the master decodes from one copy; every message is its own when the family's
    decoder counts every message received (``Decoder.counts_copies``, a fixed-weight sum)."""
    if code.decoder.counts_copies:
        return np.arange(code.n_messages)
    return np.unique(code.B, axis=0, return_inverse=True)[1].reshape(-1)


class Decoding:
    """The master's decodes of one run of ``code``: the coefficients of the sets received, remembered by their
    contents (up to :attr:`kept` sets), and the rule's questions of which single messages complete a set."""

    def __init__(self, code, kept: int = DECODERS_KEPT):
        self.code = code
        self.kept = kept  # sets of coefficients remembered (0: none)
        self.content = message_contents(code)
        self.known = {}  # distinct contents received (bytes) -> their decoding coefficients
        self._first = None  # the messages that alone decode, for a rule without a tracker ...
        self._asked = False  # ... once asked

    def decode(self, idx) -> Decoded:
        """Decoding coefficients over the messages ``ids``, a subset of the received ``idx`` (sorted): one message
        of each distinct content (messages with equal rows of ``B``, copies of one coded message, add nothing to one
        another). The coefficients are remembered by the contents present, so that a set seen before, whichever
        copies of it arrived, is not decoded again."""
        cls = self.content[idx]
        kinds, first = np.unique(cls, return_index=True)
        ids = idx[first]  # one copy of each content, in the order of ``kinds``
        key = kinds.tobytes()
        A = self.known.get(key)
        if A is None:
            order = np.argsort(ids)
            try:
                A_sorted = self.code.decode(ids[order], warn=False)
            except Exception:  # a family decoder that wants the set as received: decode it whole
                return Decoded(idx, self.code.decode(idx, warn=False))
            A = np.empty_like(A_sorted)
            A[:, order] = A_sorted
            if len(self.known) >= self.kept:
                self.known.clear()
            if self.kept:
                self.known[key] = A
        return Decoded(ids, A)

    def completing(self, received, known):
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

    def first_completing(self):
        """:meth:`completing` of the empty set: the same for every iteration, so asked once."""
        if not self._asked:
            self._first = self.completing(np.zeros(self.code.n_messages, dtype=bool), ())
            self._asked = True
        return self._first


class Collect(Book):
    """The book of one iteration of the messages exchange: the messages of iteration ``it`` until the received
    set decodes (every message of every worker alive and not silent, in a profile: ``wait_all``), decoding ahead
    while nothing arrives. Made before the iteration's clock starts: once the parameters go out, the workers of the
    master's host need its cores to take them in, and any work of the master then delays some of them."""

    def __init__(self, master, it: int):
        self.master, self.it, self.code = master, it, master.code
        code = self.code
        self.decoding = master.decoding
        self.wait_all = master.spec.wait_all
        self.received = np.zeros(code.n_messages, dtype=bool)
        self.payload = np.empty((code.n_messages, master.width), dtype=master.dtype)
        # The rule's incremental check of the set, where it has one (threshold rules: no array work per arrival).
        self.tracker = None if self.wait_all or not hasattr(code.rule, "tracker") else code.rule.tracker()
        # Messages known to complete the received set (the set only grows, so they stay so); None: the rule is
        # asked at every arrival (a profile's wait_all, or a rule that answers one set at a time).
        if self.wait_all:
            completes = None
        elif self.tracker is not None:
            completes = self.tracker.completing()
        else:
            completes = self.decoding.first_completing()
        self.todo = []  # completing messages whose set is not decoded yet
        if completes is not None:
            self.plan_ahead(completes)
        self.completes = None if completes is None else set(completes)
        self.ahead = {}  # message id -> Decoded: the decode of the set that message completes
        self.checks = self.drain = 0.0
        self.used = None  # (messages received, messages decoded, coefficients), once the gradient is made

    def plan_ahead(self, messages) -> None:
        """Decode ahead the sets these completing messages would complete (one per idle look)."""
        self.todo.extend(messages)

    def take(self, got):
        m = got.message
        received, tracker, completes = self.received, self.tracker, self.completes
        if received[m]:
            return None
        d0 = time.perf_counter()
        received[m] = True
        self.payload[m] = got.payload
        if self.wait_all:
            done = self.master._all_in(received)
        elif tracker is not None:
            done = tracker.add(m)
        elif completes is not None:
            done = m in completes
        else:
            done = bool(self.code.rule.decodable(received))
        if done:
            self.checks += time.perf_counter() - d0
            return Collected(received, self.payload, d0, self.checks, self.drain, self.ahead.get(m))
        if completes is not None:
            new = (self.decoding.completing(received, completes) if tracker is None else
                   [c for c in tracker.completing() if c not in completes])
            if new is None:
                self.completes = None
            else:
                completes.update(new)
                self.plan_ahead(new)
        self.checks += time.perf_counter() - d0
        return None

    def idle(self, now, deadline):
        if now > deadline:
            raise IterationTimeout(self.timeout_text())
        if not self.todo:
            return None
        m = self.todo.pop()  # nothing arrived: decode ahead instead of sleeping
        ids = np.flatnonzero(self.received)
        ids = np.insert(ids, np.searchsorted(ids, m), m)
        try:
            self.ahead[m] = self.decoding.decode(ids)
        except Exception:  # the decoder refuses the set: it is decoded after the arrival instead
            pass
        return AGAIN

    def after_news(self):
        """A profile's iteration ends when the messages of every worker left are in (a death completes it)."""
        if self.wait_all and self.received.any() and self.master._all_in(self.received):
            return Collected(self.received, self.payload, time.perf_counter(), self.checks, self.drain)
        return None

    def hopeless(self):
        """An error text if the workers still alive cannot complete a decodable set this iteration, else None."""
        master, code, it = self.master, self.code, self.it
        if self.wait_all:  # a profile: whatever the others send is fine, unless nobody is left
            return None if len(master.dead) < master.K else f"iteration {it}: every worker died"
        possible = self.received | ~np.isin(code.sender, list(master.dead))
        if code.rule.decodable(possible):
            return None
        return (f"iteration {it}: {len(master.dead)} workers died and code '{code.name}' tolerates "
                f"{code.stragglers} stragglers: the messages of the others cannot decode")

    def timeout_text(self) -> str:
        master, code, it = self.master, self.code, self.it
        heard = sorted({int(code.sender[m]) for m in np.flatnonzero(self.received)})
        silent = "".join(f"; worker {w} silent: {why}" for w, why in sorted(master.silent.items()))
        return (f"iteration {it}: no decodable set of messages after {master.spec.timeout:g} s "
                f"(received {int(self.received.sum())} of {code.n_messages} messages, from workers {heard}{silent}; "
                f"code '{code.name}' tolerates {code.stragglers} stragglers; the simulator predicts "
                f"{'never' if not np.isfinite(master.predicted[it]) else f'{master.predicted[it]:.3g} s'} "
                f"for this iteration's delays)")

    def gradient(self, got: Collected) -> np.ndarray:
        """On the iteration's clock: the gradient of what came, from the coefficients decoded ahead (over a subset of
        the received messages) or decoded now."""
        idx = np.flatnonzero(got.received)
        ids, A = self.decoding.decode(idx) if got.ahead is None else got.ahead
        self.used = (idx, ids, A)
        return self.code.combine(A, got.payload[ids], self.master.dim)

    def record(self) -> dict:
        """Outside the clock: the record's ``messages`` (received), ``workers`` (whose messages decoded) and
        ``amplification`` (how much this decode amplifies rounding errors of the messages)."""
        idx, ids, A = self.used
        code = self.code
        return {"messages": int(idx.size), "workers": sorted({int(code.sender[m]) for m in idx}),
                "amplification": decoding_amplification(code.B[ids], A, code.target)}
