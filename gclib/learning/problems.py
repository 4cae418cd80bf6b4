"""Learning problems split into parts exactly as the codes expect.

A :class:`Problem` is a smooth objective ``F(theta) = sum_j f_j(theta)`` over ``k`` data parts, with

* linear regression: ``f_j = ||X_j theta - y_j||^2 / (2N) + reg ||theta||^2 / (2k)``;
* logistic regression (labels +-1): ``f_j = sum_{i in part j} log(1 + exp(-y_i x_i theta)) / N
  + reg ||theta||^2 / (2k)``,

so that the full gradient is the plain sum of the partial gradients (what every gradient code decodes) and ``F``
is the usual mean loss plus ``reg / 2 ||theta||^2``. ``optimum()`` gives the minimizer (closed form for linear
regression, Newton's method to machine precision for logistic regression), so the optimality gap is known.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from gclib.learning.sigmoid import expect, expit, log_expit

from gclib import checks
from gclib.learning.model import Model


def split_parts(n_samples: int, k: int) -> list[np.ndarray]:
    """``k`` contiguous index blocks of sizes differing by at most one (no sample is dropped)."""
    k = checks.integer("parts", k, low=1)
    if k > n_samples:
        raise ValueError(f"parts = {k} exceeds the {n_samples} samples")
    bounds = np.linspace(0, n_samples, k + 1).round().astype(int)
    return [np.arange(bounds[j], bounds[j + 1]) for j in range(k)]


def average_ranks(x: np.ndarray) -> np.ndarray:
    """``(n,)`` the 1-based ranks of ``x`` ``(n,)``, tied values sharing the mean of their ranks (what
    ``scipy.stats.rankdata`` gives by default, without importing ``scipy.stats``, which takes a second or two: every
    run's master and the launching process compute a test AUC)."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))  # first place of each run of ties
    ends = np.append(starts[1:], x.size)
    out = np.empty(x.size)
    out[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)  # the mean of ranks starts + 1 .. ends
    return out


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney statistic, ties counted one half); labels are +-1 or 0/1; ``nan``
    for scores with a ``nan``, or labels of one class only."""
    scores = np.asarray(scores, dtype=float)
    pos = np.asarray(labels) > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0 or np.isnan(scores).any():
        return float("nan")
    ranks = average_ranks(scores)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _top_gram_eig(X: np.ndarray, scale: float = 1.0) -> float:
    """``lambda_max(X^T X / scale)`` for ``X`` of shape ``(n, d)``, from the smaller of the two Gram matrices
    (``d x d`` or ``n x n``: they share their nonzero eigenvalues), so a wide ``X`` stays cheap."""
    n, d = X.shape
    G = X.T @ X if d <= n else X @ X.T
    return float(np.linalg.eigvalsh(G / scale)[-1])


@dataclass(eq=False)
class Problem(Model):
    """A regression or classification problem over ``k`` parts: a :class:`gclib.learning.model.Model` whose
    parameters are the ``d`` regression coefficients (starting at zero), with a known optimum.

    Attributes:
        kind: ``"linreg"`` or ``"logistic"``.
        X: ``(N, d)`` training features. y: ``(N,)`` targets (+-1 labels for logistic).
        parts: ``k`` index arrays into the rows of ``X``.
        reg: L2 coefficient. X_test, y_test: optional held-out data.
    """

    name: str
    kind: str
    X: np.ndarray
    y: np.ndarray
    parts: list
    reg: float = 0.0
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in ("linreg", "logistic"):
            raise ValueError(f"kind must be 'linreg' or 'logistic', got {self.kind!r}")
        self.reg = checks.real("reg", self.reg, low=0)
        self.X = np.asarray(self.X, dtype=float)
        self.y = np.asarray(self.y, dtype=float)
        if self.kind == "logistic" and not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("logistic labels must be -1 or +1")

    # ------------------------------------------------------------------ sizes
    @property
    def n_parts(self) -> int:
        return len(self.parts)

    @property
    def dim(self) -> int:
        return self.X.shape[1]

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes of its data (training and test), which every MPI rank holds."""
        return sum(a.nbytes for a in (self.X, self.y, self.X_test, self.y_test) if a is not None)

    def with_parts(self, k: int) -> "Problem":
        """The same data re-split into ``k`` parts."""
        return Problem(self.name, self.kind, self.X, self.y, split_parts(self.n_samples, k), self.reg,
                       self.X_test, self.y_test, dict(self.info))

    # ------------------------------------------------------------------ loss and gradients
    def _part_grad(self, theta, idx):
        Xj = self.X[idx]
        z = Xj @ theta
        if self.kind == "linreg":
            r = z - self.y[idx]
        else:
            yj = self.y[idx]
            r = -yj * expit(-yj * z)
        return Xj.T @ r / self.n_samples + self.reg * theta / self.n_parts

    def partial_gradient(self, theta: np.ndarray, j: int) -> np.ndarray:
        """``(d,)`` gradient of ``f_j``."""
        return self._part_grad(theta, self.parts[j])

    def partial_gradients(self, theta: np.ndarray, which=None) -> np.ndarray:
        """``(k, d)`` (or ``(len(which), d)``) partial gradients."""
        which = range(self.n_parts) if which is None else which
        return np.stack([self.partial_gradient(theta, j) for j in which])

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """``(d,)`` full gradient (the sum of the partial gradients)."""
        z = self.X @ theta
        if self.kind == "linreg":
            r = z - self.y
        else:
            r = -self.y * expit(-self.y * z)
        return self.X.T @ r / self.n_samples + self.reg * theta

    def loss(self, theta: np.ndarray) -> float:
        """``F(theta)``."""
        z = self.X @ theta
        if self.kind == "linreg":
            data = 0.5 * np.mean((z - self.y) ** 2)
        else:
            data = -np.mean(log_expit(self.y * z))
        return float(data + 0.5 * self.reg * theta @ theta)

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """``(d, d)`` Hessian of ``F``."""
        if self.kind == "linreg":
            H = self.X.T @ self.X / self.n_samples
        else:
            p = expit(self.y * (self.X @ theta))
            H = (self.X * (p * (1 - p))[:, None]).T @ self.X / self.n_samples
        return H + self.reg * np.eye(self.dim)

    def prepare(self, iterations: int) -> None:
        """A logistic problem of many samples times ``iterations`` loads SciPy's logistic function now
        (:func:`gclib.learning.sigmoid.expect`)."""
        if self.kind == "logistic":
            n_test = 0 if self.X_test is None else len(self.X_test)
            expect(iterations * (self.n_samples + n_test))

    # ------------------------------------------------------------------ constants
    def part_smoothness(self) -> np.ndarray:
        """``(k,)`` smoothness constant ``L_j`` of each ``f_j``."""
        c = 1.0 if self.kind == "linreg" else 0.25
        out = []
        for idx in self.parts:
            top = _top_gram_eig(self.X[idx]) if len(idx) else 0.0
            out.append(c * top / self.n_samples + self.reg / self.n_parts)
        return np.array(out)

    @cached_property
    def smoothness(self) -> float:
        """Smoothness constant ``L`` of ``F`` (``c lambda_max(X^T X) / N + reg``, from the smaller Gram matrix)."""
        c = 1.0 if self.kind == "linreg" else 0.25
        return float(c * _top_gram_eig(self.X, self.n_samples) + self.reg)

    @cached_property
    def _optimum(self):
        d = self.dim
        if self.kind == "linreg":
            H = self.X.T @ self.X / self.n_samples + self.reg * np.eye(d)
            theta = np.linalg.lstsq(H, self.X.T @ self.y / self.n_samples, rcond=None)[0]
        else:
            theta = np.zeros(d)
            for _ in range(100):
                g = self.gradient(theta)
                if np.linalg.norm(g) < 1e-13:
                    break
                step = np.linalg.lstsq(self.hessian(theta), g, rcond=None)[0]
                t, f0 = 1.0, self.loss(theta)
                while self.loss(theta - t * step) > f0 - 0.25 * t * (g @ step) and t > 1e-12:
                    t *= 0.5
                theta = theta - t * step
        return theta, self.loss(theta)

    def optimum(self) -> tuple[np.ndarray, float]:
        """``(theta*, F(theta*))``."""
        return self._optimum

    def gap(self, theta: np.ndarray) -> float:
        """Optimality gap ``F(theta) - F*`` (clipped at 0 against round-off)."""
        return max(self.loss(theta) - self._optimum[1], 0.0)

    # ------------------------------------------------------------------ evaluation
    def test_metrics(self, theta: np.ndarray) -> dict:
        """Test loss and, for classification, test AUC (``nan`` without a test set)."""
        if self.X_test is None or len(self.X_test) == 0:
            return {"test_loss": float("nan"), "auc": float("nan")}
        z = self.X_test @ theta
        if self.kind == "linreg":
            return {"test_loss": float(0.5 * np.mean((z - self.y_test) ** 2)), "auc": float("nan")}
        return {"test_loss": float(-np.mean(log_expit(self.y_test * z))), "auc": auc(z, self.y_test)}


