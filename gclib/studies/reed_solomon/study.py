"""Numerical stability of decoding: condition number and relative decoding error, per construction and points.

For one code, :func:`measure` decodes over straggler patterns (every pattern when there are at most
``max_patterns``, else a sample: structured patterns - runs of consecutive workers and runs of workers whose
evaluation points are neighbours, the usual worst cases of polynomial codes - plus uniform random ones) and
reports the worst over all of them and the median (typical) over the uniform ones only (over every pattern when
they were enumerated; the structured ones would pull a median towards the worst case) of

* ``kappa``: the decoding condition number as an error amplification factor
  (:func:`gclib.codes.conditioning.decoding_amplification`, the quantity the decoder's ``IllConditionedWarning`` tests
  against ``COND_WARN``); ``eps * kappa`` predicts the relative error;
* ``cond``: 2-norm condition number of the rows the decoder actually uses, ``sigma_1 / sigma_r`` with ``r`` the
  rank a decodable set has (no truncation, so values above ``1e16`` are reported as computed: they mean
  "numerically singular"). It is not invariant under scaling of the messages and overstates the error of
  polynomial codes with equispaced points by many orders of magnitude, so ``kappa`` is the one to read;
* ``error64`` / ``error32``: ``|g_hat - g| / |g|`` for a random Gaussian gradient whose messages are computed
  in float64 / float32 (complex128 / complex64 for complex points) and decoded with the code's fast decoder
  (coefficients in float64, rounded to the working precision).

:func:`study` runs a grid of constructions, sizes and point choices into a ``pandas.DataFrame``
(one row per code), and :data:`CONSTRUCTIONS` names the builders.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Callable

import numpy as np
import pandas as pd

from gclib.codes import crc, kadhe, rs, ye_abbe
from gclib.codes.base import GradientCode
from gclib.codes.conditioning import decoding_amplification, decoding_condition, decoding_error
from gclib.progress import progress as _progress
from gclib.stats import Estimate


def _rs(n, s, m, points, assign, seed):
    return rs(n, s, points, assign=assign)


def _ye_abbe(n, s, m, points, assign, seed):
    return ye_abbe(n, s, m, points, assign=assign)


def _kadhe_gauss(n, s, m, points, assign, seed):
    return kadhe(n, s, m, "gaussian", seed)


def _crc(n, s, m, points, assign, seed):
    return crc(n, s, seed)


#: construction name -> ``builder(n, s, m, points, assign, seed) -> GradientCode``; ``uses_points`` lists the
#: constructions whose evaluation points matter.
CONSTRUCTIONS: dict[str, Callable] = {"rs": _rs, "ye-abbe": _ye_abbe, "kadhe": _kadhe_gauss, "crc": _crc}
USES_POINTS = ("rs", "ye-abbe")




def patterns(code: GradientCode, s: int, max_patterns: int, rng: np.random.Generator) -> tuple[list, bool, int]:
    """Straggler patterns to test: all ``C(n, s)`` when at most ``max_patterns``, else runs of ``s`` consecutive
    workers (at ``min(n, 20)`` offsets), runs of ``s`` workers with neighbouring evaluation points (polynomial
    codes), at most half of ``max_patterns``, then distinct uniform random patterns (none of them structured), up
    to ``max_patterns`` in all.

    Returns:
        ``(patterns, enumerated, first_uniform)``: ``patterns[first_uniform:]`` are the enumerated (then
        ``first_uniform = 0``) or the uniform random ones, the sample a typical (median) value is read from.
    """
    n = code.n_workers
    if comb(n, s) <= max_patterns:
        return [tuple(p) for p in combinations(range(n), s)], True, 0
    pats = set()
    if s:
        offsets = np.unique(np.linspace(0, n - 1, min(n, 20)).astype(int))
        runs = [np.arange(n)]
        pts = code.decoder.points
        if pts is not None:
            key = np.angle(pts) if np.iscomplexobj(pts) else pts
            runs.append(np.argsort(key, kind="stable"))
        for order in runs:
            for o in offsets:
                pats.add(tuple(sorted(order[(o + np.arange(s)) % n].tolist())))
    pats = sorted(pats)[: max_patterns // 2]
    first_uniform = len(pats)
    seen = set(pats)
    tries = 0
    while len(pats) < max_patterns and tries < 20 * max_patterns:
        p = tuple(sorted(rng.choice(n, size=s, replace=False).tolist()))
        tries += 1
        if p not in seen:
            seen.add(p)
            pats.append(p)
    return pats, False, first_uniform


def measure(code: GradientCode, stragglers: int | None = None, *, max_patterns: int = 200, seed=0,
            length: int = 32) -> dict:
    """Worst and median condition number and relative decoding error (float64 and float32) over patterns: the
    worst over every pattern of :func:`patterns`, the median over its enumerated or uniform random ones.

    Returns:
        dict with ``worst_kappa, median_kappa, worst_cond, median_cond, worst_error64, median_error64,
        median_error64_lo, median_error64_hi`` (the median's 95% interval, :meth:`gclib.claims.Estimate.median`:
        equal to it when every pattern was enumerated, NaN below six uniform patterns), ``worst_error32,
        median_error32, failed`` (patterns the decoder refused), ``patterns``, ``uniform_patterns`` (those the
        medians are read from), ``enumerated``, ``worst_pattern`` (the pattern of the worst float64 error).
    """
    s = code.stragglers if stragglers is None else stragglers
    rng = np.random.default_rng(seed)
    pats, enumerated, first = patterns(code, s, max_patterns, rng)
    g = rng.standard_normal((code.n_parts, length))
    conds, kappas, e64, e32, failed = [], [], [], [], 0
    for p in pats:
        idx = code.surviving(p)
        A = code.try_decode(idx)
        if A is None:
            failed += 1
            conds.append(np.inf)
            kappas.append(np.inf)
            e64.append(np.inf)
            e32.append(np.inf)
            continue
        with np.errstate(all="ignore"):
            conds.append(decoding_condition(code, idx, A))
            kappas.append(decoding_amplification(code.B[idx], A, code.target))
            e64.append(decoding_error(code, A, idx, g, np.float64))
            e32.append(decoding_error(code, A, idx, g, np.float32))
    conds, kappas, e64, e32 = map(np.asarray, (conds, kappas, e64, e32))
    worst = int(np.argmax(e64))
    med = Estimate.exact(np.median(e64)) if enumerated else Estimate.median(e64[first:])
    return {"worst_kappa": float(kappas.max()), "median_kappa": float(np.median(kappas[first:])),
            "worst_cond": float(conds.max()), "median_cond": float(np.median(conds[first:])),
            "worst_error64": float(e64.max()), "median_error64": med.value, "median_error64_lo": med.lo,
            "median_error64_hi": med.hi,
            "worst_error32": float(e32.max()), "median_error32": float(np.median(e32[first:])),
            "failed": failed, "patterns": len(pats), "uniform_patterns": len(pats) - first,
            "enumerated": enumerated, "worst_pattern": list(pats[worst])}


@dataclass(frozen=True)
class CodeSetting:
    """One code of a stability study."""

    construction: str
    n: int
    s: int
    m: int = 1
    points: str = "-"
    assign: str = "-"


def divisor_stragglers(n: int, m: int, count: int = 4, s_max: int | None = None) -> list[int]:
    """Up to ``count`` straggler numbers ``1 <= s <= s_max`` (default ``n // 2``) with ``(s + m) | n`` (so that
    Kadhe's groups tile the workers), spread from the smallest to the largest."""
    s_max = n // 2 if s_max is None else s_max
    ss = [d - m for d in range(m + 1, n + 1) if n % d == 0 and 1 <= d - m <= s_max]
    if len(ss) <= count:
        return ss
    pick = np.unique(np.round(np.linspace(0, len(ss) - 1, count)).astype(int))
    return [ss[i] for i in pick]


def grid(ns, m: int = 2, *, constructions=("rs", "ye-abbe", "kadhe"), points=("chebyshev", "equispaced",
         "roots-of-unity"), assigns=("spread", "natural"), per_n: int = 4) -> list[CodeSetting]:
    """The configurations of a study: for every ``n``, the straggler numbers of :func:`divisor_stragglers`;
    ``rs`` uses ``m = 1`` (its load is ``s + 1``), the communication-efficient codes use ``m``."""
    out = []
    for n in ns:
        for s in divisor_stragglers(n, m, per_n):
            for c in constructions:
                mm = 1 if c in ("rs", "crc") else m
                if c in USES_POINTS:
                    out += [CodeSetting(c, n, s, mm, p, a) for p in points for a in assigns]
                else:
                    out.append(CodeSetting(c, n, s, mm))
    return out


def study(configs, *, max_patterns: int = 100, seed=0, length: int = 32, progress: bool = False):
    """Measure every configuration (see :func:`measure`).

    Returns:
        ``pandas.DataFrame``, one row per configuration: ``construction, n, s, m, points, assign, label`` and the
        fields of :func:`measure` (``worst_pattern`` dropped).
    """
    rows = []
    for cfg in _progress(list(configs), "stability", progress):
        code = CONSTRUCTIONS[cfg.construction](cfg.n, cfg.s, cfg.m, cfg.points, cfg.assign, seed)
        r = measure(code, max_patterns=max_patterns, seed=seed, length=length)
        r.pop("worst_pattern")
        label = cfg.construction if cfg.points == "-" else f"{cfg.construction} {cfg.points} {cfg.assign}"
        rows.append({**cfg.__dict__, "label": label, **r})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------- studies of the notebooks
#: the point families and assignments of the polynomial studies, in the order of their tables.
STUDY_POINTS = ("equispaced", "chebyshev", "roots-of-unity")
STUDY_ASSIGNS = ("spread", "natural")


def fraction_grid(ns, s_fracs, *, points=STUDY_POINTS, assigns=STUDY_ASSIGNS) -> list[tuple[float, CodeSetting]]:
    """RS configurations with ``s = max(1, round(frac * n))`` for every ``n`` and fraction (pairs with
    ``s >= n`` are skipped), each point family and assignment.

    Returns:
        ``[(frac, CodeSetting), ...]`` in the order ``n``, fraction, points, assignment.
    """
    out = []
    for n in ns:
        for f in s_fracs:
            s = max(1, int(round(f * n)))
            if s >= n:
                continue
            out += [(f, CodeSetting("rs", n, s, 1, p, a)) for p in points for a in assigns]
    return out


def fraction_study(ns, s_fracs, *, max_patterns: int = 100, seed=0, progress: bool = False):
    """:func:`study` of :func:`fraction_grid`, with the straggler fraction of every row in a column ``s/n``.

    Returns:
        ``pandas.DataFrame``: the columns of :func:`study` and ``s/n``.
    """
    pairs = fraction_grid(ns, s_fracs)
    if not pairs:
        raise ValueError(f"ns and s_fracs leave no code to study (s = max(1, round(frac * n)) >= n for every pair), "
                         f"got ns = {list(ns)!r}, s_fracs = {list(s_fracs)!r}")
    df = study([c for _, c in pairs], max_patterns=max_patterns, seed=seed, progress=progress)
    df["s/n"] = [f for f, _ in pairs]
    return df


def regime_study(ns, m: int = 2, *, constructions=("ye-abbe", "kadhe"), max_patterns: int = 100, seed=0,
                 progress: bool = False):
    """:func:`study` of :func:`grid` with two straggler numbers per ``n`` (the smallest and the largest
    ``s <= n/2`` with ``(s + m) | n``), each row labelled by its ``regime``: ``"smallest s"`` or
    ``"largest s <= n/2"``.

    Returns:
        ``pandas.DataFrame``: the columns of :func:`study` with ``regime`` before ``label`` (the last column).
    """
    df = study(grid(ns, m, constructions=constructions, per_n=2), max_patterns=max_patterns, seed=seed,
               progress=progress)
    first = {n: min(divisor_stragglers(n, m, 2)) for n in set(df["n"])}
    df["regime"] = ["smallest s" if s == first[n] else "largest s <= n/2" for s, n in zip(df["s"], df["n"])]
    return df[[c for c in df.columns if c != "label"] + ["label"]]


def limit_table(df, by, *, tol: float = 1e-6, column: str = "worst_error64"):
    """Per group of ``by``: how far in ``n`` the ``column`` stays below ``tol``.

    Returns:
        ``pandas.DataFrame`` with the ``by`` columns and ``largest_ok_n`` (the largest ``n`` of the sweep up to
        which every ``n`` of the group is below ``tol``; NaN when the smallest already is not),
        ``first_failing_n`` (the smallest ``n`` that is not below ``tol``; NaN when none) and ``max_n``.
    """
    by = list(by)
    rows = []
    for key, g in df.groupby(by, sort=True):
        g = g.sort_values("n")
        bad = g.loc[~(g[column] < tol), "n"]
        first = float(bad.min()) if len(bad) else np.nan
        ok = g.loc[g["n"] < first, "n"] if len(bad) else g["n"]
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))),
                     "largest_ok_n": float(ok.max()) if len(ok) else np.nan, "first_failing_n": first,
                     "max_n": float(g["n"].max())})
    return pd.DataFrame(rows)


