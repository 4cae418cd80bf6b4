"""Gradient coding with multi-message communication and clustering (GC-MMC), after Ozfatura, Gunduz and Ulukus,
"Gradient Coding with Clustering and Multi-message Communication" (arXiv 1903.01974).

Every worker ``w`` of ``K`` holds the ``r`` parts ``w, w+1, ..., w+r-1`` (mod ``K``, the cyclic assignment of GC)
and computes them in that order. It may send several messages per iteration, each as soon as the parts it
combines are computed.

* :func:`correlated` (section III-A), order ``m``: the distinct messages ``c_0 .. c_{K-1}`` are a plain GC code
  with ``r := m`` on the cyclic assignment (``c_i`` combines parts ``i .. i+m-1``); worker ``w`` sends ``c_w`` after
  ``m`` parts, ``c_{w+1}`` after ``m+1``, ..., ``c_{w+r-m}`` after ``r`` (``l = r - m + 1`` messages). A message is
  sent by every worker holding its support, so duplicates arrive: they count in the communication load but not in
  decoding (one message *class* per distinct ``c_i``). Any ``K - m + 1`` distinct messages decode.
* :func:`uc_mmc`: the uncoded multi-message scheme (every partial gradient sent as computed) is the ``m = 1`` case.
* :func:`gc_cyclic`: plain GC is the ``m = r`` case (one message per worker after ``r`` parts; CRC).
* :func:`uncorrelated` (section III-B), order vector ``[m_0, ..., m_{l-1}]``: worker ``w`` plays ``l`` (real or
  virtual) workers, the ``i``-th with support the first ``m_i`` parts of its computation order; a polynomial
  (Reed-Solomon) code over the extended ``(K l, K)`` mask makes any ``K l - sum(m) + 1`` messages decode. Each
  message is sent by exactly one worker.
* :func:`clustered_design` (section III-C): any of these inside ``P`` disjoint clusters of workers and parts
  (:func:`clustered_gc`, :func:`clustered_uc_mmc`, :func:`gc_mmc_correlated`, :func:`gc_mmc_uncorrelated`).
  When ``P`` does not divide ``K`` the clusters differ in size by one worker (and one part); every cluster must
  have at least ``r`` workers.
* :func:`hybrid` (section III-D): clusters of exactly ``r`` workers (fractional-repetition groups, ``r | K``) run
  the uncorrelated design on the orders below ``r``; a worker that finishes all ``r`` parts sends the plain sum of
  its cluster's parts instead, which decodes the cluster on its own.

:func:`worked_example` builds the paper's Example 1 (``K = 6, r = 3, m = 2`` and ``m = [3, 2]``) in exact arithmetic.
The exact rule that times a design as an exact decoder would (:class:`~gclib.codes.span_rule.SpanRule`,
:func:`~gclib.codes.span_rule.with_exact_rule`) is in :mod:`gclib.codes.span_rule`, importable from here.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from typing import Callable

import numpy as np

from gclib import checks
from gclib.codes.base import GradientCode, reserve_code
from gclib.codes.compose import clustered, split_evenly
from gclib.codes.polynomial import polynomial_code
from gclib.codes.rules import ThresholdRule, check_messages_axis, threshold
from gclib.codes.span_rule import SpanRule, with_exact_rule  # noqa: F401  (this module's interface)
from gclib.codes.repetition import crc, cyclic_support


# ---------------------------------------------------------------------------------------------- validation
def _check_int(name, value, lo, hi=None, why=""):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise checks.ParameterTypeError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must lie in {rng}{why}, got {value}")
    return int(value)


def parse_orders(orders) -> tuple:
    """An order vector from a sequence or a comma list (``"6,8,10"``); an empty item (``"6,,8"``) is refused."""
    if isinstance(orders, str):
        return checks.int_list("orders", orders)
    try:
        orders = tuple(orders)
    except TypeError:
        raise checks.ParameterTypeError(f"orders must be a sequence of integers or a comma list, got {orders!r}") \
            from None
    if not orders:
        raise ValueError("orders must list at least one order")
    for m in orders:
        if not isinstance(m, (int, np.integer)) or isinstance(m, bool):
            raise checks.ParameterTypeError(f"orders must be integers, got {orders!r}")
    return tuple(int(m) for m in orders)


def _check_orders(orders, r) -> tuple:
    orders = parse_orders(orders)
    bad = [m for m in orders if not 1 <= m <= r]
    if bad:
        raise ValueError(f"orders must lie in [1, load = {r}], got {list(orders)}")
    if len(set(orders)) != len(orders):
        raise ValueError(f"orders must be distinct (a repeated order sends two messages at the same moment "
                         f"with the same support), got {list(orders)}")
    return orders


def assignment_mask(K: int, r: int) -> np.ndarray:
    """``(K, K)`` 0/1 cyclic assignment of GC: row ``w`` holds parts ``w .. w+r-1`` (mod ``K``); eq. (2)."""
    M = np.zeros((K, K), dtype=int)
    for w, o in enumerate(cyclic_support(K, r - 1)):
        M[w, list(o)] = 1
    return M


def dropped_entries(K: int, r: int, m: int) -> list:
    """The ``(row, column)`` entries of eq. (2) removed to get the order-``m`` mask: the last ``r - m`` parts of
    every worker's computation order (the red ones of the paper)."""
    return [(w, (w + t) % K) for w in range(K) for t in range(m, r)]


