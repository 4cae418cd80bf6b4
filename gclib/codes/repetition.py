"""Tandon, Lei, Dimakis and Karampatziakis, "Gradient Coding" (ICML 2017), and its baselines.

* :func:`uncoded`: every worker computes one part and the master waits for all.
* :func:`ignore_stragglers`: uncoded, but the master takes the fastest ``n - s`` and rescales by ``n / (n - s)``
  (approximate).
* :func:`frc`: fractional repetition, ``(s + 1) | n``; groups of ``s + 1`` workers hold the same ``s + 1`` parts
  and send their sum; one worker per group decodes.
* :func:`crc`: cyclic repetition with Tandon's randomized construction (Algorithm 2): a random ``H`` with
  ``H @ 1 = 0``, every row of ``B`` supported on ``s + 1`` cyclically consecutive parts and in the null space of
  ``H``. Any ``n - s`` rows decode (almost surely; exactly, for the exact mode, when the verifier says so).
* :func:`partial_stragglers`: Tandon's scheme for partial stragglers: each worker first sends the plain sum of
  ``P - s - 1`` parts of its own, then a CRC-coded message over ``s + 1`` shared parts.
* :func:`builders` and :func:`exact_examples`: the schemes of the paper's comparison as functions of ``s``, and
  the small exact FRC and CRC that notebook 01 derives and proves.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from gclib import checks
from gclib.codes.base import DecodingError, GradientCode, LastMessageLost, check_ns, load_sympy, reserve_code
from gclib.codes.rules import ThresholdRule, coverage, threshold


def _rng(seed):
    return checks.generator(seed, "seed")


def _reserve(name, n, s, *, messages=None, columns=None, exact=False):
    """Refuse an (n, s) code too large for the memory budget, before building anything."""
    reserve_code(name, n if messages is None else messages, n if columns is None else columns, workers=n,
                 load=s + 1, exact=exact, sizes=f"workers = {n}" + (f", stragglers = {s}" if s else ""),
                 lower="workers")


def uncoded(n: int) -> GradientCode:
    """Uncoded: ``n`` workers, ``n`` parts, worker ``i`` sends ``g_i``; all ``n`` messages are needed."""
    n, _ = check_ns(n, 0)
    _reserve("uncoded", n, 0)
    return GradientCode(name="uncoded", n_workers=n, n_parts=n, order=[(i,) for i in range(n)],
                        B=np.eye(n), sender=np.arange(n), ready=np.ones(n), rule=threshold(n, n),
                        stragglers=0, params={"n": n})


def _ignore_decoder(code: GradientCode, idx: np.ndarray) -> np.ndarray:
    n, s = code.n_workers, code.stragglers
    if idx.size < n - s:
        raise DecodingError(f"ignore-stragglers needs {n - s} messages, got {idx.size}")
    return np.full((1, idx.size), n / idx.size)


def ignore_stragglers(n: int, s: int) -> GradientCode:
    """Ignore the ``s`` slowest: sum the fastest ``n - s`` uncoded messages, scaled by ``n / (n - s)``.

    Approximate (``exact=False``): the decoded vector is an unbiased estimate of the full gradient only when
    the parts are exchangeable.
    """
    n, s = check_ns(n, s)
    _reserve("ignore", n, 0)
    return GradientCode(name="ignore", n_workers=n, n_parts=n, order=[(i,) for i in range(n)],
                        B=np.eye(n), sender=np.arange(n), ready=np.ones(n), rule=threshold(n, n - s),
                        stragglers=s, exact=False, decoder=_ignore_decoder, params={"n": n, "s": s})


def _frc_decoder(code: GradientCode, idx: np.ndarray) -> np.ndarray:
    """Pick the first received message of every group (coefficient 1).

    The groups come from the construction (worker ``w`` is in group ``w // (s + 1)``), not from ``code.rule``, so
    the decoder still works when the rule is swapped (e.g. :func:`gclib.codes.mmc.with_exact_rule`)."""
    r = code.stragglers + 1
    group = code.sender // r
    n_groups = code.n_workers // r
    A = np.zeros((1, idx.size))
    seen = set()
    for pos, j in enumerate(idx):
        g = int(group[j])
        if g not in seen:
            seen.add(g)
            A[0, pos] = 1.0
    if len(seen) < n_groups:
        missing = sorted(set(range(n_groups)) - seen)
        raise DecodingError(f"fractional repetition: no message from groups {missing}")
    return A


def frc(n: int, s: int) -> GradientCode:
    """Fractional repetition scheme: needs ``(s + 1) | n``.

    Worker ``w`` is in group ``q = w // (s + 1)`` at position ``b = w % (s + 1)``, holds the parts of block
    ``q`` and computes them starting at its own position (so the group members start on different parts).
    """
    n, s = check_ns(n, s)
    if n % (s + 1):
        raise ValueError(f"frc needs workers divisible by stragglers + 1: {n} workers is not divisible by "
                         f"{s + 1}; use crc, or choose stragglers + 1 among the divisors of {n}")
    _reserve("frc", n, s)
    r = s + 1
    order, rows = [], np.zeros((n, n))
    for w in range(n):
        q, b = divmod(w, r)
        order.append(tuple(q * r + (b + i) % r for i in range(r)))
        rows[w, q * r:(q + 1) * r] = 1.0
    return GradientCode(name="frc", n_workers=n, n_parts=n, order=order, B=rows, sender=np.arange(n),
                        ready=np.full(n, r), rule=coverage(np.arange(n) // r), stragglers=s,
                        decoder=_frc_decoder, params={"n": n, "s": s})


def cyclic_support(n: int, s: int):
    """Row ``i`` of a cyclic code holds parts ``i, i+1, ..., i+s`` (mod ``n``), computed in that order."""
    return [tuple((i + t) % n for t in range(s + 1)) for i in range(n)]


def crc_matrix(n: int, s: int, rng=None, *, exact: bool = False, low: int = -99, high: int = 99):
    """Tandon's randomized cyclic-repetition encoding matrix (Algorithm 2).

    Float mode draws ``H_tmp`` ``(s, n-1)`` standard normal, as the authors' code does; exact mode draws integers
    in ``[low, high]`` (redrawn if a row's system is singular) and solves in rational arithmetic, returning a
    SymPy matrix.

    Returns:
        ``(n, n)`` numpy array, or SymPy ``Matrix`` of rationals when ``exact``.
    """
    n, s = check_ns(n, s)
    _reserve("crc", n, s, exact=exact)
    rng = _rng(rng)
    if s == 0:
        if exact:
            sp = load_sympy()
            return sp.eye(n)
        return np.eye(n)
    support = cyclic_support(n, s)
    if exact:
        sp = load_sympy()
        # Redraw (from the same generator) in the rare case an integer draw makes a row's system singular.
        for _ in range(100):
            Ht = rng.integers(low, high + 1, size=(s, n - 1))
            H = sp.Matrix(Ht.tolist()).row_join(sp.Matrix(-Ht.sum(axis=1)))
            systems = [(i, list(S[1:])) for i, S in enumerate(support)]
            if all(H.extract(list(range(s)), o).det() != 0 for _, o in systems):
                break
        else:  # pragma: no cover - probability ~ 0
            raise ValueError("crc exact mode: no non-singular integer draw found; try another seed")
        B = sp.zeros(n, n)
        for i, others in systems:
            v = H.extract(list(range(s)), others).LUsolve(-H[:, i])
            B[i, i] = 1
            for t, j in enumerate(others):
                B[i, j] = v[t]
        return B
    Ht = rng.normal(0.0, 1.0, size=(s, n - 1))
    H = np.concatenate([Ht, -Ht.sum(axis=1, keepdims=True)], axis=1)
    B = np.zeros((n, n))
    for i, S in enumerate(support):
        others = list(S[1:])
        v = np.linalg.solve(H[:, others], -H[:, i])
        B[i, i] = 1.0
        B[i, others] = v
    return B


def crc(n: int, s: int, seed=0, *, exact: bool = False) -> GradientCode:
    """Cyclic repetition scheme (Tandon et al., Algorithms 1 and 2); any ``n - s`` workers decode.

    Args:
        n: workers (= parts). s: stragglers tolerated, ``0 <= s < n``.
        seed: seed or ``numpy.random.Generator`` for the random ``H``.
        exact: draw integer ``H`` and build ``B`` in rational arithmetic (``B_exact``), so that
            :func:`gclib.symbolic.verify` proves this instance.
    """
    n, s = check_ns(n, s)
    _reserve("crc", n, s, exact=exact)
    _rng(seed)  # a bad seed is refused before anything is built
    B_exact = None
    if exact:
        B_exact = crc_matrix(n, s, seed, exact=True)
        B = np.array(B_exact.tolist(), dtype=float)
    else:
        B = crc_matrix(n, s, seed)
    return GradientCode(name="crc", n_workers=n, n_parts=n, order=cyclic_support(n, s), B=B,
                        sender=np.arange(n), ready=np.full(n, s + 1), rule=threshold(n, n - s), stragglers=s,
                        B_exact=B_exact,
                        params={"n": n, "s": s, "seed": seed if not isinstance(seed, np.random.Generator) else None,
                                "exact": exact})


def partial_stragglers(n: int, s: int, pieces: int, seed=0, *, exact: bool = False) -> GradientCode:
    """Tandon's scheme for partial stragglers (``P = pieces`` data pieces per worker).

    The data is cut into ``n (P - s)`` parts. Worker ``w`` first computes its own ``P - s - 1`` parts
    (``w (P-s-1) ...``) and sends their plain sum, then the ``s + 1`` cyclic parts of a CRC over the last ``n``
    parts, and sends the CRC message. The master needs the first message of every worker and the coded message
    of any ``n - s``.
    """
    n, s = check_ns(n, s)
    P = checks.integer("pieces", pieces, low=s + 2, why=" (P, parts per worker: at least stragglers + 2)")
    sep = P - s - 1
    k = n * (P - s)
    reserve_code("partial", 2 * n, k, workers=n, load=P, exact=exact, sizes=f"workers = {n}, pieces = {P}",
                 lower="workers or pieces")
    base = crc(n, s, seed, exact=exact)
    B = np.zeros((2 * n, k))
    order = []
    for w in range(n):
        own = list(range(w * sep, (w + 1) * sep))
        shared = [n * sep + j for j in base.order[w]]
        order.append(tuple(own + shared))
        B[w, own] = 1.0
        B[n + w, n * sep:] = base.B[w]
    B_exact = None
    if exact:
        sp = load_sympy()
        B_exact = sp.zeros(2 * n, k)
        for w in range(n):
            for j in range(w * sep, (w + 1) * sep):
                B_exact[w, j] = 1
            for j in range(n):
                B_exact[n + w, n * sep + j] = base.B_exact[w, j]
    rule = ThresholdRule(np.arange(2 * n), np.r_[np.zeros(n, int), np.ones(n, int)], np.array([n, n - s]))
    return GradientCode(name="partial", n_workers=n, n_parts=k, order=order, B=B,
                        sender=np.r_[np.arange(n), np.arange(n)], ready=np.r_[np.full(n, sep), np.full(n, P)],
                        rule=rule, stragglers=s, decoder=LastMessageLost(), B_exact=B_exact,
                        params={"n": n, "s": s, "P": P,
                                "seed": seed if not isinstance(seed, np.random.Generator) else None, "exact": exact,
                                "straggler_kind": "partial"})


def example_n3() -> tuple[np.ndarray, np.ndarray]:
    """The worked example of Tandon et al. (n = 3, s = 1): ``B`` and the decoding matrix ``A`` with ``A B = 1``.

    Row ``i`` of ``A`` is zero at straggler ``i``.
    """
    B = np.array([[0.5, 1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]])
    A = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, -1.0, 0.0]])
    return B, A


def example_n3_code() -> GradientCode:
    """Tandon's n = 3, s = 1 example as a code (cyclic supports of size 2)."""
    sp = load_sympy()
    B, _ = example_n3()
    half = sp.Rational(1, 2)
    B_exact = sp.Matrix([[half, 1, 0], [0, 1, -1], [half, 0, 1]])
    order = [(0, 1), (1, 2), (2, 0)]
    return GradientCode(name="tandon-n3", n_workers=3, n_parts=3, order=order, B=B, sender=np.arange(3),
                        ready=np.full(3, 2), rule=threshold(3, 2), stragglers=1, B_exact=B_exact,
                        params={"n": 3, "s": 1})


def builders(n: int, seed=0) -> dict:
    """The four schemes of Tandon et al.'s comparison at ``n`` workers, as functions of the stragglers ``s``.

    Returns:
        ``{"uncoded": f, "ignore": f, "frc": f, "crc": f}`` with ``f(s) -> GradientCode`` (uncoded ignores ``s``;
        FRC raises ``ValueError`` where ``s + 1`` does not divide ``n``, which :func:`gclib.sweeps.sweep`
        reads as "not defined here"). ``seed`` draws CRC's random ``H``.
    """
    n, _ = check_ns(n, 0)
    return {"uncoded": partial(_uncoded_at, n), "ignore": partial(ignore_stragglers, n), "frc": partial(frc, n),
            "crc": partial(_crc_at, n, seed=seed)}


def _uncoded_at(n: int, s: int) -> GradientCode:
    return uncoded(n)


def _crc_at(n: int, s: int, seed=0) -> GradientCode:
    return crc(n, s, seed)


def exact_examples(n: int, s: int, seed=0) -> list:
    """FRC (when ``(s + 1) | n``) and CRC in exact mode at ``(n, s)``: the small codes a notebook derives and
    proves with :func:`gclib.symbolic.verify`."""
    n, s = check_ns(n, s)
    out = [frc(n, s)] if n % (s + 1) == 0 else []
    return out + [crc(n, s, seed, exact=True)]
