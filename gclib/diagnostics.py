"""Numerical diagnostics of decoding: condition numbers and decoding errors, per pattern and worst case, and what
the decoder does (silent, warned, refused). The measures themselves are in :mod:`gclib.codes.conditioning`."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from gclib.codes.base import DecodingError, GradientCode
from gclib.codes.conditioning import IllConditionedWarning, condition_number, decoding_amplification, decoding_error
from gclib.progress import progress as _progress



@dataclass
class PatternDiagnostics:
    """Diagnostics of one received set."""

    stragglers: tuple
    cond: float
    residual: float
    error: float
    amplification: float = float("nan")


def pattern(code: GradientCode, stragglers, *, length: int = 64, dtype=np.float64, rng=None) -> PatternDiagnostics:
    """Decode with the given workers straggling.

    Returns the condition number of the decoding system ``B[received]`` (singular values below ``1e-12`` of the
    largest count as zero, so it saturates near ``1e12``), the error amplification of the decode
    (:func:`gclib.codes.conditioning.decoding_amplification`, which does not saturate), the residual
    ``max |A @ B[received] - target|`` and the relative error ``|g_hat - g| / |g|`` of the decoded gradient for a
    random Gaussian gradient (messages computed and decoded in ``dtype``).
    """
    rng = np.random.default_rng(rng)
    stragglers = tuple(int(w) for w in stragglers)
    idx = code.surviving(stragglers)
    BR = code.B[idx]
    cond = condition_number(BR)
    A = code.try_decode(idx)
    if A is None:
        return PatternDiagnostics(stragglers, cond, np.inf, np.inf, np.inf)
    residual = float(np.abs(A @ BR - code.target).max())
    g = rng.standard_normal((code.n_parts, length))
    err = decoding_error(code, A, idx, g, dtype)
    amp = decoding_amplification(BR, A, code.target)
    return PatternDiagnostics(stragglers, cond, residual, err, amp)


def worst_case(code: GradientCode, stragglers: int | None = None, *, max_patterns: int = 2000, seed=0,
               length: int = 64, dtype=np.float64) -> dict:
    """Condition number and decoding error over straggler patterns.

    Enumerates every pattern of ``stragglers`` (default: the code's ``s``) workers when there are at most
    ``max_patterns`` of them, and samples ``max_patterns`` patterns uniformly otherwise (``enumerated`` says
    which).

    Returns:
        dict with ``worst_cond``, ``median_cond``, ``worst_amplification``, ``median_amplification``,
        ``worst_error``, ``median_error``, ``worst_residual``,
        ``worst_pattern`` (the stragglers of the worst condition number), ``patterns``, ``enumerated``.
    """
    s = code.stragglers if stragglers is None else stragglers
    n = code.n_workers
    if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or not 0 <= s < n:
        raise ValueError(f"stragglers must be an integer in [0, {n - 1}], got {s!r}")
    rng = np.random.default_rng(seed)
    total = comb(n, s)
    if total <= max_patterns:
        pats = list(combinations(range(n), s))
        enumerated = True
    else:
        pats = [tuple(sorted(rng.choice(n, size=s, replace=False).tolist())) for _ in range(max_patterns)]
        enumerated = False
    res = [pattern(code, p, length=length, dtype=dtype, rng=rng) for p in pats]
    conds = np.array([r.cond for r in res])
    amps = np.array([r.amplification for r in res])
    errs = np.array([r.error for r in res])
    worst = int(np.argmax(conds))
    return {"worst_cond": float(conds.max()), "median_cond": float(np.median(conds)),
            "worst_error": float(errs.max()), "median_error": float(np.median(errs)),
            "worst_amplification": float(amps.max()), "median_amplification": float(np.median(amps)),
            "worst_residual": float(max(r.residual for r in res)), "worst_pattern": list(res[worst].stragglers),
            "patterns": len(pats), "enumerated": enumerated}


def decoder_outcome(code: GradientCode, stragglers=None) -> dict:
    """What :meth:`GradientCode.decode` does when the given workers straggle (default: workers ``0 .. s-1``).

    Returns:
        dict with ``n, s, kappa`` (the decode's error amplification, from the decoder's coefficients without
        the residual check), ``outcome`` (``"silent"``: decoded without a warning; ``"warned"``: decoded with an
        ``IllConditionedWarning``; ``"refused"``: raised ``DecodingError``) and ``message`` (the warning's or the
        error's text, empty when silent).
    """
    stragglers = range(code.stragglers) if stragglers is None else stragglers
    idx = code.surviving(tuple(int(w) for w in stragglers))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IllConditionedWarning)
        try:
            code.decode(idx)
            warned = [w for w in caught if issubclass(w.category, IllConditionedWarning)]
            outcome, message = ("warned", str(warned[0].message)) if warned else ("silent", "")
        except DecodingError as e:
            outcome, message = "refused", str(e)
    A = code.try_decode(idx)
    with np.errstate(all="ignore"):
        kappa = np.inf if A is None else decoding_amplification(code.B[idx], A, code.target)
    return {"n": code.n_workers, "s": code.stragglers, "kappa": float(kappa), "outcome": outcome,
            "message": message}


def decoder_outcomes(codes) -> pd.DataFrame:
    """:func:`decoder_outcome` of every code of ``{case label: code}`` (default stragglers).

    Returns:
        ``pandas.DataFrame`` with ``case, n, s, kappa, outcome, message``, one row per code.
    """
    return pd.DataFrame([{"case": label, **decoder_outcome(code)} for label, code in codes.items()])


def conditioning(build, ns, seeds, *, s_fraction: float = 0.25, max_patterns: int = 2000, length: int = 64,
                 progress: bool = False):
    """Worst and median condition number and float64 decoding error of a random construction against ``n``.

    For every ``n`` in ``ns`` and every seed, the code ``build(n, s, seed)`` with ``s = max(1, floor(s_fraction *
    n))`` goes through :func:`worst_case` (every pattern when there are at most ``max_patterns``, a uniform sample
    of that many otherwise; the sample's worst is a lower bound of the true worst).

    Args:
        build: ``build(n, s, seed) -> GradientCode`` (e.g. :func:`gclib.codes.crc`).
        ns: numbers of workers. seeds: a number of seeds (``0 .. seeds - 1``) or the seeds themselves.
    Returns:
        ``pandas.DataFrame``, one row per (n, seed): ``n, s, seed, worst_cond, median_cond, worst_error,
        median_error, enumerated``.
    """
    if not 0 < s_fraction < 1:
        raise ValueError(f"s_fraction must lie in (0, 1), got {s_fraction!r}")
    seeds = list(range(seeds)) if isinstance(seeds, (int, np.integer)) else list(seeds)
    grid = [(int(n), sd) for n in ns for sd in seeds]
    rows = []
    for n, sd in _progress(grid, "conditioning", progress):
        s = max(1, int(s_fraction * n))
        d = worst_case(build(n, s, sd), max_patterns=max_patterns, seed=sd, length=length)
        rows.append({"n": n, "s": s, "seed": sd, **{k: d[k] for k in ("worst_cond", "median_cond", "worst_error",
                                                                       "median_error", "enumerated")}})
    return pd.DataFrame(rows)


def conditioning_summary(df):
    """Median over seeds, per ``n``, of the worst condition number and the worst decoding error of a
    :func:`conditioning` table: ``pandas.DataFrame`` indexed by ``n`` with ``worst_cond, worst_error``."""
    return df.groupby("n")[["worst_cond", "worst_error"]].median()
