"""Approximate gradient codes: the load is too small to recover the gradient exactly, the decode is a best effort.

* :func:`expander`: Raviv, Tamo, Tandon and Dimakis, "Gradient Coding from Cyclic MDS Codes and Expander Graphs"
  (ICML 2018, arXiv 1707.03858). ``n`` workers, ``n`` parts; worker ``i`` computes the parts adjacent to vertex
  ``i`` of a ``d``-regular graph (a random one by default, :func:`random_regular_graph`) and sends their sum
  scaled by ``1 / d`` (``B = adjacency / d``). Two decoders:

  - ``"optimal"``: least squares, the coefficients ``a`` over the received rows minimizing
    ``||a B_R - 1||_2`` (analysed by Glasgow and Wootters, "Approximate Gradient Coding with Optimal Decoding",
    IEEE JSAIT 2021, arXiv 2006.09638);
  - ``"fixed"``: every received message weighted by ``n / |R|`` (``n / (n - s)`` for a master that waits for the
    ``n - s`` fastest), which makes the estimate unbiased over uniformly random straggler sets.

* :func:`stochastic`: stochastic gradient coding, our reconstruction of Bitar, Wootters and El Rouayheb,
  "Stochastic Gradient Coding for Straggler Mitigation in Distributed Learning" (IEEE JSAIT 2020, arXiv
  1905.05383) from its abstract: every part is given to ``d`` workers (a random ``d``-regular bipartite
  assignment, :func:`random_assignment`), every worker sends the plain sum of its parts, and the master, with
  workers straggling independently with probability ``p``, adds the received messages scaled by
  ``1 / (d (1 - p))``: unbiased, whatever the number received.

"Ignore stragglers" (:func:`gclib.codes.repetition.ignore_stragglers`) is the approximate code of load 1.

Every code here has ``exact=False`` and the threshold rule ``n - s`` (the master waits for the ``n - s`` fastest
workers); :func:`decoding_error` measures what a decode misses, :func:`spectral_bound` and
:func:`uncovered_bound` bound it.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Optional

import numpy as np

from gclib import checks
from gclib.codes.base import Decoder, DecodingError, GradientCode, check_ns, reserve_code
from gclib.codes.rules import threshold

#: The decoders of :func:`expander`.
DECODERS = ("optimal", "fixed")
#: Double-edge swaps per edge of the randomizing walk of :func:`random_regular_graph` and
#: :func:`random_assignment` (a common rule of thumb for the swap chain, whose mixing time is not known in general;
#: the tests check that the graphs are regular, simple, seeded and differ between seeds, and notebook 13 that their
#: spectra match the authors' random graphs).
SWAPS_PER_EDGE = 10


@dataclass(frozen=True)
class ScaledSum(Decoder):
    """Decode by adding the received messages, each weighted by ``weight`` (``None``: ``n / |R|``, the rescaling
    of the fixed decoder of Raviv et al. and of ignore-stragglers).

    Every message received counts (``counts_copies``): two workers that happen to hold the same parts add their
    messages twice.

    Attributes:
        weight: the fixed coefficient of every received message, or ``None`` for ``n_workers / len(received)``.
    """

    weight: Optional[float] = None
    counts_copies = True

    def __call__(self, code: GradientCode, idx: np.ndarray) -> np.ndarray:
        if idx.size == 0:
            raise DecodingError(f"no messages received for code '{code.name}'")
        w = code.n_workers / idx.size if self.weight is None else self.weight
        return np.full((1, idx.size), float(w))


def _swap_walk(edges: np.ndarray, rng: np.random.Generator, *, bipartite: bool) -> np.ndarray:
    """Randomize a simple regular (bipartite) graph by double-edge swaps that keep every degree and keep the graph
    simple: edges ``(a, b), (c, e)`` become ``(a, e), (c, b)``. ``edges``: ``(m, 2)``; for a graph (not
    bipartite) every edge is stored once, as ``(u, v)`` with ``u != v``."""
    edges = edges.copy()
    m = len(edges)
    key = (lambda u, v: (u, v)) if bipartite else (lambda u, v: (min(u, v), max(u, v)))
    present = {key(int(u), int(v)) for u, v in edges}
    for _ in range(SWAPS_PER_EDGE * m):
        i, j = rng.integers(0, m, size=2)
        if i == j:
            continue
        (a, b), (c, e) = edges[i], edges[j]
        if not bipartite and rng.random() < 0.5:  # an undirected edge may be read either way
            c, e = e, c
        if not bipartite and (a == e or c == b):  # no loops
            continue
        new1, new2 = key(int(a), int(e)), key(int(c), int(b))
        if new1 == new2 or new1 in present or new2 in present:
            continue
        present.discard(key(int(a), int(b)))
        present.discard(key(int(c), int(e)))
        present.update((new1, new2))
        edges[i], edges[j] = (a, e), (c, b)
    return edges


def _check_degree(n: int, d) -> int:
    d = checks.integer("degree", d, low=1)
    if d >= n:
        raise ValueError(f"degree must be at most workers - 1 = {n - 1}, got {d}")
    return d


def random_regular_graph(n: int, d: int, seed=0) -> np.ndarray:
    """The adjacency matrix of a random simple ``d``-regular graph on ``n`` vertices.

    Start from the circulant graph (vertex ``i`` adjacent to ``i +- 1, ..., i +- d // 2``, and to ``i + n / 2``
    when ``d`` is odd) and walk ``SWAPS_PER_EDGE`` double-edge swaps per edge, each keeping every degree and the
    graph simple (the swap chain of random regular graphs).

    Args:
        n: vertices (``n d`` even). d: degree, ``1 <= d < n``. seed: seed or ``numpy.random.Generator``.
    Returns:
        ``(n, n)`` symmetric 0/1 float array, zero diagonal, every row summing to ``d``.
    """
    n, _ = check_ns(n, 0)
    d = _check_degree(n, d)
    if (n * d) % 2:
        raise ValueError(f"degree times workers must be even for a regular graph: degree = {d} with {n} workers; "
                         f"choose an even degree or an even number of workers")
    rng = checks.generator(seed, "seed")
    edges = [(i, (i + t) % n) for i in range(n) for t in range(1, d // 2 + 1)]
    if d % 2:
        edges += [(i, i + n // 2) for i in range(n // 2)]
    edges = _swap_walk(np.array(edges, dtype=np.int64), rng, bipartite=False)
    adj = np.zeros((n, n))
    adj[edges[:, 0], edges[:, 1]] = 1.0
    adj[edges[:, 1], edges[:, 0]] = 1.0
    return adj


def random_assignment(n: int, d: int, seed=0) -> np.ndarray:
    """A random ``d``-regular bipartite assignment of ``n`` parts to ``n`` workers: every worker holds ``d``
    distinct parts and every part is held by ``d`` workers.

    Start from the cyclic assignment (worker ``i`` holds parts ``i, ..., i + d - 1`` mod ``n``) and walk
    ``SWAPS_PER_EDGE`` double-edge swaps per edge that keep every degree and every worker's parts distinct.

    Returns:
        ``(n, n)`` 0/1 float array (rows: workers, columns: parts), every row and column summing to ``d``.
    """
    n, _ = check_ns(n, 0)
    d = checks.integer("degree", d, low=1, high=n)
    rng = checks.generator(seed, "seed")
    edges = np.array([(i, (i + t) % n) for i in range(n) for t in range(d)], dtype=np.int64)
    edges = _swap_walk(edges, rng, bipartite=True)
    M = np.zeros((n, n))
    M[edges[:, 0], edges[:, 1]] = 1.0
    return M


def second_eigenvalue(adj: np.ndarray) -> float:
    """``lambda``: the largest absolute eigenvalue of a symmetric regular adjacency matrix after its trivial one
    (``d``, eigenvector all-ones)."""
    ev = np.sort(np.abs(np.linalg.eigvalsh(np.asarray(adj, dtype=float))))
    return float(ev[-2]) if ev.size > 1 else 0.0


def _rows_code(name, B, s, decoder, params) -> GradientCode:
    n = B.shape[0]
    order = [tuple(np.flatnonzero(B[i]).tolist()) for i in range(n)]
    return GradientCode(name=name, n_workers=n, n_parts=n, order=order, B=B, sender=np.arange(n),
                        ready=np.array([len(o) for o in order]), rule=threshold(n, n - s), stragglers=s,
                        exact=False, decoder=decoder, params=params)


def expander(n: int, s: int, d: int = 3, decoder: str = "optimal", seed=0, *, adjacency=None) -> GradientCode:
    """Raviv et al.'s expander-graph approximate gradient code (see the module docstring).

    Args:
        n: workers (= parts). s: stragglers the master does not wait for (it waits for ``n - s``), ``0 <= s < n``.
        d: degree of the graph (the computation load), ``1 <= d < n``, ``n d`` even.
        decoder: ``"optimal"`` (least squares) or ``"fixed"`` (weight ``n / |R|``).
        seed: seed or ``numpy.random.Generator`` of the random regular graph.
        adjacency: a given ``(n, n)`` symmetric 0/1 ``d``-regular adjacency matrix instead of a random graph
            (e.g. a Margulis or a Ramanujan graph).
    """
    n, s = check_ns(n, s)
    d = _check_degree(n, d)
    checks.choice("decoder", decoder, DECODERS)
    reserve_code("expander", n, n, workers=n, load=d, sizes=f"workers = {n}", lower="workers")
    if adjacency is None:
        adj = random_regular_graph(n, d, seed)
    else:
        adj = checks.finite_array("adjacency", adjacency, ndim=2, complex_ok=False)
        ok = (adj.shape == (n, n) and np.isin(adj, (0.0, 1.0)).all() and np.array_equal(adj, adj.T)
              and not np.diag(adj).any() and np.all(adj.sum(axis=1) == d))
        if not ok:
            raise ValueError(f"adjacency must be a symmetric 0/1 ({n}, {n}) matrix with a zero diagonal and every "
                             f"row summing to degree = {d}")
    dec = Decoder() if decoder == "optimal" else ScaledSum()
    return _rows_code("expander", adj / d, s, dec,
                      {"n": n, "s": s, "d": d, "decoder": decoder,
                       "seed": seed if not isinstance(seed, np.random.Generator) and adjacency is None else None})


def stochastic(n: int, s: int, d: int = 3, seed=0, *, p: Optional[float] = None) -> GradientCode:
    """Stochastic gradient coding (our reconstruction of Bitar et al., see the module docstring).

    Args:
        n: workers (= parts). s: stragglers the master does not wait for (its threshold is ``n - s``).
        d: workers per part and parts per worker, ``1 <= d <= n``. seed: seed of the random assignment.
        p: the probability with which a worker straggles, in ``[0, 1)``; the decoder weights every received
            message by ``1 / (d (1 - p))``. Default ``s / n``, the fraction the master does not wait for.
    """
    n, s = check_ns(n, s)
    d = checks.integer("degree", d, low=1, high=n)
    p = s / n if p is None else checks.real("p", p, low=0, below=1)
    reserve_code("stochastic", n, n, workers=n, load=d, sizes=f"workers = {n}", lower="workers")
    M = random_assignment(n, d, seed)
    return _rows_code("stochastic", M, s, ScaledSum(1.0 / (d * (1.0 - p))),
                      {"n": n, "s": s, "d": d, "p": p,
                       "seed": seed if not isinstance(seed, np.random.Generator) else None})


# ------------------------------------------------------------------------------------------------ errors
def decoding_error(code: GradientCode, received) -> float:
    """``||A B_R - target||_2`` (Frobenius over the pieces) of the code's own decode of ``received``; ``sqrt(n
    pieces)``-scale, 0 for an exact decode. A set the decoder refuses, or an empty one, misses the whole target:
    ``||target||``."""
    idx = code._check_received(received)
    T = code.target
    A = code.try_decode(idx) if idx.size else None
    if A is None:
        return float(np.linalg.norm(T))
    return float(np.linalg.norm(A @ code.B[idx] - T))


def straggler_errors(code: GradientCode, stragglers: np.ndarray) -> np.ndarray:
    """``(trials,)`` :func:`decoding_error` when the workers marked in each row of ``stragglers`` (``(trials,
    n_workers)`` bool) straggle and every other worker's messages are received."""
    stragglers = np.asarray(stragglers, dtype=bool)
    if stragglers.ndim != 2 or stragglers.shape[1] != code.n_workers:
        raise ValueError(f"stragglers must be a (trials, {code.n_workers}) bool mask, got shape {stragglers.shape}")
    return np.array([decoding_error(code, code.surviving(np.flatnonzero(row))) for row in stragglers])


