"""Fast decodability rules, vectorized over Monte Carlo trials.

A rule answers two questions about a code's messages without any linear algebra:

* ``decodable(received)``: is this set of received messages enough to decode?
* ``completion(arrival)``: given the arrival time of every message in every trial, when does the received set
  first become decodable?

:meth:`ThresholdRule.tracker` also follows one set as it grows, message by message (the MPI master's check).

:class:`ThresholdRule` covers every family in the project: messages are grouped into *classes* of identical
content (duplicates help no more than one copy), classes into *clusters*, and cluster ``c`` is decoded once
``thresholds[c]`` distinct classes of it have arrived; the whole gradient is decoded when every cluster is.

* plain GC (CRC, Reed-Solomon): one cluster, every message its own class, threshold ``n - s``;
* fractional repetition: one cluster per group, the group's identical messages one class, threshold 1;
* uncoded: one cluster, every worker a class, threshold ``n``;
* correlated GC-MMC: a class per distinct coded message, threshold ``K - m + 1`` per cluster.

:class:`AnyOf` decodes as soon as any of its rules does (used by hybrid schemes).
The tests check every rule against the exact span test of :func:`gclib.codes.base.GradientCode.is_decodable`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def check_messages_axis(a: np.ndarray, n_messages: int, what: str) -> np.ndarray:
    """``a`` unchanged if its last axis has one entry per message; ValueError naming ``what`` otherwise (a longer
    mask or arrival array used to be truncated silently to its first ``n_messages`` entries)."""
    if a.ndim == 0 or a.shape[-1] != n_messages:
        raise ValueError(f"{what} needs one entry per message on its last axis ({n_messages}), got shape {a.shape}")
    return a


@dataclass(frozen=True, eq=False)
class ThresholdRule:
    """Per-cluster thresholds on distinct message classes.

    Attributes:
        msg_class: ``(n_messages,)`` int, the class of every message (messages of one class carry the same
            content).
        class_cluster: ``(n_classes,)`` int, the cluster of every class.
        thresholds: ``(n_clusters,)`` int, distinct classes needed in each cluster.
    """

    msg_class: np.ndarray
    class_cluster: np.ndarray
    thresholds: np.ndarray
    _perm: np.ndarray = field(init=False, repr=False)
    _starts: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        msg_class = np.asarray(self.msg_class, dtype=np.int64)
        class_cluster = np.asarray(self.class_cluster, dtype=np.int64)
        thresholds = np.asarray(self.thresholds, dtype=np.int64)
        n_classes = class_cluster.size
        if msg_class.ndim != 1 or msg_class.size == 0:
            raise ValueError("msg_class must be a non-empty 1-d array of class ids")
        if msg_class.min() < 0 or msg_class.max() >= n_classes:
            raise ValueError(f"msg_class ids must lie in [0, {n_classes}), got range "
                             f"[{msg_class.min()}, {msg_class.max()}]")
        if set(np.unique(msg_class)) != set(range(n_classes)):
            raise ValueError("every class must hold at least one message")
        n_clusters = thresholds.size
        if class_cluster.min() < 0 or class_cluster.max() >= n_clusters:
            raise ValueError(f"class_cluster ids must lie in [0, {n_clusters})")
        sizes = np.bincount(class_cluster, minlength=n_clusters)
        bad = np.flatnonzero((thresholds < 1) | (thresholds > sizes))
        if bad.size:
            c = int(bad[0])
            raise ValueError(f"thresholds[{c}] = {thresholds[c]} must lie in [1, {sizes[c]}] "
                             f"(the number of distinct messages of cluster {c})")
        object.__setattr__(self, "msg_class", msg_class)
        object.__setattr__(self, "class_cluster", class_cluster)
        object.__setattr__(self, "thresholds", thresholds)
        # Messages sorted by class so that a class minimum is one reduceat.
        perm = np.argsort(msg_class, kind="stable")
        starts = np.searchsorted(msg_class[perm], np.arange(n_classes))
        object.__setattr__(self, "_perm", perm)
        object.__setattr__(self, "_starts", starts)
        object.__setattr__(self, "_sorted", bool(np.all(msg_class[:-1] <= msg_class[1:])))  # perm is the identity
        # Shortcuts for the simulator's hot path: every message its own class (no class reduction), and
        # clusters that are equal contiguous blocks with one threshold (one partition for all clusters).
        object.__setattr__(self, "_identity", bool(np.array_equal(msg_class, np.arange(n_classes))))
        # Classes of one size: the class minimum is an elementwise minimum of strided views (no reduceat).
        counts = np.diff(np.append(starts, msg_class.size))
        object.__setattr__(self, "_class_size", int(counts[0]) if np.all(counts == counts[0]) else 0)
        # ... and the same messages taken j-th message of every class first: (trials, size, classes) after the take,
        # whose minimum over the middle axis runs along whole rows
        by_rank = perm.reshape(n_classes, -1).T.ravel() if self._class_size else perm
        object.__setattr__(self, "_perm_by_rank", by_rank)
        block = int(sizes[0])
        equal_blocks = (np.all(thresholds == thresholds[0])
                        and np.array_equal(class_cluster, np.repeat(np.arange(n_clusters), block)))
        object.__setattr__(self, "_block", block if equal_blocks else 0)

    @classmethod
    def stacked(cls, rules) -> "ThresholdRule":
        """The rules of codes side by side, their classes and clusters numbered on from the rule before: the rule
        of the composite, which decodes when every part does."""
        rules = list(rules)
        classes = np.cumsum([0] + [r.class_cluster.size for r in rules])
        clusters = np.cumsum([0] + [r.n_clusters for r in rules])
        return cls(np.concatenate([r.msg_class + classes[i] for i, r in enumerate(rules)]),
                   np.concatenate([r.class_cluster + clusters[i] for i, r in enumerate(rules)]),
                   np.concatenate([r.thresholds for r in rules]))

    @property
    def n_clusters(self) -> int:
        return int(self.thresholds.size)

    @property
    def msg_cluster(self) -> np.ndarray:
        """``(n_messages,)`` the cluster of every message."""
        return self.class_cluster[self.msg_class]

    def decodable(self, received: np.ndarray) -> np.ndarray:
        """Whether received sets are decodable.

        Args:
            received: ``(..., n_messages)`` bool mask of received messages.
        Returns:
            ``(...)`` bool.
        """
        received = check_messages_axis(np.asarray(received, dtype=bool), self.msg_class.size, "received")
        got = np.maximum.reduceat(received[..., self._perm].astype(np.int8), self._starts, axis=-1) > 0
        per_cluster = np.zeros(received.shape[:-1] + (self.n_clusters,), dtype=np.int64)
        for c in range(self.n_clusters):
            per_cluster[..., c] = got[..., self.class_cluster == c].sum(axis=-1)
        return np.all(per_cluster >= self.thresholds, axis=-1)

    def tracker(self) -> "ThresholdTracker":
        """An incremental check of one growing received set (see :class:`ThresholdTracker`)."""
        return ThresholdTracker(self)

    def class_times(self, arrival: np.ndarray) -> np.ndarray:
        """``(trials, n_classes)``: first arrival of each class."""
        check_messages_axis(np.asarray(arrival), self.msg_class.size, "arrival")
        if self._identity:
            return arrival
        if self._class_size and self._sorted:  # classes side by side: halve each short run of messages
            return pairwise(arrival.reshape(arrival.shape[0], -1, self._class_size), np.minimum)
        if self._class_size:  # one take, then a minimum along whole rows
            ranked = np.take(arrival, self._perm_by_rank, axis=1)
            return ranked.reshape(arrival.shape[0], self._class_size, -1).min(axis=1)
        by_class = arrival if self._sorted else np.take(arrival, self._perm, axis=1)
        return np.minimum.reduceat(by_class, self._starts, axis=1)

    def cluster_times(self, arrival: np.ndarray) -> np.ndarray:
        """When each cluster becomes decodable.

        Args:
            arrival: ``(trials, n_messages)`` arrival times (``inf`` for never).
        Returns:
            ``(trials, n_clusters)`` times, in the floating dtype of ``arrival`` (float32 stays float32);
            ``inf`` where a cluster never decodes.
        """
        arrival = np.asarray(arrival)
        if not np.issubdtype(arrival.dtype, np.floating):
            arrival = arrival.astype(float)
        ct = self.class_times(arrival)
        if self._block:
            t = int(self.thresholds[0])
            blocks = ct.reshape(ct.shape[0], self.n_clusters, self._block)
            if t == 1 or t == self._block:  # the first or the last of each block: no partition
                return pairwise(blocks, np.minimum if t == 1 else np.maximum)
            return np.partition(blocks, t - 1, axis=2)[:, :, t - 1]
        out = np.empty((ct.shape[0], self.n_clusters), dtype=ct.dtype)
        for c in range(self.n_clusters):
            sub = ct[:, self.class_cluster == c]
            t = int(self.thresholds[c])
            out[:, c] = np.partition(sub, t - 1, axis=1)[:, t - 1]
        return out

    def completion(self, arrival: np.ndarray) -> np.ndarray:
        """``(trials,)``: earliest time at which the received set is decodable."""
        return self.cluster_times(arrival).max(axis=1)


class ThresholdTracker:
    """The received set of one iteration, grown one message at a time, checked against a :class:`ThresholdRule`
    without array work: what the MPI master asks after each arrival, while the workers compete for the host's
    cores.

    It counts, per cluster, the distinct classes still missing. The set is decodable when none is missing; while
    exactly one is missing, the messages whose arrival alone would complete the set are those of that cluster's
    classes not yet received.
    """

    def __init__(self, rule: ThresholdRule):
        self._class = rule.msg_class.tolist()
        self._cluster = rule.class_cluster.tolist()
        self._missing = rule.thresholds.tolist()
        self._short = sum(self._missing)  # distinct classes still missing, over all clusters
        self._got = set()  # classes received
        self._received = set()  # messages received

    @property
    def decodable(self) -> bool:
        return self._short == 0

    def add(self, m: int) -> bool:
        """Receive message ``m``; return whether the received set is now decodable."""
        self._received.add(m)
        c = self._class[m]
        if c not in self._got:
            self._got.add(c)
            k = self._cluster[c]
            if self._missing[k] > 0:
                self._missing[k] -= 1
                self._short -= 1
        return self._short == 0

    def completing(self) -> list:
        """The messages not received whose arrival alone would make the received set decodable (sorted; every
        message not received once the set is decodable)."""
        if self._short == 0:
            return [m for m in range(len(self._class)) if m not in self._received]
        if self._short != 1:
            return []
        k = self._missing.index(1)
        return [m for m, c in enumerate(self._class)
                if self._cluster[c] == k and c not in self._got and m not in self._received]


@dataclass(frozen=True, eq=False)
class AnyOf:
    """Decodable as soon as any of ``rules`` is (all over the same messages)."""

    rules: tuple

    def __post_init__(self):
        if not self.rules:
            raise ValueError("AnyOf needs at least one rule")
        object.__setattr__(self, "rules", tuple(self.rules))

    @property
    def n_clusters(self) -> int:
        return 1

    @property
    def msg_cluster(self) -> np.ndarray:
        return np.zeros(self.rules[0].msg_class.size, dtype=np.int64)

    def decodable(self, received: np.ndarray) -> np.ndarray:
        out = self.rules[0].decodable(received)
        for rule in self.rules[1:]:
            out = out | rule.decodable(received)
        return out

    def cluster_times(self, arrival: np.ndarray) -> np.ndarray:
        return self.completion(arrival)[:, None]

    def completion(self, arrival: np.ndarray) -> np.ndarray:
        return np.min([rule.completion(arrival) for rule in self.rules], axis=0)


def pairwise(a: np.ndarray, op) -> np.ndarray:
    """``op`` (``np.minimum`` or ``np.maximum``) over the last axis of ``a``: halving it at each step on a short
    axis (a few whole-array operations are faster there than NumPy's reduction along it), else the reduction.
    Exact: a minimum or maximum does not round. Returns ``a.shape[:-1]`` (a new array)."""
    if a.shape[-1] >= 32:
        return (np.min if op is np.minimum else np.max)(a, axis=-1)
    if a.shape[-1] == 1:
        return a[..., 0].copy()
    while a.shape[-1] > 1:
        h = a.shape[-1] // 2
        m = op(a[..., :h], a[..., h:2 * h])
        if a.shape[-1] % 2:
            op(m[..., :1], a[..., 2 * h:], out=m[..., :1])
        a = m
    return a[..., 0]


def threshold(n_messages: int, t: int) -> ThresholdRule:
    """Any ``t`` of ``n_messages`` distinct messages decode."""
    return ThresholdRule(np.arange(n_messages), np.zeros(n_messages, dtype=np.int64), np.array([t]))


def coverage(groups) -> ThresholdRule:
    """One message of every group decodes; ``groups[j]`` is the group of message ``j`` (identical content)."""
    groups = np.asarray(groups, dtype=np.int64)
    n_groups = int(groups.max()) + 1
    return ThresholdRule(groups, np.arange(n_groups), np.ones(n_groups, dtype=np.int64))
