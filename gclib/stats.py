"""The intervals and tests every study uses, in one place.

* :class:`Estimate`: a number with its 95% interval (a mean's, a median's, a proportion's, a difference's);
* intervals of one sample: :func:`mean_ci` (normal, for Monte Carlo means over many trials), :meth:`Estimate.of`
  (Student-t, for a handful of runs or iterations), :meth:`Estimate.median` and :func:`median_ci` (order
  statistics, no moments needed), :func:`wilson` and :func:`proportion` (a fraction of successes);
* :func:`percentile_interval` and :func:`basic_interval`: a bootstrap's 95% interval (percentile and
  reverse-percentile); :func:`t_quantile`: a quantile of Student's t (the advice's screening race drops a design
  beyond one);
* paired comparisons, for samples drawn with common random numbers (trial ``i`` of both under the same draws, or
  iteration ``i`` of two runs under the same injected delays): :func:`paired_difference` (the mean of ``a - b``),
  :func:`paired_change` (``mean(a) / mean(b) - 1`` by the delta method), :func:`paired_sign` (the fraction of
  pairs with ``a < b``, a sign test that needs no finite variance) and :func:`paired_matrix` (every pairwise
  difference of many designs from one covariance matrix).

A paired interval is narrower than the two separate intervals whenever the samples are positively correlated,
which common random numbers make them: comparing designs or schemes that share their draws by separate intervals
throws that away and leaves "inconclusive" what the data can tell.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Relative width below which an interval is exact (:attr:`Estimate.is_exact`): rounding, not sampling.
EXACT_RTOL = 1e-12

#: Relative size below which a variance computed as a difference of covariances is rounding, not spread
#: (:meth:`PairedMatrix.difference`): a correlation within 5e-11 of one.
CANCELLATION_RTOL = 1e-10

#: Two-sided normal quantile of a 95% interval.
Z95 = 1.959963984540054


def t_quantile(p: float, dof: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``dof`` degrees of freedom (e.g. ``t_quantile(0.975,
    n - 1)``, the half-width of a 95% interval of a mean of ``n`` samples in standard errors)."""
    from scipy import stats

    return float(stats.t.ppf(p, dof))


#: Up to this many samples the median's ranks come from exact integer sums (milliseconds); beyond, from
#: ``scipy.special`` (whose import a command's start would otherwise wait for).
EXACT_BINOMIAL = 20_000


def binomial_half_quantile(p: float, k: int) -> int:
    """The ``p`` quantile of the Binomial(``k``, 1/2) distribution: the smallest ``j`` with ``P(X <= j) >= p``.
    Up to :data:`EXACT_BINOMIAL` it is exact (``sum_{i <= j} C(k, i) >= p 2^k`` in integers, ``p`` as the exact
    value of its float); beyond, a bisection on ``scipy.special.bdtr``. Both give the ranks of
    ``scipy.stats.binom.ppf`` at the tails the median's interval reads, without importing ``scipy.stats``; where
    ``P(X <= j)`` equals ``p`` exactly, as at ``p = 1/2``, the exact sum takes the lower ``j`` and the bisection
    lets rounding decide."""
    k = int(k)
    if k <= EXACT_BINOMIAL:
        num, den = float(p).as_integer_ratio()
        target, term, total = num << k, 1, 0
        for j in range(k + 1):
            total += term
            if total * den >= target:
                return j
            term = term * (k - j) // (j + 1)
        return k
    from scipy.special import bdtr

    lo, hi = 0, k  # P(X <= k) = 1 >= p
    while lo < hi:
        mid = (lo + hi) // 2
        if bdtr(mid, k, 0.5) >= p:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _t95(dof: int) -> float:
    return t_quantile(0.975, dof)


