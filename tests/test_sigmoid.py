"""gclib.learning.sigmoid: the logistic function and its logarithm, computed value by value while SciPy is not
loaded, are SciPy's ``expit`` and ``log_expit`` to the bit, at the edges of float64 too; a process that has SciPy
already, a large array, or a run announced as long goes through SciPy's ufuncs."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import special

from gclib.learning import sigmoid

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, -5e-324, 36.7, -36.7, 37.5, -37.5,
                  709.7, 709.8, 710.0, -709.7, -709.8, -710.0, 745.0, -745.0, 746.0, -746.0, 1e308, -1e308])


def _bits(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("scale", [1.0, 10.0, 300.0])
def test_value_by_value_is_scipy_to_the_bit(scale):
    x = np.concatenate([EDGES, np.random.default_rng(int(scale)).normal(scale=scale, size=50_000)])
    for ours, theirs, one in ((sigmoid.expit, special.expit, sigmoid._expit),
                              (sigmoid.log_expit, special.log_expit, sigmoid._log_expit)):
        np.testing.assert_array_equal(_bits(sigmoid._elementwise(one, x)), _bits(theirs(x)))
        np.testing.assert_array_equal(_bits(ours(x)), _bits(theirs(x)))  # SciPy is loaded here: its ufunc


def test_a_large_array_or_a_long_run_loads_scipy(monkeypatch):
    assert sigmoid.expit(np.array(0.0)).shape == () and sigmoid.log_expit(np.zeros((2, 3))).shape == (2, 3)
    assert sigmoid.expit(2.0) == special.expit(2.0)
    calls, loads = [], []
    load = sigmoid.load_scipy
    monkeypatch.setattr(sigmoid, "_elementwise", lambda f, v: calls.append(np.size(v)))
    monkeypatch.setattr(sigmoid, "load_scipy", lambda: loads.append(1) or load())
    monkeypatch.setattr(sigmoid, "sys", SimpleNamespace(modules={}))  # as in a process that has not loaded SciPy
    sigmoid.expit(np.zeros(sigmoid.ELEMENTWISE_MAX))
    assert calls == [sigmoid.ELEMENTWISE_MAX] and loads == []  # value by value
    big = np.linspace(-50, 50, sigmoid.ELEMENTWISE_MAX + 1)
    np.testing.assert_array_equal(sigmoid.log_expit(big), special.log_expit(big))
    assert calls == [sigmoid.ELEMENTWISE_MAX] and loads == [1]  # SciPy's ufunc
    sigmoid.expect(sigmoid.ELEMENTWISE_BUDGET)
    assert loads == [1]
    sigmoid.expect(sigmoid.ELEMENTWISE_BUDGET + 1)
    assert loads == [1, 1]


def test_a_short_run_of_a_logistic_problem_never_loads_scipy_and_a_long_one_loads_it_at_its_start():
    """A fresh interpreter builds a small problem of ``gclib run``'s default kind (as the MPI tests do), prepares it
    for a short run as every rank does, computes its parts' gradients, its loss and its test metrics (what a rank
    and the master do) without SciPy; prepared for a long run, it loads SciPy before the first iteration."""
    code = ("import sys; from gclib.learning import make_problem; "
            "p = make_problem('tandon-logistic', parts=4, seed=0, n_samples=400, dim=10); p.prepare(10); "
            "t = p.initial() + 0.1; g = sum(p.partial_gradient(t, j) for j in range(4)); "
            "print(float(p.loss(t)), sorted(p.test_metrics(t)), 'scipy.special' in sys.modules); "
            "p.prepare(10_000); print('scipy.special' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    computed, long_run = out.stdout.splitlines()
    assert computed.endswith(" ['auc', 'test_loss'] False") and long_run == "True", out.stdout
