"""Helpers shared by the code tests (imported like ``notebook_fixtures``: pytest puts ``tests/`` on the path)."""
import numpy as np


def roundtrip(code, stragglers, rng, length=7):
    """Encode random partial gradients ``(n_parts, length)`` drawn from ``rng``, drop the messages of the
    ``stragglers`` (:meth:`GradientCode.surviving`), decode the rest.

    Returns:
        ``(decoded, true)``: the decoded gradient and the true sum of the partial gradients, both ``(length,)``.
    """
    g = rng.standard_normal((code.n_parts, length))
    msgs = code.encode(g)
    idx = code.surviving(stragglers)
    A = code.decode(idx)
    return code.combine(A, msgs[idx], length), g.sum(axis=0)