# ---------------------------------------------------------------------------------------------- data sets
def lag_synthetic_bytes(workers: int, dim: int) -> int:
    """The memory :func:`lag_synthetic` allocates at once: one ``dim x dim`` block per worker and their stack ``X``
    (``workers * dim`` rows), with the Gaussian matrix and its Q factor."""
    return 8 * dim * dim * (2 * int(workers) + 2)


def lag_synthetic(workers: int = 9, dim: int = 50, seed=0, reg: float = 0.0) -> Problem:
    """The heterogeneous linear regression of the LAG paper (Chen et al. 2018, their synthetic linear script).

    Worker ``m`` (1-based) holds ``X_m = 1.3^(m-1) q_m q_m^T + I`` (``dim x dim``), ``q_m`` the ``m``-th column of
    the Q factor of a Gaussian matrix, so the smoothness constants ``L_m = (1 + 1.3^(m-1))^2 / N`` are
    heterogeneous. The authors' targets are the first ``dim`` Body Fat responses, which no package here ships: we
    draw them standard normal from ``seed`` instead (a documented substitution; the L_m, which drive LAG's
    savings, are reproduced exactly). One part per worker.
    """
    workers, dim = checks.integer("workers", workers, low=1), checks.integer("dim", dim, low=1)
    checks.real("reg", reg, low=0)
    if workers > dim:
        raise ValueError(f"workers = {workers} must not exceed dim = {dim} (one Q column per worker)")
    checks.need_memory("lag-synthetic", lag_synthetic_bytes(workers, dim), sizes=f"workers = {workers} and dim = {dim}",
                       lower="workers or dim")
    rng = checks.generator(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    y0 = rng.standard_normal(dim)
    blocks = [1.3 ** m * np.outer(Q[:, m], Q[:, m]) + np.eye(dim) for m in range(workers)]
    X = np.vstack(blocks)
    y = np.tile(y0, workers)
    parts = [np.arange(m * dim, (m + 1) * dim) for m in range(workers)]
    return Problem("lag-synthetic", "linreg", X, y, parts, reg, info={"workers": workers, "dim": dim,
                                                                       "seed": seed})


#: The two feature designs of :func:`generic`.
DESIGNS = ("gaussian", "correlated")
#: The two losses of :func:`generic`.
KINDS = ("linreg", "logistic")


def _correlation_for(cond: float, dim: int) -> float:
    """The ``rho`` whose ``dim x dim`` correlation matrix ``rho^|i - j|`` has condition number ``cond`` (by
    bisection: the condition number rises with ``rho`` from 1 at ``rho = 0``)."""
    if cond <= 1 or dim < 2:
        return 0.0
    i = np.arange(dim)

    def kappa(rho):
        ev = np.linalg.eigvalsh(rho ** np.abs(i[:, None] - i[None, :]))
        return ev[-1] / ev[0]

    lo, hi = 0.0, 1.0 - 1e-12
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if kappa(mid) < cond else (lo, mid)
    return 0.5 * (lo + hi)


def generic(kind: str = "linreg", design: str = "gaussian", cond: float = 10.0, seed=0, *, samples: int = 600,
            dim: int = 20, parts: int = 12, noise: float = 0.1, reg: float | None = None) -> Problem:
    """A generic regression or classification problem, one of a family on which every scheme should converge.

    Features are ``x = L z`` with ``z`` standard normal and ``L L^T = C`` a covariance of condition number
    ``cond``: for ``design="gaussian"`` ``C = Q diag(1 .. cond, log-spaced) Q^T`` with ``Q`` a random rotation;
    for ``design="correlated"`` the correlation ``C_ij = rho^|i - j|`` (an AR(1) design) with ``rho`` chosen so
    that ``C`` has condition number ``cond``. ``theta* ~ N(0, I / dim)``; linear regression: ``y = x theta* +
    noise * N(0, 1)``; logistic regression: ``y = sign(x theta* + Logistic(0, 1))`` (labels +-1, never separable).

    Args:
        kind: one of :data:`KINDS`. design: one of :data:`DESIGNS`. cond: condition number of ``C``, at least 1.
        seed: seed of the data. samples, dim, parts: sizes (contiguous parts). noise: linear regression's noise.
        reg: L2 coefficient (default 0 for linear regression, ``1e-2`` for logistic regression, which keeps the
            logistic problem's own conditioning within a few times ``cond``).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {list(DESIGNS)}, got {design!r}")
    cond = checks.real("cond", cond, low=1)
    samples, dim = checks.integer("samples", samples, low=2), checks.integer("dim", dim, low=1)
    noise = checks.real("noise", noise, low=0)
    reg = (0.0 if kind == "linreg" else 1e-2) if reg is None else checks.real("reg", reg, low=0)
    checks.need_memory("generic problem", 8 * samples * dim * 3, sizes=f"samples = {samples}, dim = {dim}",
                       lower="samples or dim")
    rng = checks.generator(seed)
    if design == "gaussian":
        Q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
        C = (Q * np.logspace(0, np.log10(cond), dim)) @ Q.T
    else:
        i = np.arange(dim)
        C = _correlation_for(cond, dim) ** np.abs(i[:, None] - i[None, :])
    X = rng.standard_normal((samples, dim)) @ np.linalg.cholesky(C).T
    theta = rng.standard_normal(dim) / np.sqrt(dim)
    z = X @ theta
    if kind == "linreg":
        y = z + noise * rng.standard_normal(samples)
    else:
        y = np.where(z + rng.logistic(size=samples) > 0, 1.0, -1.0)
    name = f"{kind} {design} cond {cond:g} seed {seed}"
    return Problem(name, kind, X, y, split_parts(samples, parts), reg,
                   info={"kind": kind, "design": design, "cond": cond, "seed": seed})


def family(kinds=KINDS, designs=DESIGNS, conds=(1.0, 10.0, 100.0), seeds=(0, 1), **kw) -> list:
    """Every :func:`generic` problem of the grid ``kinds x designs x conds x seeds`` (``kw``: their sizes)."""
    return [generic(k, d, c, s, **kw) for k in kinds for d in designs for c in conds for s in seeds]


def tandon_logistic(n_samples: int = 5000, dim: int = 100, parts: int = 10, seed=0, reg: float | None = None,
                    test_fraction: float = 0.2) -> Problem:
    """Tandon et al.'s synthetic logistic data: ``beta* in {+-1}^d``; half the rows have mean
    ``+1.5/d beta*``, half ``-1.5/d beta*``, covariance ``(10/sqrt(d))^2 I``; labels ``2 Bernoulli(sigmoid(x
    beta*)) - 1``; a held-out test set of ``test_fraction``. Default ``reg = 1 / n_train`` as in their code."""
    n_samples, dim, parts = (checks.integer(k, v, low=1) for k, v in (("n_samples", n_samples), ("dim", dim),
                                                                      ("parts", parts)))
    test_fraction = checks.real("test_fraction", test_fraction, low=0, below=1)
    if reg is not None:
        checks.real("reg", reg, low=0)
    if parts > n_samples:
        raise ValueError(f"n_samples = {n_samples} must be at least parts = {parts} (one sample per part)")
    n_total = int(round(n_samples / (1 - test_fraction)))
    # X, a permuted copy, the product X @ beta and the train/test split: about three copies of X at once
    checks.need_memory("tandon-logistic", 3 * 8 * n_total * dim, sizes=f"n_samples = {n_samples} and dim = {dim}",
                       lower="n_samples (--samples) or dim (--dim)")
    rng = checks.generator(seed)
    beta = rng.choice([-1.0, 1.0], size=dim)
    sign = np.where(np.arange(n_total) < n_total // 2, 1.0, -1.0)
    X = sign[:, None] * (1.5 / dim) * beta + (10 / np.sqrt(dim)) * rng.standard_normal((n_total, dim))
    y = np.where(rng.random(n_total) < expit(X @ beta), 1.0, -1.0)
    perm = rng.permutation(n_total)
    X, y = X[perm], y[perm]
    n_train = n_samples
    reg = 1.0 / n_train if reg is None else reg
    return Problem("tandon-logistic", "logistic", X[:n_train], y[:n_train], split_parts(n_train, parts), reg,
                   X[n_train:], y[n_train:], info={"dim": dim, "seed": seed})


def breast_cancer(parts: int = 10, seed=0, reg: float = 1e-3, test_fraction: float = 0.2) -> Problem:
    """Wisconsin breast cancer (569 samples, 30 features; ships inside scikit-learn, nothing downloaded):
    standardized features plus an intercept, labels +-1, a seeded train/test split."""
    from sklearn.datasets import load_breast_cancer

    d = load_breast_cancer()
    return _real("breast-cancer", "logistic", d.data, np.where(d.target > 0, 1.0, -1.0), parts, seed, reg,
                 test_fraction)


def diabetes(parts: int = 10, seed=0, reg: float = 1e-3, test_fraction: float = 0.2) -> Problem:
    """Diabetes regression (442 samples, 10 features; ships inside scikit-learn): standardized features plus an
    intercept, standardized target."""
    from sklearn.datasets import load_diabetes

    d = load_diabetes()
    y = (d.target - d.target.mean()) / d.target.std()
    return _real("diabetes", "linreg", d.data, y, parts, seed, reg, test_fraction)


def _real(name, kind, X, y, parts, seed, reg, test_fraction):
    parts = checks.integer("parts", parts, low=1)
    test_fraction = checks.real("test_fraction", test_fraction, low=0, below=1)
    checks.real("reg", reg, low=0)
    rng = checks.generator(seed)
    perm = rng.permutation(len(y))
    X, y = X[perm], y[perm]
    n_test = int(round(test_fraction * len(y)))
    Xtr, ytr, Xte, yte = X[n_test:], y[n_test:], X[:n_test], y[:n_test]
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    Xtr = np.hstack([Xtr, np.ones((len(Xtr), 1))])
    Xte = np.hstack([Xte, np.ones((len(Xte), 1))])
    return Problem(name, kind, Xtr, ytr, split_parts(len(ytr), parts), reg, Xte, yte, info={"seed": seed})


DATASETS = {"lag-synthetic": lag_synthetic, "tandon-logistic": tandon_logistic, "breast-cancer": breast_cancer,
            "diabetes": diabetes}


def make_problem(name: str, parts: int, seed=0, **kw) -> Problem:
    """A data set by name, split into ``parts`` parts (``lag-synthetic`` has one part per worker and is re-split
    when ``parts`` differs)."""
    if name not in DATASETS:
        raise ValueError(f"problem must be one of {sorted(DATASETS)}, got {name!r}")
    parts = checks.integer("parts", parts, low=1)
    if name == "lag-synthetic":
        p = lag_synthetic(seed=seed, **kw)
        return p if p.n_parts == parts else p.with_parts(parts)
    return DATASETS[name](parts=parts, seed=seed, **kw)