def uniform_stragglers(n: int, s: int, trials: int, rng) -> np.ndarray:
    """``(trials, n)`` bool: ``s`` distinct stragglers per trial, uniformly at random."""
    n, s = check_ns(n, s)
    rng = checks.generator(rng, "seed")
    keys = rng.random((checks.integer("trials", trials, low=1), n))
    out = np.zeros((trials, n), dtype=bool)
    if s:
        np.put_along_axis(out, np.argpartition(keys, s - 1, axis=1)[:, :s], True, axis=1)
    return out


def spectral_bound(adjacency: np.ndarray, s: int) -> float:
    """Raviv et al.'s bound on the fixed decoder's error for every set of ``s`` stragglers of the expander code on
    this ``d``-regular graph: ``(lambda / d) sqrt(n s / (n - s))``, ``lambda`` of :func:`second_eigenvalue`.

    Why: with ``1_F = ((n - s) / n) 1 + v``, ``v`` orthogonal to ``1`` and ``||v||^2 = s (n - s) / n``, the error is
    ``(n / ((n - s) d)) adj v``, of norm at most ``(n / ((n - s) d)) lambda ||v||``; the optimal decoder does at
    least as well."""
    adj = np.asarray(adjacency, dtype=float)
    n = adj.shape[0]
    n, s = check_ns(n, s)
    d = float(adj[0].sum())
    return second_eigenvalue(adj) / d * float(np.sqrt(n * s / (n - s)))


