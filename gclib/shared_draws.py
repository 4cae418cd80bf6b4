"""The simulator's numbers for whole families of designs, from their parameters, on shared draws.

:func:`gclib.simulator.simulate_trials` reads each design's schedule (who sends every message, after how many
partial gradients, the rule) and forms its ``(trials, messages)`` arrival times. The designs the advice compares
have a structure the schedule does not say, and this module computes the same per-trial numbers from it, from the
workers' finish times alone (:class:`Draws`), without a schedule and without an array of every message:

* every design sends its messages after fixed tasks (the *columns* of the draws: the finish times of every
  worker's ``k``-th partial gradient), in contiguous clusters of workers, and a cluster decodes at an order
  statistic of its messages' arrivals (:class:`Spec`);
* correlated GC-MMC and UC-MMC of every order of one load and cluster count share one pass: in a cluster,
  class ``c`` first arrives at ``C_m(c) = min_{j = 0 .. r - m} F_{c - j}(m + j)`` (worker indices modulo the
  cluster's size), so ``C_m(c) = min(F_m(c), C_{m+1}(c - 1))`` and each order costs one minimum and one partition
  of ``K`` numbers (``K l`` messages otherwise);
* the messages received by a time and the partial gradients computed by then are counts of workers done with
  task ``k`` by that time, each a binary search in the column sorted once per chunk.

The numbers are those of :func:`gclib.simulator.simulate_trials` on the same draws (the draws rounded to float32,
then the arrivals; the tests compare every family of :func:`gclib.advise.candidates` at small ``K``), except the
volume, which is the messages times their size here (a sum in another order there: equal to rounding). The
communication delays of :class:`gclib.simulator.Communication` without the master's queue shift every arrival of a
design by one constant and are applied exactly; the master's queue (``queue=True``) depends on the order of every
arrival: :func:`evaluate` then gives, per trial, bounds of the completion time (:func:`queue_bounds`), which is
what the advice's screening needs; the designs it keeps are simulated exactly from their schedules.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from gclib import checks
from gclib.codes.mmc import cluster_sizes
from gclib.simulator import draws_per_worker, queued

#: What :func:`evaluate` can return per design and trial.
OUTPUTS = ("time", "messages", "volume", "computations")
#: Bytes of one chunk of :class:`Draws` per trial and per worker and task: the float32 finish times and their
#: sorted copy, and the float64 draws a per-task model returns before they are rounded (with its cumulative sum).
DRAW_BYTES = 4 + 4 + 16


@dataclass(frozen=True)
class Spec:
    """What :func:`evaluate` reads of a design.

    Attributes:
        kind: ``"single"`` (one message per worker, after task ``columns[0]``), ``"correlated"`` (GC-MMC of order
            ``m``: worker ``w`` of a cluster sends class ``w + j`` after task ``m + j``, ``j = 0 .. r - m``; a
            cluster decodes from ``K_c - m + 1`` distinct classes), ``"uncorrelated"`` (one message per worker
            after each task of ``columns``; a cluster decodes from ``K_c l - sum(columns) + 1`` of its ``K_c l``
            messages) or ``"hybrid"`` (clusters of ``r`` workers: coded messages after the tasks of
            ``columns[:-1]``, of which ``need`` decode, or one plain sum after task ``r``).
        load: partial gradients each worker computes (the schedule's ``lengths``).
        columns: the tasks after which every worker sends (ascending; ``m .. r`` for ``"correlated"``).
        blocks: the sizes of the contiguous clusters of workers, in order.
        need: per cluster, the messages (distinct classes) that decode it (``"single"``, ``"uncorrelated"``,
            ``"correlated"``), or the coded messages that do (``"hybrid"``).
        size: every message's length in gradients.
        protocol: ``None`` (the messages above are the gradients the master decodes), or ``"rmg"``: the
            partial-straggler protocol (:func:`rmg`), whose messages above are progress reports and which is
            charged its round trip (:func:`protocol`).
    """

    kind: str
    load: int
    columns: tuple
    blocks: tuple
    need: tuple
    size: float = 1.0
    protocol: str | None = None

    @property
    def workers(self) -> int:
        return int(sum(self.blocks))

    @property
    def r(self) -> int:
        return int(self.columns[-1])

    @property
    def m(self) -> int:
        return int(self.columns[0])


def _blocks(K: int, P: int, r: int) -> tuple:
    return tuple(cluster_sizes(K, P, r))


def single(K: int, column: int, need: int, *, groups: int | None = None, size: float = 1.0,
           load: int | None = None) -> Spec:
    """One message per worker after task ``column``: any ``need`` of the ``K`` workers decode, or, with
    ``groups`` workers per group (``groups | K``), ``need`` of each group (fractional repetition: ``need = 1``)."""
    K = checks.integer("workers", K, low=1)
    blocks = (K,) if groups is None else (int(groups),) * (K // int(groups))
    if sum(blocks) != K:
        raise ValueError(f"groups of {groups} workers must divide K = {K}")
    return Spec("single", int(load or column), (int(column),), blocks, (int(need),) * len(blocks), float(size))


def gc(K: int, r: int, P: int = 1) -> Spec:
    """Plain GC with load ``r`` in ``P`` clusters (:func:`gclib.code_schedules.gc`,
    :func:`gclib.code_schedules.clustered`)."""
    b = _blocks(K, P, r)
    return Spec("single", r, (r,), b, tuple(k - r + 1 for k in b))


def correlated(K: int, r: int, m: int, P: int = 1) -> Spec:
    """Correlated GC-MMC of order ``m`` (``m = 1``: UC-MMC) with load ``r`` in ``P`` clusters."""
    b = _blocks(K, P, r)
    return Spec("correlated", r, tuple(range(m, r + 1)), b, tuple(k - m + 1 for k in b))


def rmg(K: int, l: int) -> Spec:
    """The partial-straggler protocol of Ramamoorthy, Meng and Girimaji (:func:`gclib.codes.partial_work.rmg`) on the
    cyclic assignment in its natural order, ``K`` workers of ``l`` chunks: every worker reports after each chunk
    (the reports are sent when UC-MMC's messages are, in one cluster), the coverage of the chunks is UC-MMC's
    (:func:`correlated` with ``m = 1``, ``P = 1``), and the round trip after it is charged by :func:`protocol`."""
    K = checks.integer("workers", K, low=1)
    l = checks.integer("load", l, low=1, high=K, why=f" for {K} workers")
    return Spec("correlated", l, tuple(range(1, l + 1)), (K,), (K,), protocol="rmg")


def uncorrelated(K: int, r: int, orders, P: int = 1) -> Spec:
    """Uncorrelated GC-MMC with order vector ``orders`` (ascending, the last ``r``) in ``P`` clusters."""
    o = tuple(int(v) for v in orders)
    b = _blocks(K, P, r)
    return Spec("uncorrelated", r, o, b, tuple(k * len(o) - sum(o) + 1 for k in b))


def hybrid(K: int, r: int, orders) -> Spec:
    """The hybrid design (:func:`gclib.codes.mmc.hybrid`): clusters of ``r`` workers, the uncorrelated design of
    the orders below ``r`` and a plain sum after ``r``."""
    coded = tuple(int(v) for v in orders if v != r)
    if K % r or not coded:
        raise ValueError(f"hybrid needs r = {r} to divide K = {K} and an order below r, got {list(orders)}")
    t = r * len(coded) - sum(coded) + 1
    return Spec("hybrid", r, coded + (r,), (r,) * (K // r), (t,) * (K // r))


# ------------------------------------------------------------------------------------------------ the draws
class Draws:
    """One chunk of draws of a compute-time model: the finish time of every worker's ``k``-th partial gradient,
    ``k = 1 .. R``, in ``n`` trials, rounded to float32 as :func:`gclib.simulator.simulate_trials` rounds them
    (under eq. 5 the product ``k X`` is formed in float64, then rounded; per task, the cumulative sums).

    ``col(k)`` is the ``(n, K)`` column of task ``k``; the columns are also kept sorted along the workers for
    :meth:`counts`. The random stream is the one :func:`gclib.simulator.simulate_trials` draws a chunk from
    (``model.per_worker`` under eq. 5, ``model.sample`` otherwise, with ``R`` tasks).
    """

    def __init__(self, model, rng, n: int, K: int, R: int):
        self.n, self.K, self.R = int(n), int(K), int(R)
        self.eq5 = draws_per_worker(model)
        self._cols = {}
        if self.eq5:
            self.x = model.per_worker(rng, self.n, self.K, self.R)
            self.xs = np.sort(self.x, axis=1)
            self.F = self.S = None
        else:
            f = model.sample(rng, self.n, self.K, self.R)
            self.F = np.ascontiguousarray(np.swapaxes(f, 1, 2), dtype=np.float32)  # (n, R, K)
            del f
            self.S = np.sort(self.F, axis=2)
            self.x = self.xs = None

    def col(self, k: int) -> np.ndarray:
        """``(n, K)`` float32 finish times of every worker's task ``k`` (1-based)."""
        if not self.eq5:
            return self.F[:, k - 1, :]
        c = self._cols.get(k)
        if c is None:
            c = self._cols[k] = (self.x * k).astype(np.float32)
        return c

    def first(self, k: int) -> np.ndarray:
        """``(n,)`` the earliest finish of task ``k`` over the workers."""
        if self.eq5:
            return (self.xs[:, 0] * k).astype(np.float32)
        return self.S[:, k - 1, 0]

    def counts(self, ks, T: np.ndarray, shift=0.0, strict: bool = False) -> np.ndarray:
        """``(n, Q)``: per trial ``i`` and query ``q``, the workers whose finish time ``v`` of task ``ks[q]`` is
        finite and ``v + shift[q] <= T[i, q]`` (``< T[i, q]`` when ``strict``), ``v + shift`` formed in float64 (as
        the simulator adds a communication delay to a float32 arrival). One binary search in the sorted columns
        for every query at once.

        Args:
            ks: ``(Q,)`` tasks (1-based). T: ``(n, Q)`` times, or ``(n,)`` for every query. shift: a number or
                ``(Q,)``.
        """
        ks = np.asarray(ks, dtype=np.int64).reshape(-1)
        n, K = self.n, self.K
        T = np.asarray(T, dtype=np.float64)
        if T.ndim == 1:
            T = T[:, None]
        shift = np.asarray(shift, dtype=np.float64).reshape(1, -1)
        lo = np.zeros((n, ks.size), dtype=np.int64)
        hi = np.full((n, ks.size), K, dtype=np.int64)
        rows = np.arange(n)[:, None]
        if self.eq5:
            flat, base, scale = self.xs.ravel(), rows * K, ks[None, :].astype(np.float64)
        else:
            flat, base, scale = self.S.ravel(), (rows * self.R + (ks[None, :] - 1)) * K, None
        for _ in range(int(K).bit_length() + 1):
            live = lo < hi
            if not live.any():
                break
            mid = (lo + hi) >> 1
            v = flat[base + np.minimum(mid, K - 1)]
            if scale is not None:
                v = (v * scale).astype(np.float32)
            v = v.astype(np.float64)
            with np.errstate(invalid="ignore"):
                w = v + shift
                ok = ((w < T) if strict else (w <= T)) & np.isfinite(v) & live
            lo = np.where(ok, mid + 1, lo)
            hi = np.where(ok | ~live, hi, mid)
        return lo


def _summed(D: Draws, groups: list, T: list, shifts: list, strict: bool = False, batch: int = 1 << 17) -> list:
    """``[(n,) int64]``: per design ``j``, the sum over the tasks ``groups[j]`` of :meth:`Draws.counts` at
    ``T[j]`` (``(n,)``) with ``shifts[j]``; the queries of many designs in one binary search, ``batch`` at a
    time."""
    out = [None] * len(groups)
    j = 0
    while j < len(groups):
        stop, size = j, 0
        while stop < len(groups) and (size == 0 or size + len(groups[stop]) <= batch):
            size += len(groups[stop])
            stop += 1
        lens = [len(g) for g in groups[j:stop]]
        ks = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups[j:stop]])
        TT = np.repeat(np.stack(T[j:stop], axis=1), lens, axis=1)
        sh = np.repeat(np.asarray(shifts[j:stop], dtype=np.float64), lens)
        c = D.counts(ks, TT, sh, strict)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        sums = np.add.reduceat(c, starts, axis=1)
        for i in range(stop - j):
            out[j + i] = sums[:, i]
        j = stop
    return out


