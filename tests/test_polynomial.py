"""Reed-Solomon / polynomial gradient codes: exact verification, fast rule and decoder against the oracle,
evaluation points, point assignment, and the ill-conditioning warning."""
import warnings

import numpy as np
import pytest
import sympy as sp

from gclib.codes import COND_WARN, IllConditionedWarning, polynomial_code, rs
from gclib.codes.conditioning import decoding_amplification
from gclib.codes.polynomial import (golden_stride, leading_coefficient_weights, point_permutation,
                                    rational_points)
from gclib.codes.repetition import cyclic_support
from gclib.symbolic import check_rule, verify

from code_helpers import roundtrip


def test_hand_computed_n3_s1_equispaced():
    # n = 3, s = 1, natural assignment of equispaced points -2, 0, 2; worker i holds parts i, i+1.
    code = rs(3, 1, "equispaced", exact=True, assign="natural")
    # part 0 is held by workers 0 and 2, so p_0(x) = x - 0; part 1 by 0, 1: p_1 = x - 2; part 2 by 1, 2: x + 2
    expected = sp.Matrix([[-2, -4, 0], [0, -2, 2], [2, 0, 4]])
    assert code.B_exact == expected
    assert np.array_equal(code.B, np.array(expected.tolist(), dtype=float))
    # any two messages: leading coefficient by divided differences, e.g. workers 0, 1: (y0 - y1) / (-2 - 0)
    A = code.decode([0, 1])
    assert np.allclose(A, [[-0.5, 0.5]])


@pytest.mark.parametrize("n,s,points,assign", [(5, 2, "equispaced", "natural"), (6, 2, "chebyshev", "spread"),
                                               (7, 3, "chebyshev", "natural"), (6, 1, "equispaced", "spread")])
def test_exact_verification_and_rule(n, s, points, assign):
    code = rs(n, s, points, exact=True, assign=assign)
    assert verify(code).ok
    # the fast threshold rule agrees with the exact oracle on every received set
    assert check_rule(code) == []


def test_exact_mode_float_matrix_is_the_verified_one():
    code = rs(6, 2, "chebyshev", exact=True)
    assert np.array_equal(code.B, np.array(code.B_exact.tolist(), dtype=float))
    alpha = code.decoder.points
    assert np.unique(alpha).size == 6 and np.all(np.abs(alpha) <= 2)


def test_rational_points():
    assert rational_points(5, "equispaced") == [-2, -1, 0, 1, 2]
    q = rational_points(12, "chebyshev")
    assert len(set(q)) == 12 and all(isinstance(v, sp.Rational) for v in q)
    with pytest.raises(ValueError, match="roots-of-unity"):
        rational_points(4, "roots-of-unity")


@pytest.mark.parametrize("points", ["chebyshev", "equispaced", "roots-of-unity"])
@pytest.mark.parametrize("assign", ["spread", "natural"])
def test_decoder_matches_oracle_every_pattern(points, assign):
    from itertools import combinations

    code = rs(8, 3, points, assign=assign)
    rng = np.random.default_rng(1)
    for st in combinations(range(8), 3):
        est, true = roundtrip(code, st, rng)
        assert np.allclose(est, true, atol=1e-9)
    # fewer than n - s workers never decode (the oracle agrees with the threshold rule)
    for st in [(0, 1, 2, 3), (1, 3, 5, 7)]:
        idx = code.surviving(st)
        assert not code.is_decodable(idx)
        mask = np.zeros(code.n_messages, bool)
        mask[idx] = True
        assert not code.rule.decodable(mask)


def test_complex_points_cost_twice():
    real = rs(6, 2, "chebyshev")
    cplx = rs(6, 2, "roots-of-unity")
    assert np.all(real.size == 1.0) and np.all(cplx.size == 2.0)
    assert np.iscomplexobj(cplx.B)


def test_point_permutation():
    assert golden_stride(100) == 63 and golden_stride(10) == 7  # nearest to n / phi, coprime with n
    p = point_permutation(10, "spread")
    assert sorted(p.tolist()) == list(range(10)) and p[1] == 7
    assert np.array_equal(point_permutation(5, "natural"), np.arange(5))
    with pytest.raises(ValueError, match="assign"):
        point_permutation(5, "random")


def test_leading_coefficient_weights():
    # the leading coefficient of x^2 - 3x + 1 from three values
    x = np.array([-1.0, 0.5, 2.0])
    y = x ** 2 - 3 * x + 1
    assert np.isclose(leading_coefficient_weights(x) @ y, 1.0)


def test_polynomial_code_general_mask_more_rows_than_workers():
    # 2 workers, 4 rows (2 virtual rows per worker, prefixes of the worker's order), 3 parts
    order = [(0, 1, 2), (2, 0, 1)]
    mask = np.array([[1, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 1]])
    code = polynomial_code(mask, sender=[0, 0, 1, 1], ready=[1, 3, 1, 3], order=order, points="equispaced",
                           exact=True)
    assert code.params["h"] == 2
    assert verify(code, messages=3).ok
    assert check_rule(code) == []


def test_spread_assignment_is_far_better_conditioned():
    from gclib.studies.reed_solomon.study import measure

    nat = measure(rs(40, 8, "chebyshev", assign="natural"), max_patterns=30, seed=0)
    spr = measure(rs(40, 8, "chebyshev", assign="spread"), max_patterns=30, seed=0)
    assert spr["worst_error64"] < 1e-3 * nat["worst_error64"]


