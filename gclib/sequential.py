"""Sequential gradient coding: coding across iterations with a decoding delay, replayed on a delay matrix.

Krishnan, Ebrahimi and Khisti, "Sequential Gradient Coding For Straggler Mitigation" (ICLR 2023, arXiv:2211.13802)
let gradient ``t`` start in round ``t`` and be due by round ``t + T``, so a round's lost work can be made up in a
later round. Their two schemes, and the baselines, are simulated here the way the authors judged them: by replaying
a *delay matrix* ``delays[i, r]``, worker ``i``'s seconds in round ``r`` (``(workers, rounds)``).

The round rule shared by every coded scheme. Round ``r``'s deadline is ``(1 + mu)`` times its fastest worker's time;
the workers slower than that are its stragglers. When the stragglers fit the scheme's straggler model, their work
of the round is lost and the round lasts ``min(deadline, slowest)``; otherwise the master waits for every worker
(nothing is lost, the round lasts its slowest time and counts as *waited*). The run time is the sum of the rounds.
A worker that never answers in a round (a dead one) has delay ``inf``: a scheme whose model absorbs it goes on; one
that must wait for it never finishes (run time ``inf``).

Schemes (:data:`SCHEMES`), each with its normalized load (the fraction of one gradient's data a worker processes in a
round, :func:`load`) and delay ``T`` (:func:`delay`); ``jobs`` gradients take ``jobs + T`` rounds:

* ``no-coding``: every worker its ``1/n`` share, the master waits for all; ``T = 0``;
* ``no-wait``: the master never waits (and decodes nothing): the lower baseline; ``T = 0``;
* ``gc``: gradient coding with parameter ``s`` in every round on its own (load ``(s + 1)/n``, ``T = 0``);
* ``sr-sgc`` ``(B, W, lambd)``: GC with ``s = ceil(B lambd / (W - 1 + B))`` plus selective repetition: when ``v > s``
  workers missed job ``r - B`` in round ``r - B``, ``v - s`` of them (the lowest-indexed) redo it in round ``r``
  instead of job ``r``; job ``t`` decodes from ``n - s`` results of rounds ``t`` and ``t + B``; ``T = B``; in the
  last ``B`` rounds a round whose job ``r - B`` already decodes is skipped at no cost. ``B`` divides ``W - 1``;
* ``m-sgc`` ``(B, W, lambd)``: every job is cut into ``W - 1 + B`` minitasks per worker, handled on a diagonal
  (minitask ``m`` of job ``j`` in round ``j + m``): the first ``W - 1`` are uncoded pieces, the last ``B`` are
  GC-coded groups. A worker does a coded group only when it has delivered all its ``W - 1`` uncoded pieces of the
  job; otherwise it redoes an uncoded piece it lost. Job ``j`` decodes when every worker has delivered its ``W - 1``
  pieces and each coded group has ``n - lambd`` results; ``T = W - 2 + B``; ``1 <= B <= W - 1``.

The straggler model of both SGC schemes, checked in each round (:func:`sr_sgc`, :func:`m_sgc`): the ``(B, W,
lambd)``-bursty model, read on the stragglers *recorded* in past rounds (a waited round records none): *spatial*,
the workers that straggled in the last ``W - 1`` rounds and now number at most ``lambd``; *temporal*, a worker
straggling now did not straggle in rounds ``r - W + 1 .. r - B`` (a burst lasts at most ``B`` rounds in a window).
SR-SGC leaves out of both tests a past round that plain GC absorbed (every worker on that round's own job and at
most ``s`` stragglers); M-SGC has no GC layer in every round and leaves none out.

Conventions (:data:`CONVENTIONS`): ``"paper"`` follows the paper's definitions; ``"simulator"`` the authors' public
simulator (GitHub mamaj/Sequential-Gradient-Coding-2), where they differ:

* GC(s) tolerates ``s`` stragglers in the paper (``<= s``); the simulator accepts a round only with fewer than
  ``s`` (``< s``), so its GC(s) pays the load of ``s`` and tolerates ``s - 1``;
* no-wait: the paper's lower bound lasts ``min(deadline, slowest)`` per round; the simulator charges the deadline
  even when every worker was faster.

The rest is the same in both, read from the simulator (the paper is silent or agrees): the deadline rule, SR-SGC's
lowest-indexed repeaters, the exemption of GC-absorbed rounds in SR-SGC only (the asymmetry follows each scheme's
design), the tail (SR-SGC may skip its last ``B`` rounds; M-SGC cannot, since a job decodes only after its last
coded minitask in round ``j + T``, and its ``T`` tail rounds are charged in full).

Loads and delay matrices: :func:`linear_shift` is the authors' load model (a probe matrix measured at ``base_load``,
shifted by ``(load - base_load) * base_comp`` seconds for every worker); :func:`proportional` is gclib's compute-time
models' (``gclib.stragglers``, one draw per worker and round: a worker's time is ``overhead + load * n * X``).
:func:`sweep` replays every candidate of :func:`candidates` on a probe and :func:`best` picks the fastest.
:func:`read_delays` reads a delay matrix from a ``.npy`` or CSV file (``gclib sequential`` replays one from the
command line); notebook ``12_sequential`` (:mod:`gclib.studies.sequential`) judges the schemes on held-out rounds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import numpy as np
import pandas as pd

from gclib import checks, files

#: The schemes, by name.
SCHEMES = ("no-coding", "no-wait", "gc", "sr-sgc", "m-sgc")
#: Each scheme's parameters.
PARAMETERS = {"no-coding": (), "no-wait": (), "gc": ("s",), "sr-sgc": ("B", "W", "lambd"), "m-sgc": ("B", "W", "lambd")}
#: One line per scheme, for ``gclib list``.
DESCRIPTIONS = {
    "no-coding": "uncoded: every worker its 1/n share, the master waits for all workers in every round",
    "no-wait": "lower baseline: every round lasts its deadline (or its slowest worker when sooner), nothing decoded",
    "gc": "gradient coding GC(s) in every round on its own: load (s+1)/n, delay T = 0",
    "sr-sgc": "sequential GC with selective repetition (B, W, lambd): GC(ceil(B lambd/(W-1+B))) and redo of lost "
              "tasks B rounds later; T = B (Krishnan et al., ICLR 2023)",
    "m-sgc": "multiplexed sequential GC (B, W, lambd): W-1 uncoded and B coded minitasks per job on a diagonal, "
             "T = W-2+B (Krishnan et al., ICLR 2023)",
}
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
    return checks.choice("scheme", scheme, SCHEMES)


def check_params(scheme: str, n: int, **params) -> dict:
    """The parameters of ``scheme`` for ``n`` workers, checked: GC ``0 <= s <= n - 1``; SR-SGC ``B >= 1``,
    ``W >= B + 1`` with ``B`` dividing ``W - 1``, ``1 <= lambd <= n``; M-SGC ``W >= 2``, ``1 <= B <= W - 1``,
    ``1 <= lambd <= n``. Raises ValueError naming the parameter and its allowed range."""
    scheme = _scheme(scheme)
    n = checks.integer("n", n, low=1)
    names = PARAMETERS[scheme]
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


def sr_sgc_s(B: int, W: int, lambd: int) -> int:
    """SR-SGC's per-round GC parameter ``ceil(B lambd / (W - 1 + B))``."""
    return -(-B * lambd // (W - 1 + B))


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


# ------------------------------------------------------------------------------------------------ load models
def linear_shift(base, base_comp: float, base_load: float = 0.0) -> Callable[[float], np.ndarray]:
    """The authors' load model: ``delays(load) = base + (load - base_load) * base_comp``, the probe matrix ``base``
    ``(workers, rounds)`` measured at ``base_load`` and shifted by one constant for every worker and round
    (``base_comp``: seconds per unit of normalized load). The straggler *pattern* of ``base`` is kept at every load."""
    b = checks.finite_array("base", base, ndim=2, complex_ok=False).astype(float)
    c = checks.real("base_comp", base_comp, low=0)
    b0 = checks.real("base_load", base_load, low=0, high=1)

    def at(load: float) -> np.ndarray:
        return b + (checks.real("load", load, above=0) - b0) * c
    return at


def proportional(unit, overhead: float = 0.0) -> Callable[[float], np.ndarray]:
    """gclib's compute-time models' load model: worker ``i`` processes ``load * n`` data parts in round ``r`` at
    ``unit[i, r]`` seconds a part (one draw per worker and round, ``gclib.stragglers`` with ``per_task=False``), plus
    a fixed ``overhead`` per round: ``delays(load) = overhead + load * n * unit``. A straggler's time grows with its
    load."""
    u = checks.finite_array("unit", unit, ndim=2, complex_ok=False).astype(float)
    if (u < 0).any():
        raise ValueError("unit must be non-negative seconds per data part")
    o = checks.real("overhead", overhead, low=0)
    n = u.shape[0]

    def at(load: float) -> np.ndarray:
        return o + checks.real("load", load, above=0) * n * u
    return at


# ------------------------------------------------------------------------------------------------ sweep
#: The most parameter sets a sweep tries (:func:`candidates`), counted before any is listed.
MAX_CANDIDATES = 1_000_000
#: The most work a sweep or an advice replays, in rounds x (workers + :data:`REPLAY_OVERHEAD`): a round's replay
#: costs a fixed part (Python) and a part per worker (NumPy), about 0.6 microseconds per unit on one core, so this
#: is about two minutes; larger requests are refused before the first round (:func:`check_work`).
MAX_REPLAY_WORK = 2e8
REPLAY_OVERHEAD = 128


def count_candidates(scheme: str, n: int, *, max_delay: int = 4, max_W: Optional[int] = None,
                     lambdas: Optional[int] = None) -> int:
    """How many parameter sets :func:`candidates` lists (before ``max_parts``), without listing them: ``lambdas``
    the number of lambdas (default ``n``). A ``max_delay`` beyond :data:`MAX_CANDIDATES` is counted as that many
    (there are more)."""
    lam = n if lambdas is None else lambdas
    D = max_delay
    W_top = D + 1 if max_W is None else max_W
    if scheme == "gc":
        return n
    if scheme not in ("sr-sgc", "m-sgc"):
        return 1
    if D > MAX_CANDIDATES:
        return MAX_CANDIDATES + 1
    if scheme == "sr-sgc":
        pairs = sum(len(range(B + 1, W_top + 1, B)) for B in range(1, D + 1))
    else:
        pairs = sum(max(0, min(W - 1, D - W + 1)) for W in range(2, D + 2))
    return pairs * lam


def check_work(rounds: float, n: int, *, what: str, lower: str) -> None:
    """Refuse a replay of ``rounds`` rounds of ``n`` workers beyond :data:`MAX_REPLAY_WORK`, in one line naming
    ``what`` it is and what to ``lower``."""
    work = float(rounds) * (n + REPLAY_OVERHEAD)
    if work > MAX_REPLAY_WORK:
        minutes = work / MAX_REPLAY_WORK * 2
        raise ValueError(f"{what} would replay {rounds:,.0f} rounds of {n:,} workers (about {minutes:,.0f} minutes "
                         f"on one core), more than gclib.sequential.MAX_REPLAY_WORK allows; lower {lower}")


def candidates(scheme: str, n: int, *, max_delay: int = 4, max_W: Optional[int] = None,
               lambdas: Optional[Iterable[int]] = None, s_values: Optional[Iterable[int]] = None,
               max_parts: Optional[float] = None) -> list[dict]:
    """The parameter sets the authors' sweep tries, within bounds: GC ``s`` in ``s_values`` (default ``0 .. n - 1``);
    SR-SGC ``B = 1 .. max_delay``, ``W = B + 1, 2B + 1, ... <= max_W`` (default ``max_delay + 1``); M-SGC ``W = 2 ..``,
    ``B = 1 .. W - 1`` with ``W - 1 + B <= max_delay``; ``lambd`` in ``lambdas`` (default ``1 .. n``); only those
    whose worker processes at most ``max_parts`` of the ``n`` data parts in a round (``load * n``; default: any)."""
    if max_parts is not None:
        cap = checks.real("max_parts", max_parts, above=0)
        return [p for p in candidates(scheme, n, max_delay=max_delay, max_W=max_W, lambdas=lambdas,
                                      s_values=s_values) if load(scheme, n, **p) * n <= cap + 1e-9]
    scheme = _scheme(scheme)
    n = checks.integer("n", n, low=1)
    max_delay = checks.integer("max_delay", max_delay, low=1)
    max_W = max_delay + 1 if max_W is None else checks.integer("max_W", max_W, low=2)
    lams = list(range(1, n + 1)) if lambdas is None else sorted({int(x) for x in lambdas if 1 <= int(x) <= n})
    count = count_candidates(scheme, n, max_delay=max_delay, max_W=max_W, lambdas=len(lams))
    if count > MAX_CANDIDATES:
        raise ValueError(f"a sweep of {scheme} on {n} workers with max_delay {max_delay} has {count:,} candidates, more "
                         f"than {MAX_CANDIDATES:,} (gclib.sequential.MAX_CANDIDATES); lower max_delay, or sweep fewer "
                         f"lambdas")
    if scheme == "gc":
        ss = range(n) if s_values is None else sorted({int(x) for x in s_values if 0 <= int(x) < n})
        return [{"s": s} for s in ss]
    if scheme == "sr-sgc":
        return [{"B": B, "W": W, "lambd": lam} for B in range(1, max_delay + 1)
                for W in range(B + 1, max_W + 1, B) for lam in lams]
    if scheme == "m-sgc":
        return [{"B": B, "W": W, "lambd": lam} for W in range(2, max_delay + 2) for B in range(1, W)
                if W - 1 + B <= max_delay for lam in lams]
    return [{}]


def sweep(delays_at: Callable[[float], np.ndarray], scheme: str, *, jobs: int, mu: float = MU,
          convention: str = "paper", prune: bool = True, **bounds) -> pd.DataFrame:
    """Replay every candidate of :func:`candidates` (``bounds``: its keyword arguments) on ``delays_at(load)``, the
    probe matrix at the candidate's load (:func:`linear_shift`, :func:`proportional`), for ``jobs`` gradients.
    Returns one row per candidate (:meth:`Result.to_dict`), ``total`` ``inf`` when pruned (``prune``: a candidate
    is stopped once it is slower than the best so far, which cannot change the best)."""
    n = getattr(delays_at, "workers", None) or delays_at(1.0).shape[0]
    jobs = checks.integer("jobs", jobs, low=1)
    cands = candidates(scheme, n, **bounds)
    check_work(len(cands) * (jobs + bounds.get("max_delay", 4)), n, what=f"a sweep of {len(cands):,} {scheme} "
               f"candidates", lower="the workers, the rounds (jobs) or the largest delay")
    rows, best_total = [], math.inf
    cache = {}
    for p in cands:
        ld = load(scheme, n, **p)
        if ld not in cache:
            cache[ld] = delays_at(ld)
        r = run(scheme, cache[ld], jobs=jobs, mu=mu, convention=convention,
                limit=best_total if prune else None, **p)
        if r is None:
            rows.append({"scheme": scheme, "label": label(scheme, p), **{k: p.get(k) for k in ("s", "B", "W", "lambd")},
                         "load": ld, "T": delay(scheme, **p), "jobs": jobs, "mu": mu, "convention": convention,
                         "total": math.inf, "waits": -1})
            continue
        rows.append(r.to_dict())
        best_total = min(best_total, r.total)
    return pd.DataFrame(rows)


def best(table: pd.DataFrame) -> dict:
    """The fastest row of a :func:`sweep` (the first among equals): its parameters as a dict for :func:`run`."""
    if not len(table):
        raise ValueError("the sweep table is empty")
    row = table.loc[table["total"].astype(float).idxmin()]
    names = PARAMETERS[row["scheme"]]
    return {k: int(row[k]) for k in names}


# ------------------------------------------------------------------------------------------------ advice
def task_delays(finish) -> Callable[[float], np.ndarray]:
    """``load -> (workers, rounds)`` delays from ``finish`` ``(rounds, workers, R)``: the finish times of ``R`` tasks of
    one data part each (as :meth:`gclib.stragglers.ComputeModel.sample` draws them for the one-shot simulator). A
    worker that processes ``load * n`` parts (``n`` the workers) finishes when its ``load * n``-th task does,
    interpolated linearly between two tasks for a fractional count (M-SGC's loads); more than ``R`` parts raise."""
    f = checks.real_array("finish", finish, what="finish times (real numbers)")
    if f.ndim != 3 or 0 in f.shape:
        raise ValueError(f"finish must be (rounds, workers, tasks), got shape {f.shape}")
    if np.isnan(f).any() or (f < 0).any():
        raise ValueError("finish must be non-negative times (inf for a task that never finishes)")
    n, R = f.shape[1], f.shape[2]
    padded = np.concatenate([np.zeros(f.shape[:2] + (1,)), f], axis=2)  # finish of 0 tasks: 0

    def at(ld: float) -> np.ndarray:
        parts = checks.real("load", ld, above=0) * n
        if parts > R + 1e-9:
            raise ValueError(f"a load of {parts:.4g} parts needs finish times of that many tasks, got {R}")
        lo = min(int(math.floor(parts + 1e-9)), R)
        frac = parts - lo if lo < R else 0.0
        a = padded[:, :, lo]
        out = a if frac <= 1e-12 else a + frac * (padded[:, :, lo + 1] - a)
        return out.T
    at.workers = n  # (sweep reads it: a load of 1 may need more tasks than drawn)
    return at


#: The schemes the advice across iterations compares (no-wait decodes nothing).
ADVISED = ("no-coding", "gc", "sr-sgc", "m-sgc")


#: The most workers the advice across iterations weighs (as :data:`gclib.advise.MAX_WORKERS`).
MAX_WORKERS = 10_000


def check_advice(K: int, max_parts: int, *, probe: int = 100, held: int = 100, seeds: int = 3, max_delay: int = 4,
                 lambdas: Optional[Iterable[int]] = None) -> dict:
    """The arguments of :func:`advice` checked, and its work bounded before anything is drawn: ``K`` at most
    :data:`MAX_WORKERS`, the draws within the memory budget (:func:`gclib.checks.need_memory`), the rounds its
    sweeps replay within :data:`MAX_REPLAY_WORK` (:func:`check_work`). Returns the checked values (``K``, ``R``,
    ``probe``, ``held``, ``seeds``, ``max_delay``) and ``fits``, the schemes with parameters within ``R`` parts.

    Raises:
        ValueError naming the argument, or the work and what to lower.
    """
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (the advice across iterations sweeps lambdas up to K)")
    R = checks.integer("max_parts", max_parts, low=1, high=K, why=f" (at most the {K} workers)")
    max_delay = checks.integer("max_delay", max_delay, low=1)
    probe = checks.integer("probe", probe, low=max_delay + 2)
    held = checks.integer("held", held, low=max_delay + 2)
    seeds = checks.integer("seeds", seeds, low=1)
    checks.need_memory("the advice across iterations", 3 * 8 * (probe + held) * K * (R + 1),
                       sizes=f"K = {K} workers, {R} parts, {probe + held} rounds", lower="the workers or max_parts")
    cands = {s: candidates(s, K, max_delay=max_delay, lambdas=lambdas, max_parts=R) for s in ADVISED
             if s != "no-coding"}
    fits = ["no-coding"] + [s for s in ADVISED if cands.get(s)]
    rounds = seeds * (sum(len(v) for v in cands.values()) * probe + len(fits) * held)
    check_work(rounds, K, what=f"the advice across iterations for {K} workers and {R} parts (its sweeps of "
               f"{sum(len(v) for v in cands.values()):,} candidates, {seeds} draws)",
               lower="the workers or max_parts (gclib advise: --workers, --max-load), or leave it out (--sequential)")
    return {"K": K, "R": R, "probe": probe, "held": held, "seeds": seeds, "max_delay": max_delay, "fits": fits}


def advice(model, K: int, max_parts: int, *, probe: int = 100, held: int = 100, seeds: int = 3, seed=0,
           mu: float = MU, max_delay: int = 4, lambdas: Optional[Iterable[int]] = None) -> pd.DataFrame:
    """Coding across iterations under a compute-time ``model`` (what ``gclib advise --sequential`` prints): for each
    scheme of :data:`ADVISED`, on each of ``seeds`` draws of ``probe + held`` rounds of ``K`` workers (the model's
    task draws, :func:`task_delays`: the same a one-shot design's simulation reads), the parameters chosen on the
    probe among those whose worker processes at most ``max_parts`` data parts a round (the advice's largest load),
    then replayed on the held-out rounds.

    Returns one row per scheme: ``scheme``, ``chosen`` (the parameters chosen most often, the first seen among
    equals), ``load``, ``parts`` (data parts per worker and round), ``T``, ``time`` (the held-out run time per
    gradient, mean over draws) with its Student-t 95% interval over draws (``lo``, ``hi``; none with one draw),
    ``waits`` (rounds that waited for every worker, mean) and ``jobs`` (gradients per draw). A scheme with no
    parameters within ``max_parts`` (SR-SGC needs two parts a round) has ``chosen`` ``"none within R parts"``, no
    time and ``T = -1``. Times are in the model's unit; communication is not charged."""
    from gclib.stats import paired_difference

    c = check_advice(K, max_parts, probe=probe, held=held, seeds=seeds, max_delay=max_delay, lambdas=lambdas)
    K, R, probe, held, seeds, max_delay, fits = (c[k] for k in ("K", "R", "probe", "held", "seeds", "max_delay",
                                                                "fits"))
    mu = checks.real("mu", mu, low=0)
    rows = {s: [] for s in ADVISED}
    for k in range(seeds):
        rng = np.random.default_rng([checks.integer("seed", seed, low=0), k])
        finish = np.asarray(model.sample(rng, probe + held, K, R), dtype=float)
        a, b = task_delays(finish[:probe]), task_delays(finish[probe:])
        for scheme in fits:
            if scheme == "no-coding":
                p = {}
            else:
                tab = sweep(a, scheme, jobs=probe - max_delay, mu=mu, max_delay=max_delay, lambdas=lambdas,
                            max_parts=R)
                p = best(tab)
            r = run(scheme, b(load(scheme, K, **p)), jobs=held - max_delay, mu=mu, **p)
            rows[scheme].append((label(scheme, p), r.load, r.T, r.total / r.jobs, r.waits, r.jobs))
    out = []
    for scheme in ADVISED:
        rs = rows[scheme]
        if not rs:  # no parameters of it within the load
            out.append({"scheme": scheme, "chosen": f"none within {R} parts", "load": math.nan, "parts": math.nan,
                        "T": -1, "time": math.nan, "lo": math.nan, "hi": math.nan, "waits": math.nan,
                        "jobs": held - max_delay, "draws": seeds})
            continue
        t = np.array([x[3] for x in rs])
        e = paired_difference(t, np.zeros(len(t)))
        labels = [x[0] for x in rs]
        chosen = max(dict.fromkeys(labels), key=labels.count)  # the most often, the first seen among equals
        pick = next(x for x in rs if x[0] == chosen)
        out.append({"scheme": scheme, "chosen": chosen, "load": pick[1], "parts": pick[1] * K, "T": pick[2],
                    "time": float(t.mean()), "lo": e.lo if seeds > 1 else math.nan,
                    "hi": e.hi if seeds > 1 else math.nan, "waits": float(np.mean([x[4] for x in rs])),
                    "jobs": int(rs[0][5]), "draws": seeds})
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------------------------ files
#: The most entries (workers x rounds) of a delay matrix read from a file (80 MB of doubles), and what its CSV may
#: take on disk.
MAX_DELAY_CELLS = 10_000_000
DELAYS_BUDGET = files.Budget("a delay matrix", 256 * files.MIB, constant="gclib.sequential.DELAYS_BUDGET")


def read_delays(path, *, transpose: bool = False) -> np.ndarray:
    """A delay matrix from a file: ``.npy`` (a 2-D array of integers or reals) or a CSV of numbers without a header
    (a row per worker, a column per round; ``transpose``: a row per round; plain, gzip, bzip2 or xz). Returns
    ``(workers, rounds)`` seconds. The file's size and shape are checked against :data:`MAX_DELAY_CELLS` and
    :data:`DELAYS_BUDGET` before it is parsed (:mod:`gclib.files`).

    Raises:
        ValueError: one line naming the file, and the line and column where it is not a delay matrix (not 2-D, not
        numbers, booleans or complex numbers, negative, NaN, a number too large for a float), never its content.
    """
    name = str(path)
    if name.lower().endswith(".npy"):
        d = files.read_npy("delays", path, max_cells=MAX_DELAY_CELLS, what="a delay matrix",
                           constant="gclib.sequential.MAX_DELAY_CELLS")
    else:
        d = files.read_numbers("delays", path, DELAYS_BUDGET, max_cells=MAX_DELAY_CELLS, what="a delay matrix")
    try:
        d = _delays(d)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    return d.T if transpose else d
