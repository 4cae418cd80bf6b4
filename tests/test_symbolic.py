"""Exact verification in rational arithmetic."""
import numpy as np
import pytest
import sympy as sp

from gclib import codes, symbolic


@pytest.mark.parametrize("n,s", [(4, 1), (5, 2), (7, 3), (8, 2)])
def test_crc_exact_mode_is_proved(n, s):
    res = symbolic.verify(codes.crc(n, s, seed=n, exact=True))
    assert res.ok and res.checked == len(list(codes.straggler_patterns(n, s)))


def test_frc_and_partial_are_proved():
    assert symbolic.verify(codes.frc(6, 2)).ok
    assert symbolic.verify(codes.partial_stragglers(4, 1, 3, exact=True)).ok


def test_more_stragglers_than_tolerated_fail_with_a_pattern():
    res = symbolic.verify(codes.crc(5, 1, seed=0, exact=True), stragglers=2)
    assert not res.ok and len(res.failing) == 2
    assert "FAILED" in res.message() and str(list(res.failing)) in res.message()


def test_a_broken_code_is_caught():
    code = codes.crc(5, 2, seed=1, exact=True)
    B = code.B_exact.copy()
    B[0, 0] = B[0, 0] + sp.Rational(1, 3)  # break one coefficient
    broken = codes.GradientCode(name="broken", n_workers=5, n_parts=5, order=code.order, B=np.array(B.tolist(),
                                dtype=float), sender=code.sender, ready=code.ready, rule=code.rule,
                                stragglers=2, B_exact=B)
    res = symbolic.verify(broken)
    assert not res.ok and 0 not in res.failing  # a pattern in which worker 0 survives fails


def test_float_crc_has_no_exact_form():
    with pytest.raises(ValueError, match="exact=True"):
        symbolic.verify(codes.crc(5, 1))


def test_approximate_codes_are_refused():
    with pytest.raises(ValueError, match="approximate"):
        symbolic.verify(codes.ignore_stragglers(5, 1))


def test_decoding_matrix_reproduces_tandon_example():
    A, pats = symbolic.decoding_matrix(codes.example_n3_code())
    assert A == sp.Matrix([[0, 1, 2], [1, 0, 1], [2, -1, 0]])
    assert pats == [(0,), (1,), (2,)]


def test_decoding_matrix_times_B_is_all_ones():
    code = codes.crc(5, 2, seed=3, exact=True)
    A, _ = symbolic.decoding_matrix(code)
    assert A * code.B_exact == sp.ones(10, 5)
    for row, pat in zip(A.tolist(), symbolic.decoding_matrix(code)[1]):
        assert all(row[w] == 0 for w in pat)


def test_check_rule_exhaustive():
    assert symbolic.check_rule(codes.frc(4, 1)) == []
    assert symbolic.check_rule(codes.crc(4, 1, exact=True)) == []
    assert symbolic.check_rule(codes.partial_stragglers(3, 1, 3, exact=True)) == []


def test_latex_keeps_fractions():
    tex = symbolic.latex(codes.example_n3_code().B_exact)
    assert r"\frac{1}{2}" in tex and tex.startswith(r"\left[")


def test_verify_and_worst_case_reject_non_integer_counts():
    # stragglers=1.5 used to pass the range check and fail inside itertools with a TypeError.
    from gclib.diagnostics import worst_case

    code = codes.crc(5, 1, exact=True)
    for kw in ({"stragglers": 1.5}, {"messages": 2.5}, {"stragglers": 5}, {"messages": True}):
        with pytest.raises(ValueError, match="must lie in"):
            symbolic.verify(code, **kw)
    with pytest.raises(ValueError, match=r"stragglers must be an integer in \[0, 4\], got 1.5"):
        worst_case(code, 1.5)
    assert symbolic.verify(code, stragglers=1).ok and symbolic.verify(code, messages=4).ok