@dataclass(frozen=True)
class Estimate:
    """A measured number with its 95% confidence interval ``[lo, hi]``.

    An exact number (a closed form, a count over every case) has ``lo == value == hi``. ``n`` is the number of
    samples behind the estimate (``None`` when it is exact or unknown). A NaN bound means no interval: every
    verdict rule reads it as inconclusive.
    """

    value: float
    lo: float
    hi: float
    n: int | None = None

    def __post_init__(self):
        v, lo, hi = (float(x) for x in (self.value, self.lo, self.hi))
        if any(math.isnan(x) for x in (v, lo, hi)):
            return  # a missing measurement: every rule reads it as inconclusive
        if not lo <= v <= hi:
            raise ValueError(f"an Estimate needs lo <= value <= hi, got lo = {lo!r}, value = {v!r}, hi = {hi!r}")

    @classmethod
    def exact(cls, value: float) -> "Estimate":
        """A number known exactly (no sampling error)."""
        return cls(float(value), float(value), float(value))

    @classmethod
    def mean_ci(cls, mean: float, half: float, n: int | None = None) -> "Estimate":
        """From a mean and the half-width of its 95% interval (a NaN half-width: no interval, inconclusive)."""
        half = float(half)
        if math.isnan(half) or half < 0:
            return cls(float(mean), math.nan, math.nan, n)
        return cls(float(mean), float(mean) - half, float(mean) + half, n)

    @classmethod
    def of(cls, samples) -> "Estimate":
        """Mean of ``samples`` (finite entries) with a Student-t 95% interval: wide for a handful of samples,
        undefined (NaN, so inconclusive) for fewer than two."""
        x = np.asarray(samples, dtype=float).ravel()
        x = x[np.isfinite(x)]
        if x.size == 0:
            return cls(math.nan, math.nan, math.nan, 0)
        m = float(x.mean())
        if x.size < 2:
            return cls(m, math.nan, math.nan, int(x.size))
        half = _t95(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
        return cls(m, m - half, m + half, int(x.size))

    @classmethod
    def median(cls, samples) -> "Estimate":
        """Median of ``samples`` (NaN entries dropped, infinities kept) with a distribution-free 95% interval
        from order statistics: ``[x_(j), x_(k-j+1)]`` of the ``k`` sorted samples, with ``j`` the smallest rank
        such that a Binomial(``k``, 1/2) count falls below ``j`` with probability under 2.5%. It assumes
        independent draws from one distribution and needs no finite variance; below six samples it is undefined
        (NaN, so inconclusive)."""
        x = np.sort(np.asarray(samples, dtype=float).ravel())
        x = x[~np.isnan(x)]
        k = int(x.size)
        if k == 0:
            return cls(math.nan, math.nan, math.nan, 0)
        m = float(np.median(x))
        j = binomial_half_quantile(0.025, k)
        if j < 1:
            return cls(m, math.nan, math.nan, k)
        return cls(m, float(x[j - 1]), float(x[k - j]), k)

    @property
    def known(self) -> bool:
        """True when the interval is defined."""
        return not (math.isnan(self.lo) or math.isnan(self.hi))

    @property
    def is_exact(self) -> bool:
        """True when the interval has no width beyond rounding: ``hi - lo`` within a few units in the last place of
        the bounds (a paired difference of ``x + c`` and ``x`` varies by about 1e-16 from one trial to the next,
        and whether it does depends on the machine's arithmetic, not on the data)."""
        if not self.known:
            return False
        scale = max(abs(self.lo), abs(self.hi), abs(self.value))
        return self.hi - self.lo <= EXACT_RTOL * scale

    def scaled(self, factor: float) -> "Estimate":
        """The estimate times a non-negative constant."""
        if not factor >= 0:
            raise ValueError(f"factor must be non-negative, got {factor!r}")
        return Estimate(self.value * factor, self.lo * factor, self.hi * factor, self.n)

    def text(self, fmt: str = ".3g") -> str:
        """``0.272 [0.270, 0.274]``; an exact number alone; ``0.3 (no interval)`` when there is none."""
        if math.isnan(self.value):
            return "not measured"
        v = format(self.value, fmt)
        if self.is_exact:
            return v
        if not self.known:
            return f"{v} (no interval)"
        return f"{v} [{format(self.lo, fmt)}, {format(self.hi, fmt)}]"

    def __str__(self) -> str:
        return self.text()


def mean_ci(x) -> tuple[float, float]:
    """Mean and the half-width of its normal 95% confidence interval, over the finite entries of ``x`` (for
    Monte Carlo means over many trials; a NaN half-width below two entries)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    return float(x.mean()), float(Z95 * x.std(ddof=1) / math.sqrt(x.size))


def median_ci(x) -> tuple[float, float, float]:
    """Median of the finite entries of ``x`` with its distribution-free 95% interval (:meth:`Estimate.median`:
    order statistics, defined whatever the tail, where a mean may not be): ``(median, lo, hi)``, NaN bounds below
    six entries."""
    x = np.asarray(x, dtype=float).ravel()
    e = Estimate.median(x[np.isfinite(x)])
    return e.value, e.lo, e.hi


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a proportion ``k / n`` (``(nan, nan)`` for ``n = 0``)."""
    if n <= 0:
        return math.nan, math.nan
    p, z2 = k / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def proportion(k: int, n: int) -> Estimate:
    """The proportion ``k / n`` with its Wilson 95% interval."""
    if n <= 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    lo, hi = wilson(k, n)
    return Estimate(k / n, min(lo, k / n), max(hi, k / n), n)


def percentile_interval(point: float, draws) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of a statistic whose value on the data is ``point``, from its values
    on resamples ``draws`` (finite ones), widened to hold ``point`` (a NaN ``point`` widens nothing); ``(nan, nan)``
    without a finite draw."""
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return math.nan, math.nan
    lo, hi = np.quantile(d, [0.025, 0.975])
    if math.isnan(point):
        return float(lo), float(hi)
    return min(float(point), float(lo)), max(float(point), float(hi))


def basic_interval(point: float, draws, *, log: bool = False) -> tuple[float, float]:
    """The 95% basic (reverse-percentile) bootstrap interval ``2 point - q97.5 .. 2 point - q2.5`` of a statistic
    whose value on the data is ``point``, from its values on resamples ``draws`` (finite ones).

    Args:
        point: the statistic on the data.
        draws: ``(resamples,)`` its values on the resamples.
        log: compute the interval of ``log(statistic)`` from the positive draws and map it back by ``exp`` (for a
            positive scale or rate: the interval stays positive).

    Returns:
        ``(lo, hi)``; ``(nan, nan)`` without a finite (with ``log``, positive) draw.
    """
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if log:
        d = np.log(d[d > 0])
    if d.size == 0:
        return math.nan, math.nan
    q_lo, q_hi = np.quantile(d, [0.025, 0.975])
    if log:
        c = 2 * np.log(point)
        return float(np.exp(c - q_hi)), float(np.exp(c - q_lo))
    return float(2 * point - q_hi), float(2 * point - q_lo)


def _pairs(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be (pairs,) arrays of the same length, got shapes {a.shape}, {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]


def paired_difference(a, b, *, t: bool = True) -> Estimate:
    """The mean of ``a - b`` over the pairs where both are finite, with its 95% interval: Student-t (``t=True``,
    for tens of iterations or runs) or normal (``t=False``, for thousands of Monte Carlo trials). No interval
    below two pairs.

    Args:
        a, b: ``(pairs,)`` values of two schemes or designs under the same draws, pair by pair.
    """
    a, b = _pairs(a, b)
    d = a - b
    n = int(d.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    m = float(d.mean())
    if n < 2:
        return Estimate(m, math.nan, math.nan, n)
    half = (_t95(n - 1) if t else Z95) * float(d.std(ddof=1)) / math.sqrt(n)
    return Estimate(m, m - half, m + half, n)


def paired_change(a, b) -> tuple[float, float, float, int]:
    """Relative change ``mean(a) / mean(b) - 1`` of two per-trial samples drawn with common random numbers
    (trial ``i`` of both under the same draws), with a 95% delta-method interval over the paired trials.

    Args:
        a, b: ``(trials,)`` per-trial values (e.g. :attr:`gclib.simulator.SimResult.time`); trials where either is
            not finite are left out.
    Returns:
        ``(change, lo, hi, trials used)``; the interval is NaN with fewer than two paired trials. With
        ``r = mean(a) / mean(b)``, ``var(r) ~ var(a_i - r b_i) / (N mean(b)^2)``.
    """
    a, b = _pairs(a, b)
    N = int(a.size)
    if N == 0 or b.mean() == 0:
        return math.nan, math.nan, math.nan, N
    r = float(a.mean() / b.mean())
    if N < 2:
        return r - 1, math.nan, math.nan, N
    half = Z95 * float(np.std(a - r * b, ddof=1)) / (math.sqrt(N) * abs(float(b.mean())))
    return r - 1, r - 1 - half, r - 1 + half, N


def paired_sign(a, b) -> Estimate:
    """The fraction of pairs with ``a < b`` (ties count one half), with its Wilson 95% interval: a sign test
    that needs no moments, for samples whose variance may be infinite (a heavy tail). Above 1/2 beyond the
    interval: ``a`` is smaller in most pairs."""
    a, b = _pairs(a, b)
    n = int(a.size)
    wins = float(np.sum(a < b) + 0.5 * np.sum(a == b))
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    lo, hi = wilson(wins, n)
    p = wins / n
    return Estimate(p, min(lo, p), max(hi, p), n)


@dataclass(frozen=True)
class PairedMatrix:
    """Means and covariances of many designs' per-trial values under common random numbers (from
    :func:`paired_matrix`): every pairwise paired difference without forming it.

    Attributes:
        mean: ``(designs,)``. cov: ``(designs, designs)`` sample covariance over the ``n`` trials kept.
        n: trials kept (those where every design is finite).
    """

    mean: np.ndarray
    cov: np.ndarray
    n: int

    def difference(self, i: int, j: int) -> Estimate:
        """Mean of ``value_i - value_j`` over the trials with its normal 95% interval."""
        m = float(self.mean[i] - self.mean[j])
        if self.n < 2:
            return Estimate(m, math.nan, math.nan, self.n)
        half = Z95 * math.sqrt(float(self._difference_variance()[i, j]) / self.n)
        return Estimate(m, m - half, m + half, self.n)

    def _difference_variance(self) -> np.ndarray:
        """``(designs, designs)`` variance of each paired difference, ``cov_ii + cov_jj - 2 cov_ij``. The sum
        cancels: where two designs differ by a constant it is rounding noise of the size of the variances times
        the machine's epsilon, so anything below :data:`CANCELLATION_RTOL` of ``cov_ii + cov_jj`` is zero."""
        d = np.diag(self.cov)
        total = d[:, None] + d[None, :]
        var = total - 2 * self.cov
        return np.where(var <= CANCELLATION_RTOL * total, 0.0, var)

    def half_widths(self) -> np.ndarray:
        """``(designs, designs)`` half-widths of every paired difference's 95% interval."""
        if self.n < 2:
            return np.full(self.cov.shape, np.nan)
        return Z95 * np.sqrt(self._difference_variance() / self.n)


def paired_matrix(x) -> PairedMatrix:
    """:class:`PairedMatrix` of ``x`` ``(designs, trials)``: the trials where every design is finite, their
    means and covariance (one matrix product, so thousands of designs stay cheap)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"x must be a (designs, trials) array, got shape {x.shape}")
    keep = np.isfinite(x).all(axis=0)
    x = x[:, keep]
    n = int(x.shape[1])
    mean = x.mean(axis=1) if n else np.full(x.shape[0], np.nan)
    if n < 2:
        return PairedMatrix(mean, np.full((x.shape[0], x.shape[0]), np.nan), n)
    c = x - mean[:, None]
    return PairedMatrix(mean, c @ c.T / (n - 1), n)


__all__ = ["Estimate", "PairedMatrix", "Z95", "mean_ci", "median_ci", "paired_change", "paired_difference", "paired_matrix",
           "paired_sign", "percentile_interval", "basic_interval", "proportion", "wilson"]
