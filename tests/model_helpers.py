"""A user's module of models, outside gclib, for the tests of the model interface (imported like
``fault_helpers``: pytest puts ``tests/`` on the path). :func:`user_module` writes it under a fresh name into a
folder of the test's own, as a user would keep it beside their script; every MPI rank imports it from there."""
import sys
import textwrap
import uuid

SOURCE = textwrap.dedent('''
    """Models a user might write (a test fixture of gclib)."""
    import os

    import numpy as np

    import gclib.learning as gl


    def _loss(theta, X, y):
        return 0.5 * float(np.mean((X @ theta - y) ** 2))


    def _grad(theta, X, y):
        return X.T @ (X @ theta - y) / len(y)


    def _data(rows, dim, seed):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((rows, dim))
        return X, X @ rng.standard_normal(dim) + 0.1 * rng.standard_normal(rows)


    def linear(parts, rows=120, dim=6, seed=0):
        """Least squares as a pair of NumPy functions, with a held-out set."""
        X, y = _data(rows + 40, dim, seed)
        rmse = lambda theta, Xt, yt: float(np.sqrt(np.mean((Xt @ theta - yt) ** 2)))
        return gl.from_numpy(_loss, _grad, np.zeros(dim), X[:rows], y[:rows], parts, X_test=X[rows:],
                             y_test=y[rows:], metrics={"rmse": rmse}, name="linear")


    def wrong_shape(parts):
        X, y = _data(60, 4, 0)
        return gl.from_numpy(_loss, lambda theta, X, y: np.zeros(5), np.zeros(4), X, y, parts)


    def nan_gradient(parts):
        X, y = _data(60, 4, 0)
        return gl.from_numpy(_loss, lambda theta, X, y: np.full(4, np.nan), np.zeros(4), X, y, parts)


    def raises(parts):
        raise RuntimeError("the data set is not on this disk")


    def not_a_model(parts):
        return [1, 2, 3]


    def raises_on_rank(parts, rank=2):
        """Builds everywhere but on MPI rank ``rank`` (as a model whose data is missing on one host would)."""
        if os.environ.get("PMI_RANK") == str(rank):
            raise RuntimeError("the data set is not on this host")
        return linear(parts)


    class _FailsLater:
        """Computes like its model, but on MPI rank ``rank`` raises from its ``after + 1``-th partial gradient."""

        def __init__(self, inner, rank, after):
            self.inner, self.rank, self.after, self.calls = inner, str(rank), after, 0
            self.dim, self.n_parts = inner.dim, inner.n_parts

        def partial_gradient(self, theta, j):
            self.calls += 1
            if os.environ.get("PMI_RANK") == self.rank and self.calls > self.after:
                raise FloatingPointError(f"overflow in part {j}")
            return self.inner.partial_gradient(theta, j)

        def loss(self, theta):
            return self.inner.loss(theta)


    def fails_later(parts, rank=2, after=3):
        return _FailsLater(linear(parts), rank, after)
''')


def user_module(folder):
    """Write the module into ``folder`` under a fresh name and return that name (the module is not imported)."""
    name = f"usermodels_{uuid.uuid4().hex[:8]}"
    (folder / f"{name}.py").write_text(SOURCE)
    return name


def forget(name):
    """Drop the module from this process (a later test writes another)."""
    sys.modules.pop(name, None)
