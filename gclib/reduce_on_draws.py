"""The simulator's reduce of eq. 5 draws without the arrival times: order statistics taken on the draws themselves.

Under eq. 5 worker ``w`` finishes its ``j``-th partial gradient at ``j * x_w`` (one draw ``x_w`` per worker and
trial). Many codes send one message per worker, after the worker's whole load ``r`` (plain GC, CRC, Reed-Solomon,
FRC, LCC, uncoded, Ye-Abbe's and Kadhe et al.'s codes), and decode a cluster of consecutive workers once ``k`` of
its messages have arrived (FRC: once one of its group's identical messages has). Their arrival times are
``fl(r * x)`` (the product rounded to float64), and rounding is monotone: ``x <= y`` gives ``fl(r x) <= fl(r y)``.
So the ``k``-th arrival of a cluster is ``fl(r * v)`` with ``v`` the ``k``-th smallest draw of the cluster, and
the messages received by a time ``t`` are the draws up to the largest ``y`` with ``fl(r * y) <= t``
(:func:`largest_within`): the ``(trials, workers)`` arrivals are never formed, and the numbers are those of the
arrivals, to every digit (``tests/test_reduce_on_draws.py`` checks them against the general reduce, ties included).

:func:`plan` says whether a schedule reads this way, :func:`evaluate` reduces one chunk of draws,
:func:`kth_smallest` takes the one order statistic a cluster needs (a minimum, a maximum, the few largest through
the maxima of sub-blocks, else ``np.partition``), and :func:`tasks_done` counts the partial gradients computed
by a time, without the ``(trials, workers, tasks)`` array.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gclib.codes.rules import ThresholdRule, pairwise

#: Sub-blocks whose maxima locate the few largest draws of a row (:func:`kth_smallest`): the selection reads a
#: row once and partitions ``(few + 1)`` sub-blocks instead of the whole row.
SUB_BLOCK = 256

#: Draws below this (but above 0) leave the relative margin of :func:`evaluate`'s count of ties unproven.
TINY = 2.0 ** -1000


@dataclass(frozen=True)
class Blocks:
    """How a schedule reads on its draws: message ``w`` is worker ``w``'s, sent after ``ready`` partial
    gradients of the ``length`` each worker computes; the workers form ``clusters`` consecutive blocks of ``size``,
    and a block decodes at its ``k``-th arrival."""

    ready: int
    length: int
    clusters: int
    size: int
    k: int


def plan(code) -> Blocks | None:
    """The :class:`Blocks` of a schedule (:class:`gclib.simulator.Schedule`), ``None`` where its messages are
    not one per worker with one ``ready``, its workers' loads differ, or its rule is not a threshold on equal
    consecutive blocks (one class per message, or one class per block with threshold 1)."""
    K, rule = int(code.n_workers), code.rule
    if type(rule) is not ThresholdRule or code.sender.size != K or K == 0:
        return None
    ready, lengths = code.ready, code.lengths
    if not (np.all(ready == ready[0]) and np.all(lengths == lengths[0])):
        return None
    if not np.array_equal(code.sender, np.arange(K)):
        return None
    th = rule.thresholds
    if rule._identity and rule._block:
        return Blocks(int(ready[0]), int(lengths[0]), rule.n_clusters, int(rule._block), int(th[0]))
    G = rule.n_clusters
    if (K % G == 0 and np.all(th == 1) and np.array_equal(rule.class_cluster, np.arange(G))
            and np.array_equal(rule.msg_class, np.arange(K) // (K // G))):
        return Blocks(int(ready[0]), int(lengths[0]), G, K // G, 1)
    return None


def _largest_few(row: np.ndarray, q: int) -> np.ndarray:
    """The ``q``-th largest entry of each row of ``row`` ``(trials, n)``: the ``q`` sub-blocks of
    :data:`SUB_BLOCK` entries with the largest maxima (and the entries past the last whole sub-block) hold the
    ``q`` largest entries, so only they are partitioned. Returns ``(trials,)``."""
    n, m = row.shape
    nb = m // SUB_BLOCK
    whole = row[:, :nb * SUB_BLOCK].reshape(n, nb, SUB_BLOCK)
    top = np.argpartition(whole.max(axis=2), nb - q, axis=1)[:, nb - q:]
    cand = np.take_along_axis(whole, top[:, :, None], axis=1).reshape(n, q * SUB_BLOCK)
    cand = np.concatenate([cand, row[:, nb * SUB_BLOCK:]], axis=1)
    return np.partition(cand, cand.shape[1] - q, axis=1)[:, cand.shape[1] - q]


def kth_smallest(xb: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-th smallest entry (1-based) along the last axis of ``xb`` ``(trials, clusters, size)``, as the
    cheapest selection that finds it: a minimum or a maximum, the few largest (smallest) of one long row from the
    maxima (minima) of its sub-blocks, else ``np.partition``. Returns ``(trials, clusters)``."""
    n, P, B = xb.shape
    if k == 1 or k == B:
        return pairwise(xb, np.minimum if k == 1 else np.maximum)
    if P == 1 and 4 * (B - k + 1) * SUB_BLOCK <= B:  # the few largest: a fraction of the row partitioned
        return _largest_few(xb[:, 0, :], B - k + 1)[:, None]
    if P == 1 and 4 * k * SUB_BLOCK <= B:  # the few smallest, as the largest of the negated row
        return -_largest_few(-xb[:, 0, :], k)[:, None]
    return np.partition(xb, k - 1, axis=2)[:, :, k - 1]


