"""A JAX loss as a :class:`gclib.learning.model.Model` (made by :func:`gclib.learning.adapters.from_jax`).

The parameters are a pytree of arrays, flattened into one vector by ``jax.flatten_util.ravel_pytree`` (its
``unravel`` gives the pytree back); the gradient of a block of rows is ``jax.grad`` of the loss through that
``unravel``, compiled once (``jax.jit``), and leaves as a float64 NumPy vector. JAX computes in float32 unless
``jax_enable_x64`` is on: the adapter turns it on (for the whole process), so that a decoded gradient agrees with
the full-batch gradient to float64's rounding.
"""
from __future__ import annotations

import jax
import numpy as np
from jax.flatten_util import ravel_pytree

from gclib import checks
from gclib.learning.data_model import DataModel, check_metrics, rows_match


class JaxModel(DataModel):
    """See the module docstring and :func:`gclib.learning.adapters.from_jax`.

    Attributes:
        unravel: the flat vector back to the parameters' pytree. X, y, X_test, y_test: the data as JAX arrays
            (floating point in float64).
    """

    def __init__(self, loss, params, X, y, parts, *, X_test=None, y_test=None, metrics=None, name="jax model"):
        if not callable(loss):
            raise checks.ParameterTypeError(f"loss must be a function (params, X, y), got {type(loss).__name__}")
        jax.config.update("jax_enable_x64", True)
        flat, self.unravel = ravel_pytree(jax.tree_util.tree_map(lambda a: jax.numpy.asarray(a, dtype=float), params))
        self.theta0 = np.asarray(flat, dtype=np.float64)
        self.X, self.y = self._array(X), self._array(y)
        super().__init__(rows_match("from_jax", self.X, self.y), parts, name)
        self.X_test = None if X_test is None else self._array(X_test)
        self.y_test = None if y_test is None else self._array(y_test)
        if self.X_test is not None:
            rows_match("from_jax (test data)", self.X_test, self.y_test)
        self.metrics = check_metrics(metrics)
        self.loss_fn = loss
        flat_loss = lambda theta, X, y: loss(self.unravel(theta), X, y)  # noqa: E731
        self._value = jax.jit(flat_loss)
        self._grad = jax.jit(jax.grad(flat_loss))

    @staticmethod
    def _array(a):
        a = np.asarray(a)
        return jax.numpy.asarray(a, dtype=np.float64 if np.issubdtype(a.dtype, np.floating) else a.dtype)

    @property
    def dim(self) -> int:
        return int(self.theta0.size)

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.X, self.y, self.X_test, self.y_test) if a is not None)

    def initial(self):
        return self.theta0.copy()

    def mean_loss(self, theta, rows):
        return float(self._value(jax.numpy.asarray(theta, dtype=np.float64), self.X[rows], self.y[rows]))

    def mean_gradient(self, theta, rows):
        g = self._grad(jax.numpy.asarray(theta, dtype=np.float64), self.X[rows], self.y[rows])
        return np.array(g, dtype=np.float64)

    def test_metrics(self, theta):
        if self.X_test is None:
            return {}
        t = jax.numpy.asarray(theta, dtype=np.float64)
        out = {"test_loss": float(self._value(t, self.X_test, self.y_test))}
        params = self.unravel(t)
        out.update({k: float(f(params, self.X_test, self.y_test)) for k, f in self.metrics.items()})
        return out