# ---------------------------------------------------------------------------------------------- correlated
def correlated(K: int, r: int, m: int, *, seed=0, exact: bool = False, name: str = "gc-mmc-correlated"
               ) -> GradientCode:
    """Correlated GC-MMC of order ``m`` on ``K`` workers with load ``r`` (see the module docstring).

    Args:
        K: workers (= parts). r: parts per worker, ``1 <= r <= K``. m: order, ``1 <= m <= r``.
        seed: seed of the GC (CRC, Tandon et al.) construction of the distinct messages.
        exact: build the distinct messages in rational arithmetic (``B_exact``) for :mod:`gclib.symbolic`.
    Returns:
        A code with ``K (r - m + 1)`` messages (rows ``w * l + j``: worker ``w``'s ``j``-th message
        ``c_{w+j}``, ready after ``m + j`` parts), one class per distinct ``c_i``, threshold ``K - m + 1`` classes.
    """
    K = _check_int("workers", K, 1)
    r = _check_int("load", r, 1, K, f" for {K} workers")
    m = _check_int("order", m, 1, r, f" (the load r = {r})")
    reserve_code(name, K * (r - m + 1), K, workers=K, load=r, exact=exact,
                 sizes=f"workers = {K}, load = {r}, order = {m}", lower="workers or load")
    base = crc(K, m - 1, seed, exact=exact)
    l = r - m + 1
    cls = np.array([(w + j) % K for w in range(K) for j in range(l)], dtype=np.int64)
    B = base.B[cls]
    B_exact = None
    if exact:
        B_exact = base.B_exact.extract(cls.tolist(), list(range(K)))
    rule = ThresholdRule(cls, np.zeros(K, dtype=np.int64), np.array([K - m + 1]))
    return GradientCode(name=name, n_workers=K, n_parts=K, order=cyclic_support(K, r - 1), B=B,
                        sender=np.repeat(np.arange(K), l), ready=np.tile(np.arange(m, r + 1), K), rule=rule,
                        stragglers=r - 1, B_exact=B_exact,
                        params={"K": K, "r": r, "order": m, "messages_per_worker": l,
                                "threshold_distinct": K - m + 1, "seed": seed, "exact": exact})


def uc_mmc(K: int, r: int) -> GradientCode:
    """Uncoded multi-message communication: every partial gradient is sent as soon as it is computed; the master
    needs one copy of each of the ``K`` parts. The correlated design with ``m = 1``."""
    code = correlated(K, r, 1, name="uc-mmc")
    return code


def gc_cyclic(K: int, r: int, *, seed=0, exact: bool = False) -> GradientCode:
    """Plain GC (CRC of Tandon et al.) with load ``r``: the correlated design with ``m = r``; any ``K - r + 1``
    workers decode."""
    return correlated(K, r, r, seed=seed, exact=exact, name="gc")


