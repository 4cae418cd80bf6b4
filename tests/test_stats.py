"""gclib.stats: every interval and paired test on samples small enough to compute by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gclib import stats
from gclib.stats import Estimate

T95_4 = 2.7764451051977987  # Student-t quantile 0.975 with 4 degrees of freedom


def test_mean_ci_is_the_normal_interval_over_finite_entries():
    m, h = stats.mean_ci([1.0, 2.0, 3.0, math.inf])
    assert m == 2.0 and h == pytest.approx(stats.Z95 * 1.0 / math.sqrt(3))
    assert stats.mean_ci([4.0])[0] == 4.0 and math.isnan(stats.mean_ci([4.0])[1])
    assert all(math.isnan(x) for x in stats.mean_ci([]))


def test_paired_difference_by_hand():
    # differences 1, 2, 3, 4, 5: mean 3, sd sqrt(2.5), t interval 3 +- 2.776 * sqrt(2.5 / 5)
    a, b = np.array([2.0, 4, 6, 8, 10]), np.array([1.0, 2, 3, 4, 5])
    e = stats.paired_difference(a, b)
    assert (e.value, e.n) == (3.0, 5) and e.hi - e.value == pytest.approx(T95_4 * math.sqrt(2.5 / 5))
    z = stats.paired_difference(a, b, t=False)
    assert z.hi - z.value == pytest.approx(stats.Z95 * math.sqrt(2.5 / 5))
    # a common offset cancels: separate intervals of these samples overlap, the paired one is exact
    base = np.array([1.0, 10.0, 100.0, 1000.0])
    exact = stats.paired_difference(base + 0.5, base)
    assert (exact.lo, exact.value, exact.hi) == (0.5, 0.5, 0.5)
    assert stats.paired_difference([1.0, math.nan], [0.0, 1.0]).n == 1
    assert not stats.paired_difference([1.0], [0.0]).known
    with pytest.raises(ValueError, match="same length"):
        stats.paired_difference([1.0, 2.0], [1.0])


def test_paired_change_by_the_delta_method():
    a, b = np.array([2.0, 4.0, 6.0]), np.array([1.0, 2.0, 3.0])
    change, lo, hi, n = stats.paired_change(a, b)  # a = 2 b exactly: a change of +100% with no spread
    assert (change, lo, hi, n) == (1.0, 1.0, 1.0, 3)
    change, lo, hi, n = stats.paired_change(np.array([1.0, 3.0]), np.array([1.0, 1.0]))
    # r = 2; a - r b = -1, 1: sd sqrt(2); half = Z95 sqrt(2) / (sqrt(2) * 1) = Z95
    assert change == 1.0 and hi - change == pytest.approx(stats.Z95)
    assert math.isnan(stats.paired_change(np.zeros(3), np.zeros(3))[0])


def test_paired_sign_counts_ties_half_and_needs_no_moments():
    a = np.array([1.0, 1.0, 1.0, 5.0])
    b = np.array([2.0, 2.0, 1.0, math.inf])  # the infinite pair is left out
    e = stats.paired_sign(a, b)
    assert e.n == 3 and e.value == pytest.approx(2.5 / 3)
    lo, hi = stats.wilson(2.5, 3)
    assert (e.lo, e.hi) == pytest.approx((lo, hi))
    heavy = np.random.default_rng(0).pareto(1.0, 200) + 1  # no finite mean
    assert stats.paired_sign(heavy, heavy + 1).lo > 0.5  # faster in every pair


def test_paired_matrix_gives_every_paired_difference():
    rng = np.random.default_rng(1)
    x = rng.exponential(1.0, (3, 500))
    x[1] = x[0] + 0.01
    x[2, 7] = math.inf  # trial 7 is left out for every design
    pm = stats.paired_matrix(x)
    assert pm.n == 499 and pm.mean.shape == (3,)
    keep = np.isfinite(x).all(axis=0)
    direct = stats.paired_difference(x[2][keep], x[0][keep], t=False)
    got = pm.difference(2, 0)
    assert (got.value, got.lo, got.hi) == pytest.approx((direct.value, direct.lo, direct.hi))
    d = pm.difference(1, 0)
    assert d.value == pytest.approx(0.01) and d.hi - d.lo < 1e-9
    assert pm.half_widths()[0, 2] == pytest.approx(got.hi - got.value)
    with pytest.raises(ValueError, match="designs, trials"):
        stats.paired_matrix(np.ones(4))
    assert not stats.paired_matrix(np.ones((2, 1))).difference(0, 1).known


def test_claims_uses_the_same_estimate():
    from gclib import claims

    assert claims.Estimate is Estimate and claims.wilson is stats.wilson and claims.Z95 == stats.Z95


def test_percentile_interval_holds_the_point():
    draws = np.arange(1.0, 1001.0)  # quantiles 0.025 and 0.975 of 1..1000: 25.975 and 975.025
    assert stats.percentile_interval(500.0, draws) == pytest.approx((25.975, 975.025))
    assert stats.percentile_interval(2000.0, np.append(draws, math.nan)) == pytest.approx((25.975, 2000.0))
    assert all(math.isnan(x) for x in stats.percentile_interval(1.0, [math.nan]))
    assert stats.percentile_interval(math.nan, draws) == pytest.approx((25.975, 975.025))  # nothing to hold


def test_basic_interval_reflects_the_quantiles_about_the_point():
    draws = np.arange(1.0, 1001.0)  # quantiles 25.975 and 975.025
    assert stats.basic_interval(500.0, np.append(draws, math.inf)) == pytest.approx((2 * 500 - 975.025,
                                                                                      2 * 500 - 25.975))
    # on the log scale: exp(2 log 4 - log q97.5), exp(2 log 4 - log q2.5), nonpositive draws left out
    logs = np.log(np.linspace(1.0, 10.0, 1001))
    q_lo, q_hi = np.quantile(logs, [0.025, 0.975])
    lo, hi = stats.basic_interval(4.0, np.append(np.exp(logs), [0.0, -1.0]), log=True)
    assert (lo, hi) == pytest.approx((16.0 / math.exp(q_hi), 16.0 / math.exp(q_lo)), rel=1e-12)
    assert 0 < lo < 4.0 < hi
    assert all(math.isnan(x) for x in stats.basic_interval(1.0, [math.nan, math.inf]))
    assert all(math.isnan(x) for x in stats.basic_interval(1.0, [0.0, -2.0], log=True))


def test_t_quantile_is_the_race_level():
    from scipy.stats import t

    from gclib.advise import race

    assert stats.t_quantile(0.975, 9) == pytest.approx(float(t.ppf(0.975, 9)))
    assert race._elimination_level(17, 100) == stats.t_quantile(1 - race.RACE_ALPHA / 100, 16)


def test_an_interval_of_rounding_width_is_exact_and_a_sampled_one_is_not():
    # (x + 0.01) - x differs from 0.01 in the last bits, by an amount that depends on x and the machine
    x = np.random.default_rng(0).exponential(1.0, 2000)
    e = stats.paired_difference(x + 0.01, x, t=False)
    assert e.value == pytest.approx(0.01, rel=1e-12)
    assert e.is_exact and e.text(".3g") == "0.01"
    assert not Estimate(0.01, 0.0099, 0.0101).is_exact
    assert not Estimate(1.0, math.nan, math.nan).is_exact
    assert Estimate.exact(0.0).is_exact and Estimate(0.0, 0.0, 0.0).is_exact


def test_a_paired_matrix_of_designs_a_constant_apart_gives_an_exact_difference():
    # cov_ii + cov_jj - 2 cov_ij cancels to rounding noise (about 4e-16 here), which is no spread
    x = np.random.default_rng(0).exponential(1.0, 2000)
    m = stats.paired_matrix(np.stack([x, x + 0.01, 2 * x]))
    d = m.difference(1, 0)
    assert d.value == pytest.approx(0.01, rel=1e-12) and d.is_exact
    assert m.half_widths()[0, 1] == 0.0
    assert not m.difference(2, 0).is_exact and m.half_widths()[0, 2] > 0.01


def test_the_binomial_quantile_of_the_median_interval_is_scipys():
    """The median's interval takes its ranks from exact integer sums up to 20,000 samples and a bisection on the
    binomial distribution function beyond (the command line's start need not import scipy.stats): the ranks of
    scipy.stats.binom.ppf, small and large."""
    from scipy.stats import binom

    ks = (list(range(1, 300)) + list(range(300, stats.EXACT_BINOMIAL + 1, 1_997)) + [stats.EXACT_BINOMIAL]
          + list(range(stats.EXACT_BINOMIAL + 1, 2_000_000, 99_991)) + [100_000, 1_000_000])
    for p in (0.025, 0.975):  # (at 1/2 an exact tie, P(X <= j) = 1/2, can fall either side of its rounding)
        got = [stats.binomial_half_quantile(p, k) for k in ks]
        assert got == [int(v) for v in binom.ppf(p, ks, 0.5)], p
    assert stats.binomial_half_quantile(0.5, 7) == 3  # P(X <= 3) = 1/2 exactly
