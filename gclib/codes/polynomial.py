"""Polynomial (Reed-Solomon) gradient codes for any mask, after Halbawi, Azizan, Salehi and Hassibi (ISIT 2018).

Row ``i`` of the mask (a message) gets an evaluation point ``alpha_i``. Part ``j`` is embedded in the monic
polynomial ``p_j(x) = prod_{t in Z_j} (x - alpha_t)``, where ``Z_j`` holds the rows lacking part ``j`` (the zeros of
column ``j``); message ``i`` is ``sum_j p_j(alpha_i) g_j``, so it only involves parts its row holds. With ``h`` the
number of zeros of the sparsest column, every ``p_j`` is padded to degree ``h`` (extra roots at holders of ``j``,
the rows that would compute ``j`` last), so ``f(x) = sum_j p_j(x) g_j`` is a polynomial of degree ``h`` whose
leading coefficient is ``sum_j g_j``; any ``h + 1`` messages determine it. The leading coefficient from the
received set ``F`` is ``sum_{i in F} y_i / prod_{t in F, t != i} (alpha_i - alpha_t)`` (a divided difference), so
decoding is ``O(h^2)`` and never forms a Vandermonde inverse.

**Reconstructed**: only the paper's abstract (arXiv 1706.05436) and descriptions of it in later work were
available, so this normalization, the padding rule and the evaluation points are ours; every instance can be
verified exactly by :mod:`gclib.symbolic`.

Evaluation points (``points=``; default ``"equispaced"`` with the ``"spread"`` assignment, the real choice the
stability study of notebook 02 (:mod:`gclib.studies.reed_solomon.study`) favours; its claims table says by how
much):

* ``"chebyshev"``: Chebyshev nodes of the first kind, scaled to ``[-2, 2]`` (real messages);
* ``"equispaced"``: equispaced on ``[-2, 2]`` (real messages);
* ``"roots-of-unity"``: the complex ``N``-th roots of unity; each message is complex, so it costs twice the
  communication of a real one (``size = 2``), and the decoded sum is real up to round-off;
* an explicit array of distinct numbers.

The interval ``[-2, 2]`` has logarithmic capacity 1, which keeps the products of point differences near 1 in
magnitude instead of under- or overflowing as ``N`` grows.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import gcd

import numpy as np

from gclib import checks
from gclib.codes.base import Decoder, DecodingError, GradientCode, check_ns, load_sympy, reserve_code
from gclib.codes.rules import threshold
from gclib.codes.repetition import cyclic_support

POINTS = ("chebyshev", "equispaced", "roots-of-unity")
ASSIGN = ("spread", "natural")


def golden_stride(n: int) -> int:
    """The integer nearest ``n / phi`` (golden ratio) that is coprime with ``n`` (1 for ``n <= 2``)."""
    if n <= 2:
        return 1
    k = max(1, round(n / ((1 + 5 ** 0.5) / 2)))
    while gcd(k, n) != 1:
        k += 1
    return k


def point_permutation(n: int, assign="spread") -> np.ndarray:
    """``(n,)``: row ``i`` gets point number ``perm[i]`` of the family.

    ``"natural"``: row ``i`` gets point ``i`` (neighbouring rows get neighbouring points). ``"spread"``: row ``i``
    gets point ``i * k mod n`` with ``k`` the golden-ratio stride (:func:`golden_stride`), so any block of
    consecutive rows (the holders of a part in a cyclic mask, a run of stragglers) is spread over the whole
    interval or circle. The polynomials of a part then never have a long gap between their roots, which keeps
    the decoding error down (notebook 02 measures the gain; see ``docs/codes.md``).
    """
    if assign == "natural":
        return np.arange(n)
    if assign == "spread":
        return (np.arange(n) * golden_stride(n)) % n
    raise ValueError(f"assign must be one of {ASSIGN}, got {assign!r}")


def evaluation_points(n: int, points="chebyshev") -> np.ndarray:
    """``(n,)`` distinct evaluation points of the given family (see the module docstring)."""
    if not isinstance(points, str):
        pts = checks.finite_array("points", points)
        if pts.shape != (n,):
            raise ValueError(f"points must be one of {POINTS} or an array of {n} numbers, got shape {pts.shape}")
        if np.unique(pts).size != n:
            raise ValueError("evaluation points must be distinct")
        return pts
    if points == "chebyshev":
        return 2.0 * np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))
    if points == "equispaced":
        return np.linspace(-2.0, 2.0, n) if n > 1 else np.zeros(1)
    if points == "roots-of-unity":
        return np.exp(2j * np.pi * np.arange(n) / n)
    raise ValueError(f"points must be one of {POINTS} or an array of distinct numbers, got {points!r}")


def zero_sets(mask: np.ndarray, order_rank: np.ndarray | None = None) -> tuple[list, int]:
    """Roots of every column polynomial, padded to the common degree ``h``.

    Args:
        mask: ``(N, k)`` 0/1, row ``i`` holds part ``j`` where ``mask[i, j]`` is 1.
        order_rank: ``(N, k)`` position at which row ``i`` computes part ``j`` (padding picks the holders that
            compute ``j`` latest); ``None`` pads with the last holders by row index.
    Returns:
        (list of ``k`` root-index arrays, ``h``).
    """
    mask = np.asarray(mask) != 0
    N, k = mask.shape
    zeros = [np.flatnonzero(~mask[:, j]) for j in range(k)]
    h = max(z.size for z in zeros)
    if h >= N:
        raise ValueError("every part must be held by at least one row of the mask")
    out = []
    for j in range(k):
        need = h - zeros[j].size
        if need:
            holders = np.flatnonzero(mask[:, j])
            key = order_rank[holders, j] if order_rank is not None else holders
            extra = holders[np.argsort(-np.asarray(key), kind="stable")[:need]]
            out.append(np.sort(np.r_[zeros[j], extra]))
        else:
            out.append(zeros[j])
    return out, h


def encoding_matrix(alpha: np.ndarray, roots: list) -> np.ndarray:
    """``B[i, j] = prod_{t in roots[j]} (alpha_i - alpha_t)``: ``(N, k)``."""
    alpha = np.asarray(alpha)
    N, k = alpha.size, len(roots)
    B = np.zeros((N, k), dtype=alpha.dtype if np.iscomplexobj(alpha) else float)
    diff = alpha[:, None] - alpha[None, :]
    for j, z in enumerate(roots):
        B[:, j] = np.prod(diff[:, z], axis=1) if z.size else 1.0
    return B


def leading_coefficient_weights(alpha_F: np.ndarray) -> np.ndarray:
    """Weights ``a_i = 1 / prod_{t != i} (alpha_i - alpha_t)`` that extract the leading coefficient of the
    polynomial of degree ``len(alpha_F) - 1`` through the points ``alpha_F``."""
    alpha_F = np.asarray(alpha_F)
    d = alpha_F[:, None] - alpha_F[None, :]
    np.fill_diagonal(d, 1.0)
    return 1.0 / np.prod(d, axis=1)


@dataclass(frozen=True, eq=False, kw_only=True)
class LeadingCoefficientDecoder(Decoder):
    """Decoder of a polynomial code: the gradient is the leading coefficient of the degree-``h`` polynomial
    whose values the messages are, read from the first ``h + 1`` received messages (divided differences).

    Attributes:
        points: ``(n_messages,)`` evaluation point of every message (float or complex).
        h: degree of the message polynomials; any ``h + 1`` messages decode.
    """

    points: np.ndarray
    h: int

    @property
    def decodable_rank(self) -> int:
        return self.h + 1

    def __call__(self, code: GradientCode, idx: np.ndarray) -> np.ndarray:
        h = self.h
        if idx.size < h + 1:
            raise DecodingError(f"'{code.name}' needs {h + 1} messages, got {idx.size}")
        use = np.sort(idx)[: h + 1]
        w = leading_coefficient_weights(self.points[use])
        A = np.zeros((1, idx.size), dtype=w.dtype)
        pos = {int(j): p for p, j in enumerate(idx)}
        for j, wj in zip(use, w):
            A[0, pos[int(j)]] = wj
        return A


def assigned_points(n: int, points, assign="spread", exact: bool = False):
    """The points of rows ``0 .. n-1``: the family's points permuted by :func:`point_permutation` (explicit arrays
    are taken as given).

    Returns:
        ``(alpha, alpha_exact)``: ``(n,)`` floats, and the same points as SymPy rationals when ``exact``
        (``None`` otherwise; the floats are then the rationals rounded, so the verified code is the code used).
    """
    perm = point_permutation(n, assign) if isinstance(points, str) else np.arange(n)
    if exact:
        rational = rational_points(n, points)
        alpha_q = [rational[t] for t in perm]
        return np.array([float(a) for a in alpha_q]), alpha_q
    return evaluation_points(n, points)[perm], None


def rational_points(n: int, points="chebyshev", max_denominator: int = 1000) -> list:
    """``n`` distinct rational evaluation points (SymPy ``Rational``) for exact verification.

    ``"equispaced"`` points on ``[-2, 2]`` are rational already; ``"chebyshev"`` nodes are replaced by the closest
    rationals with denominator at most ``max_denominator`` (raised until they are distinct); an explicit real
    array is rationalized the same way. Complex roots of unity have no rational form: ValueError.
    """
    sp = load_sympy()
    if isinstance(points, str) and points == "roots-of-unity":
        raise ValueError("points = 'roots-of-unity' has no exact rational form; use points 'chebyshev' or "
                         "'equispaced' for exact verification")
    if isinstance(points, str) and points == "equispaced":
        if n == 1:
            return [sp.Integer(0)]
        return [sp.Rational(-2) + sp.Rational(4 * i, n - 1) for i in range(n)]
    x = evaluation_points(n, points)
    if np.iscomplexobj(x):
        raise ValueError("exact mode needs real evaluation points, got complex ones")
    den = max_denominator
    while True:
        q = [Fraction(float(v)).limit_denominator(den) for v in x]
        if len(set(q)) == n:
            return [sp.Rational(f.numerator, f.denominator) for f in q]
        den *= 10


def polynomial_code(mask, sender, ready, order, *, points="equispaced", name="rs", stragglers=None,
                    params=None, exact: bool = False, assign="spread") -> GradientCode:
    """Polynomial gradient code for an arbitrary mask (rows are messages).

    Args:
        mask: ``(N, k)`` 0/1 (``N`` may exceed the number of workers: virtual workers of GC-MMC).
        sender: ``(N,)`` real worker sending row ``i``.
        ready: ``(N,)`` partial gradients computed before row ``i`` is sent.
        order: per worker, its parts in computation order.
        points: evaluation points (see :func:`evaluation_points`).
        exact: use rational points (:func:`rational_points`) and attach the exact encoding matrix ``B_exact``;
            the float ``B`` is then built from the same rational points, so the verified code is the code used.
        assign: how the points of a named family are assigned to rows: ``"spread"`` (default, golden-ratio
            stride, far better conditioned) or ``"natural"`` (row ``i`` gets point ``i``; the behaviour before
            the stability study). Ignored for an explicit array of points.
    Returns:
        A code decodable from any ``h + 1`` messages, ``h`` the zeros of the sparsest column.
    """
    mask = np.asarray(mask) != 0
    if mask.ndim != 2 or mask.size == 0:
        raise ValueError(f"mask must be a non-empty (N, k) 0/1 matrix, got shape {mask.shape}")
    N, k = mask.shape
    reserve_code(name, N, k, workers=len(order), load=k, exact=exact, sizes=f"a {N} x {k} mask",
                 lower="the number of rows or parts of the mask")
    sender = np.asarray(sender, dtype=np.int64)
    if sender.shape != (N,) or sender.min() < 0 or sender.max() >= len(order):
        raise ValueError(f"sender must hold one worker id in [0, {len(order)}) per mask row ({N}), got "
                         f"{sender.tolist()}")
    rank = np.full((N, k), -1)
    for i in range(N):
        for pos, j in enumerate(order[sender[i]]):
            rank[i, j] = pos
    roots, h = zero_sets(mask, rank)
    B_exact = None
    alpha, alpha_q = assigned_points(N, points, assign, exact)
    if exact:
        B_exact = exact_encoding_matrix(alpha_q, roots)
        B = np.array(B_exact.tolist(), dtype=float)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            B = encoding_matrix(alpha, roots)
    custom = not isinstance(points, str) and not exact
    if custom and not np.isfinite(B).all():
        raise ValueError(f"points of magnitude up to {np.abs(alpha).max():.3g} make the encoding matrix overflow "
                         f"float64 (products of {h} point differences); use points of magnitude about 1")
    n_workers = len(order)
    s = n_workers - (h + 1) if stragglers is None else stragglers
    p = {"h": h, "points": points if isinstance(points, str) else "custom",
         "assign": assign if isinstance(points, str) else "custom", **(params or {})}
    code = GradientCode(name=name, n_workers=n_workers, n_parts=k, order=order, B=B, sender=sender,
                        ready=ready, rule=threshold(N, h + 1), stragglers=max(s, 0),
                        decoder=LeadingCoefficientDecoder(points=alpha, h=h),
                        B_exact=B_exact, params=p)
    if custom and not code.is_decodable(np.arange(N)):  # the rule would claim decoding where nothing decodes
        d = np.abs(alpha[:, None] - alpha[None, :])[~np.eye(N, dtype=bool)].min() if N > 1 else 0.0
        raise ValueError(f"points are too close together to decode in floating point (closest pair {d:.3g} "
                         f"apart): even all {N} messages do not determine the gradient; spread them out")
    return code


def rs(n: int, s: int, points="equispaced", *, exact: bool = False, assign="spread") -> GradientCode:
    """Reed-Solomon gradient code on the cyclic mask: worker ``i`` holds parts ``i..i+s`` (mod ``n``); any
    ``n - s`` workers decode.

    ``exact=True`` uses rational points and attaches ``B_exact`` (see :func:`polynomial_code`)."""
    n, s = check_ns(n, s)
    reserve_code("rs", n, n, workers=n, load=s + 1, complex_=isinstance(points, str) and points == "roots-of-unity",
                 exact=exact, sizes=f"workers = {n}", lower="workers")
    order = cyclic_support(n, s)
    mask = np.zeros((n, n), dtype=int)
    for i, o in enumerate(order):
        mask[i, list(o)] = 1
    return polynomial_code(mask, np.arange(n), np.full(n, s + 1), order, points=points, name="rs",
                           stragglers=s, params={"n": n, "s": s, "exact": exact}, exact=exact, assign=assign)


def exact_encoding_matrix(alpha, roots):
    """SymPy version of :func:`encoding_matrix` for rational points."""
    sp = load_sympy()
    alpha = [sp.nsimplify(a) if not isinstance(a, sp.Basic) else a for a in alpha]
    N, k = len(alpha), len(roots)
    B = sp.zeros(N, k)
    for j, z in enumerate(roots):
        for i in range(N):
            v = sp.Integer(1)
            for t in z:
                v *= alpha[i] - alpha[int(t)]
            B[i, j] = v
    return B
