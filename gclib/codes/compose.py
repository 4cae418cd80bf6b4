"""Codes built from codes: independent clusters (block-diagonal composition)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from gclib import checks
from gclib.codes.base import Decoder, DecodingError, GradientCode, load_sympy, reserve_code
from gclib.codes.rules import ThresholdRule


@dataclass(frozen=True, eq=False)
class ClusterDecoder(Decoder):
    """Decoder of independent clusters: every cluster decodes with its own code's decoder, the blocks of
    coefficients side by side.

    Attributes:
        clusters: per cluster, ``(code, first message id)``: the cluster's code and where its messages start in
            the composite.
    """

    clusters: tuple

    def __call__(self, code: GradientCode, idx: np.ndarray) -> np.ndarray:
        A = np.zeros((code.n_pieces, idx.size), dtype=complex if np.iscomplexobj(code.B) else float)
        for b, (sub, msg_off) in enumerate(self.clusters):
            sel = np.flatnonzero((idx >= msg_off) & (idx < msg_off + sub.n_messages))
            if sel.size == 0:
                raise DecodingError(f"cluster {b} of '{code.name}': no message received")
            A[:, sel] = sub.decode(idx[sel] - msg_off, warn=False)
        return A


def clustered(codes: Sequence[GradientCode], name: str | None = None) -> GradientCode:
    """Run ``codes`` side by side on disjoint workers and disjoint parts (block-diagonal ``B``).

    Cluster ``c`` is decoded by its own code; the full gradient is the sum of the cluster sums, so the composite
    is decodable exactly when every cluster is. Rules are merged cluster by cluster.
    """
    codes = list(codes)
    if not codes:
        raise ValueError("clustered needs at least one code")
    m = codes[0].n_pieces
    if any(c.n_pieces != m for c in codes):
        raise ValueError("clustered codes must share n_pieces")
    if any(not isinstance(c.rule, ThresholdRule) for c in codes):
        raise ValueError("clustered needs codes with threshold rules")
    n = sum(c.n_workers for c in codes)
    k = sum(c.n_parts for c in codes)
    n_msg = sum(c.n_messages for c in codes)
    complex_ = any(np.iscomplexobj(c.B) for c in codes)
    reserve_code(name or "clustered", n_msg, k * m, workers=n, load=max(c.load for c in codes), complex_=complex_,
                 sizes=f"{len(codes)} clusters, {n_msg} messages, {k} parts", lower="the number or size of clusters")
    B = np.zeros((n_msg, k * m), dtype=complex if complex_ else float)
    order, sender, ready, size, blocks = [], [], [], [], []
    w_off = p_off = j_off = 0
    for c in codes:
        B[j_off:j_off + c.n_messages, p_off * m:(p_off + c.n_parts) * m] = c.B
        order += [tuple(p + p_off for p in o) for o in c.order]
        sender.append(c.sender + w_off)
        ready.append(c.ready)
        size.append(c.size)
        blocks.append((c, j_off))
        w_off += c.n_workers
        p_off += c.n_parts
        j_off += c.n_messages
    rule = ThresholdRule.stacked(c.rule for c in codes)
    exact = all(c.exact for c in codes)
    B_exact = None
    if all(c.B_exact is not None for c in codes):
        sp = load_sympy()
        B_exact = sp.diag(*[c.B_exact for c in codes])
    base = codes[0].name
    return GradientCode(name=name or f"{base}-x{len(codes)}", n_workers=n, n_parts=k, order=order, B=B,
                        sender=np.concatenate(sender), ready=np.concatenate(ready), rule=rule,
                        stragglers=min(c.stragglers for c in codes), n_pieces=m, exact=exact,
                        size=np.concatenate(size), decoder=ClusterDecoder(tuple(blocks)),
                        B_exact=B_exact, params={"clusters": len(codes)})


def split_evenly(total: int, parts: int, name: str = "clusters") -> list[int]:
    """Sizes of ``parts`` clusters of ``total`` items that differ by at most one; error if any would be empty."""
    parts = checks.integer(name, parts, low=1)
    if parts > total:
        raise ValueError(f"{name} = {parts} exceeds the {total} items to split")
    q, r = divmod(total, parts)
    return [q + (1 if i < r else 0) for i in range(parts)]
