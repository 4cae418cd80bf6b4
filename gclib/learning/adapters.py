"""Models from the frameworks people train with: a PyTorch module (:func:`from_torch`), a pair of NumPy functions
(:func:`from_numpy`) and a JAX loss over a pytree of parameters (:func:`from_jax`), each a
:class:`gclib.learning.model.Model` whose gradients leave the framework as float64 NumPy vectors, so that every code
and decoder works on them unchanged.

All three take the same shape of problem (:class:`DataModel`): a loss that is the mean of a per-row loss over the
``N`` rows of a training set ``(X, y)``, split into ``parts`` contiguous blocks of rows (sizes differing by at most
one; shuffle the rows first if their order means something). Part ``j``'s loss is its mean weighted by its share of
the rows, ``f_j = n_j / N * mean_j``, so the partial gradients add up to the full-batch gradient, which
:meth:`DataModel.gradient` computes in one pass over every row (what the runtime compares the decoded gradient
with). Optional held-out data ``(X_test, y_test)`` gives ``test_loss`` and the ``metrics`` asked for (for example
:func:`accuracy`).

PyTorch and JAX are imported only by their adapters (``pip install 'gclib[torch]'``; JAX is not an extra of
gclib: ``pip install jax``).
"""
from __future__ import annotations

import numpy as np

from gclib import checks
from gclib.learning.data_model import DataModel, accuracy, check_metrics, rows_match

__all__ = ["DataModel", "NumpyModel", "accuracy", "from_numpy", "from_torch", "from_jax"]


class NumpyModel(DataModel):
    """A model of two NumPy functions: ``loss(theta, X, y)``, the mean loss over the rows given, and
    ``grad(theta, X, y)``, its gradient ``(dim,)``; ``theta0`` ``(dim,)`` the parameters to start from; ``metrics``
    ``{name: f(theta, X_test, y_test)}``. Made by :func:`from_numpy`."""

    def __init__(self, loss, grad, theta0, X, y, parts, *, X_test=None, y_test=None, metrics=None,
                 name="numpy model"):
        if not (callable(loss) and callable(grad)):
            raise checks.ParameterTypeError(f"loss and grad must be functions (theta, X, y), got "
                                            f"{type(loss).__name__} and {type(grad).__name__}")
        self.theta0 = checks.finite_array("theta0", theta0, ndim=1, complex_ok=False)
        self.X, self.y = np.asarray(X), np.asarray(y)
        super().__init__(rows_match("from_numpy", self.X, self.y), parts, name)
        self.X_test = None if X_test is None else np.asarray(X_test)
        self.y_test = None if y_test is None else np.asarray(y_test)
        if self.X_test is not None:
            rows_match("from_numpy (test data)", self.X_test, self.y_test)
        self.metrics = check_metrics(metrics)
        self._loss, self._grad = loss, grad

    @property
    def dim(self) -> int:
        return int(self.theta0.size)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.X, self.y, self.X_test, self.y_test) if a is not None)

    def initial(self):
        return self.theta0.copy()

    def mean_loss(self, theta, rows):
        return float(self._loss(theta, self.X[rows], self.y[rows]))

    def mean_gradient(self, theta, rows):
        return np.asarray(self._grad(theta, self.X[rows], self.y[rows]), dtype=float)

    def test_metrics(self, theta):
        if self.X_test is None:
            return {}
        out = {"test_loss": float(self._loss(theta, self.X_test, self.y_test))}
        out.update({k: float(f(theta, self.X_test, self.y_test)) for k, f in self.metrics.items()})
        return out


def from_numpy(loss, grad, theta0, X, y, parts: int, *, X_test=None, y_test=None, metrics=None,
               name: str = "numpy model") -> NumpyModel:
    """A model of a pair of NumPy functions (:class:`NumpyModel`).

    Args:
        loss: ``loss(theta, X, y) -> float``, the mean loss over the rows of ``X`` (``theta`` ``(dim,)``).
        grad: ``grad(theta, X, y) -> (dim,)``, its gradient.
        theta0: ``(dim,)`` the parameters to start from (their number is the model's ``dim``).
        X, y: the training rows (``N`` of each). parts: the number of data parts (the code's ``n_parts``).
        X_test, y_test: held-out rows (optional). metrics: ``{name: f(theta, X_test, y_test) -> float}``.
        name: how runs name it.
    """
    return NumpyModel(loss, grad, theta0, X, y, parts, X_test=X_test, y_test=y_test, metrics=metrics, name=name)


def from_torch(module, loss, X, y, parts: int, *, X_test=None, y_test=None, metrics=None, name: str | None = None):
    """A model of a PyTorch module (:class:`gclib.learning.torch_model.TorchModel`): ``module`` (an
    ``nn.Module``, moved to float64 and put in eval mode) maps a batch of ``X`` to outputs, ``loss(outputs, y)``
    is their mean loss (``nn.CrossEntropyLoss()``, ``nn.MSELoss()``, ...); ``metrics``: ``{name: f(outputs,
    y_test) -> float}`` on NumPy arrays (e.g. :func:`accuracy`). Parameters travel through
    ``parameters_to_vector`` and ``vector_to_parameters``. Needs PyTorch (``pip install 'gclib[torch]'``)."""
    from gclib.learning.torch_model import TorchModel  # here: PyTorch is optional, and slow to import

    return TorchModel(module, loss, X, y, parts, X_test=X_test, y_test=y_test, metrics=metrics, name=name)


def from_jax(loss, params, X, y, parts: int, *, X_test=None, y_test=None, metrics=None, name: str = "jax model"):
    """A model of a JAX loss (:class:`gclib.learning.jax_model.JaxModel`): ``loss(params, X, y)``, the mean loss
    over the rows, ``params`` a pytree of arrays (flattened by ``jax.flatten_util.ravel_pytree``), its gradient by
    ``jax.grad``; ``metrics``: ``{name: f(params, X_test, y_test) -> float}``. Turns on JAX's float64
    (``jax_enable_x64``). Needs JAX (``pip install jax``)."""
    from gclib.learning.jax_model import JaxModel  # here: JAX is optional, and slow to import

    return JaxModel(loss, params, X, y, parts, X_test=X_test, y_test=y_test, metrics=metrics, name=name)

