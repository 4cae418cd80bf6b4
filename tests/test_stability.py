"""The stability study: patterns, condition numbers, errors, the grid and the study table."""
import numpy as np
import pytest

from gclib.codes import crc, kadhe, rs, ye_abbe
from gclib.codes.base import decoding_amplification
from gclib.stability import (Config, decoding_condition, divisor_stragglers, grid, measure, patterns, study,
                             usable_limit)


def test_patterns_enumerate_small_and_sample_large():
    code = rs(8, 2)
    pats, enum = patterns(code, 2, 100, np.random.default_rng(0))
    assert enum and len(pats) == 28
    big = rs(40, 8)
    pats, enum = patterns(big, 8, 50, np.random.default_rng(0))
    assert not enum and len(pats) == 50 and len(set(pats)) == 50
    assert all(len(p) == 8 for p in pats)
    assert tuple(range(8)) in pats  # a run of consecutive workers is always among the structured patterns
    again, _ = patterns(big, 8, 50, np.random.default_rng(0))
    assert again == pats  # same seed, same patterns


def test_decoding_condition_hand_example():
    code = kadhe(2, 0, 2, np.array([[1, 0], [0, 2]]))
    idx = np.array([0, 1])
    A = code.decode(idx)
    # B rows: worker 0 sends piece 0 of part 0+1 -> row norm sqrt(2); worker 1 sends 2 * piece 1 -> 2 sqrt(2)
    assert np.isclose(decoding_condition(code, idx, A), 2.0)
    # A = [[1, 0], [0, 1/2]]; target rows have norm sqrt(2): amplification max(1 * sqrt2, 0.5 * 2 sqrt2) / sqrt2
    assert np.isclose(decoding_amplification(code.B[idx], A, code.target), 1.0)


def test_measure_kadhe_is_stable_and_polynomial_natural_is_not():
    good = measure(kadhe(40, 8, 2, seed=1), max_patterns=30, seed=0)
    bad = measure(ye_abbe(40, 8, 2, "chebyshev", assign="natural"), max_patterns=30, seed=0)
    assert good["worst_error64"] < 1e-13 and good["worst_kappa"] < 1e3
    assert bad["worst_error64"] > 1e4 * good["worst_error64"]
    assert bad["worst_error32"] > bad["worst_error64"]
    for r in (good, bad):
        assert r["patterns"] == 30 and not r["enumerated"] and r["failed"] == 0
        assert r["median_cond"] <= r["worst_cond"] and r["median_error32"] <= r["worst_error32"]


def test_measure_counts_failures():
    # decoding with more stragglers than the code tolerates: every pattern fails
    r = measure(rs(6, 1), stragglers=3, max_patterns=100)
    assert r["failed"] == 20 and r["enumerated"] and np.isinf(r["worst_error64"])


def test_measure_crc_float32():
    r = measure(crc(8, 2, seed=0), max_patterns=100)
    assert r["enumerated"] and r["patterns"] == 28
    assert 1e-9 < r["worst_error32"] < 1e-2 and r["worst_error64"] < 1e-10


def test_divisor_stragglers_and_grid():
    assert divisor_stragglers(12, 2, count=10) == [1, 2, 4]  # s + 2 in {3, 4, 6}, s <= 6
    assert divisor_stragglers(100, 2, count=3) == [2, 8, 48]
    cfg = grid([12], 2, points=("equispaced",), assigns=("spread",), per_n=2)
    assert Config("rs", 12, 1, 1, "equispaced", "spread") in cfg
    assert Config("kadhe", 12, 4, 2) in cfg
    assert all(c.n % (c.s + 2) == 0 for c in cfg)


def test_study_table():
    cfg = [Config("rs", 12, 2, 1, "equispaced", "spread"), Config("kadhe", 12, 2, 2),
           Config("ye-abbe", 12, 2, 2, "roots-of-unity", "natural")]
    df = study(cfg, max_patterns=20, seed=0)
    assert list(df["label"]) == ["rs equispaced spread", "kadhe", "ye-abbe roots-of-unity natural"]
    assert {"worst_kappa", "worst_error64", "median_error32", "enumerated"} <= set(df.columns)
    assert (df["worst_error64"] < 1e-10).all()
    again = study(cfg, max_patterns=20, seed=0)
    assert np.array_equal(df["worst_error32"].to_numpy(), again["worst_error32"].to_numpy())
    lim = usable_limit(df, tol=1e-10)
    assert set(lim["label"]) == set(df["label"])


def test_unknown_assign():
    with pytest.raises(ValueError, match="assign"):
        ye_abbe(6, 1, 2, assign="shuffled")
