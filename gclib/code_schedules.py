"""Gradient coding at datacenter scale: schedules of codes too large to hold their encoding matrix (the study of
notebook 08 that uses them is :mod:`gclib.studies.scale.study`).

The simulator reads of a code only who sends each message, after how many partial gradients, and the fast rule
(:class:`gclib.simulator.Schedule`). The builders here give that directly from the construction's formulas, in
memory that grows with the messages (a dense encoding matrix at ``K = 10,000`` workers is 800 MB and more); the
tests check each against the schedule of the real code at small ``K``:

* :func:`gc`: plain GC (CRC of Tandon et al., ``gclib.codes.mmc.gc_cyclic``), load ``r``, any ``K - r + 1``
  workers decode;
* :func:`frc`: fractional repetition (``gclib.codes.frc``), groups of ``r`` workers, one of each group decodes;
* :func:`uncoded`: every worker its own part, all ``K`` needed;
* :func:`lcc`: the simulator stand-in of Lagrange coded computing (``gclib.codes.lcc.lcc_code``);
* :func:`correlated`: correlated GC-MMC of order ``m`` (``m = 1`` is UC-MMC, ``m = r`` plain GC);
* :func:`uncorrelated`: uncorrelated GC-MMC with an order vector (the paper's interpolation threshold);
* :func:`clustered`: any of them run independently in ``P`` clusters (``gclib.codes.mmc.clustered_design``);
* :func:`hybrid`: the hybrid design (``gclib.codes.mmc.hybrid``), clusters of ``r`` workers;
* :func:`ye_abbe`, :func:`kadhe`: the communication-efficient codes (messages of ``1/m`` gradient).

"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from gclib import checks
from gclib.codes.lcc import lcc_threshold
from gclib.codes.mmc import FullOrThreshold, _check_orders, cluster_sizes
from gclib.codes.rules import ThresholdRule, coverage, threshold
from gclib.simulator import Schedule


#: Bytes a schedule takes per message at most while it is built (its arrays, its rule's, and a clustered
#: schedule's parts before they are joined).
SCHEDULE_BYTES = 128


def reserve(name: str, messages: int, sizes: str) -> None:
    """Refuse to build a schedule of ``messages`` messages that would not fit the memory budget
    (:func:`gclib.checks.need_memory`), before anything is allocated."""
    checks.need_memory(f"the schedule of '{name}'", SCHEDULE_BYTES * int(messages), sizes=sizes,
                       lower="the workers or the load")


def _schedule(name, K, sender, ready, rule, load, **info) -> Schedule:
    sender = np.asarray(sender, dtype=np.int64)
    return Schedule(name, int(K), sender, np.asarray(ready, dtype=np.int64), np.ones(sender.size), rule,
                    np.full(int(K), int(load), dtype=np.int64),
                    {"scheme": name, "workers": int(K), "parts": int(K), "pieces": 1, "messages": int(sender.size),
                     "load": int(load), **info})


def _kr(K, r):
    K = checks.integer("workers", K, low=1)
    r = checks.integer("load", r, low=1, high=K)
    return K, r


def gc(K: int, r: int, name: str = "gc") -> Schedule:
    """Plain GC with load ``r``: worker ``w`` sends one message after its ``r`` parts; any ``K - r + 1`` decode.
    ``name``: the scheme named when the schedule is refused for its memory (CRC and RS are GC's schedule)."""
    K, r = _kr(K, r)
    reserve(name, K, f"workers = {K}: {K:,} messages")
    return _schedule("gc", K, np.arange(K), np.full(K, r), threshold(K, K - r + 1), r, stragglers=r - 1)


def frc(K: int, r: int) -> Schedule:
    """Fractional repetition with load ``r`` (``r | K``): the ``K / r`` groups of ``r`` consecutive workers send
    the same message; one message of every group decodes."""
    K, r = _kr(K, r)
    if K % r:
        raise ValueError(f"load must divide workers = {K} for fractional repetition, got {r}")
    reserve("frc", K, f"workers = {K}: {K:,} messages")
    return _schedule("frc", K, np.arange(K), np.full(K, r), coverage(np.arange(K) // r), r, stragglers=r - 1)


def uncoded(K: int) -> Schedule:
    """Uncoded: worker ``w`` sends its one part; all ``K`` are needed."""
    K = checks.integer("workers", K, low=1)
    reserve("uncoded", K, f"workers = {K}: {K:,} messages")
    return _schedule("uncoded", K, np.arange(K), np.ones(K), threshold(K, K), 1, stragglers=0)


def lcc(K: int, r: int) -> Schedule:
    """LCC with load ``r`` (``gclib.codes.lcc.lcc_code``): ``k = ceil(K / r)`` blocks, each worker's result after
    ``ceil(K / k)`` computations; any ``2 (k - 1) + 1`` results decode."""
    K, r = _kr(K, r)
    k = -(-K // r)
    R = lcc_threshold(k)
    if R > K:
        raise ValueError(f"LCC with load r = {r} needs 2 ceil(K/r) - 1 = {R} results but has only {K} workers")
    work = -(-K // k)
    reserve("lcc", K, f"workers = {K}: {K:,} messages")
    return _schedule("lcc", K, np.arange(K), np.full(K, work), threshold(K, R), work, blocks=k, threshold=R,
                     stragglers=K - R)


def correlated(K: int, r: int, m: int, name: str = "gc-mmc-correlated") -> Schedule:
    """Correlated GC-MMC of order ``m``: worker ``w`` sends ``c_{w+j}`` after ``m + j`` parts
    (``j = 0 .. r - m``); any ``K - m + 1`` distinct messages decode."""
    K, r = _kr(K, r)
    m = checks.integer("order", m, low=1, high=r)
    l = r - m + 1
    reserve(name, K * l, f"workers = {K}, load = {r}, order = {m}: {K * l:,} messages")
    cls = (np.arange(K)[:, None] + np.arange(l)[None, :]).ravel() % K
    rule = ThresholdRule(cls, np.zeros(K, dtype=np.int64), np.array([K - m + 1]))
    return _schedule(name, K, np.repeat(np.arange(K), l), np.tile(np.arange(m, r + 1), K), rule, r, order=m,
                     messages_per_worker=l, stragglers=r - 1)


def uc_mmc(K: int, r: int) -> Schedule:
    """Uncoded multi-message communication: every part sent as soon as it is computed (correlated, ``m = 1``)."""
    return correlated(K, r, 1, name="uc-mmc")


def uncorrelated(K: int, r: int, orders) -> Schedule:
    """Uncorrelated GC-MMC with order vector ``orders``: worker ``w`` sends one message after each order; any
    ``K l - sum(orders) + 1`` of the ``K l`` messages decode (the paper's interpolation threshold)."""
    K, r = _kr(K, r)
    orders = _check_orders(orders, r)
    l = len(orders)
    reserve("gc-mmc-uncorrelated", K * l, f"workers = {K}, {l} orders: {K * l:,} messages")
    return _schedule("gc-mmc-uncorrelated", K, np.repeat(np.arange(K), l), np.tile(np.array(orders), K),
                     threshold(K * l, K * l - sum(orders) + 1), r, orders=list(orders),
                     stragglers=(sum(orders) - 1) // l)


def hybrid(K: int, r: int, orders) -> Schedule:
    """The hybrid design (``gclib.codes.mmc.hybrid``): ``K / r`` clusters of ``r`` workers; in each, every worker
    sends a coded message after each order below ``r`` (any ``r l' - sum`` of them ``+ 1`` decode the cluster, ``l'``
    orders below ``r``) and the plain cluster sum after ``r`` parts (one decodes it)."""
    K, r = _kr(K, r)
    orders = _check_orders(orders, r)
    if K % r:
        raise ValueError(f"hybrid needs clusters of exactly load = {r} workers, but {K} workers is not divisible "
                         f"by {r}")
    coded = [m for m in orders if m != r]
    P, l = K // r, len(coded)
    reserve("hybrid", K * (l + 1), f"workers = {K}, {l + 1} orders: {K * (l + 1):,} messages")
    per = r * l + r  # messages per cluster: the coded ones worker by worker, then one plain sum per worker
    local = np.concatenate([np.repeat(np.arange(r), l), np.arange(r)])
    sender = (np.arange(P)[:, None] * r + local[None, :]).ravel()
    ready = np.tile(np.concatenate([np.tile(np.array(coded, dtype=np.int64), r), np.full(r, r)]), P)
    full = np.tile(np.r_[np.zeros(r * l, dtype=bool), np.ones(r, dtype=bool)], P)
    t = r * l - sum(coded) + 1
    rule = FullOrThreshold(np.repeat(np.arange(P), per), full, np.full(P, max(t, 1)))
    return _schedule("hybrid", K, sender, ready, rule, r, orders=list(orders), clusters=P, stragglers=r - 1)


def sized(sch: Schedule, factor: float, name: str | None = None) -> Schedule:
    """``sch`` with every message ``factor`` times as long (``1 / m`` for a communication-efficient code's pieces,
    ``2`` for complex messages), renamed ``name`` when given; a factor ``1 / m`` makes ``m`` pieces of a part."""
    name = name or sch.name
    info = {**sch.info, "scheme": name}
    if float(factor) < 1:
        info["pieces"] = int(round(1 / float(factor)))
    return Schedule(name, sch.n_workers, sch.sender, sch.ready, sch.size * float(factor), sch.rule, sch.lengths,
                    info)


def named(sch: Schedule, name: str, **info) -> Schedule:
    """``sch`` under the scheme name ``name`` (e.g. CRC, whose schedule is plain GC's), with more ``info``."""
    return Schedule(name, sch.n_workers, sch.sender, sch.ready, sch.size, sch.rule, sch.lengths,
                    {**sch.info, "scheme": name, **info})


def ye_abbe(K: int, s: int, m: int) -> Schedule:
    """Ye and Abbe's code (``gclib.codes.ye_abbe``): load ``s + m``, one message of ``1/m`` gradient per worker,
    any ``K - s`` decode."""
    K = checks.integer("workers", K, low=1)
    s, m = checks.integer("stragglers", s, low=0), checks.integer("comm", m, low=1)
    if s + m > K:
        raise ValueError(f"ye-abbe needs s + m <= workers = {K}, got s = {s}, m = {m}")
    reserve("ye-abbe", K, f"workers = {K}: {K:,} messages")
    sch = _schedule("ye-abbe", K, np.arange(K), np.full(K, s + m), threshold(K, K - s), s + m, stragglers=s, comm=m)
    return sized(sch, 1.0 / m)


def kadhe(K: int, s: int, m: int) -> Schedule:
    """Kadhe et al.'s code with a Gaussian (MDS) generator (``gclib.codes.kadhe``): groups of ``d = s + m``
    workers (``d | K``), one message of ``1/m`` gradient per worker, any ``m`` of each group decode."""
    K = checks.integer("workers", K, low=1)
    s, m = checks.integer("stragglers", s, low=0), checks.integer("comm", m, low=1)
    d = s + m
    if K % d:
        raise ValueError(f"kadhe needs the load d = s + m = {d} to divide K = {K}")
    reserve("kadhe", K, f"workers = {K}: {K:,} messages")
    rule = ThresholdRule(np.arange(K), np.arange(K) // d, np.full(K // d, m))
    return sized(_schedule("kadhe", K, np.arange(K), np.full(K, d), rule, d, stragglers=s, comm=m), 1.0 / m)


def tile(schedules: Iterable[Schedule], name: str | None = None) -> Schedule:
    """Schedules side by side on disjoint workers (``gclib.codes.clustered``): cluster by cluster, the composite
    decodes when every cluster does."""
    parts = list(schedules)
    if not parts or any(not isinstance(s.rule, ThresholdRule) for s in parts):
        raise ValueError("tile needs at least one schedule, each with a threshold rule")
    sender, ready, size, lengths = ([] for _ in range(4))
    w_off = 0
    for s in parts:
        sender.append(s.sender + w_off)
        ready.append(s.ready)
        size.append(s.size)
        lengths.append(s.lengths)
        w_off += s.n_workers
    rule = ThresholdRule.stacked(s.rule for s in parts)
    name = name or parts[0].name
    out = Schedule(name, w_off, np.concatenate(sender), np.concatenate(ready), np.concatenate(size), rule,
                   np.concatenate(lengths), dict(parts[0].info))
    out.info.update({"scheme": name, "workers": w_off, "parts": w_off, "messages": out.n_messages,
                     "clusters": len(parts)})
    return out


def clustered(build: Callable[[int], Schedule], K: int, P: int, r: int, name: str = "clustered") -> Schedule:
    """``build(K_c)`` in each of ``P`` clusters of sizes differing by at most one (each at least ``r``), as
    ``gclib.codes.mmc.clustered_design``; ``P = 1`` is ``build(K)``. ``name``: the scheme named when the schedule
    (at least a message per worker) is refused for its memory, before the clusters are listed."""
    K, r = _kr(K, r)
    reserve(name, K, f"workers = {K}, load = {r}: at least {K:,} messages")
    sizes = cluster_sizes(K, P, r)
    if len(sizes) == 1:
        return build(K)
    cache = {}
    return tile([cache[s] if s in cache else cache.setdefault(s, build(s)) for s in sizes])
