"""A small multi-message code for exercising the runtime before the GC-MMC family lands.

:func:`cyclic_multimessage` is the uncoded multi-message scheme on the cyclic assignment: worker ``i`` computes
parts ``i, i+1, ..., i+s`` (mod ``n``) in that order and sends each partial gradient as soon as it is computed
(``s + 1`` messages per worker, ``ready = 1 .. s+1``); the master decodes once it holds one copy of every part.
"""
from __future__ import annotations

import numpy as np

from ..codes.base import GradientCode, check_ns
from ..codes.rules import coverage
from ..codes.tandon import cyclic_support


def _first_copy_decoder(code: GradientCode, idx: np.ndarray) -> np.ndarray:
    part = code.rule.msg_class
    A = np.zeros((1, idx.size))
    seen = set()
    for pos, j in enumerate(idx):
        if int(part[j]) not in seen:
            seen.add(int(part[j]))
            A[0, pos] = 1.0
    return A


def cyclic_multimessage(n: int, s: int) -> GradientCode:
    """Uncoded multi-message code on the cyclic assignment: ``n (s + 1)`` messages, message ``w (s+1) + t`` is
    part ``(w + t) mod n`` from worker ``w`` after ``t + 1`` partial gradients; any ``s`` stragglers tolerated."""
    check_ns(n, s)
    order = cyclic_support(n, s)
    r = s + 1
    B = np.zeros((n * r, n))
    part = np.zeros(n * r, dtype=np.int64)
    for w in range(n):
        for t, j in enumerate(order[w]):
            B[w * r + t, j] = 1.0
            part[w * r + t] = j
    return GradientCode(name="uc-mmc", n_workers=n, n_parts=n, order=order, B=B,
                        sender=np.repeat(np.arange(n), r), ready=np.tile(np.arange(1, r + 1), n),
                        rule=coverage(part), stragglers=s, decoder=_first_copy_decoder,
                        params={"n": n, "s": s})