def chunk_trials(K: int, R: int, budget: int = 256 * 2 ** 20) -> int:
    """Trials per chunk of :class:`Draws` so that one chunk stays under ``budget`` bytes (at least one)."""
    return int(max(1, min(10_000, budget // max(1, DRAW_BYTES * int(K) * int(R)))))


# ------------------------------------------------------------------------------------------------ evaluation
@functools.lru_cache(maxsize=4096)
def _groups(blocks: tuple):
    """``[(offset, count, size, index of the first)]``: the runs of equal cluster sizes of ``blocks``."""
    out, off, i = [], 0, 0
    while i < len(blocks):
        j = i
        while j < len(blocks) and blocks[j] == blocks[i]:
            j += 1
        out.append((off, j - i, blocks[i], i))
        off += (j - i) * blocks[i]
        i = j
    return out


def _view(col: np.ndarray, off: int, count: int, size: int) -> np.ndarray:
    return col[:, off:off + count * size].reshape(col.shape[0], count, size)


def _kth(a: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-th smallest (1-based) along the last axis."""
    L = a.shape[-1]
    if k == 1:
        return a.min(axis=-1)
    if k == L:
        return a.max(axis=-1)
    return np.partition(a, k - 1, axis=-1)[..., k - 1]


def _single_time(spec: Spec, D: Draws) -> np.ndarray:
    col = D.col(spec.columns[0])
    if len(spec.blocks) == 1:
        return _kth(col, spec.need[0])
    t = None
    for off, count, size, first in _groups(spec.blocks):
        g = _kth(_view(col, off, count, size), spec.need[first]).max(axis=1)
        t = g if t is None else np.maximum(t, g)
    return t


def _uncorrelated_time(spec: Spec, D: Draws) -> np.ndarray:
    t = None
    for off, count, size, first in _groups(spec.blocks):
        l = len(spec.columns)
        buf = np.empty((D.n, count, size * l), dtype=np.float32)
        for j, k in enumerate(spec.columns):
            buf[:, :, j * size:(j + 1) * size] = _view(D.col(k), off, count, size)
        need = spec.need[first]
        buf.partition(need - 1, axis=2)  # in place: the buffer is ours
        g = buf[:, :, need - 1].max(axis=1)
        t = g if t is None else np.maximum(t, g)
    return t


def _hybrid_time(spec: Spec, D: Draws) -> np.ndarray:
    r = spec.r
    coded = np.concatenate([_view(D.col(k), 0, len(spec.blocks), r) for k in spec.columns[:-1]], axis=2)
    ct = np.minimum(_kth(coded, spec.need[0]), _view(D.col(r), 0, len(spec.blocks), r).min(axis=2))
    return ct.max(axis=1)


def _correlated_times(specs: list, D: Draws) -> list:
    """Times of correlated designs sharing their load and clusters: every order in one pass, from ``r`` down.

    Class ``c`` of a cluster is sent by its worker ``c - j`` after task ``m + j`` (``j = 0 .. r - m``, indices
    modulo the cluster's size), so its first arrival under order ``m`` is ``C_m(c) = min(F_m(c), C_{m+1}(c - 1))``:
    one minimum per order, the previous order's classes moved by one worker."""
    r, blocks = specs[0].r, specs[0].blocks
    by_m = {}
    for i, s in enumerate(specs):
        by_m.setdefault(s.m, []).append(i)
    lowest = min(by_m)
    out = [None] * len(specs)
    for off, count, size, first in _groups(blocks):
        C = None
        for k in range(r, lowest - 1, -1):
            F = _view(D.col(k), off, count, size)
            if C is None:
                C = F.copy()
            else:
                last = np.minimum(F[:, :, 0], C[:, :, -1])
                np.minimum(F[:, :, 1:], C[:, :, :-1], out=C[:, :, 1:])
                C[:, :, 0] = last
            if k in by_m:
                g = _kth(C, size - k + 1).max(axis=1)
                for i in by_m[k]:
                    out[i] = g if out[i] is None else np.maximum(out[i], g)
    return out


def times(specs: list, D: Draws) -> list:
    """``[(n,) float]``: the completion time of every design of ``specs`` on the draws ``D``, without
    communication delays (float32 numbers, as the simulator's)."""
    out = [None] * len(specs)
    corr = {}
    for i, s in enumerate(specs):
        if s.kind == "correlated":
            corr.setdefault((s.r, s.blocks), []).append(i)
        elif s.kind == "single":
            out[i] = _single_time(s, D)
        elif s.kind == "uncorrelated":
            out[i] = _uncorrelated_time(s, D)
        elif s.kind == "hybrid":
            out[i] = _hybrid_time(s, D)
        else:
            raise ValueError(f"unknown kind of design {s.kind!r}")
    for idx in corr.values():
        for i, t in zip(idx, _correlated_times([specs[i] for i in idx], D)):
            out[i] = t
    return out


def queue_bounds(specs: list, D: Draws, t0: list, comm) -> list:
    """Bounds of the completion time in the master's queue (:class:`gclib.simulator.Communication` with
    ``queue=True``) from the completion times ``t0`` without the queue (arrivals ``latency`` after the sends).

    The master takes the messages in one at a time in the order they reach it, each for ``s`` (one size per
    design); the set decodes once the messages taken in include those that reached it by ``t0``, of which at
    least ``a`` came strictly before ``t0``. So the completion time is at least ``t0 + s`` and at least the first
    arrival plus ``(a + 1) s``, and at most ``t0`` plus ``s`` for every message that reached it by ``t0``.

    Returns:
        per design ``(low, high, arrived)``: ``(n,)`` float64 bounds, and the messages that reached the master by
        ``t0``.
    """
    lat = [comm.latency] * len(specs)
    cols = [s.columns for s in specs]
    le = _summed(D, cols, t0, lat)
    lt = _summed(D, cols, t0, lat, strict=True)
    out = []
    for spec, t, a_le, a_lt in zip(specs, t0, le, lt):
        s = float(comm.service(spec.size))
        first = D.first(spec.columns[0]).astype(np.float64) + comm.latency
        with np.errstate(invalid="ignore"):
            low = np.maximum(t + s, first + (a_lt + 1) * s)
            high = t + a_le * s
        out.append((np.where(np.isfinite(t), low, np.inf), high, a_le))
    return out


# ------------------------------------------------------------------------------------------------ protocols
#: The protocols :func:`protocol` charges (:attr:`Spec.protocol`).
PROTOCOLS = ("rmg",)
#: Length in gradients of a progress report or of the server's instruction: a few integers, nothing beside a
#: gradient. Such a message is charged ``comm.delay(SMALL)`` (latency and the per-message overhead) and, in the
#: master's queue, ``comm.service(SMALL)`` (the overhead).
SMALL = 0.0


def charged_vectors(D: Draws, decided: np.ndarray, shift=0.0) -> np.ndarray:
    """``(n,)`` int64: the vectors the partial-straggler protocol is charged per trial: the workers whose first
    report has reached the master by the time it decides (``decided``; a report reaches it ``shift`` after its chunk
    is done). :func:`gclib.codes.partial_work.decode_plan` picks only workers that finished a chunk the master knows of,
    each once, so this bounds its count from above; and it is at most the messages UC-MMC in one cluster has
    received by then (one per finished chunk, the first among them)."""
    return D.counts([1], np.asarray(decided, dtype=np.float64), shift)[:, 0]


def _reports_taken(spec: Spec, D: Draws, comm) -> np.ndarray:
    """``(n,)`` float64: when the master, taking the reports in one at a time (each for ``comm.service(SMALL)``) in
    the order they reach it (``latency`` after they are sent; a tie by message: worker, then chunk), has taken in
    a report of every chunk. Chunk ``c`` is the ``j``-th of worker ``c - j`` (the cyclic assignment in its natural
    order)."""
    K, l = spec.workers, spec.load
    arr = np.empty((D.n, K, l))
    for j in range(l):
        arr[:, :, j] = D.col(j + 1).astype(np.float64) + comm.latency
    taken = queued(arr.reshape(D.n, K * l), float(comm.service(SMALL))).reshape(D.n, K, l)
    cover = taken[:, :, 0].copy()
    for j in range(1, l):
        np.minimum(cover, np.roll(taken[:, :, j], j, axis=1), out=cover)
    return cover.max(axis=1)


def protocol(spec: Spec, D: Draws, t0: np.ndarray, comm=None) -> tuple:
    """The completion time of the partial-straggler protocol (:attr:`Spec.protocol` ``"rmg"``) per trial, and the
    vectors it is charged (:func:`charged_vectors`), from its coverage time ``t0`` (``(n,)``, without communication:
    UC-MMC's in one cluster on the same draws).

    The round trip after the coverage is charged with the model that charges every other design's messages
    (:class:`gclib.simulator.Communication`), like with like:

    * ``comm`` ``None`` (or free): nothing; the time is ``t0``, UC-MMC's in one cluster.
    * independent delays: the report that completes the coverage reaches the master ``delay(SMALL)`` after it is
      sent, the instruction the picked workers ``delay(SMALL)`` after that, and their vectors, sent at once, the
      master ``delay(size)`` after that: ``t0 + 2 delay(SMALL) + delay(size)``, where UC-MMC takes
      ``t0 + delay(size)``.
    * the master's queue: the reports reach it ``latency`` after they are sent and are taken in one at a time
      (each for ``service(SMALL)``) until those taken in cover every chunk (:func:`_reports_taken`; the reports
      that come after are not taken in); the instruction reaches the workers ``delay(SMALL)`` later (the model's
      queue is the master's intake: what it sends waits for nothing), and the ``V`` vectors, sent at once, reach the
      master ``latency`` later and are taken in one at a time: ``+ V service(size)``. The time is exact given the
      charged ``V``.

    Returns:
        ``(time, vectors)``: ``(n,)`` float64 and int64.
    """
    if spec.protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {spec.protocol!r}")
    t0 = np.asarray(t0, dtype=np.float64)
    if comm is None:
        return t0, charged_vectors(D, t0)
    small, full = float(comm.delay(SMALL)), float(comm.delay(spec.size))
    if not comm.queue:
        # every report is shifted by one constant: the master decides on the chunks done by t0
        return t0 + small + small + full, charged_vectors(D, t0)
    decided = _reports_taken(spec, D, comm)
    v = charged_vectors(D, decided, comm.latency)
    with np.errstate(invalid="ignore"):
        t = decided + small + comm.latency + v * float(comm.service(spec.size))
    return np.where(np.isfinite(decided), t, np.inf), v


def protocol_outputs(spec: Spec, D: Draws, comm=None, outputs=OUTPUTS, t0: np.ndarray | None = None) -> dict:
    """``{output: (n,) array}`` of a protocol's design (:func:`protocol`), exact in every mode of ``comm`` (the
    master's queue included; ``time_high`` equals ``time`` there): ``messages`` the vectors it is charged, ``volume``
    their length, ``computations`` the partial gradients computed by all workers by its completion. ``t0``: its
    coverage time, when computed already (:func:`times`)."""
    if t0 is None:
        t0 = times([spec], D)[0]
    t, v = protocol(spec, D, t0, comm)
    out = {"time": t}
    if comm is not None and comm.queue:
        out["time_high"] = t
    if "messages" in outputs:
        out["messages"] = v
    if "volume" in outputs:
        out["volume"] = v * float(spec.size)
    if "computations" in outputs:
        out["computations"] = _summed(D, [np.arange(1, spec.load + 1)], [t], [0.0])[0]
    return out


def evaluate(specs: list, D: Draws, outputs=OUTPUTS, comm=None) -> list:
    """Per design of ``specs``, ``{output: (n,) array}`` for ``outputs`` (of :data:`OUTPUTS`) on the draws ``D``.

    ``time``: the completion time (float64; ``inf`` where the design never decodes); ``messages``: messages
    received by then (int64); ``volume``: their length in gradients; ``computations``: partial gradients computed
    by all workers by then. ``comm``: a :class:`gclib.simulator.Communication`; without the master's queue its
    delay shifts every arrival; with the queue, ``time`` is the lower bound of :func:`queue_bounds`, ``time_high``
    its upper bound, and ``messages`` those that reached the master by the completion time without the queue
    (``computations`` is then not given). A protocol's design (:attr:`Spec.protocol`) is charged its round trip
    (:func:`protocol`), exactly in every mode, its ``messages`` the vectors it uploads.
    """
    bad = set(outputs) - set(OUTPUTS)
    if bad:
        raise ValueError(f"outputs must be among {OUTPUTS}, got {sorted(bad)}")
    queue = comm is not None and comm.queue
    if queue and "computations" in outputs:
        raise ValueError("computations are not bounded in the master's queue: simulate the schedule")
    base = [t.astype(np.float64) for t in times(specs, D)]
    plain = [i for i, s in enumerate(specs) if s.protocol is None]
    out = [None] * len(specs)
    for i, r in zip(plain, _evaluate([specs[i] for i in plain], D, [base[i] for i in plain], outputs, comm)):
        out[i] = r
    for i, s in enumerate(specs):
        if s.protocol is not None:
            out[i] = protocol_outputs(s, D, comm, outputs, base[i])
    return out


def _evaluate(specs: list, D: Draws, base: list, outputs, comm) -> list:
    """:func:`evaluate` of designs without a protocol, from their times without communication (``base``)."""
    queue = comm is not None and comm.queue
    res = [{} for _ in specs]
    if queue:
        bounds = queue_bounds(specs, D, [t + comm.latency for t in base], comm)
        for out, (low, high, msgs) in zip(res, bounds):
            out["time"], out["time_high"], out["_msgs"] = low, high, msgs
    else:
        shifts = [0.0 if comm is None else float(comm.delay(s.size)) for s in specs]
        for out, t, sh in zip(res, base, shifts):
            out["time"] = t + sh
        if "messages" in outputs or "volume" in outputs:
            msgs = _summed(D, [s.columns for s in specs], [o["time"] for o in res], shifts)
            for out, m in zip(res, msgs):
                out["_msgs"] = m
        if "computations" in outputs:
            comp = _summed(D, [np.arange(1, s.load + 1) for s in specs], [o["time"] for o in res],
                           [0.0] * len(specs))
            for out, c in zip(res, comp):
                out["computations"] = c
    for spec, out in zip(specs, res):
        msgs = out.pop("_msgs", None)
        if "messages" in outputs:
            out["messages"] = msgs
        if "volume" in outputs:
            out["volume"] = msgs * float(spec.size)
    return res