def vandermonde_points(n: int, points: str) -> np.ndarray:
    """``(n,)`` points on ``[-1, 1]`` in their natural order: ``"equispaced"`` (``linspace``) or ``"chebyshev"``
    (nodes of the first kind, ``cos((2i + 1) pi / 2n)``)."""
    if points == "equispaced":
        return np.linspace(-1.0, 1.0, n)
    if points == "chebyshev":
        return np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))
    raise ValueError(f"points must be 'equispaced' or 'chebyshev', got {points!r}")


def worst_vandermonde(n: int, s: int, points: str) -> float:
    """The largest 2-norm condition number of the square Vandermonde matrix (monomial basis) of the points of
    ``n - s`` survivors, over all ``C(n, s)`` straggler sets (points of :func:`vandermonde_points`)."""
    if not (isinstance(n, (int, np.integer)) and isinstance(s, (int, np.integer)) and 0 <= s < n):
        raise ValueError(f"need integers 0 <= s < n, got n = {n!r}, s = {s!r}")
    a = vandermonde_points(n, points)
    worst = 0.0
    for st in combinations(range(n), s):
        keep = np.setdiff1d(np.arange(n), st)
        worst = max(worst, float(np.linalg.cond(np.vander(a[keep]))))
    return worst


def vandermonde_table(sizes):
    """:func:`worst_vandermonde` for every ``(n, s)`` of ``sizes``, both point families.

    Returns:
        ``pandas.DataFrame`` with ``n, s, equispaced, chebyshev``.
    """
    return pd.DataFrame([{"n": n, "s": s, "equispaced": worst_vandermonde(n, s, "equispaced"),
                          "chebyshev": worst_vandermonde(n, s, "chebyshev")} for n, s in sizes])
