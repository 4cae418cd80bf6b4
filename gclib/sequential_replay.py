"""Replaying a sequential gradient-coding scheme on a delay matrix, round by round (see :mod:`gclib.sequential`
for the schemes, the round rule and the two conventions).

* the parameters of a scheme checked (:func:`check_params`), its normalized load (:func:`load`) and its decoding
  delay ``T`` (:func:`delay`);
* :func:`run`: a scheme replayed on ``delays[i, r]``, worker ``i``'s seconds in round ``r``, as a :class:`Result`;
* the round-by-round state of each scheme (:class:`Rounds` and its subclasses, :func:`rounds_of`), the one logic of
  the replay (:func:`step`) and of a live run over MPI (:mod:`gclib.runtime.rounds`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from gclib import checks
from gclib.schemes import SEQUENTIAL, sr_sgc_stragglers as sr_sgc_s

#: The conventions: the paper's definitions, or the authors' public simulator.
CONVENTIONS = ("paper", "simulator")
#: The deadline factor of the authors' final results: a straggler is slower than twice the round's fastest worker.
MU = 1.0



@dataclass
class Result:
    """One scheme replayed on a delay matrix: ``durations`` ``(rounds,)`` seconds per round (0 for a skipped round),
    ``waited`` ``(rounds,)`` the rounds that waited for every worker, ``load`` the normalized load, ``T`` the delay,
    ``jobs`` the gradients computed."""

    scheme: str
    params: dict
    load: float
    T: int
    jobs: int
    mu: float
    convention: str
    durations: np.ndarray
    waited: np.ndarray
    skipped: np.ndarray = field(default=None)

    @property
    def total(self) -> float:
        """The run time: the sum of the rounds (seconds)."""
        return float(np.sum(self.durations))

    @property
    def waits(self) -> int:
        """The rounds that waited for every worker."""
        return int(np.sum(self.waited))

    @property
    def rounds(self) -> int:
        return int(len(self.durations))

    def label(self) -> str:
        return label(self.scheme, self.params)

    def to_dict(self) -> dict:
        return {"scheme": self.scheme, "label": self.label(), **{k: self.params.get(k) for k in ("s", "B", "W", "lambd")},
                "load": self.load, "T": self.T, "jobs": self.jobs, "rounds": self.rounds, "mu": self.mu,
                "convention": self.convention, "total": self.total, "waits": self.waits}


def label(scheme: str, params: dict) -> str:
    """``"gc s=3"``, ``"m-sgc (1,2,27)"``, ``"no-coding"``."""
    if scheme == "gc":
        return f"gc s={params['s']}"
    if scheme in ("sr-sgc", "m-sgc"):
        return f"{scheme} ({params['B']},{params['W']},{params['lambd']})"
    return scheme


# ------------------------------------------------------------------------------------------------ parameters
def _scheme(scheme) -> str:
    return checks.choice("scheme", scheme, tuple(SEQUENTIAL))


def check_params(scheme: str, n: int, **params) -> dict:
    """The parameters of ``scheme`` for ``n`` workers, checked: GC ``0 <= s <= n - 1``; SR-SGC ``B >= 1``,
    ``W >= B + 1`` with ``B`` dividing ``W - 1``, ``1 <= lambd <= n``; M-SGC ``W >= 2``, ``1 <= B <= W - 1``,
    ``1 <= lambd <= n``. Raises ValueError naming the parameter and its allowed range."""
    scheme = _scheme(scheme)
    n = checks.integer("n", n, low=1)
    names = SEQUENTIAL[scheme].params
    extra = sorted(set(params) - set(names))
    if extra:
        raise ValueError(f"scheme {scheme!r} takes parameters {list(names) or 'none'}, got {extra}")
    missing = [k for k in names if params.get(k) is None]
    if missing:
        raise ValueError(f"scheme {scheme!r} needs parameters {list(names)}, missing {missing}")
    if scheme == "gc":
        return {"s": checks.integer("s", params["s"], low=0, high=n - 1, why=" (at most n - 1)")}
    if scheme in ("sr-sgc", "m-sgc"):
        if scheme == "sr-sgc":
            B = checks.integer("B", params["B"], low=1)
            W = checks.integer("W", params["W"], low=B + 1, why=" (at least B + 1)")
            if (W - 1) % B:
                raise ValueError(f"B must divide W - 1 for sr-sgc, got B = {B}, W = {W} (W - 1 = {W - 1})")
        else:
            W = checks.integer("W", params["W"], low=2)
            B = checks.integer("B", params["B"], low=1, high=W - 1, why=" (at most W - 1)")
        lambd = checks.integer("lambd", params["lambd"], low=1, high=n, why=" (at most n, the workers)")
        return {"B": B, "W": W, "lambd": lambd}
    return {}


def load(scheme: str, n: int, **params) -> float:
    """The normalized load (fraction of one gradient's data per worker and round): no coding and no wait ``1/n``;
    GC ``(s + 1)/n``; SR-SGC ``(s + 1)/n`` with ``s = ceil(B lambd / (W - 1 + B))``; M-SGC
    ``(lambd + 1)(W - 1 + B) / (n (B + (W - 1)(lambd + 1)))``, or ``(W - 1 + B) / (n (W - 1))`` when ``lambd = n``."""
    p = check_params(scheme, n, **params)
    if scheme == "gc":
        return (p["s"] + 1) / n
    if scheme == "sr-sgc":
        return (sr_sgc_s(p["B"], p["W"], p["lambd"]) + 1) / n
    if scheme == "m-sgc":
        B, W, lam = p["B"], p["W"], p["lambd"]
        if lam == n:
            return (W - 1 + B) / (n * (W - 1))
        return (lam + 1) * (W - 1 + B) / (n * (B + (W - 1) * (lam + 1)))
    return 1.0 / n


def delay(scheme: str, **params) -> int:
    """The decoding delay ``T`` in rounds: 0 for no coding, no wait and GC; ``B`` for SR-SGC; ``W - 2 + B`` for
    M-SGC."""
    scheme = _scheme(scheme)
    if scheme == "sr-sgc":
        return int(params["B"])
    if scheme == "m-sgc":
        return int(params["W"]) - 2 + int(params["B"])
    return 0


# ------------------------------------------------------------------------------------------------ the replay
def _delays(delays) -> np.ndarray:
    """``delays`` as a float ``(workers, rounds)`` array of non-negative seconds; ``inf`` is a worker that never
    answers in that round (a dead one), ``nan`` is refused, and so are booleans and complex numbers (not converted:
    ``float`` would read ``True`` as one second and drop an imaginary part)."""
    d = checks.real_array("delays", delays, what="seconds (real numbers, inf for never)")
    if d.ndim != 2 or d.shape[0] < 1 or d.shape[1] < 1:
        raise ValueError(f"delays must be a (workers, rounds) matrix with at least one of each, got shape {d.shape}")
    if np.isnan(d).any() or (d < 0).any():
        bad = np.argwhere(np.isnan(d) | (d < 0))[0]
        raise ValueError(f"delays must be non-negative seconds (inf for a worker that never answers), got nan or a "
                         f"negative entry at [{bad[0]}, {bad[1]}] (row and column from 0)")
    return d


def _matrix(d: np.ndarray, jobs, T) -> tuple[np.ndarray, int]:
    """``d`` (checked by :func:`_delays`) and the number of jobs checked against its rounds and the delay ``T``."""
    rounds = d.shape[1]
    if jobs is None:
        jobs = rounds - T
    jobs = checks.integer("jobs", jobs, low=1, high=max(1, rounds - T),
                          why=f" (the delay matrix has {rounds} rounds and the scheme needs jobs + T = jobs + {T})")
    if jobs + T > rounds:
        raise ValueError(f"jobs must be at most {rounds - T} (delays has {rounds} rounds, T = {T}), got {jobs}")
    return d, jobs


def _late(col: np.ndarray, mu: float) -> tuple[np.ndarray, float, float]:
    deadline = (1.0 + mu) * col.min()
    return col > deadline, deadline, col.max()


def stragglers(delays, mu: float = MU) -> np.ndarray:
    """``(workers, rounds)`` boolean: worker ``i`` straggles in round ``r`` when its time exceeds ``(1 + mu)`` times
    the round's fastest time."""
    d = _delays(delays)
    mu = checks.real("mu", mu, low=0)
    return d > (1.0 + mu) * d.min(axis=0, keepdims=True)


def run(scheme: str, delays, *, jobs: Optional[int] = None, mu: float = MU, convention: str = "paper",
        limit: Optional[float] = None, **params) -> Optional[Result]:
    """Replay ``scheme`` with its parameters on ``delays`` ``(workers, rounds)`` for ``jobs`` gradients (default: as
    many as the rounds allow, ``rounds - T``); ``mu`` the deadline factor; ``convention`` one of
    :data:`CONVENTIONS`. ``limit``: stop and return ``None`` once the run time exceeds it (a sweep's pruning).

    Raises:
        ValueError: a bad parameter, too few rounds for ``jobs + T``. RuntimeError: a job the scheme should decode
        does not (a bug: the straggler model check is meant to prevent it).
    """
    scheme = _scheme(scheme)
    convention = checks.choice("convention", convention, CONVENTIONS)
    mu = checks.real("mu", mu, low=0)
    d0 = _delays(delays)
    n = d0.shape[0]
    p = check_params(scheme, n, **params)
    T = delay(scheme, **p)
    d, jobs = _matrix(d0, jobs, T)
    lim = math.inf if limit is None else checks.real("limit", limit, low=0, finite=False)
    fn = {"no-coding": _no_coding, "no-wait": _no_wait, "gc": _gc, "sr-sgc": _sr_sgc, "m-sgc": _m_sgc}[scheme]
    out = fn(d, jobs, mu, convention, lim, **p)
    if out is None:
        return None
    durations, waited, skipped = out
    return Result(scheme, p, load(scheme, n, **p), T, jobs, mu, convention, durations, waited, skipped)


def _no_coding(d, jobs, mu, convention, lim):
    dur = d[:, :jobs].max(axis=0)
    return dur, np.ones(jobs, bool), np.zeros(jobs, bool)


def _no_wait(d, jobs, mu, convention, lim):
    x = d[:, :jobs]
    deadline = (1.0 + mu) * x.min(axis=0)
    dur = deadline if convention == "simulator" else np.minimum(deadline, x.max(axis=0))
    return dur, np.zeros(jobs, bool), np.zeros(jobs, bool)


def _gc(d, jobs, mu, convention, lim, s):
    x = d[:, :jobs]
    deadline = (1.0 + mu) * x.min(axis=0)
    count = (x > deadline).sum(axis=0)
    ok = count < s if convention == "simulator" else count <= s
    dur = np.where(ok, np.minimum(deadline, x.max(axis=0)), x.max(axis=0))
    return dur, ~ok, np.zeros(jobs, bool)


def _sr_sgc(d, jobs, mu, convention, lim, B, W, lambd):
    return replay(SRSGCRounds(d.shape[0], jobs, B=B, W=W, lambd=lambd), d, mu, lim)


def _m_sgc(d, jobs, mu, convention, lim, B, W, lambd):
    return replay(MSGCRounds(d.shape[0], jobs, B=B, W=W, lambd=lambd), d, mu, lim)


# ------------------------------------------------------------------------------------------------ round by round
#: What a worker computes for a job in a round (:meth:`Rounds.begin`): its coded task of a GC code
#: (``index`` unused; no coding's is its own part), an uncoded piece ``index`` of its share (M-SGC), or its coded
#: task of group ``index`` (M-SGC).
GC_TASK, PIECE, GROUP = 0, 1, 2


class Rounds:
    """A scheme's state round by round, the one logic of the replay (:func:`replay`) and of a live run over MPI
    (:mod:`gclib.runtime.rounds`): :meth:`begin` says what each worker computes in round ``r`` (``None``: the round
    is skipped), :meth:`accept` whether the round goes on without the workers late at its deadline (``late``,
    ``(n,)`` bool) or waits for every worker, :meth:`end` records which results arrived, and :meth:`due` is the job
    that must decode by the end of the round (``None``: none), :meth:`decodable` whether it can.

    Subclasses: :class:`NoCodingRounds`, :class:`GCRounds`, :class:`SRSGCRounds`, :class:`MSGCRounds`."""

    scheme = ""
    T = 0

    def __init__(self, n: int, jobs: int):
        self.n = checks.integer("n", n, low=1)
        self.jobs = checks.integer("jobs", jobs, low=1)
        self.r = -1  # the round under way

    @property
    def rounds(self) -> int:
        return self.jobs + self.T

    def begin(self, r: int):
        """Start round ``r``: ``[[(job, kind, index), ...] per worker]``, or ``None`` when the round is skipped
        (:meth:`start`, then :meth:`tasks`)."""
        return self.tasks() if self.start(r) else None

    def start(self, r: int) -> bool:
        """Start round ``r`` (the state of :meth:`begin` without its list of tasks, which the replay does not
        read): ``False`` when the round is skipped."""
        self.r = r
        return True

    def tasks(self) -> list:
        """What each worker computes in the round started last: ``[[(job, kind, index), ...] per worker]``."""
        r = self.r
        return [[(r, GC_TASK, 0)] if r < self.jobs else [] for _ in range(self.n)]

    def accept(self, late) -> bool:
        raise NotImplementedError

    def end(self, arrived, late, ok: bool) -> None:
        """Record the round: ``arrived`` the workers whose results of the round reached the master, ``late`` the
        stragglers of the round (recorded only when ``ok``)."""

    def due(self):
        j = self.r - self.T
        return j if 0 <= j < self.jobs else None

    def decodable(self, job: int) -> bool:
        return True

    def params(self) -> dict:
        return {}

    def label(self) -> str:
        return label(self.scheme, self.params())

    def shortfall(self, job: int) -> str:
        """What job ``job`` lacks to decode, in words."""
        return "nothing lacks"


class NoCodingRounds(Rounds):
    """No coding: every worker its own part, every round waits for every worker."""

    scheme = "no-coding"

    def accept(self, late) -> bool:
        return False


class GCRounds(Rounds):
    """GC(s) in every round on its own: the round goes on without at most ``s`` stragglers."""

    scheme = "gc"

    def __init__(self, n: int, jobs: int, s: int):
        super().__init__(n, jobs)
        self.s = s

    def accept(self, late) -> bool:
        return int(np.sum(late)) <= self.s

    def params(self) -> dict:
        return {"s": self.s}


class SRSGCRounds(Rounds):
    """SR-SGC ``(B, W, lambd)`` (see the module's docstring): GC(s) on the round's job and, when more than ``s``
    workers missed job ``r - B``, the lowest-indexed of them redo it."""

    scheme = "sr-sgc"

    def __init__(self, n: int, jobs: int, B: int, W: int, lambd: int):
        super().__init__(n, jobs)
        self.B, self.W, self.lambd = B, W, lambd
        self.T = B
        self.s = sr_sgc_s(B, W, lambd)
        rounds = self.rounds
        self.work = np.full((n, rounds), -1)  # the job each worker works on (-1: the round was skipped)
        self.got = np.zeros((n, rounds), bool)  # its result of the round reached the master
        self.late = np.zeros((n, rounds), bool)  # recorded stragglers (an accepted round's)
        self.exempt = np.zeros(rounds, bool)  # rounds plain GC absorbed: left out of the model checks

    def _have(self, t: int) -> int:
        """Results of job ``t`` delivered in round ``t``."""
        return int((self.got[:, t] & (self.work[:, t] == t)).sum())

    def start(self, r: int) -> bool:
        self.r = r
        n, t = self.n, r - self.B
        if r >= self.jobs and self._have(t) >= n - self.s:
            return False
        w = np.full(n, r)
        if t >= 0:
            missing = np.flatnonzero(~(self.got[:, t] & (self.work[:, t] == t)))
            if missing.size > self.s:
                w[missing[: missing.size - self.s]] = t
        self.work[:, r] = w
        return True

    def tasks(self) -> list:
        return [[(j, GC_TASK, 0)] if j < self.jobs else [] for j in self.work[:, self.r].tolist()]

    def accept(self, late) -> bool:
        r, W, late_, ex = self.r, self.W, self.late, self.exempt
        lo = max(0, r - W + 1)
        past = late_[:, lo:r][:, ~ex[lo:r]].any(axis=1)
        if (past | late).sum() > self.lambd:
            return False
        hi = max(0, r - self.B + 1)
        return not (late_[:, lo:hi][:, ~ex[lo:hi]].any(axis=1) & late).any()

    def end(self, arrived, late, ok: bool) -> None:
        r = self.r
        self.got[:, r] = arrived
        if ok:
            self.late[:, r] = late
        w = self.work[:, r]
        self.exempt[r] = bool(np.all((w == r) | self.late[:, r]) and self.late[:, r].sum() <= self.s)

    def results(self, job: int) -> np.ndarray:
        """The workers whose result of ``job`` reached the master (in round ``job`` or ``job + B``)."""
        have = self.got[:, job] & (self.work[:, job] == job)
        if job + self.B < self.rounds:
            have = have | (self.got[:, job + self.B] & (self.work[:, job + self.B] == job))
        return have

    def decodable(self, job: int) -> bool:
        return int(self.results(job).sum()) >= self.n - self.s

    def params(self) -> dict:
        return {"B": self.B, "W": self.W, "lambd": self.lambd}

    def shortfall(self, job: int) -> str:
        return f"{int(self.results(job).sum())} of n - s = {self.n - self.s} results"


class MSGCRounds(Rounds):
    """M-SGC ``(B, W, lambd)`` (see the module's docstring): minitask ``m`` of job ``j`` in round ``j + m``, the first
    ``W - 1`` uncoded pieces, the last ``B`` coded groups, done only by a worker that delivered all its pieces."""

    scheme = "m-sgc"

    def __init__(self, n: int, jobs: int, B: int, W: int, lambd: int):
        super().__init__(n, jobs)
        self.B, self.W, self.lambd = B, W, lambd
        self.D1, self.M = W - 1, W - 1 + B
        self.T = W - 2 + B
        rounds = self.rounds
        self.pieces = np.zeros((n, rounds), int)  # uncoded pieces delivered, per worker and job
        self.coded = np.zeros((B, rounds), int)  # coded results delivered, per group and job
        self.late = np.zeros((n, rounds), bool)
        self.does_coded = {}

    def start(self, r: int) -> bool:
        self.r = r
        D1 = self.D1
        self.does_coded = {m: self.pieces[:, r - m] >= D1 for m in range(min(self.M, r + 1)) if m >= D1}
        return True

    def tasks(self) -> list:
        r, D1 = self.r, self.D1
        out = [[] for _ in range(self.n)]
        for m in range(min(self.M, r + 1)):
            j = r - m
            if j >= self.jobs:
                continue
            coded = self.does_coded[m].tolist() if m >= D1 else [False] * self.n
            pieces = self.pieces[:, j].tolist()
            for i in range(self.n):
                out[i].append((j, GROUP, m - D1) if coded[i] else (j, PIECE, pieces[i]))
        return out

    def accept(self, late) -> bool:
        r, W, late_ = self.r, self.W, self.late
        lo = max(0, r - W + 1)
        if (late_[:, lo:r].any(axis=1) | late).sum() > self.lambd:
            return False
        return not (late_[:, lo:max(0, r - self.B + 1)].any(axis=1) & late).any()

    def end(self, arrived, late, ok: bool) -> None:
        r, D1 = self.r, self.D1
        if ok:
            self.late[:, r] = late
        for m in range(min(self.M, r + 1)):
            j = r - m
            if m < D1:
                self.pieces[arrived, j] += 1
            else:
                c = self.does_coded[m]
                self.coded[m - D1, j] += int((arrived & c).sum())
                self.pieces[arrived & ~c, j] += 1

    def decodable(self, job: int) -> bool:
        return not ((self.pieces[:, job] < self.D1).any() or (self.coded[:, job] < self.n - self.lambd).any())

    def params(self) -> dict:
        return {"B": self.B, "W": self.W, "lambd": self.lambd}

    def shortfall(self, job: int) -> str:
        short = np.flatnonzero(self.pieces[:, job] < self.D1).tolist()
        return (f"workers with fewer than W - 1 = {self.D1} pieces: {short}; coded results per group "
                f"{self.coded[:, job].tolist()} of n - lambd = {self.n - self.lambd} needed")


def rounds_of(scheme: str, n: int, jobs: int, **params) -> Rounds:
    """The round-by-round state of ``scheme`` (:class:`Rounds`) for ``n`` workers and ``jobs`` gradients; its
    parameters checked (:func:`check_params`). No wait has none: it decodes nothing."""
    scheme = _scheme(scheme)
    p = check_params(scheme, n, **params)
    if scheme == "no-wait":
        raise ValueError("no-wait decodes nothing: it is a lower bound of the replay, not a scheme to run")
    cls = {"no-coding": NoCodingRounds, "gc": GCRounds, "sr-sgc": SRSGCRounds, "m-sgc": MSGCRounds}[scheme]
    return cls(n, jobs, **p)


def replay(state: Rounds, d: np.ndarray, mu: float, lim: float = math.inf):
    """Replay ``state`` (a fresh :class:`Rounds`) on the delay matrix ``d`` ``(workers, rounds)`` (checked by the
    caller) with deadline factor ``mu``: ``(durations, waited, skipped)`` per round, or ``None`` once the run time
    exceeds ``lim``. Raises RuntimeError when a job due is not decodable (a bug: the model check prevents it)."""
    out = step(state, d, mu, lim=lim)
    return None if out is None else out[:3]


def step(state: Rounds, d: np.ndarray, mu: float, *, rounds: Optional[int] = None, lim: float = math.inf,
         stop: bool = False):
    """The one loop of the replay: the first ``rounds`` rounds of ``state`` (default all) on ``d``. Returns
    ``(durations, waited, skipped, late)``, ``late`` ``(rounds, workers)`` the stragglers of each accepted round, or
    ``None`` once the run time exceeds ``lim``. ``stop``: end at the first round that waits for a worker that never
    answers (``inf``), its duration and every later one's ``inf``."""
    rounds = state.rounds if rounds is None else rounds
    dur = np.zeros(rounds)
    waited = np.zeros(rounds, bool)
    skipped = np.zeros(rounds, bool)
    late = np.zeros((rounds, state.n), bool)
    total = 0.0
    for r in range(rounds):
        if not state.start(r):  # (what each worker computes is the live run's business, not the replay's)
            skipped[r] = True
            continue
        now, deadline, slowest = _late(d[:, r], mu)
        ok = state.accept(now)
        if stop and not ok and not np.isfinite(slowest):
            dur[r:] = math.inf
            break
        if ok:
            state.end(~now, now, True)
            dur[r] = min(deadline, slowest)
            late[r] = now
        else:
            state.end(np.ones(state.n, bool), np.zeros(state.n, bool), False)
            waited[r] = True
            dur[r] = slowest
        total += dur[r]
        if total > lim:
            return None
        j = state.due()
        if j is not None and not state.decodable(j):
            raise RuntimeError(f"{state.label()}: job {j} not decodable in round {r} ({state.shortfall(j)})")
    return dur, waited, skipped, late
