"""Lagrange coded computing (LCC; Yu et al., AISTATS 2019) for the linear-regression gradient, as in polynomially
coded regression (Li et al., arXiv 1805.09934), the "LCC" baseline of the GC-MMC paper.

The data ``X`` ``(rows, d)`` is cut into ``k`` row blocks ``X_j``. With distinct interpolation nodes
``beta_0 .. beta_{k-1}`` and worker points ``alpha_0 .. alpha_{N-1}``, the encoder forms the polynomial
``u(z) = sum_j X_j l_j(z)`` (``l_j`` the Lagrange basis on the betas) and gives worker ``i`` the coded block
``u(alpha_i)``. Worker ``i`` returns ``f(u(alpha_i)) = u(alpha_i)^T u(alpha_i) w``: ``f`` has degree 2, so
``f(u(z))`` has degree ``2(k-1)`` and any ``2(k-1) + 1`` results determine it. The decoder interpolates and
evaluates at the betas, ``sum_j f(u(beta_j)) = sum_j X_j^T X_j w = X^T X w``, and subtracts ``X^T y``
(computed once) to get the gradient ``X^T (X w - y)`` of ``(1/2) ||X w - y||^2``.

LCC does not fit :class:`~gclib.codes.base.GradientCode` (workers compute on coded data, and the result is not a
linear combination of partial gradients). :func:`lcc_code` gives the simulator what it needs: one message per
worker (its coded result), ready after the worker has done the work of one coded block (``K / k`` mini-batches,
i.e. ``r`` when ``r`` divides ``K``), and a threshold rule of ``2(k-1) + 1`` messages. Its ``B`` is only a
computation footprint (each row marks the mini-batches whose cost the coded block stands for); it is not a
decoding matrix, the code is flagged ``exact=False`` and its decoder refuses: decode real data with
:class:`LCCRegression`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gclib import checks
from gclib.codes.base import DecodingError, GradientCode, _as_ids, reserve_code
from gclib.codes.rules import threshold
from gclib.codes.repetition import cyclic_support


def chebyshev(n: int, half_width: float = 1.0) -> np.ndarray:
    """``(n,)`` Chebyshev nodes of the first kind on ``[-half_width, half_width]``."""
    return half_width * np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))


def lagrange_basis(nodes: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``L[i, j] = l_j(z_i)``: ``(len(z), len(nodes))``, ``l_j`` the Lagrange basis polynomial of ``nodes``."""
    nodes = np.asarray(nodes, dtype=float)
    z = np.atleast_1d(np.asarray(z, dtype=float))
    n = nodes.size
    L = np.ones((z.size, n))
    for j in range(n):
        for t in range(n):
            if t != j:
                L[:, j] *= (z - nodes[t]) / (nodes[j] - nodes[t])
    return L


def lcc_threshold(k: int, degree: int = 2) -> int:
    """Results LCC needs for a polynomial of the given degree over ``k`` blocks: ``(k - 1) degree + 1``."""
    return (k - 1) * degree + 1


