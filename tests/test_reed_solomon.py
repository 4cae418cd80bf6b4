"""The stability study: patterns, condition numbers, errors, the grid and the study table."""
import numpy as np
import pytest

from gclib.codes import crc, kadhe, rs, ye_abbe
from gclib.codes.base import decoding_amplification
from gclib.studies.reed_solomon.study import (
    CodeSetting, decoding_condition, divisor_stragglers, grid, limit_table, measure, patterns, study)


def test_patterns_enumerate_small_and_sample_large():
    code = rs(8, 2)
    pats, enum, first = patterns(code, 2, 100, np.random.default_rng(0))
    assert enum and len(pats) == 28 and first == 0
    big = rs(40, 8)
    pats, enum, first = patterns(big, 8, 50, np.random.default_rng(0))
    assert not enum and len(pats) == 50 and len(set(pats)) == 50
    assert all(len(p) == 8 for p in pats)
    assert tuple(range(8)) in pats[:first]  # a run of consecutive workers is always among the structured patterns
    assert 0 < first <= 25  # at most half are structured; the uniform ones follow
    again, _, _ = patterns(big, 8, 50, np.random.default_rng(0))
    assert again == pats  # same seed, same patterns


def test_the_median_is_read_from_the_uniform_patterns_only(monkeypatch):
    import gclib.studies.reed_solomon.study as st

    def error(code, A, idx, g, dtype):
        """1 when the stragglers form a run of consecutive workers, 1e-16 otherwise."""
        out = sorted(set(range(code.n_workers)) - set(np.asarray(idx).tolist()))
        runs = [sorted(((o + np.arange(len(out))) % code.n_workers).tolist()) for o in range(code.n_workers)]
        return 1.0 if out in runs else 1e-16

    monkeypatch.setattr(st, "decoding_error", error)
    # rs(40, 8) natural: the structured half of 40 patterns are 20 runs (error 1); a uniform 8 of 40 is almost
    # never a run (error 1e-16). Over all 40 the median would be (1e-16 + 1) / 2; over the uniform 20 it is 1e-16,
    # with the interval [x_(6), x_(15)] of 20 samples, all 1e-16.
    code = rs(40, 8, "chebyshev", assign="natural")
    _, _, first = patterns(code, 8, 40, np.random.default_rng(0))
    r = measure(code, max_patterns=40, seed=0)
    assert first == 20 and r["uniform_patterns"] == 20 and r["patterns"] == 40 and r["worst_error64"] == 1.0
    assert r["median_error64"] == r["median_error64_lo"] == r["median_error64_hi"] == 1e-16
    monkeypatch.undo()
    small = measure(rs(8, 2), max_patterns=100)
    assert small["enumerated"] and small["uniform_patterns"] == 28
    assert small["median_error64_lo"] == small["median_error64"] == small["median_error64_hi"]


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
    assert CodeSetting("rs", 12, 1, 1, "equispaced", "spread") in cfg
    assert CodeSetting("kadhe", 12, 4, 2) in cfg
    assert all(c.n % (c.s + 2) == 0 for c in cfg)


def test_study_table():
    cfg = [CodeSetting("rs", 12, 2, 1, "equispaced", "spread"), CodeSetting("kadhe", 12, 2, 2),
           CodeSetting("ye-abbe", 12, 2, 2, "roots-of-unity", "natural")]
    df = study(cfg, max_patterns=20, seed=0)
    assert list(df["label"]) == ["rs equispaced spread", "kadhe", "ye-abbe roots-of-unity natural"]
    assert {"worst_kappa", "worst_error64", "median_error32", "enumerated"} <= set(df.columns)
    assert (df["worst_error64"] < 1e-10).all()
    again = study(cfg, max_patterns=20, seed=0)
    assert np.array_equal(df["worst_error32"].to_numpy(), again["worst_error32"].to_numpy())
    lim = limit_table(df, ["label"], tol=1e-10)
    assert set(lim["label"]) == set(df["label"]) and lim["first_failing_n"].isna().all()