def test_ill_conditioned_warning_fires_where_unusable():
    # A case well inside the warning band: a condition number above COND_WARN, yet far below the one at which
    # float64 rounding breaks the decode's check (rs(40, 8) sits at that edge: it decodes on some CPUs, not others)
    bad = rs(30, 6, "chebyshev", assign="natural")
    idx = bad.surviving(range(6))
    with pytest.warns(IllConditionedWarning, match="condition number"):
        A = bad.decode(idx)
    assert COND_WARN < decoding_amplification(bad.B[idx], A, bad.target) < 1e3 * COND_WARN
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllConditionedWarning)
        good = rs(10, 2, "chebyshev")
        good.decode(good.surviving([0, 1]))
        # equispaced points at n = 100: cond(B_F) ~ 1e36, yet the decode is accurate and must not warn
        fine = rs(100, 2, "equispaced")
        fine.decode(fine.surviving([0, 1]))
    assert COND_WARN == 1e8


def test_amplification_predicts_error():
    from gclib.studies.reed_solomon.study import measure

    for code in (rs(40, 8, "equispaced", assign="natural"), rs(30, 5, "chebyshev", assign="natural")):
        r = measure(code, max_patterns=20, seed=2)
        # eps * kappa bounds the measured error within a small factor, and is not a wild overestimate
        assert r["worst_error64"] <= 10 * 2.2e-16 * r["worst_kappa"]
        assert r["worst_error64"] >= 1e-3 * 2.2e-16 * r["worst_kappa"]


def test_bad_parameters():
    with pytest.raises(ValueError, match="points"):
        rs(5, 1, "legendre")
    with pytest.raises(ValueError, match="stragglers"):
        rs(5, 5)
    assert cyclic_support(4, 1)[3] == (3, 0)


def test_polynomial_code_checks_mask_and_sender():
    # These used to fail with IndexError / an unpacking error inside the construction.
    mask = np.eye(3, dtype=int) + np.roll(np.eye(3, dtype=int), 1, axis=1)
    order = [(0, 1), (1, 2), (2, 0)]
    with pytest.raises(ValueError, match=r"sender must hold one worker id in \[0, 3\) per mask row \(3\)"):
        polynomial_code(mask, [0, 1], [2, 2, 2], order)
    with pytest.raises(ValueError, match=r"got \[0, 1, 5\]"):
        polynomial_code(mask, [0, 1, 5], [2, 2, 2], order)
    with pytest.raises(ValueError, match=r"mask must be a non-empty \(N, k\)"):
        polynomial_code(np.ones(3), [0, 1, 2], [2, 2, 2], order)
    assert polynomial_code(mask, [0, 1, 2], [2, 2, 2], order).is_decodable([0, 1])


def test_decoder_outcomes_silent_warned_refused():
    from gclib.diagnostics import decoder_outcome, decoder_outcomes

    df = decoder_outcomes({"good": rs(10, 2), "bad": rs(30, 6, "chebyshev", assign="natural"),
                           "hopeless": rs(60, 15, "chebyshev", assign="natural")})
    assert list(df["outcome"]) == ["silent", "warned", "refused"]
    assert df.loc[0, "message"] == "" and "condition number" in df.loc[1, "message"]
    assert "do not determine the gradient" in df.loc[2, "message"]
    assert df.loc[0, "kappa"] <= COND_WARN < df.loc[1, "kappa"] < df.loc[2, "kappa"]
    assert list(df.columns) == ["case", "n", "s", "kappa", "outcome", "message"]
    # explicit stragglers; the hand example of rs(3, 1): a well-conditioned two-message decode
    r = decoder_outcome(rs(3, 1, "equispaced", assign="natural"), [2])
    assert r["outcome"] == "silent" and np.isfinite(r["kappa"]) and (r["n"], r["s"]) == (3, 1)


def test_points_cost_counts_complex_messages_twice():
    from gclib.simulator import Communication
    from gclib.sweeps import points_cost
    from gclib.stragglers import ShiftedExponential

    df = points_cost(6, 1, ShiftedExponential(), comm=Communication(0.01, 10.0), trials=300, seed=0)
    assert list(df["points"]) == ["equispaced", "chebyshev", "roots-of-unity"]
    assert list(df["message size"]) == [1.0, 1.0, 2.0]
    # any n - s = 5 messages decode: exactly 5 received per iteration, so the volume is 5 or 10 with no spread
    assert list(df["messages"]) == [5.0, 5.0, 5.0] and list(df["volume"]) == [5.0, 5.0, 10.0]
    assert (df["volume ci95"] == 0).all()
    assert df.loc[2, "mean time"] > df.loc[0, "mean time"]  # longer messages arrive later


def test_rs_derivation_of_the_hand_example():
    from gclib.symbolic import rs_derivation

    md = rs_derivation(rs(3, 1, "equispaced", exact=True, assign="natural"))
    # points -2, 0, 2; part 0 is held by workers 0 and 2, so p_0(x) = x (see test_hand_computed_n3_s1_equispaced)
    assert "h = 1" in md and "p_{0}(x) = x$" in md and "p_{1}(x) = x - 2" in md
    assert "F = [1, 2]" in md  # worker 0 straggles
    with pytest.raises(ValueError, match="exact RS code"):
        rs_derivation(rs(3, 1))
