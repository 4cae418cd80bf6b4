"""The master's one receive loop (:func:`receive`), and the contract of what it hands the messages to: the *book*
of an iteration (:class:`Book`).

Every kind of iteration waits for messages the same way: look (a matched probe and tested receives,
:meth:`gclib.runtime.master.Master._receive_one`); hand what came to the book; when nothing came, read the
launcher's notices of dead and stopped workers, let the book use the idle moment (or say the iteration cannot end),
and sleep one slice, or until a worker of the master's host rings the bell. What differs is the book:

* :class:`gclib.runtime.decoding.Collect`: messages until the received set decodes, decoding ahead while idle;
* :class:`gclib.runtime.two_phase.Exchange`: the two-phase exchange's progress reports, then the picked vectors;
* :class:`gclib.runtime.rounds.Round`: a sequential round's results under the deadline rule.
"""
from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np


class IterationTimeout(RuntimeError):
    """An iteration cannot end: the workers alive cannot finish it, its time is up, or the launcher is gone."""


#: Why the master stops when the launcher is gone.
ORPHANED = ("the launcher is gone (the master's standard input closed): nobody records the run any more, so "
            "the master stopped it")


class Poll(enum.Enum):
    """What a look for messages (:meth:`~gclib.runtime.master.Master._receive_one`) did when it brought no message
    of the iteration: ``IDLE``, nothing (the master may wait), or ``BUSY``, it took in something else or started a
    receive (look again at once)."""

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


@dataclass
class Collected:
    """What an iteration's book received until it could end.

    Attributes:
        received: ``(n_messages,)`` bool, the messages received (the two-phase exchange: the progress reported).
        payload: ``(n_messages, width)``: ``payload[m]`` is message ``m`` where received (the two-phase exchange:
            the sum of the vectors added, ``(width,)``).
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


#: What :meth:`Book.idle` returns when it used the idle moment: look again at once, without sleeping.
AGAIN = "again"


class Book:
    """What one iteration does with what the loop receives. :func:`receive` returns the first value other than
    ``None`` (and :data:`AGAIN`) that a method returns; a method may raise :class:`IterationTimeout` instead.

    Attributes:
        drain: seconds the loop spent taking in what was not the iteration's (late gradients, task reports).
    """

    drain = 0.0

    def take(self, got):
        """A message of the iteration arrived (a :class:`Gradient` or a :class:`Report`)."""
        raise NotImplementedError

    def busy(self):
        """The look took in something else, or started a receive."""
        return None

    def idle(self, now: float, deadline: float):
        """Nothing arrived (``now``, ``perf_counter`` seconds; the iteration's ``deadline``): ``None`` to sleep,
        :data:`AGAIN` after using the moment, or the end of the iteration."""
        return None

    def hopeless(self) -> Optional[str]:
        """Why the workers alive cannot end the iteration, asked when some died or stopped (``None``: they can)."""
        return None

    def after_news(self):
        """Called after news of a death or stop that leaves the iteration possible: its end, or ``None``."""
        return None


def receive(master, it: int, book: Book, deadline: float):
    """The master's one receive loop: the messages of iteration ``it`` (``-1``: none is current) go to ``book``
    until one of its methods returns the iteration's end (see :class:`Book`), which is returned.

    Raises:
        IterationTimeout: before the first look, when some worker is dead and ``book`` says the others cannot end
            the iteration (:meth:`Book.hopeless`), or the launcher is gone; after news of a death or stop, the
            same; or from ``book``.
    """
    why = book.hopeless() if master.dead else None
    if why:
        raise IterationTimeout(why)
    if master.orphaned:
        raise IterationTimeout(ORPHANED)
    while True:
        rung = master._rung()  # before looking
        r0 = time.perf_counter()
        got = master._receive_one(it)
        if got is Poll.BUSY:
            book.drain += time.perf_counter() - r0
            done = book.busy()
        elif got is not Poll.IDLE:
            done = book.take(got)
        else:
            if master.check_deaths():
                master._stop_if_hopeless(book.hopeless)
                done = book.after_news()
                if done is not None:
                    return done
            done = book.idle(time.perf_counter(), deadline)
            if done is None:
                master._idle(rung)
                continue
        if done is not None and done is not AGAIN:
            return done