def test_unknown_assign():
    with pytest.raises(ValueError, match="assign"):
        ye_abbe(6, 1, 2, assign="shuffled")


# ------------------------------------------------------------------------- the notebooks' study helpers
def test_fraction_grid_rounds_and_skips():
    from gclib.studies.reed_solomon.study import fraction_grid

    pairs = fraction_grid([4, 10], [0.25, 0.9])
    # n = 4: s = max(1, round(1.0)) = 1 and round(3.6) = 4 >= n is skipped; n = 10: s = round(2.5) = 2 and 9
    assert sorted({(c.n, c.s, f) for f, c in pairs}) == [(4, 1, 0.25), (10, 2, 0.25), (10, 9, 0.9)]
    assert len(pairs) == 3 * 6  # three point families times two assignments per (n, s)
    assert pairs[0] == (0.25, CodeSetting("rs", 4, 1, 1, "equispaced", "spread"))


def test_fraction_study_carries_the_fraction():
    from gclib.studies.reed_solomon.study import fraction_study

    df = fraction_study([6], [0.5], max_patterns=5, seed=0)
    assert len(df) == 6 and (df["s/n"] == 0.5).all() and (df["s"] == 3).all()
    assert list(df.columns[-2:]) == ["enumerated", "s/n"]
    with pytest.raises(ValueError, match="no code"):
        fraction_study([2], [0.9])


def test_regime_study_labels_the_two_regimes():
    from gclib.studies.reed_solomon.study import regime_study

    df = regime_study([12], 2, constructions=("kadhe",), max_patterns=5)
    assert list(df["s"]) == [1, 4]  # (s + 2) | 12 with s <= 6: s = 1, 2, 4; the smallest and the largest
    assert list(df["regime"]) == ["smallest s", "largest s <= n/2"]
    assert list(df.columns[-2:]) == ["regime", "label"]


def test_limit_table_by_hand():
    import pandas as pd

    from gclib.studies.reed_solomon.study import limit_table

    df = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 2 + ["c"] * 2, "n": [10, 20, 30, 10, 20, 10, 20],
                       "err": [1e-9, 1e-3, 1e-9, 1e-9, 1e-8, 1e-2, 1e-9]})
    lim = limit_table(df, ["g"], tol=1e-6, column="err").set_index("g")
    # a: accurate at 10, fails at 20 (the later recovery at 30 does not count); b never fails; c fails at once
    assert lim.loc["a", "largest_ok_n"] == 10 and lim.loc["a", "first_failing_n"] == 20
    assert lim.loc["b", "largest_ok_n"] == 20 and np.isnan(lim.loc["b", "first_failing_n"])
    assert np.isnan(lim.loc["c", "largest_ok_n"]) and lim.loc["c", "first_failing_n"] == 10
    assert (lim["max_n"] == [30, 20, 20]).all()


def test_worst_vandermonde_by_hand():
    from gclib.studies.reed_solomon.study import vandermonde_table, worst_vandermonde

    # points -1, 1: V = [[-1, 1], [1, 1]] has orthogonal columns of equal norm: condition number 1
    assert worst_vandermonde(2, 0, "equispaced") == pytest.approx(1.0)
    # Chebyshev nodes +-1/sqrt(2): columns orthogonal, of norms 1 and sqrt(2)
    assert worst_vandermonde(2, 0, "chebyshev") == pytest.approx(np.sqrt(2))
    # one straggler of three: a single survivor pair; the pair (-1, 0) gives [[-1, 1], [0, 1]], cond = phi^2
    assert worst_vandermonde(3, 1, "equispaced") == pytest.approx((3 + np.sqrt(5)) / 2)
    t = vandermonde_table([(2, 0)])
    assert list(t.columns) == ["n", "s", "equispaced", "chebyshev"] and len(t) == 1
    with pytest.raises(ValueError, match="points"):
        worst_vandermonde(3, 1, "roots-of-unity")
    with pytest.raises(ValueError, match="0 <= s < n"):
        worst_vandermonde(3, 3, "equispaced")