def largest_within(r: int, t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The largest float64 ``y`` with ``fl(r * y) <= t``, elementwise, from a ``v`` that has it (``fl(r * v) <=
    t``, ``v >= 0`` finite, ``r >= 1``): ``v`` stepped up one float at a time, a few steps at most, since a
    product by ``r >= 1`` keeps at most about two neighbouring floats on one rounded value."""
    b = np.array(v, dtype=np.float64, copy=True)
    while True:
        up = np.nextafter(b, np.inf)
        ok = up * r <= t
        if not ok.any():
            return b
        b[ok] = up[ok]


def evaluate(bl: Blocks, x: np.ndarray, size: np.ndarray) -> dict | None:
    """One chunk of finite draws ``x`` ``(trials, workers)`` of a schedule read as :class:`Blocks`: the results
    of :func:`gclib.simulator.simulate_workers` in float64 (``time``, ``messages``, ``cluster_messages``,
    ``volume``, ``computations``, each ``(trials,)``), or ``None`` where draws below :data:`TINY` leave the
    count of ties unproven (the caller then forms the arrivals)."""
    n, K = x.shape
    r = bl.ready
    xb = x.reshape(n, bl.clusters, bl.size)
    v = kth_smallest(xb, bl.k)  # (trials, clusters): each cluster decodes at fl(r * v)
    vmax = v.max(axis=1)
    t = vmax * r
    if n and 0 < v.min() < TINY:
        return None
    b = largest_within(r, t, vmax)
    got = x <= b[:, None]  # the messages received by t: fl(r * x) <= t
    messages = got.view(np.uint8).sum(axis=1, dtype=np.int64)
    cluster_messages = messages if bl.clusters == 1 else _cluster_messages(bl, xb, v)
    if bl.ready == bl.length:  # a worker whose message arrived computed its whole load
        computations = _computations(x, got, messages, t, bl.length)
    else:
        computations = tasks_done(x, t, np.full(K, bl.length))
    return {"time": t, "messages": messages, "cluster_messages": cluster_messages, "volume": received_volume(got, messages, size),
            "computations": computations}


def received_volume(got: np.ndarray, messages: np.ndarray, size) -> np.ndarray:
    """The length of the messages received, in gradients, ``(trials,)``: ``messages`` times their one size where
    all messages have one (rounded once, whatever the order of a sum), else the sum of the sizes of ``got``
    ``(trials, n_messages)``."""
    sz = np.asarray(size, dtype=float)
    if sz.size and np.all(sz == sz[0]):
        return messages * sz[0]
    return got.astype(float) @ sz


def _cluster_messages(bl: Blocks, xb: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Messages counted per cluster until that cluster decodes, summed ``(trials,)``: at least ``k`` in each
    cluster (its ``k``-th smallest draw and those below), at most the draws within a relative ``2**-49`` of
    ``v`` (every ``y`` with ``fl(r y) <= fl(r v)`` is); where the two bounds differ (a tie), the trial is
    counted on its arrival times."""
    n = xb.shape[0]
    upper = v * (1 + 2.0 ** -49)
    hi = (xb <= upper[:, :, None]).reshape(n, -1).view(np.uint8).sum(axis=1, dtype=np.int64)
    odd = np.flatnonzero(hi != bl.k * bl.clusters)
    if odd.size:
        arr = xb[odd] * bl.ready
        hi[odd] = (arr <= (v[odd] * bl.ready)[:, :, None]).reshape(odd.size, -1).sum(axis=1)
    return hi


def _computations(x: np.ndarray, got: np.ndarray, messages: np.ndarray, t: np.ndarray, L: int) -> np.ndarray:
    """Partial gradients computed by ``t``, ``(trials,)``, where a message is sent after the whole load ``L``:
    ``L`` for each worker whose message arrived (``got``) and, for the others, their count gathered when they are
    few (:func:`task_counts`), else every worker counted (:func:`tasks_done`)."""
    n, K = x.shape
    if x.size - int(messages.sum()) > x.size // 8:  # many still computing: count every worker
        return tasks_done(x, t, np.full(K, L))
    late = np.flatnonzero(~got.ravel())
    rows = late // K
    q = task_counts(x.ravel()[late], t[rows], float(L))
    return L * messages + np.bincount(rows, weights=q.astype(np.float64), minlength=n).astype(np.int64)


#: Loads up to which :func:`task_counts` estimates in float32 (above, float64).
ESTIMATE32_MAX_LOAD = 1024


def task_counts(x: np.ndarray, t, L, dtype=np.float64) -> np.ndarray:
    """``#{1 <= j <= L : dtype(j * x) <= t, finite}`` elementwise (``x``, ``t`` and ``L`` broadcast together;
    float64 counts). The estimate ``min(floor(t / x), L)`` is exact unless ``t / x`` lies within rounding of an
    integer; those few entries are recounted with the rounded products themselves, which are non-decreasing in
    ``j``. Returns float32 counts (float64 for loads of ``2**24`` tasks and more)."""
    dtype = np.dtype(dtype)
    L = np.asarray(L, dtype=float)
    most = float(L.max())
    # The estimate in float32 where the load is small (half the memory to stream): its quotient is within 2**-22 of
    # t / x relatively, far inside the tolerance below, so every entry it leaves out of the recount is exact.
    est = np.float32 if most <= ESTIMATE32_MAX_LOAD else np.float64
    tol = 16 * max(float(np.finfo(est).eps), float(np.finfo(dtype).eps)) * (most + 2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        r = np.divide(np.asarray(t, dtype=est), np.asarray(x, dtype=est), dtype=est)
    np.minimum(r, L + 0.5, out=r, casting="same_kind")  # far beyond the last task: all done (NaN stays NaN)
    # the counts in float32 where they are exact (below 2**24): half the memory a fresh array costs to touch
    q = np.floor(r, out=np.empty(r.shape, np.float32 if most < 2 ** 24 else np.float64))
    np.subtract(r, q, out=r)
    near = np.greater_equal(r, tol)
    np.logical_not(near, out=near)  # NaN (0 / 0, inf / inf) is near too
    near |= r > 1 - tol
    del r
    idx = np.flatnonzero(near)
    if idx.size:
        at = np.unravel_index(idx, q.shape)
        xs, ts, Ls = (np.broadcast_to(a, q.shape)[at] for a in (x, np.asarray(t, dtype=float), L))
        q[at] = _recount(xs, ts, Ls, q[at], dtype)
    return q


def _recount(xs, ts, Ls, k, dtype) -> np.ndarray:
    """The exact counts of :func:`task_counts` at entries whose estimate ``k`` may be off by one."""
    def reached(j):
        with np.errstate(invalid="ignore", over="ignore"):
            f = (xs * j).astype(dtype)
            return (f <= ts) & np.isfinite(f)

    k = np.array(k, dtype=float)
    k[~(k >= 0)] = 0
    np.minimum(k, Ls, out=k)
    while True:  # the estimate is off by at most one, a step per pass
        up = (k < Ls) & reached(k + 1)
        k += up
        down = (k > 0) & ~reached(k)
        k -= down
        if not (up.any() or down.any()):
            return k


def tasks_done(x: np.ndarray, t: np.ndarray, lengths: np.ndarray, dtype=np.float64) -> np.ndarray:
    """Partial gradients computed by time ``t`` under eq. 5, without the ``(trials, workers, tasks)`` array.

    Worker ``w`` finishes its ``j``-th task at ``j * x[:, w]`` (rounded to ``dtype``); the count is
    ``#{1 <= j <= lengths[w] : dtype(j * x) <= t, finite}``, exactly what comparing every task gives
    (:func:`task_counts`).

    Args:
        x: ``(trials, workers)`` per-worker task time (float64, non-negative; ``inf`` for never).
        t: ``(trials,)`` completion times. lengths: ``(workers,)`` tasks per worker.
    Returns:
        ``(trials,)`` int64 total over workers.
    """
    lengths = np.asarray(lengths)
    dtype = np.dtype(dtype)
    if lengths.size and lengths.max() == 1:  # one task per worker (uncoded, ignore-stragglers): 1 * x == x
        f = x if x.dtype == dtype else x.astype(dtype)
        with np.errstate(invalid="ignore"):
            done = f <= np.asarray(t)[:, None]
        if not np.isfinite(f).all():
            done &= np.isfinite(f)
        if lengths.min() != 1:
            done &= lengths > 0
        return done.sum(axis=1, dtype=np.int64)
    L = float(lengths[0]) if lengths.size and np.all(lengths == lengths[0]) else lengths.astype(float)[None, :]
    q = task_counts(x, np.asarray(t, dtype=float)[:, None], L, dtype)
    return q.sum(axis=1, dtype=np.float64).astype(np.int64)
