"""The shape every framework adapter shares (:mod:`gclib.learning.adapters`): a loss that is the mean of a per-row
loss over the ``N`` rows of a training set, split into contiguous parts (:class:`DataModel`), and the metrics of
held-out data.

Part ``j``'s loss is its rows' mean weighted by its share of the rows, ``f_j = n_j / N * mean_j``, so that the
partial gradients add up to the full-batch gradient, which :meth:`DataModel.gradient` computes in one pass over
every row.
"""
from __future__ import annotations

import numpy as np

from gclib import checks
from gclib.learning.model import Model


def accuracy(scores, labels) -> float:
    """The share of rows whose largest score (``scores`` ``(n, classes)``) is at the label (``labels`` ``(n,)``
    class indices); for one score per row (``(n,)`` or ``(n, 1)``), the share whose sign matches labels in {0, 1}
    or {-1, 1}."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).reshape(-1)
    if s.ndim == 2 and s.shape[1] > 1:
        return float(np.mean(np.argmax(s, axis=1) == y))
    return float(np.mean((s.reshape(-1) > 0) == (y > 0)))


class DataModel(Model):
    """A mean loss over the rows of a training set split into ``parts`` contiguous blocks of rows (sizes differing
    by at most one; see the module docstring). A
    subclass gives the mean loss and its gradient over a block of rows (:meth:`mean_loss`, :meth:`mean_gradient`,
    ``rows`` a ``slice``), its parameters' number and start (:attr:`dim`, :meth:`initial`), and the metrics of
    held-out data (:meth:`test_metrics`).

    Attributes:
        n_samples: ``N``, the training rows. slices: ``k`` slices of the rows, one per part. weights: ``(k,)``
            each part's share of the rows, ``n_j / N`` (they add up to 1).
    """

    def __init__(self, n_rows: int, parts: int, name: str):
        self.name = str(name)
        n = checks.integer("rows of X", n_rows, low=1)
        k = checks.integer("parts", parts, low=1, high=n, why=f" (at most one part per row of the {n} rows)")
        bounds = np.linspace(0, n, k + 1).round().astype(int)
        self.slices = [slice(int(bounds[j]), int(bounds[j + 1])) for j in range(k)]
        self.weights = np.diff(bounds) / n
        self._rows = n

    @property
    def n_parts(self) -> int:
        return len(self.slices)

    @property
    def n_samples(self) -> int:
        return self._rows

    def mean_loss(self, theta: np.ndarray, rows: slice) -> float:
        raise NotImplementedError

    def mean_gradient(self, theta: np.ndarray, rows: slice) -> np.ndarray:
        raise NotImplementedError

    def partial_gradient(self, theta, j):
        """``(dim,)`` the gradient of part ``j``'s share of the loss: its rows' mean gradient times ``n_j / N``."""
        return self.weights[j] * self.mean_gradient(theta, self.slices[j])

    def gradient(self, theta):
        """``(dim,)`` the full-batch gradient: the mean gradient over every row, in one pass."""
        return self.mean_gradient(theta, slice(0, self._rows))

    def loss(self, theta):
        """The mean loss over every training row."""
        return float(self.mean_loss(theta, slice(0, self._rows)))


def rows_match(name: str, X, y) -> int:
    n = len(X)
    if len(y) != n:
        raise ValueError(f"{name}: X has {n} rows but y has {len(y)}")
    return n


def check_metrics(metrics) -> dict:
    """``{name: function}`` checked (``None``: none)."""
    if metrics is None:
        return {}
    if not isinstance(metrics, dict) or not all(isinstance(k, str) and callable(f) for k, f in metrics.items()):
        raise checks.ParameterTypeError(f"metrics must be a dict {{name: function}}, got {metrics!r}")
    if "test_loss" in metrics:
        raise ValueError("metrics: 'test_loss' is the held-out loss, always reported; name the metric otherwise")
    return dict(metrics)
