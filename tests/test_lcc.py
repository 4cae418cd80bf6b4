"""Lagrange coded computing for linear regression: round trip and the simulator stand-in."""
import numpy as np
import pytest

from gclib import ShiftedExponential, simulate
from gclib.codes import DecodingError
from gclib.codes.lcc import LCCRegression, lagrange_basis, lcc_code, lcc_threshold


def test_lagrange_basis_is_identity_on_nodes():
    nodes = np.array([-1.0, 0.2, 0.7])
    assert np.allclose(lagrange_basis(nodes, nodes), np.eye(3))


@pytest.mark.parametrize("N,k,rows", [(40, 4, 203), (10, 3, 30), (5, 1, 7)])
def test_round_trip_any_threshold_subset(N, k, rows):
    rng = np.random.default_rng(k)
    X, y, w = rng.normal(size=(rows, 4)), rng.normal(size=rows), rng.normal(size=4)
    lcc = LCCRegression(X, y, N, k)
    assert lcc.threshold == 2 * (k - 1) + 1
    res = lcc.results(w)
    assert np.allclose(res[2], lcc.worker_result(2, w))
    g = lcc.gradient(w)
    for _ in range(200):
        F = rng.choice(N, lcc.threshold, replace=False)
        assert np.allclose(lcc.decode(F, res[F]), g, rtol=1e-6, atol=1e-6 * np.abs(g).max())


def test_fewer_results_do_not_determine():
    rng = np.random.default_rng(1)
    X, y, w = rng.normal(size=(40, 3)), rng.normal(size=40), rng.normal(size=3)
    lcc = LCCRegression(X, y, 12, 4)
    F = np.arange(6)
    with pytest.raises(DecodingError):
        lcc.decode(F, lcc.results(w)[F])
    # Two data sets with identical results at 6 points but different gradients: 6 results cannot suffice.
    # f(u(z)) has degree 6; adding c * prod_{i in F}(z - alpha_i) changes the values at the betas only.
    z = lcc.alphas[F]
    bump = np.prod(lcc.betas[:, None] - z[None, :], axis=1)
    assert np.abs(bump.sum()) > 1e-6


def test_lcc_code_for_simulator():
    code = lcc_code(40, 10)
    assert code.params["blocks"] == 4 and int(code.rule.thresholds[0]) == lcc_threshold(4) == 7
    assert code.load == 10 and not code.exact
    with pytest.raises(DecodingError):
        code.decode(np.arange(7))
    res = simulate(code, ShiftedExponential(10, 0.01), 20_000, 0)
    H = lambda n: sum(1 / i for i in range(1, n + 1))  # noqa: E731
    closed = 10 * 0.01 + (10 / 10) * (H(40) - H(33))
    assert abs(res.summary()["mean_time"] - closed) < 3 * res.summary()["ci95_time"] + 1e-3
    assert np.all(res.messages == 7)


def test_lcc_bad_parameters():
    with pytest.raises(ValueError, match="needs"):
        lcc_code(10, 1)
    with pytest.raises(ValueError, match="workers must be"):
        LCCRegression(np.ones((10, 2)), np.ones(10), 4, 3)


def test_decode_rejects_workers_outside_the_code_and_misshapen_results():
    # A worker id of -1 used to wrap around to the last worker (a silently different decode).
    rng = np.random.default_rng(2)
    X, y, w = rng.normal(size=(20, 3)), rng.normal(size=20), rng.normal(size=3)
    lcc = LCCRegression(X, y, 5, 2)
    res = lcc.results(w)
    with pytest.raises(ValueError, match=r"workers must lie in \[0, 5\), got \[-1, 0, 1\]"):
        lcc.decode([-1, 0, 1], res[[4, 0, 1]])
    with pytest.raises(ValueError, match=r"workers must lie in \[0, 5\)"):
        lcc.decode([0, 1, 5], res[[0, 1, 4]])
    with pytest.raises(ValueError, match=r"results must have shape .* \(3, 3\), got \(2, 3\)"):
        lcc.decode([0, 1, 2], res[:2])
    np.testing.assert_allclose(lcc.decode([4, 0, 1], res[[4, 0, 1]]), lcc.gradient(w), atol=1e-9)