# ---------------------------------------------------------------------------------------------- uncorrelated
def uncorrelated_mask(K: int, r: int, orders) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The extended mask of the uncorrelated design (eq. (3) for ``K=6, r=3, orders=[3, 2]``).

    Returns:
        ``(mask, sender, ready)``: mask ``(K l, K)`` with row ``w * l + i`` the first ``orders[i]`` parts of worker
        ``w``'s order; ``sender`` and ``ready`` ``(K l,)``.
    """
    orders = _check_orders(orders, r)
    l = len(orders)
    mask = np.zeros((K * l, K), dtype=int)
    order = cyclic_support(K, r - 1)
    for w in range(K):
        for i, m in enumerate(orders):
            mask[w * l + i, list(order[w][:m])] = 1
    return mask, np.repeat(np.arange(K), l), np.tile(np.array(orders), K)


def uncorrelated(K: int, r: int, orders, *, points="chebyshev", name: str = "gc-mmc-uncorrelated",
                 exact: bool = False) -> GradientCode:
    """Uncorrelated GC-MMC with order vector ``orders`` (see the module docstring).

    Args:
        K: workers (= parts). r: parts per worker. orders: distinct orders in ``[1, r]`` (sequence or ``"6,8,10"``).
        points: evaluation points of the polynomial code (``"chebyshev"``, ..., or ``K l`` distinct numbers;
            integer points give an integer ``B`` that :mod:`gclib.symbolic` verifies exactly).
        exact: use the integer points ``-N//2 .. N - N//2 - 1`` (``N = K l``) whatever ``points`` says and attach
            the exact integer matrix ``B_exact`` (the float ``B`` is exact only while the entries, which grow like
            ``N^h``, stay below ``2**53``).
    Returns:
        A code with ``K l`` messages, any ``K l - sum(orders) + 1`` of which decode.
    """
    K = _check_int("workers", K, 1)
    r = _check_int("load", r, 1, K, f" for {K} workers")
    orders = _check_orders(orders, r)
    l = len(orders)
    reserve_code(name, K * l, K, workers=K, load=r, exact=exact,
                 sizes=f"workers = {K}, load = {r}, {l} orders", lower="workers or the number of orders")
    mask, sender, ready = uncorrelated_mask(K, r, orders)
    t = K * l - sum(orders) + 1
    if exact:
        points = np.arange(K * l) - (K * l) // 2
    code = polynomial_code(mask, sender, ready, cyclic_support(K, r - 1), points=points, name=name,
                           stragglers=(sum(orders) - 1) // l,
                           params={"K": K, "r": r, "orders": list(orders), "threshold": t}, exact=exact)
    if code.n_messages != K * l or int(code.rule.thresholds[0]) != t:  # pragma: no cover - construction invariant
        raise AssertionError(f"uncorrelated design: threshold {code.rule.thresholds[0]} != K l - sum(m) + 1 = {t}")
    return code


# ---------------------------------------------------------------------------------------------- clustering
def cluster_sizes(K: int, P: int, r: int) -> list:
    """Sizes of ``P`` clusters of ``K`` workers (differing by at most one); each must hold ``r`` workers."""
    K = _check_int("workers", K, 1)
    P = _check_int("clusters", P, 1)
    if P <= K and K // P < r:  # checked before the list of sizes is built
        raise ValueError(f"clusters = {P} splits {K} workers into clusters of {K // P}, fewer than the load "
                         f"r = {r} (a worker holds r parts of its own cluster); use at most {K // r} clusters")
    return split_evenly(K, P, "clusters")


def clustered_design(build: Callable[[int], GradientCode], K: int, P: int, r: int, name: str | None = None
                     ) -> GradientCode:
    """Run ``build(K_c)`` independently in each of ``P`` clusters (``K_c`` workers and parts each).

    ``P = 1`` returns ``build(K)`` itself. Cluster sizes differ by at most one when ``P`` does not divide ``K``.
    """
    K = _check_int("workers", K, 1)
    r = _check_int("load", r, 1, K, f" for {K} workers")
    P = _check_int("clusters", P, 1)
    reserve_code(name or "clustered design", K, K, workers=K, load=r, sizes=f"workers = {K}, load = {r}",
                 lower="workers")
    sizes = cluster_sizes(K, P, r)
    if len(sizes) == 1:
        return build(K)
    cache = {}
    codes = []
    for s in sizes:
        if s not in cache:
            cache[s] = build(s)
        codes.append(cache[s])
    code = clustered(codes, name=name or codes[0].name)
    p = dict(codes[0].params)
    p.update(code.params)
    p.update({"K": K, "clusters": P, "cluster_sizes": sizes})
    return replace(code, params=p)


def clustered_gc(K: int, r: int, P: int = 1, *, seed=0, exact: bool = False) -> GradientCode:
    """Plain GC with load ``r`` (:func:`gc_cyclic`) in each of ``P`` clusters; any ``K_c - r + 1`` workers of every
    cluster decode it."""
    return clustered_design(lambda k: gc_cyclic(k, r, seed=seed, exact=exact), K, P, r)


def clustered_uc_mmc(K: int, r: int, P: int = 1) -> GradientCode:
    """Uncoded multi-message communication (:func:`uc_mmc`) in each of ``P`` clusters."""
    return clustered_design(lambda k: uc_mmc(k, r), K, P, r)


def gc_mmc_correlated(K: int, r: int, m: int, P: int = 1, *, seed=0, exact: bool = False) -> GradientCode:
    """Correlated GC-MMC of order ``m`` in ``P`` clusters (GC-MMC-1 of Fig. 1: ``K=40, r=10, m=6, P=4``)."""
    return clustered_design(lambda k: correlated(k, r, m, seed=seed, exact=exact), K, P, r)


def gc_mmc_uncorrelated(K: int, r: int, orders, P: int = 1, *, points="chebyshev", exact: bool = False
                        ) -> GradientCode:
    """Uncorrelated GC-MMC with order vector ``orders`` in ``P`` clusters (GC-MMC-2 of Fig. 1: ``K=40, r=10,
    orders=[6, 8, 10], P=4``; 7 messages per cluster decode it)."""
    orders = parse_orders(orders)
    return clustered_design(lambda k: uncorrelated(k, r, orders, points=points, exact=exact), K, P, r)


# ---------------------------------------------------------------------------------------------- hybrid
@dataclass(frozen=True, eq=False)
class FullOrThreshold:
    """Per-cluster rule of the hybrid scheme: cluster ``c`` decodes once one of its *full* messages (the plain
    cluster sum) arrives, or ``thresholds[c]`` of its other (coded, all distinct) messages have.

    Attributes:
        msg_cluster: ``(n_messages,)`` cluster of every message.
        full: ``(n_messages,)`` bool, the message alone decodes its cluster.
        thresholds: ``(n_clusters,)`` coded messages needed (ignored for a cluster without coded messages).
    """

    msg_cluster: np.ndarray
    full: np.ndarray
    thresholds: np.ndarray

    def __post_init__(self):
        mc = np.asarray(self.msg_cluster, dtype=np.int64)
        full = np.asarray(self.full, dtype=bool)
        th = np.asarray(self.thresholds, dtype=np.int64)
        if mc.shape != full.shape or mc.ndim != 1:
            raise ValueError("msg_cluster and full need one entry per message")
        for c in range(th.size):
            n_coded = int(np.sum((mc == c) & ~full))
            if not np.any((mc == c) & full) and not 1 <= th[c] <= n_coded:
                raise ValueError(f"cluster {c} has no full message and threshold {th[c]} outside [1, {n_coded}]")
        object.__setattr__(self, "msg_cluster", mc)
        object.__setattr__(self, "full", full)
        object.__setattr__(self, "thresholds", th)

    @property
    def n_clusters(self) -> int:
        return int(self.thresholds.size)

    def decodable(self, received: np.ndarray) -> np.ndarray:
        """``received``: ``(..., n_messages)`` bool mask -> ``(...)`` bool."""
        received = check_messages_axis(np.asarray(received, dtype=bool), self.msg_cluster.size, "received")
        ok = np.ones(received.shape[:-1], dtype=bool)
        for c in range(self.n_clusters):
            inc = self.msg_cluster == c
            got_full = np.any(received[..., inc & self.full], axis=-1)
            coded = inc & ~self.full
            got_coded = (received[..., coded].sum(axis=-1) >= self.thresholds[c]) if coded.any() else False
            ok &= got_full | got_coded
        return ok

    def cluster_times(self, arrival: np.ndarray) -> np.ndarray:
        """``arrival``: ``(trials, n_messages)`` -> ``(trials, n_clusters)`` decoding time of every cluster."""
        arrival = check_messages_axis(np.asarray(arrival, dtype=float), self.msg_cluster.size, "arrival")
        out = np.full((arrival.shape[0], self.n_clusters), np.inf)
        for c in range(self.n_clusters):
            inc = self.msg_cluster == c
            f = inc & self.full
            if f.any():
                out[:, c] = arrival[:, f].min(axis=1)
            coded = inc & ~self.full
            if coded.any():
                t = int(self.thresholds[c])
                tc = np.partition(arrival[:, coded], t - 1, axis=1)[:, t - 1]
                out[:, c] = np.minimum(out[:, c], tc)
        return out

    def completion(self, arrival: np.ndarray) -> np.ndarray:
        return self.cluster_times(arrival).max(axis=1)


def _hybrid_cluster(r: int, coded_orders: tuple, points) -> tuple[GradientCode, np.ndarray, int]:
    """One hybrid cluster of ``r`` workers and ``r`` parts: (code, full-message mask, coded threshold)."""
    order = cyclic_support(r, r - 1)
    rows, sender, ready = [], [], []
    t = 0
    if coded_orders:
        sub = uncorrelated(r, r, coded_orders, points=points)
        rows.append(sub.B)
        sender.append(sub.sender)
        ready.append(sub.ready)
        t = int(sub.rule.thresholds[0])
    rows.append(np.ones((r, r), dtype=rows[0].dtype if rows else float))
    sender.append(np.arange(r))
    ready.append(np.full(r, r))
    B = np.concatenate(rows)
    n = B.shape[0]
    full = np.r_[np.zeros(n - r, dtype=bool), np.ones(r, dtype=bool)]
    code = GradientCode(name="hybrid", n_workers=r, n_parts=r, order=order, B=B, sender=np.concatenate(sender),
                        ready=np.concatenate(ready), rule=threshold(n, 1), stragglers=r - 1)
    return code, full, t


def hybrid(K: int, r: int, orders, *, points="chebyshev") -> GradientCode:
    """Hybrid GC-MMC / fractional repetition (section III-D).

    The ``K`` workers form ``K / r`` clusters of ``r`` (so ``r`` must divide ``K``); in a cluster every worker
    holds all ``r`` parts, in cyclic order from its position. The orders below ``r`` run the uncorrelated design
    inside the cluster; after computing all ``r`` parts a worker sends the plain cluster sum (fractional
    repetition) in place of an order-``r`` coded message. A cluster decodes from one plain sum, or from
    ``r l' - sum(m') + 1`` coded messages (``m'`` the orders below ``r``, ``l'`` their number), the same threshold
    as the uncorrelated design with ``r`` added to the orders.

    Rows: per cluster, the coded rows (worker-major) then one plain-sum row per worker.
    """
    K = _check_int("workers", K, 1)
    r = _check_int("load", r, 1, K, f" for {K} workers")
    orders = _check_orders(orders, r)
    if K % r:
        raise ValueError(f"hybrid needs clusters of exactly load = {r} workers (fractional repetition groups), "
                         f"but {K} workers is not divisible by {r}; choose the load among the divisors of {K}")
    reserve_code("hybrid", K * len(orders), K, workers=K, load=r,
                 sizes=f"workers = {K}, load = {r}, {len(orders)} orders", lower="workers or the number of orders")
    coded_orders = tuple(m for m in orders if m != r)
    sub, full1, t = _hybrid_cluster(r, coded_orders, points)
    P = K // r
    code = clustered([sub] * P, name="hybrid") if P > 1 else sub
    full = np.tile(full1, P)
    msg_cluster = np.repeat(np.arange(P), sub.n_messages)
    rule = FullOrThreshold(msg_cluster, full, np.full(P, max(t, 1)))
    params = dict(code.params)
    params.update({"K": K, "r": r, "orders": list(orders), "coded_orders": list(coded_orders), "clusters": P,
                   "coded_threshold": t})
    return replace(code, rule=rule, params=params)


# ---------------------------------------------------------------------------------------------- Example 1
@dataclass
class WorkedExample:
    """The paper's Example 1 in exact arithmetic (``K = 6, r = 3``).

    Attributes:
        M: ``(6, 6)`` eq. (2), the GC assignment. dropped: the entries removed for order ``m = 2`` (red in (2)).
        M_tilde: ``(6, 6)`` order-2 mask. M_ext: ``(12, 6)`` eq. (3), the extended mask for ``m = [3, 2]``.
        correlated: the correlated code (exact, 12 rows, 6 classes). uncorrelated: the uncorrelated code
        (integer evaluation points, 12 rows).
    """

    M: np.ndarray
    dropped: list
    M_tilde: np.ndarray
    M_ext: np.ndarray
    correlated: GradientCode
    uncorrelated: GradientCode


def worked_example(seed=0) -> WorkedExample:
    """Build Example 1: ``K = 6, r = 3``, correlated ``m = 2`` and uncorrelated ``m = [3, 2]``."""
    K, r = 6, 3
    M = assignment_mask(K, r)
    dropped = dropped_entries(K, r, 2)
    Mt = M.copy()
    for i, j in dropped:
        Mt[i, j] = 0
    ext, _, _ = uncorrelated_mask(K, r, (3, 2))
    corr = correlated(K, r, 2, seed=seed, exact=True)
    # Integer evaluation points centred on 0 keep the integer entries small and make B exact.
    unc = uncorrelated(K, r, (3, 2), points=np.arange(12) - 6)
    return WorkedExample(M, dropped, Mt, ext, corr, unc)


PAPER_EQ2 = np.array([[1, 1, 1, 0, 0, 0], [0, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 0], [0, 0, 0, 1, 1, 1],
                      [1, 0, 0, 0, 1, 1], [1, 1, 0, 0, 0, 1]])
#: Bold (red) entries of eq. (2), 0-based (row, column).
PAPER_EQ2_RED = [(0, 2), (1, 3), (2, 4), (3, 5), (4, 0), (5, 1)]
PAPER_EQ3 = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0], [0, 1, 1, 0, 0, 0],
                      [0, 0, 1, 1, 1, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0],
                      [1, 0, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1], [1, 1, 0, 0, 0, 1], [1, 0, 0, 0, 0, 1]])


@dataclass
class WorkedExampleFacts:
    """What notebook 04 checks of Example 1, computed exactly (rational arithmetic) by :func:`worked_example_facts`.

    Attributes:
        eq2, red, eq3: eq. (2), its red entries and eq. (3) reproduced entry by entry.
        counts: one row per (design, received, size): ``design`` (``"correlated"``, ``"gc"``: plain GC with
            ``K = 6, r = 3``, ``"uncorrelated"``), ``received`` (``"distinct messages"``: one copy of each of
            ``size`` distinct messages; ``"workers"``: every message of ``size`` workers; ``"messages"``: ``size``
            messages), ``decoding`` (sets that decode) and ``sets`` (sets of that size).
        rule_agrees: the correlated design's fast rule agrees with the exact oracle on every received set.
        workers_124: every message of workers 1, 2 and 4 (the paper's instance) decodes the correlated design.
        failing_triples: the triples of workers (1-based) whose messages do not decode the correlated design.
        scenario: the paper's scenario for the uncorrelated design (workers 1-3 send both messages, workers 4 and 5
            their order-2 message, worker 6 nothing) decodes. scenario_gc: plain GC decodes in that scenario (it
            has the messages of workers 1-3 only).
    """

    eq2: bool
    red: bool
    eq3: bool
    counts: object
    rule_agrees: bool
    workers_124: bool
    failing_triples: list
    scenario: bool
    scenario_gc: bool

    def table(self):
        """:attr:`counts` as one row per (design, received) and one column per size, each entry
        ``"decoding of sets"`` (empty where the size does not apply)."""
        c = self.counts.assign(entry=[f"{d} of {n}" for d, n in zip(self.counts["decoding"], self.counts["sets"])])
        wide = c.pivot(index=["design", "received"], columns="size", values="entry")
        return wide.reindex(list(dict.fromkeys(zip(c["design"], c["received"])))).fillna("")

    def count(self, design: str, received: str, size: int) -> tuple[int, int]:
        """``(decoding, sets)`` of one row of :attr:`counts`."""
        c = self.counts
        row = c[(c.design == design) & (c.received == received) & (c["size"] == size)]
        if len(row) != 1:
            raise ValueError(f"no count for design={design!r}, received={received!r}, size={size!r}")
        return int(row["decoding"].iloc[0]), int(row["sets"].iloc[0])


def _count_decodable(symbolic, B, T, row_sets) -> tuple[int, int]:
    """``(decoding, sets)``: how many of ``row_sets`` decode ``B`` exactly (``symbolic``: :mod:`gclib.symbolic`)."""
    B, T = symbolic.rational(B), symbolic.rational(T)  # converted once for every set
    ok = [symbolic.is_decodable_exact(B, rows, T) for rows in row_sets]
    return int(sum(ok)), len(ok)


def worked_example_facts(ex: WorkedExample | None = None) -> WorkedExampleFacts:
    """Count, exactly, which received sets decode the codes of Example 1 (see :class:`WorkedExampleFacts`).

    Args:
        ex: the output of :func:`worked_example` (built with seed 0 when omitted).
    """
    import pandas as pd  # (both on first use: SymPy and pandas would slow import gclib, which loads this module)

    from gclib import symbolic

    check_rule, exact_matrix, exact_target = symbolic.check_rule, symbolic.exact_matrix, symbolic.exact_target
    is_decodable_exact, rational = symbolic.is_decodable_exact, symbolic.rational
    ex = worked_example() if ex is None else ex
    K = 6
    corr, unc = ex.correlated, ex.uncorrelated
    gc = gc_cyclic(K, 3, exact=True)
    first = [int(np.flatnonzero(corr.rule.msg_class == c)[0]) for c in range(K)]
    Bc, Tc = rational(exact_matrix(corr)), rational(exact_target(corr))
    Bg, Tg = rational(exact_matrix(gc)), rational(exact_target(gc))
    Bu, Tu = rational(exact_matrix(unc)), rational(exact_target(unc))
    rows = []
    for t in range(1, K + 1):
        sets = [[first[c] for c in cls] for cls in combinations(range(K), t)]
        rows.append(("correlated", "distinct messages", t, *_count_decodable(symbolic, Bc, Tc, sets)))
    for name, code, B, T in (("correlated", corr, Bc, Tc), ("gc", gc, Bg, Tg)):
        for n in range(1, K + 1):
            sets = [code.worker_messages(ws).tolist() for ws in combinations(range(K), n)]
            rows.append((name, "workers", n, *_count_decodable(symbolic, B, T, sets)))
    for t in range(1, unc.n_messages + 1):
        rows.append(("uncorrelated", "messages", t,
                     *_count_decodable(symbolic, Bu, Tu, [list(c) for c in combinations(range(unc.n_messages), t)])))
    counts = pd.DataFrame(rows, columns=["design", "received", "size", "decoding", "sets"])
    failing = [tuple(w + 1 for w in ws) for ws in combinations(range(K), 3)
               if not is_decodable_exact(Bc, corr.worker_messages(ws).tolist(), Tc)]
    # Uncorrelated rows: worker w sends row 2w (order 3, real) and row 2w + 1 (order 2, virtual).
    scenario_rows = [0, 1, 2, 3, 4, 5, 7, 9]
    return WorkedExampleFacts(
        eq2=bool(np.array_equal(ex.M, PAPER_EQ2)), red=sorted(ex.dropped) == sorted(PAPER_EQ2_RED),
        eq3=bool(np.array_equal(ex.M_ext, PAPER_EQ3)), counts=counts, rule_agrees=check_rule(corr) == [],
        workers_124=is_decodable_exact(Bc, corr.worker_messages([0, 1, 3]).tolist(), Tc),
        failing_triples=failing, scenario=is_decodable_exact(Bu, scenario_rows, Tu),
        scenario_gc=is_decodable_exact(Bg, gc.worker_messages([0, 1, 2]).tolist(), Tg))
