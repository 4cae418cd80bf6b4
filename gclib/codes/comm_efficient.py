"""Communication-efficient gradient codes: each partial gradient is cut into ``m`` pieces and every worker sends
one vector of ``1/m`` of the gradient's length (columns of ``B`` indexed ``part * m + piece``, target ``m`` rows).

Two constructions, both as :class:`~gclib.codes.base.GradientCode`:

* :func:`ye_abbe`: Ye and Abbe (ICML 2018, arXiv 1802.03475), a polynomial construction that reaches the optimal
  trade-off ``d = s + m`` (computation load ``d``, ``s`` stragglers, communication ``1/m``) on the cyclic
  placement. **Reconstructed**: only the paper's abstract was available; this is our construction in the spirit
  of theirs (its "recursive polynomial constructions" are not reproduced). Part ``j`` is held by the ``d`` workers
  ``W_j = {j, j-1, ..., j-d+1}``; ``p_j(x) = prod_{i not in W_j} (x - beta_i)`` (monic, degree ``n - d``);
  ``q_{j,u} = p_j r_{j,u}`` with ``deg r_{j,u} <= m - 1`` chosen (triangular Toeplitz solve) so that the top
  ``m`` coefficients of ``q_{j,u}`` (degree ``n - s - 1``) are the unit vector ``e_u``. Worker ``i`` sends
  ``f(beta_i) = sum_{j,u} q_{j,u}(beta_i) g_j^(u)``; any ``n - s`` evaluations determine ``f`` and its top ``m``
  coefficients are the ``m`` pieces of the gradient. The fast decoder reads those coefficients from the Lagrange
  form in ``O((n - s) m)`` (no Vandermonde solve).
* :func:`kadhe`: Kadhe, Koyluoglu and Ramchandran (2020), the framework in which any linear ``[N, K, D]`` code
  with generator ``G`` (``K x N``) gives a gradient code with computation load ``d = N``, communication
  reduction ``m = K`` and straggler tolerance ``s = D - 1``. **Reconstructed** from the paper's abstract: the
  workers form ``n / d`` groups of ``d``; every worker of group ``q`` computes the ``d`` parts of block ``q``,
  cuts their sum ``S_q`` into ``m`` pieces and worker ``t`` of the group sends ``sum_u G[u, t] S_q^(u)``. A group
  decodes from any set of its messages whose columns of ``G`` have rank ``m`` (any ``m`` for an MDS code), so any
  ``D - 1`` stragglers are tolerated. Generators shipped: random Gaussian (MDS with probability 1, exact rational
  mode), repetition (``[I_m ... I_m]``, which is fractional repetition for ``m = 1``), or a user-supplied matrix,
  whose minimum distance is computed and checked; the generators, the minimum distance and what decodes a group's
  messages are in :mod:`gclib.codes.generator_matrix` (their names importable from here).

:func:`tradeoff` reads the ``(d, s, m)`` trade-off off both constructions; :func:`generator_report` says what a
user's generator gives.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

import numpy as np

from gclib import checks
from gclib.codes.base import Decoder, DecodingError, GradientCode, check_ns, load_sympy, reserve_code
from gclib.codes.generator_matrix import (  # noqa: F401  (this module's interface)
    GENERATOR_BUDGET, GENERATORS, MAX_GENERATOR_ENTRIES, BasesRule, GeneratorDecoder, gaussian_generator,
    is_rational, load_generator, min_distance, numeric_rank, parallel_classes, repetition_generator)
from gclib.codes.polynomial import assigned_points
from gclib.codes.rules import ThresholdRule, threshold
from gclib.codes.repetition import cyclic_support


# ---------------------------------------------------------------------------------------------- Ye and Abbe
def _elementary_symmetric(x: np.ndarray, t_max: int) -> np.ndarray:
    """``(t_max + 1,)``: ``e_0 .. e_{t_max}`` of the values ``x`` (``e_0 = 1``)."""
    e = np.zeros(t_max + 1, dtype=np.result_type(x, float))
    e[0] = 1.0
    for v in x:
        e[1:] = e[1:] + v * e[:-1]
    return e


def _toeplitz_solve(c, m: int, one, zero):
    """Solve the lower-triangular Toeplitz system ``C rho = I`` (``C[t, v] = c[t - v]``, ``c[0] = 1``).

    Returns the ``m x m`` list ``R`` with ``R[u][v]``: coefficient ``v`` (of ``x^{m-1-v}``) of ``r_u``.
    Works for floats and SymPy numbers alike (``one``/``zero`` give the type).
    """
    R = []
    for u in range(m):
        rho = [zero] * m
        for t in range(m):
            acc = (one if t == u else zero) - sum((rho[v] * c[t - v] for v in range(t)), zero)
            rho[t] = acc  # c[0] = 1
        R.append(rho)
    return R


def ye_abbe_matrix(beta: np.ndarray, n: int, s: int, m: int) -> np.ndarray:
    """Encoding matrix of :func:`ye_abbe` for the points ``beta`` ``(n,)``: ``(n, n * m)``, column
    ``j * m + u`` holds ``q_{j,u}(beta_i)``."""
    d = s + m
    beta = np.asarray(beta)
    dtype = complex if np.iscomplexobj(beta) else float
    B = np.zeros((n, n * m), dtype=dtype)
    diff = beta[:, None] - beta[None, :]
    powers = beta[:, None] ** np.arange(m - 1, -1, -1)[None, :]  # (n, m): x^{m-1-v}
    for j in range(n):
        holders = {(j - t) % n for t in range(d)}
        roots = np.array([i for i in range(n) if i not in holders], dtype=np.int64)
        p = np.prod(diff[:, roots], axis=1) if roots.size else np.ones(n, dtype=dtype)
        e = _elementary_symmetric(beta[roots], m - 1)
        c = [((-1) ** t) * e[t] for t in range(m)]  # top coefficients of p_j
        R = np.array(_toeplitz_solve(c, m, 1.0, 0.0), dtype=dtype)  # (m, m)
        B[:, j * m:(j + 1) * m] = p[:, None] * (powers @ R.T)
    return B


def ye_abbe_matrix_exact(beta, n: int, s: int, m: int):
    """SymPy version of :func:`ye_abbe_matrix` for rational points ``beta`` (list of ``Rational``)."""
    sp = load_sympy()
    d = s + m
    B = sp.zeros(n, n * m)
    one, zero = sp.Integer(1), sp.Integer(0)
    for j in range(n):
        holders = {(j - t) % n for t in range(d)}
        roots = [beta[i] for i in range(n) if i not in holders]
        e = [one] + [zero] * (m - 1)
        for v in roots:
            for t in range(m - 1, 0, -1):
                e[t] = e[t] + v * e[t - 1]
        c = [((-1) ** t) * e[t] for t in range(m)]
        R = _toeplitz_solve(c, m, one, zero)
        for i in range(n):
            p = one
            for r in roots:
                p *= beta[i] - r
            if p == 0:
                continue
            for u in range(m):
                B[i, j * m + u] = p * sum((R[u][v] * beta[i] ** (m - 1 - v) for v in range(m)), zero)
    return B


def top_coefficient_weights(beta_F: np.ndarray, m: int) -> np.ndarray:
    """``(m, f)`` weights: row ``t`` maps the values at the ``f`` points ``beta_F`` of a polynomial of degree
    ``f - 1`` to its coefficient of ``x^{f-1-t}``.

    Lagrange form: that coefficient is ``sum_i y_i w_i (-1)^t e_t(beta_{F minus i})`` with
    ``w_i = 1 / prod_{l != i} (beta_i - beta_l)``; ``e_t`` of the set minus one point follows from ``e_t`` of the
    whole set by ``e_t(F - i) = e_t(F) - beta_i e_{t-1}(F - i)``. Cost ``O(f^2 + f m)``.
    """
    beta_F = np.asarray(beta_F)
    f = beta_F.size
    dd = beta_F[:, None] - beta_F[None, :]
    np.fill_diagonal(dd, 1.0)
    w = 1.0 / np.prod(dd, axis=1)
    eF = _elementary_symmetric(beta_F, m - 1)
    A = np.empty((m, f), dtype=np.result_type(beta_F, float))
    prev = np.ones(f, dtype=A.dtype)
    A[0] = w
    for t in range(1, m):
        cur = eF[t] - beta_F * prev
        A[t] = w * ((-1) ** t) * cur
        prev = cur
    return A


@dataclass(frozen=True, eq=False, kw_only=True)
class TopCoefficientsDecoder(Decoder):
    """Decoder of :func:`ye_abbe`: the ``m`` pieces are the top ``m`` coefficients of the polynomial of degree
    ``f - 1`` through the first ``f = n - s`` received messages (Lagrange form, :func:`top_coefficient_weights`).

    Attributes:
        points: ``(n,)`` evaluation point ``beta_i`` of worker ``i``'s message.
        decodable_rank: ``f = n - s``, the messages a decode uses.
    """

    points: np.ndarray
    decodable_rank: int

    def __call__(self, code: GradientCode, idx: np.ndarray) -> np.ndarray:
        f, m = self.decodable_rank, code.n_pieces
        if idx.size < f:
            raise DecodingError(f"'{code.name}' needs {f} messages, got {idx.size}")
        use_pos = np.argsort(idx, kind="stable")[:f]
        W = top_coefficient_weights(self.points[idx[use_pos]], m)
        A = np.zeros((m, idx.size), dtype=W.dtype)
        A[:, use_pos] = W
        return A


def ye_abbe(n: int, s: int, m: int = 1, points="equispaced", *, exact: bool = False, assign="spread") -> GradientCode:
    """Ye and Abbe's communication-efficient code (our reconstruction, see the module docstring).

    Args:
        n: workers (= parts). s: stragglers tolerated. m: communication reduction (messages of ``1/m`` gradient;
            default 1).
        points: evaluation points (``"chebyshev"``, ``"equispaced"``, ``"roots-of-unity"`` or an array).
        exact: rational points and ``B_exact`` (SymPy), for :func:`gclib.symbolic.verify`.
        assign: ``"spread"`` (golden-ratio stride, default) or ``"natural"``; see
            :func:`gclib.codes.polynomial.point_permutation`.
    Returns:
        ``n`` messages of size ``1/m`` (``2/m`` with complex points); load ``d = s + m``; any ``n - s`` decode.
    """
    n, s = check_ns(n, s)
    m = checks.integer("comm", m, low=1, why=" (m, the communication reduction)")
    if s + m > n:
        raise ValueError(f"ye-abbe needs stragglers + comm <= workers (load d = s + m): s + m = {s + m} > "
                         f"n = {n}; choose comm <= {n - s}")
    reserve_code("ye-abbe", n, n * m, workers=n, load=s + m,
                 complex_=isinstance(points, str) and points == "roots-of-unity", exact=exact,
                 sizes=f"workers = {n}, comm = {m}", lower="workers or comm")
    B_exact = None
    beta, beta_q = assigned_points(n, points, assign, exact)
    if exact:
        B_exact = ye_abbe_matrix_exact(beta_q, n, s, m)
        B = np.array(B_exact.tolist(), dtype=float)
    else:
        B = ye_abbe_matrix(beta, n, s, m)
    d = s + m
    order = cyclic_support(n, d - 1)
    return GradientCode(name="ye-abbe", n_workers=n, n_parts=n, order=order, B=B, sender=np.arange(n),
                        ready=np.full(n, d), rule=threshold(n, n - s), stragglers=s, n_pieces=m,
                        decoder=TopCoefficientsDecoder(points=beta, decodable_rank=n - s), B_exact=B_exact,
                        params={"n": n, "s": s, "m": m, "d": d, "exact": exact, "reconstructed": True,
                                "points": points if isinstance(points, str) else "custom",
                                "assign": assign if isinstance(points, str) else "custom"})




# ---------------------------------------------------------------------------------------------- Kadhe et al.
def kadhe(n: int, s: int, m: int | None = None, generator="gaussian", seed=0, *,
          exact: bool = False) -> GradientCode:
    """Kadhe et al.'s any-linear-code framework (our reconstruction, see the module docstring).

    Args:
        n: workers (= parts); must be a multiple of the block length ``d``.
        s: stragglers tolerated; at most ``D - 1`` for the generator's minimum distance ``D``.
        m: communication reduction (the code's dimension ``K``); for a user generator it defaults to ``K``
            and must equal it when given.
        generator: ``"gaussian"`` (``[s + m, m]`` random Gaussian MDS, ``d = s + m``), ``"repetition"``
            (``[m (s + 1), m, s + 1]``, every piece repeated ``s + 1`` times; ``m = 1`` is fractional repetition),
            or a ``K x N`` matrix (numpy, nested lists, or SymPy; integer/rational entries allow exact
            verification), or a path to one (see :func:`load_generator`).
        seed: seed or Generator of the Gaussian draw.
        exact: Gaussian entries rounded to rationals and ``B_exact`` attached.
    Returns:
        ``n`` messages of size ``1/m``; load ``d``; any ``s`` stragglers tolerated.
    """
    n, s = check_ns(n, s)
    name_g = generator if isinstance(generator, str) and generator in GENERATORS else "custom"
    if isinstance(generator, str) and generator not in GENERATORS:
        generator = load_generator(generator)
    if isinstance(generator, str):
        G, G_exact, D = _shipped_generator(generator, n, s, m, seed, exact)
    else:
        G, G_exact, D = _user_generator(generator, s, m)
    m, d = G.shape
    _check_blocks(n, m, d, exact)
    n_groups = n // d
    order, B, B_exact = _group_matrices(G, G_exact, n)
    known = {"gaussian": np.arange(d), "repetition": np.arange(d) % m}.get(name_g)
    rule = _kadhe_rule(G, n_groups, m, known)
    return GradientCode(name="kadhe", n_workers=n, n_parts=n, order=order, B=B, sender=np.arange(n),
                        ready=np.full(n, d), rule=rule, stragglers=s, n_pieces=m,
                        decoder=GeneratorDecoder(G=G, decodable_rank=m * n_groups),
                        B_exact=B_exact,
                        params={"n": n, "s": s, "m": m, "d": d, "min_distance": int(D), "generator": name_g,
                                "seed": seed if name_g == "gaussian" and not isinstance(seed, np.random.Generator)
                                else None, "exact": exact, "reconstructed": True})


def _check_blocks(n: int, m: int, d: int, exact: bool) -> None:
    """Refuse ``n`` workers that groups of ``d`` do not tile, and a code too large for memory."""
    if d > n or n % d:
        raise ValueError(f"kadhe needs workers to be a multiple of the block length d = {d} (computation load): "
                         f"{n} workers is not; choose workers among the multiples of {d}")
    reserve_code("kadhe", n, n * m, workers=n, load=d, exact=exact, sizes=f"workers = {n}, comm = {m}",
                 lower="workers or comm")


def _shipped_generator(generator: str, n: int, s: int, m, seed, exact: bool):
    """``(G (m, d) float, G_exact or None, D)`` of a shipped generator: ``"gaussian"`` (``[s + m, m]``, MDS) or
    ``"repetition"`` (``[m (s + 1), m, s + 1]``); the block length is checked before anything is drawn."""
    m = 1 if m is None else checks.integer("comm", m, low=1, why=" (m, the communication reduction)")
    d = s + m if generator == "gaussian" else m * (s + 1)
    _check_blocks(n, m, d, exact)
    if generator == "gaussian":
        if exact:
            G_exact = gaussian_generator(m, d, seed, exact=True)
            return np.array(G_exact.tolist(), dtype=float), G_exact, d - m + 1
        return gaussian_generator(m, d, seed), None, d - m + 1
    G = repetition_generator(m, s + 1).astype(float)
    if exact:
        sp = load_sympy()
        return G, sp.Matrix(G.astype(np.int64).tolist()), s + 1
    return G, None, s + 1


def _user_generator(raw, s: int, m):
    """``(G (K, N) float, G_exact or None, D)`` of a user generator (numbers, Fractions, SymPy): exact when its
    entries are integers or rationals; ``comm`` must match ``K`` and ``s`` stay below the minimum distance."""
    sp = load_sympy()
    G_exact = None
    if isinstance(raw, (list, tuple)):
        raw = np.array(raw, dtype=object) if any(isinstance(v, Fraction) for row in raw for v in row) \
            else np.asarray(raw)
    if is_rational(raw):
        G_exact = sp.Matrix([[sp.Rational(str(v)) if isinstance(v, Fraction) else sp.nsimplify(v)
                              for v in row] for row in (raw.tolist() if hasattr(raw, "tolist") else raw)])
        G = np.array(G_exact.tolist(), dtype=float)
    else:
        G = np.asarray(raw, dtype=float)
    if not np.all(np.isfinite(G)):
        raise ValueError("generator entries must be finite numbers")
    if G.ndim != 2 or G.shape[0] < 1 or G.shape[1] < G.shape[0]:
        raise ValueError(f"generator must be a K x N matrix with 1 <= K <= N, got shape {np.shape(G)}")
    K, d = G.shape
    if m not in (None, 0) and m != K:
        raise ValueError(f"comm = {m} does not match the generator's dimension K = {K} (its number of rows)")
    D = min_distance(G_exact if G_exact is not None else G)
    if s > D - 1:
        raise ValueError(f"stragglers = {s} is too many for the supplied [{d}, {K}, {D}] generator: its minimum "
                         f"distance {D} tolerates at most {D - 1} stragglers")
    return G, G_exact, D


def _group_matrices(G: np.ndarray, G_exact, n: int):
    """``(order, B (n, n m), B_exact or None)``: worker ``t`` of group ``q`` computes the ``d`` parts of block
    ``q`` (starting at its own) and sends column ``t`` of ``G`` applied to the pieces of their sum."""
    m, d = G.shape
    order = []
    B = np.zeros((n, n * m))
    for w in range(n):
        q, t = divmod(w, d)
        parts = [q * d + (t + i) % d for i in range(d)]
        order.append(tuple(parts))
        for j in parts:
            B[w, j * m:(j + 1) * m] = G[:, t]
    if G_exact is None:
        return order, B, None
    sp = load_sympy()
    B_exact = sp.zeros(n, n * m)
    for w in range(n):
        q, t = divmod(w, d)
        for j in range(q * d, (q + 1) * d):
            for u in range(m):
                B_exact[w, j * m + u] = G_exact[u, t]
    return order, B, B_exact


def _kadhe_rule(G: np.ndarray, n_groups: int, m: int, known_classes=None):
    """Threshold rule when the simple matroid of ``G``'s columns is uniform (any ``m`` distinct column classes
    have rank ``m``: MDS and repetition codes), else a :class:`BasesRule` over every full-rank ``m``-set.

    ``known_classes`` (``(d,)``) skips the check for the shipped generators, whose structure is known (the
    Gaussian one is MDS with probability 1; its exact mode checks every ``m x m`` minor)."""
    d = G.shape[1]
    if known_classes is not None:
        cls, uniform = np.asarray(known_classes, dtype=np.int64), True
        n_cls = int(cls.max()) + 1
    else:
        cls = parallel_classes(G)
        n_cls = int(cls.max()) + 1
        reps = [int(np.flatnonzero(cls == c)[0]) for c in range(n_cls)]
        uniform = n_cls >= m and all(np.any(G[:, r]) for r in reps) and all(
            numeric_rank(G[:, list(c)]) == m for c in combinations(reps, m))
    if uniform:
        msg_class = np.concatenate([cls + q * n_cls for q in range(n_groups)])
        class_cluster = np.repeat(np.arange(n_groups), n_cls)
        return ThresholdRule(msg_class, class_cluster, np.full(n_groups, m))
    local = [c for c in combinations(range(d), m) if numeric_rank(G[:, list(c)]) == m]
    if not local:
        raise ValueError("generator columns never reach rank m")  # pragma: no cover - full row rank checked
    local = np.array(local, dtype=np.int64)
    return BasesRule(np.repeat(np.arange(n_groups), d), [local + q * d for q in range(n_groups)])


# ---------------------------------------------------------------------------------------------- trade-off
#: Generator of the binary ``[7, 4]`` Hamming code in systematic form (used over the reals in the examples).
HAMMING_7_4 = np.array([[1, 0, 0, 0, 1, 1, 0], [0, 1, 0, 0, 1, 0, 1], [0, 0, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]])

#: The constructions of :func:`tradeoff` and the family each belongs to.
TRADEOFF_CODES = {"ye-abbe": "MDS", "kadhe gaussian": "MDS", "kadhe repetition": "repetition"}


def tradeoff(ss, ms, seed=0):
    """The ``(d, s, m)`` trade-off read off the codes themselves: for every ``s`` and ``m``, Ye-Abbe's code and
    Kadhe et al.'s Gaussian and repetition codes on the fewest workers they accept (one group of ``d``).

    Returns:
        ``pandas.DataFrame`` with ``s, m, construction, family, load d`` (``code.load``), ``message size``
        (``code.size``, gradients) and ``tolerated`` (``code.stragglers``), one row per (s, m, construction).
    """
    import pandas as pd

    rows = []
    for s in ss:
        for m in ms:
            codes = {"ye-abbe": ye_abbe(s + m, s, m), "kadhe gaussian": kadhe(s + m, s, m, "gaussian", seed),
                     "kadhe repetition": kadhe(m * (s + 1), s, m, "repetition")}
            rows += [{"s": s, "m": m, "construction": k, "family": TRADEOFF_CODES[k], "load d": c.load,
                      "message size": float(c.size[0]), "tolerated": c.stragglers} for k, c in codes.items()]
    return pd.DataFrame(rows)


def generator_report(G, workers: int | None = None) -> dict:
    """What a user generator ``G`` (``K x N``) gives in Kadhe et al.'s framework.

    Returns:
        dict with ``N, K, D`` (minimum distance over the reals, :func:`min_distance`), ``stragglers``
        (``D - 1``, tolerated), ``mds_load`` (the load ``D - 1 + K`` an MDS code needs for the same ``s`` and
        ``m``), ``refused`` (True when :func:`kadhe` raises ``ValueError`` for ``D`` stragglers on ``workers``
        workers, default ``N``) and ``refusal`` (its message).
    """
    K, N = np.shape(G)
    D = min_distance(G)
    try:
        kadhe(N if workers is None else workers, D, None, G)
        refused, refusal = False, ""
    except ValueError as e:
        refused, refusal = True, str(e)
    return {"N": int(N), "K": int(K), "D": int(D), "stragglers": int(D - 1), "mds_load": int(D - 1 + K),
            "refused": refused, "refusal": refusal}
