"""The adapters of :mod:`gclib.learning.adapters`: a pair of NumPy functions, a PyTorch module and a JAX loss become
models whose partial gradients are the gradients of each part's share of the mean loss (checked against finite
differences), add up to the full-batch gradient to float64's rounding, and leave the framework as float64 NumPy
vectors. PyTorch is in the lock (``make setup`` installs it), so its test runs; the JAX test skips where JAX is not
installed."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from gclib.learning import DataModel, accuracy, check_model, from_jax, from_numpy, from_torch


def _finite_differences(model, theta, j, h=1e-6):
    """``(dim,)`` central differences of part ``j``'s loss share (its rows' mean loss times its share of rows)."""
    out = np.empty(model.dim)
    for i in range(model.dim):
        e = np.zeros(model.dim)
        e[i] = h
        up, down = (model.weights[j] * model.mean_loss(t, model.slices[j]) for t in (theta + e, theta - e))
        out[i] = (up - down) / (2 * h)
    return out


def _classes(rows=90, features=4, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, features))
    return X, np.argmax(X @ rng.standard_normal((features, classes)), axis=1)


def _check_parts(model, theta, rel=1e-12):
    G = model.partial_gradients(theta)
    assert G.dtype == np.float64 and G.shape == (model.n_parts, model.dim)
    full = model.gradient(theta)
    assert np.linalg.norm(G.sum(axis=0) - full) <= rel * np.linalg.norm(full)
    for j in (0, model.n_parts - 1):
        np.testing.assert_allclose(G[j], _finite_differences(model, theta, j), rtol=1e-5, atol=1e-8)


def test_parts_are_contiguous_blocks_whose_shares_add_up_to_one():
    m = DataModel(10, 4, "blocks")
    assert [(s.start, s.stop) for s in m.slices] == [(0, 2), (2, 5), (5, 8), (8, 10)]
    np.testing.assert_allclose(m.weights, [0.2, 0.3, 0.3, 0.2])
    with pytest.raises(ValueError, match=r"parts must be an integer in \[1, 10\] \(at most one part per row of the "
                                         r"10 rows\), got 11"):
        DataModel(10, 11, "too many")


def test_accuracy_of_scores_and_of_signs():
    assert accuracy([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], [1, 0, 0]) == pytest.approx(2 / 3)
    assert accuracy([0.5, -1.0, 2.0], [1, -1, -1]) == pytest.approx(2 / 3)


def test_a_pair_of_numpy_functions_is_a_model():
    X, labels = _classes()
    Y = np.eye(3)[labels]

    def loss(theta, X, y):  # softmax regression, the mean over rows
        Z = X @ theta.reshape(4, 3)
        Z = Z - Z.max(axis=1, keepdims=True)
        return float(np.mean(np.log(np.exp(Z).sum(axis=1)) - (Z * y).sum(axis=1)))

    def grad(theta, X, y):
        Z = X @ theta.reshape(4, 3)
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        return (X.T @ (P - y) / len(X)).ravel()

    scores = lambda theta, X, y: accuracy(X @ theta.reshape(4, 3), y.argmax(axis=1))  # noqa: E731
    m = from_numpy(loss, grad, np.zeros(12), X[:60], Y[:60], 7, X_test=X[60:], y_test=Y[60:],
                   metrics={"accuracy": scores})
    check_model(m)
    theta = np.random.default_rng(1).standard_normal(12) * 0.3
    _check_parts(m, theta)
    assert m.n_samples == 60 and m.nbytes == sum(a.nbytes for a in (m.X, m.y, m.X_test, m.y_test))
    metrics = m.test_metrics(theta)
    assert set(metrics) == {"test_loss", "accuracy"} and metrics["test_loss"] == pytest.approx(loss(theta, X[60:],
                                                                                                    Y[60:]))
    with pytest.raises(ValueError, match="from_numpy: X has 60 rows but y has 59"):
        from_numpy(loss, grad, np.zeros(12), X[:60], Y[:59], 7)
    with pytest.raises(ValueError, match="metrics: 'test_loss' is the held-out loss"):
        from_numpy(loss, grad, np.zeros(12), X[:60], Y[:60], 7, metrics={"test_loss": scores})


def test_a_pytorch_module_is_a_model_in_float64():
    X, y = _classes(rows=120)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3)).float()  # float32
    m = from_torch(net, torch.nn.CrossEntropyLoss(), X[:90], y[:90], 6, X_test=X[90:], y_test=y[90:],
                   metrics={"accuracy": accuracy})
    assert m.dim == 4 * 6 + 6 + 6 * 3 + 3 and all(p.dtype == torch.float64 for p in net.parameters())
    theta0 = m.initial()
    np.testing.assert_array_equal(theta0, torch.nn.utils.parameters_to_vector(net.parameters()).detach().numpy())
    check_model(m)
    theta = theta0 + 0.1 * np.random.default_rng(2).standard_normal(m.dim)
    _check_parts(m, theta)
    kept = theta.copy()
    m.partial_gradient(theta, 1)
    np.testing.assert_array_equal(theta, kept)  # the caller's parameters are copied in, never aliased
    np.testing.assert_array_equal(m.initial(), theta0)  # where training starts, whatever was computed since
    out = net(torch.as_tensor(X[90:])).detach().numpy()
    assert m.test_metrics(theta)["accuracy"] == pytest.approx(accuracy(out, y[90:]))  # (the module holds theta)
    with pytest.raises(TypeError, match="module must be a torch.nn.Module, got function"):
        from_torch(lambda x: x, torch.nn.CrossEntropyLoss(), X, y, 4)


def test_a_pytorch_module_with_dropout_is_deterministic_in_eval_mode():
    X, y = _classes(rows=80)
    net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Dropout(0.5), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    m = from_torch(net, torch.nn.CrossEntropyLoss(), X, y, 4)
    theta = m.initial()
    np.testing.assert_array_equal(m.partial_gradient(theta, 2), m.partial_gradient(theta, 2))
    check_model(m)


def test_a_jax_loss_over_a_pytree_is_a_model():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax): the JAX adapter is not tested")
    jnp = jax.numpy
    X, y = _classes(rows=100)

    def loss(params, X, y):
        Z = jnp.tanh(X @ params["w1"] + params["b1"]) @ params["w2"]
        return jnp.mean(jax.nn.logsumexp(Z, axis=1) - jnp.take_along_axis(Z, y[:, None], axis=1)[:, 0])

    rng = np.random.default_rng(3)
    params = {"w1": rng.standard_normal((4, 5)) * 0.5, "b1": np.zeros(5), "w2": rng.standard_normal((5, 3)) * 0.5}
    m = from_jax(loss, params, X[:80], y[:80], 5, X_test=X[80:], y_test=y[80:])
    assert m.dim == 4 * 5 + 5 + 5 * 3 and m.partial_gradient(m.initial(), 0).dtype == np.float64
    check_model(m)
    _check_parts(m, m.initial() + 0.1 * rng.standard_normal(m.dim))