def uncovered_bound(code: GradientCode, s: int) -> tuple[float, tuple]:
    """A worst-case lower bound for any decoder: stragglers chosen greedily to leave whole parts uncovered (all
    the workers of a part, then of the part sharing most workers with the ones chosen), so that no decode can
    contain those parts. Returns ``(sqrt(parts left uncovered), straggler set)``: some set of ``s`` stragglers has
    error at least that much for every decoder (the error on an uncovered part is 1)."""
    n, s = check_ns(code.n_workers, s)
    holders = [set(np.flatnonzero(np.abs(code.B[:, j]) > 0).tolist()) for j in range(code.n_parts)]
    chosen: set = set()
    while True:
        options = [h - chosen for h in holders if h - chosen and len(chosen | h) <= s]
        if not options:
            break
        chosen |= min(options, key=len)
    uncovered = sum(1 for h in holders if h <= chosen)
    return float(np.sqrt(uncovered)), tuple(sorted(chosen))


@dataclass(frozen=True)
class ErrorReport:
    """What ``gclib verify`` says of an approximate code: its decoding error over every pattern checked.

    Attributes:
        name: the code's name. checked: patterns checked. kind: ``"stragglers"`` (sets of straggling workers) or
        ``"messages"`` (sets of received messages). mean, worst: ``||A B_R - target||_2`` over them. worst_pattern:
        a pattern with the worst error. norm: ``||target||``, the error of receiving nothing.
    """

    name: str
    checked: int
    kind: str
    mean: float
    worst: float
    worst_pattern: tuple
    norm: float

    def message(self) -> str:
        what = "straggler patterns" if self.kind == "stragglers" else "received message sets"
        label = "stragglers" if self.kind == "stragglers" else "messages"
        return (f"{self.name}: approximate code, no exact decoding; {self.checked} {what} checked: decoding "
                f"error ||a B_R - 1||_2 mean {self.mean:.4g}, worst {self.worst:.4g} ({label} "
                f"{list(self.worst_pattern)}), out of ||1||_2 = {self.norm:.4g}")