@dataclass
class LCCRegression:
    """LCC for the least-squares gradient ``X^T (X w - y)``.

    Args:
        X: ``(rows, d)`` data. y: ``(rows,)`` labels. n_workers: ``N``. k: number of data blocks.
        alphas: ``(N,)`` worker points (default Chebyshev on ``[-1, 1]``). betas: ``(k,)`` nodes (default
            Chebyshev on ``[-0.5, 0.5]``).
    Attributes (after construction):
        blocks: ``(k, b, d)`` the row blocks (zero rows pad the last one). coded: ``(N, b, d)`` encoded blocks.
    """

    X: np.ndarray
    y: np.ndarray
    n_workers: int
    k: int
    alphas: np.ndarray | None = None
    betas: np.ndarray | None = None

    def __post_init__(self):
        X = np.asarray(self.X, dtype=float)
        y = np.asarray(self.y, dtype=float).ravel()
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"X must be (rows, d) and y (rows,), got {X.shape} and {y.shape}")
        if not isinstance(self.k, (int, np.integer)) or not 1 <= self.k <= X.shape[0]:
            raise ValueError(f"k (data blocks) must be an integer in [1, {X.shape[0]}], got {self.k!r}")
        R = lcc_threshold(self.k)
        if not isinstance(self.n_workers, (int, np.integer)) or self.n_workers < R:
            raise ValueError(f"workers must be an integer >= 2(k-1)+1 = {R} for k = {self.k}, got {self.n_workers!r}")
        self.alphas = chebyshev(self.n_workers) if self.alphas is None else np.asarray(self.alphas, float)
        self.betas = chebyshev(self.k, 0.5) if self.betas is None else np.asarray(self.betas, float)
        if self.alphas.shape != (self.n_workers,) or np.unique(self.alphas).size != self.n_workers:
            raise ValueError(f"alphas must be {self.n_workers} distinct numbers")
        if self.betas.shape != (self.k,) or np.unique(self.betas).size != self.k:
            raise ValueError(f"betas must be {self.k} distinct numbers")
        b = -(-X.shape[0] // self.k)
        pad = b * self.k - X.shape[0]
        Xp = np.vstack([X, np.zeros((pad, X.shape[1]))]) if pad else X
        self.X, self.y = X, y
        self.blocks = Xp.reshape(self.k, b, X.shape[1])
        self.coded = np.einsum("ij,jbd->ibd", lagrange_basis(self.betas, self.alphas), self.blocks)
        self.Xty = X.T @ y

    @property
    def threshold(self) -> int:
        return lcc_threshold(self.k)

    def worker_result(self, i: int, w: np.ndarray) -> np.ndarray:
        """``(d,)``: worker ``i``'s result ``u(alpha_i)^T u(alpha_i) w``."""
        C = self.coded[i]
        return C.T @ (C @ w)

    def results(self, w: np.ndarray) -> np.ndarray:
        """``(N, d)``: every worker's result."""
        return np.einsum("ibd,ibe,e->id", self.coded, self.coded, w)

    def decode(self, workers, results: np.ndarray) -> np.ndarray:
        """The gradient ``X^T (X w - y)`` ``(d,)`` from the results ``(len(workers), d)`` of the given workers.

        Uses the first ``2(k-1)+1`` of them. Raises DecodingError with fewer.
        """
        workers = _as_ids(np.asarray(workers), "workers", "worker ids")
        results = np.asarray(results, dtype=float)
        R = self.threshold
        if workers.size and (workers.min() < 0 or workers.max() >= self.n_workers):
            raise ValueError(f"workers must lie in [0, {self.n_workers}), got {workers.tolist()}")
        if results.shape != (workers.size, self.X.shape[1]):
            raise ValueError(f"results must have shape (len(workers), d) = ({workers.size}, {self.X.shape[1]}), "
                             f"got {results.shape}")
        if workers.size < R:
            raise DecodingError(f"LCC with k = {self.k} needs {R} results, got {workers.size}")
        if np.unique(workers).size != workers.size:
            raise ValueError("workers must be distinct")
        use = slice(0, R)
        # sum_j p(beta_j) for p of degree R-1 through (alpha_F, results): weights sum_j l^F_i(beta_j).
        weights = lagrange_basis(self.alphas[workers[use]], self.betas).sum(axis=0)
        return weights @ results[use] - self.Xty

    def gradient(self, w: np.ndarray) -> np.ndarray:
        """Uncoded reference ``X^T (X w - y)``."""
        return self.X.T @ (self.X @ w - self.y)


def _refuse(code, idx):
    raise DecodingError("the LCC simulator code carries no decoding matrix; decode real data with "
                        "gclib.codes.lcc.LCCRegression")


def lcc_code(K: int, r: int) -> GradientCode:
    """Simulator stand-in for LCC on ``K`` workers with computation load ``r`` (see the module docstring).

    ``k = ceil(K / r)`` blocks; each worker's coded block costs ``ceil(K / k)`` mini-batch computations (``r``
    when ``r | K``); the iteration completes when ``2(k-1)+1`` results have arrived.
    """
    K = checks.integer("workers", K, low=1)
    r = checks.integer("load", r, low=1, high=K)
    k = -(-K // r)
    R = lcc_threshold(k)
    if R > K:
        raise ValueError(f"LCC with load r = {r} needs 2 ceil(K/r) - 1 = {R} results but has only {K} workers; "
                         f"use a load of at least {-(-K // ((K + 1) // 2))}")
    work = -(-K // k)
    reserve_code("lcc", K, K, workers=K, load=work, sizes=f"workers = {K}", lower="workers")
    order = cyclic_support(K, work - 1)
    B = np.zeros((K, K))
    for w, o in enumerate(order):
        B[w, list(o)] = 1.0
    return GradientCode(name="lcc", n_workers=K, n_parts=K, order=order, B=B, sender=np.arange(K),
                        ready=np.full(K, work), rule=threshold(K, R), stragglers=K - R, exact=False,
                        decoder=_refuse, params={"K": K, "r": r, "blocks": k, "threshold": R, "work": work,
                                                 "note": "B is a computation footprint, not a decoding matrix"})
