"""The exact decodability rule as a simulator rule: the span test, cluster by cluster (:class:`SpanRule`), and a
code with it in place of its fast rule (:func:`with_exact_rule`), for a slow exact simulation.

The threshold rules of the codes (:mod:`gclib.codes.rules`) say when enough messages arrived; some are sufficient
but not necessary (the uncorrelated GC-MMC design's, :mod:`gclib.codes.mmc`). This rule finds the earliest
moment the received rows span the target, so the simulator can time a design as an exact decoder would.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gclib.codes.base import GradientCode
from gclib.codes.rules import check_messages_axis


@dataclass(frozen=True, eq=False)
class SpanRule:
    """The exact decodability rule (span test, in floating point) as a simulator rule, cluster by cluster.

    The threshold of the uncorrelated design, ``K l - sum(m) + 1``, is what polynomial interpolation needs; it is
    sufficient but not necessary when it exceeds the number of parts ``K_c`` of a cluster: any ``K_c`` linearly
    independent rows already span the target. This rule finds, per trial and cluster, the shortest prefix of the
    arrivals whose rows span the cluster's target (binary search, monotone). It is slow (SVDs per trial):
    use it for thousands of trials, not hundreds of thousands.

    The span test runs in floating point, so on badly conditioned codes it may miss a decodable set; a known
    sufficient rule (``sufficient``, e.g. the code's threshold rule, with the same clusters) is or-ed in, so the
    result is never later than that rule's.

    Attributes:
        B: ``(n_messages, n_parts)`` encoding matrix. msg_cluster: ``(n_messages,)``. part_cluster: ``(n_parts,)``.
        sufficient: optional rule whose decodable sets are known to decode.
    """

    B: np.ndarray
    msg_cluster: np.ndarray
    part_cluster: np.ndarray
    sufficient: object = None

    @property
    def n_clusters(self) -> int:
        return int(np.max(self.part_cluster)) + 1

    def _ok(self, c: int, rows: np.ndarray) -> bool:
        if rows.size == 0:
            return False
        cols = np.flatnonzero(self.part_cluster == c)
        # Row scaling keeps the span; column scaling D maps the target 1 to 1 D. Both tame the polynomial
        # code's wildly scaled entries before the SVD.
        BR = self.B[np.ix_(rows, cols)]
        BR = BR / np.linalg.norm(BR, axis=1, keepdims=True)
        d = 1.0 / np.maximum(np.linalg.norm(self.B[:, cols] / np.maximum(
            np.linalg.norm(self.B[:, cols], axis=1, keepdims=True), 1e-300), axis=0), 1e-300)
        BR = BR * d
        T = d[None, :]
        u, sv, vh = np.linalg.svd(BR, full_matrices=False)
        rank = int(np.sum(sv > 1e-9 * max(1.0, sv[0])))
        V = vh[:rank].conj().T
        resid = T - (T @ V) @ V.conj().T
        return bool(np.linalg.norm(resid) <= 1e-7 * np.linalg.norm(T))

    def decodable(self, received: np.ndarray) -> np.ndarray:
        received = check_messages_axis(np.asarray(received, dtype=bool), self.msg_cluster.size, "received")
        flat = received.reshape(-1, received.shape[-1])
        out = np.array([all(self._ok(c, np.flatnonzero(row & (self.msg_cluster == c)))
                            for c in range(self.n_clusters)) for row in flat])
        out = out.reshape(received.shape[:-1])
        if self.sufficient is not None:
            out = out | self.sufficient.decodable(received)
        return out

    def cluster_times(self, arrival: np.ndarray) -> np.ndarray:
        arrival = check_messages_axis(np.asarray(arrival, dtype=float), self.msg_cluster.size, "arrival")
        out = np.full((arrival.shape[0], self.n_clusters), np.inf)
        for c in range(self.n_clusters):
            idx = np.flatnonzero(self.msg_cluster == c)
            for t in range(arrival.shape[0]):
                a = arrival[t, idx]
                srt = idx[np.argsort(a, kind="stable")]
                n_fin = int(np.isfinite(a).sum())
                if not self._ok(c, srt[:n_fin]):
                    continue
                lo, hi = 1, n_fin
                while lo < hi:
                    mid = (lo + hi) // 2
                    if self._ok(c, srt[:mid]):
                        hi = mid
                    else:
                        lo = mid + 1
                out[t, c] = arrival[t, srt[lo - 1]]
        if self.sufficient is not None:
            out = np.minimum(out, self.sufficient.cluster_times(arrival))
        return out

    def completion(self, arrival: np.ndarray) -> np.ndarray:
        return self.cluster_times(arrival).max(axis=1)


def with_exact_rule(code: GradientCode) -> GradientCode:
    """The same code with :class:`SpanRule` (exact decodability) as its rule, for a slow exact simulation."""
    if code.n_pieces != 1:
        raise ValueError("with_exact_rule supports codes with n_pieces == 1")
    msg_cluster = np.asarray(code.rule.msg_cluster)
    part_cluster = np.zeros(code.n_parts, dtype=np.int64)
    for j in range(code.n_messages):
        cols = np.flatnonzero(np.abs(code.B[j]) > 0)
        part_cluster[cols] = msg_cluster[j]
    sufficient = code.rule if code.exact else None
    return replace(code, rule=SpanRule(code.B, msg_cluster, part_cluster, sufficient), name=code.name + "-exact")