def error_report(code: GradientCode, *, stragglers: Optional[int] = None,
                 messages: Optional[int] = None) -> ErrorReport:
    """:func:`decoding_error` of ``code`` over every set of ``stragglers`` straggling workers (default the code's
    ``s``; the others' messages are received), or with ``messages=t`` over every set of ``t`` received messages:
    what ``gclib verify`` says of an approximate code. :func:`gclib.symbolic.patterns_to_check` counts the
    patterns first (and refuses too many)."""
    if messages is not None:
        kind, pats = "messages", combinations(range(code.n_messages), checks.integer("messages", messages, low=1))
    else:
        s = code.stragglers if stragglers is None else stragglers
        kind, pats = "stragglers", combinations(range(code.n_workers), checks.integer("stragglers", s, low=0))
    errs, worst, worst_pat = [], -1.0, ()
    for pat in pats:
        rows = code.surviving(pat) if kind == "stragglers" else np.array(pat, dtype=np.int64)
        e = decoding_error(code, rows)
        errs.append(e)
        if e > worst:
            worst, worst_pat = e, tuple(int(x) for x in pat)
    return ErrorReport(code.name, len(errs), kind, float(np.mean(errs)) if errs else float("nan"), float(worst),
                       worst_pat, float(np.linalg.norm(code.target)))
