"""The model interface (:mod:`gclib.learning.model`): the built-in problems implement it, any object with its
attributes is one, :func:`check_model` refuses a broken model in one line, a model goes to the ranks by its import
path and arguments, and the simulated clock trains any model."""
from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

import gclib
from gclib.learning import GD, from_numpy, make_problem, make_scheme, train
from gclib.learning.model import (
    Model, ModelError, ModelRef, accepts, as_model, check_model, load, parse_kwargs, part_gradient, step_size)
from gclib.runtime import RunSpec

import model_helpers


@pytest.fixture
def usermodels(tmp_path, monkeypatch):
    """A user's module of models in a folder of its own, importable from this process."""
    name = model_helpers.user_module(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    model_helpers.forget(name)


class Quadratic:
    """A model that is no subclass: ``F(theta) = sum_j ||theta - c_j||^2 / 2``."""

    def __init__(self, centres):
        self.c = np.asarray(centres, dtype=float)
        self.dim, self.n_parts = self.c.shape[1], self.c.shape[0]

    def partial_gradient(self, theta, j):
        return theta - self.c[j]

    def loss(self, theta):
        return float(0.5 * ((theta - self.c) ** 2).sum())


def test_the_built_in_problems_are_models_that_pass_the_check():
    p = make_problem("tandon-logistic", parts=4, seed=0, n_samples=200, dim=5)
    assert isinstance(p, Model)
    assert check_model(p) is p
    assert np.array_equal(p.initial(), np.zeros(5))
    assert p.nbytes == sum(a.nbytes for a in (p.X, p.y, p.X_test, p.y_test))
    theta = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(p.partial_gradients(theta).sum(axis=0), p.gradient(theta), rtol=1e-12, atol=1e-15)


def test_any_object_with_the_attributes_is_a_model_with_the_defaults():
    m = as_model(Quadratic([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
    assert m.dim == 2 and m.n_parts == 3 and m.n_samples is None and m.nbytes == 0
    np.testing.assert_array_equal(m.initial(), [0.0, 0.0])
    np.testing.assert_array_equal(m.gradient(np.zeros(2)), [-6.0, -9.0])  # the sum of the parts' gradients
    assert m.test_metrics(np.zeros(2)) == {} and m.loss(np.zeros(2)) == pytest.approx(27.5)
    assert m.prepare(10) is None  # nothing to prepare without the object's own ``prepare``...
    prepared = []
    m.inner.prepare = prepared.append  # ... and the object's own is called with the run's iterations
    m.prepare(10)
    assert prepared == [10]
    check_model(m)
    with pytest.raises(TypeError, match="model must be a model .* got list without dim, n_parts, partial_gradient, "
                                        "loss"):
        as_model([1, 2])


def _numpy(grad=None, loss=None, rows=12, dim=3, parts=4):
    X = np.arange(rows * dim, dtype=float).reshape(rows, dim) / 10
    y = np.ones(rows)
    return from_numpy(loss or (lambda t, X, y: 0.5 * float(np.mean((X @ t - y) ** 2))),
                      grad or (lambda t, X, y: X.T @ (X @ t - y) / len(y)), np.zeros(dim), X, y, parts)


@pytest.mark.parametrize("grad, loss, says", [
    (lambda t, X, y: np.zeros(4), None, "the gradient of part 0 at the initial parameters has shape (4,), not (3,)"),
    (lambda t, X, y: np.full(3, np.nan), None, "the gradient of part 0 at the initial parameters is not finite (3 "
                                                "of its 3 entries are nan or inf)"),
    (lambda t, X, y: X.T @ (X @ t - y), None, "its partial gradients do not add up to its full gradient"),
    (None, lambda t, X, y: float("nan"), "its loss at the initial parameters is not a finite number: nan"),
    (lambda t, X, y: 1 / 0, None, "the gradient of part 0 raised ZeroDivisionError: division by zero"),
    (lambda t, X, y: "text", None, "the gradient of part 0 raised ValueError: could not convert string to float"),
])
def test_check_model_refuses_a_broken_model_in_one_line_naming_it(grad, loss, says):
    with pytest.raises(ModelError) as e:
        check_model(_numpy(grad, loss))
    assert str(e.value).startswith("model numpy model: ") and says in str(e.value) and "\n" not in str(e.value)


def test_check_model_refuses_bad_sizes_and_parts():
    q = Quadratic([[0.0], [1.0]])
    q.dim = 0
    with pytest.raises(ModelError, match="dim must be a positive integer, got 0"):
        check_model(q)
    with pytest.raises(ModelError, match="has 4 parts, the code needs 8"):
        check_model(_numpy(), parts=8)


def test_a_worker_checks_the_shape_of_every_gradient():
    m = as_model(Quadratic([[0.0, 1.0], [2.0, 3.0]]))
    np.testing.assert_array_equal(part_gradient(m, np.zeros(2), 1), [-2.0, -3.0])
    m.inner.partial_gradient = lambda theta, j: np.zeros((2, 2))
    with pytest.raises(ModelError, match=r"the gradient of part 1 has shape \(2, 2\), not \(2,\)"):
        part_gradient(m, np.zeros(2), 1)


def test_parse_kwargs_reads_literals_and_text():
    assert parse_kwargs("hidden=64, lr=0.1,act=relu,sizes=[32, 16],flag=True,none=None,q='a,b'") == {
        "hidden": 64, "lr": 0.1, "act": "relu", "sizes": [32, 16], "flag": True, "none": None, "q": "a,b"}
    assert parse_kwargs(None) == {} and parse_kwargs(" ") == {}
    with pytest.raises(ValueError, match="NAME=VALUE items separated by commas, got '64'"):
        parse_kwargs("64")
    with pytest.raises(ValueError, match="model argument a is given twice"):
        parse_kwargs("a=1,a=2")


def test_a_model_ref_checks_its_form():
    assert ModelRef("pkg.mod:build", {"hidden": 64}).text() == "pkg.mod:build(hidden=64)"
    for bad in ("pkg.mod", "pkg.mod:", ":f", "pkg mod:f", "a:b:c"):
        with pytest.raises(ValueError, match="model must be an import path 'package.module:function'"):
            ModelRef(bad)
    with pytest.raises(ValueError, match="model argument x must be a plain value .* got ndarray"):
        ModelRef("a:b", {"x": np.zeros(2)})


@pytest.mark.parametrize("target, says", [
    ("{m}_absent:linear", "its module {m}_absent cannot be imported: ModuleNotFoundError: No module named "
                          "'{m}_absent'"),
    ("{m}:nothing", "module '{m}' has no attribute 'nothing'"),
    ("{m}:raises", "model {m}:raises(parts=4) raised RuntimeError while it was built: the data set is not on this "
                   "disk"),
    ("{m}:not_a_model", "model {m}:not_a_model(parts=4): model must be a model"),
    ("{m}:wrong_shape", "the gradient of part 0 at the initial parameters has shape (5,), not (4,)"),
    ("{m}:nan_gradient", "the gradient of part 0 at the initial parameters is not finite"),
])
def test_load_refuses_a_bad_model_in_one_line(usermodels, target, says):
    with pytest.raises(ModelError) as e:
        load(target.format(m=usermodels), parts=4)
    assert says.format(m=usermodels) in str(e.value) and "\n" not in str(e.value)


def test_a_named_model_travels_as_its_name_and_is_built_again(usermodels, tmp_path):
    model = load(f"{usermodels}:linear", parts=4, rows=200)
    assert model.ref.path == str(tmp_path) and model.ref.kwargs == {"parts": 4, "rows": 200}
    assert accepts(f"{usermodels}:linear", "parts") and not accepts(f"{usermodels}:linear", "hidden")
    spec = RunSpec(gclib.codes.crc(4, 1, seed=0), model, GD(0.1), None, iterations=3)
    data = pickle.dumps(spec)
    assert len(data) < model.nbytes  # the data set is not in the pickle
    again = pickle.loads(data)
    assert isinstance(again.problem, ModelRef) and again.problem.text() == f"{usermodels}:linear(parts=4, rows=200)"
    sys.modules.pop(usermodels)  # as a rank that never imported it
    again.build_model()
    theta = np.linspace(0, 1, 6)
    np.testing.assert_allclose(again.problem.gradient(theta), model.gradient(theta), rtol=0, atol=0)
    assert spec.describe()["model_import"] == {"target": f"{usermodels}:linear", "kwargs": {"parts": 4, "rows": 200}}


def test_step_size_is_one_over_the_smoothness_or_given():
    p = make_problem("tandon-logistic", parts=2, seed=0, n_samples=50, dim=3)
    assert step_size(p) == pytest.approx(1 / p.smoothness) and step_size(p, 0.5) == 0.5
    with pytest.raises(ValueError, match="lr must be given for model numpy model: it has no smoothness constant"):
        step_size(_numpy())


def test_the_simulated_clock_trains_any_model_by_its_loss():
    centres = np.arange(8.0).reshape(4, 2)
    m = Quadratic(centres)
    optimum = centres.mean(axis=0)
    floor = m.loss(optimum)  # half the spread of the centres about their mean: 20
    res = train(m, make_scheme("gc", 4, stragglers=1), gclib.ShiftedExponential(mu=10, alpha=0.01),
                target=floor + 1e-6, lr=0.2, seed=0, max_iter=200)
    assert floor == pytest.approx(20.0) and res.gap[0] == pytest.approx(70.0)
    assert res.info["objective"] == "loss" and res.converged and res.gap[-1] <= floor + 1e-6
    assert "reached loss" in res.message
    np.testing.assert_allclose(res.theta, optimum, atol=1e-3)
    with pytest.raises(ValueError, match="its server-side trigger needs the smoothness of every part"):
        train(m, make_scheme("lag-ps", 4), gclib.ShiftedExponential(mu=10, alpha=0.01), lr=0.2)


def test_the_auc_ranks_are_scipys_without_importing_scipy_stats():
    from scipy.stats import rankdata

    from gclib.learning.problems import auc, average_ranks

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 200):
        x = rng.integers(0, 5, n).astype(float)  # many ties
        np.testing.assert_array_equal(average_ranks(x), rankdata(x))
        y = rng.standard_normal(n)
        np.testing.assert_array_equal(average_ranks(y), rankdata(y))
    assert auc([0.1, 0.4, 0.35, 0.8], [-1, -1, 1, 1]) == 0.75
    assert auc([1.0, 1.0], [-1, 1]) == 0.5 and np.isnan(auc([np.nan, 1.0], [-1, 1]))


def test_the_learning_package_loads_each_name_from_its_module_when_first_used():
    import gclib.learning as learning
    from gclib.learning import optim
    assert set(learning.WHERE) <= set(dir(learning)) and learning.train is optim.train
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        learning.nope
