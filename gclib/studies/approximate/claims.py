"""Claims of notebook 13: approximate gradient codes.

Papers: Raviv, Tamo, Tandon and Dimakis, "Gradient Coding from Cyclic MDS Codes and Expander Graphs" (ICML 2018,
arXiv 1707.03858); Glasgow and Wootters, "Approximate Gradient Coding with Optimal Decoding" (IEEE JSAIT 2021,
arXiv 2006.09638); Bitar, Wootters and El Rouayheb, "Stochastic Gradient Coding for Straggler Mitigation in
Distributed Learning" (IEEE JSAIT 2020, arXiv 1905.05383). Only their abstracts and the authors' public benchmark
code were available here: a row would be of kind ``paper`` only where an abstract states the claim as we test it;
none does (each needs a reading: another code, another measure, or a reversed wording), so the rows are ``reading``
where we read a claim into an abstract (or take it from the authors' code) and ``check`` for our own tests.

:func:`judge` turns the notebook's tables into the claims table; every threshold is a constant below, fixed before
the numbers were read. The claims' texts and criteria are the table :data:`CLAIMS` of :class:`gclib.claims.Claim`
entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gclib.claims import CHECK, INCONCLUSIVE, READING, Claim, Estimate, all_hold, exact, less, table
from gclib.stats import paired_difference
from gclib.studies.approximate.training import floors, time_to

RAVIV = "Raviv, Tamo, Tandon and Dimakis (ICML 2018, arXiv 1707.03858)"
GW = "Glasgow and Wootters (IEEE JSAIT 2021, arXiv 2006.09638)"
#: An exact decode's error is at most this (round-off of an ill-conditioned CRC decode included).
ROUNDOFF = 1e-6
#: The coarse relative gap of the time-to-accuracy comparison.
COARSE = 1e-3


_BELOW_0 = "holds when the interval lies below 0, does not hold above"
CLAIMS = {c.id: c for c in (
    Claim("A1", READING, "the error grows gracefully with the number of stragglers",
          f"{RAVIV}, abstract: approximate GC 'enables graceful degradation, i.e., the l2 error of the approximate "
          f"gradient is a decreasing function of the number of stragglers'; taken literally the error would fall as "
          f"stragglers are added, so we read graceful degradation: the error decreases in the number of "
          f"non-stragglers, i.e. grows with the straggler fraction, and test that it grows",
          "holds when, for both decoders, each fraction's interval lies above the previous one's"),
    Claim("A2", READING, "the optimal decoder's error is below the fixed decoder's",
          f"{GW} analyse the optimal (least-squares) decoding coefficients and report faster convergence than without "
          f"them; we read a smaller error at every straggler fraction",
          "holds when every interval lies below 0"),
    Claim("A3", READING, "the fixed decoder's error is within the spectral bound for every straggler set",
          f"{RAVIV}: the bound (lambda / d) sqrt(n s / (n - s)) of the authors' public benchmark code (the paper body "
          f"was not available here); it follows from the expander mixing of the normalized adjacency matrix",
          "holds when no decode exceeds its graph's bound (an exact count over every decode)"),
    Claim("A4", CHECK, "agrees with the authors' published benchmark",
          "our check against the means published with the authors' public code (n = 50, d = 3, s = 3 .. 7, 10 graphs "
          "x 100 straggler sets)",
          "holds when every mean is within 4 sqrt(2) standard errors of a mean over the graphs (+ 1e-3 for their "
          "rounding) of the published one"),
    Claim("A5", CHECK, "the exact code of the same load (CRC, d - 1 = {d1} stragglers) decodes exactly up to its "
                       "tolerance", "our check",
          "holds when the worst error is at most {roundoff:g} (round-off); inconclusive when no fraction has "
          "s <= {d1}"),
    Claim("A6", CHECK, "beyond its tolerance, the exact code's least-squares decode errs more than the expander "
                       "code's optimal decode", "our check (same load d, same straggler sets)",
          "holds when every interval lies below 0"),
    Claim("T1", READING, "gradient descent with the optimal decoding coefficients gets closer to the optimum",
          f"{GW}, abstract: their codes 'converge faster than algorithms which do not use the optimal decoding "
          f"coefficients'; that is about their own codes and about speed. We read it on Raviv et al.'s expander code "
          f"of load d (optimal against fixed coefficients) and judge the level a run settles at, not the speed",
          _BELOW_0),
    Claim("T2", READING, "the expander code converges closer than the trivial solution (ignore stragglers)",
          f"{RAVIV}, abstract: expander codes 'guarantee faster convergence than trivial solutions under standard "
          f"assumptions'; we read 'trivial' as ignore-stragglers and judge how close the runs get (the level they "
          f"settle at), not how fast: the time to a coarse gap is row T5",
          _BELOW_0),
    Claim("T3", CHECK, "with a constant step the approximate codes stall at a noise floor the exact codes pass",
          "our check (Glasgow and Wootters: gradient descent converges 'down to a noise floor' in the adversarial "
          "setting)",
          "holds when every exact run reaches the target and every approximate run settles above it"),
    Claim("T4", CHECK, f"at the same load, the expander code reaches a coarse gap ({COARSE:g}) sooner than the exact "
                       f"code",
          "our check: the approximate code waits for n - s workers, the exact one for n - d + 1", _BELOW_0),
    Claim("T5", CHECK, f"yet ignore-stragglers, at load 1, reaches the coarse gap ({COARSE:g}) sooner than the "
                       f"expander code of load d",
          "our check, the other side of T2: both wait for n - s workers, but a worker of ignore-stragglers computes "
          "one part, not d", _BELOW_0),
)}


def _g(x) -> str:
    return f"{x:.3g}"


def _increasing(summary: pd.DataFrame, scheme: str):
    g = summary[summary["scheme"] == scheme].sort_values("fraction")
    ests = [Estimate.mean_ci(m, c) for m, c in zip(g["error"], g["error_ci"])]
    verdicts = [less(a, b) for a, b in zip(ests, ests[1:])]
    text = ", ".join(f"{f:g}: {e.text()}" for f, e in zip(g["fraction"], ests))
    return verdicts, f"{scheme}: {text}"


def _paired_by_graph(sweep: pd.DataFrame, a: str, b: str, fraction: float) -> Estimate:
    sub = sweep[sweep["fraction"] == fraction]
    ma = sub[sub["scheme"] == a].groupby("graph")["error"].mean()
    mb = sub[sub["scheme"] == b].groupby("graph")["error"].mean()
    return paired_difference(ma.to_numpy(), mb.reindex(ma.index).to_numpy())


def _decoder_rows(sweep: pd.DataFrame, summary: pd.DataFrame, setting: str) -> list:
    """``A1``: the error grows with the straggler fraction; ``A2``: the optimal decoder against the fixed one."""
    parts, verdicts = [], []
    for scheme in ("expander, optimal", "expander, fixed"):
        v, text = _increasing(summary, scheme)
        verdicts += v
        parts.append(text)
    fracs = sorted(sweep["fraction"].unique())
    diffs = {f: _paired_by_graph(sweep, "expander, optimal", "expander, fixed", f) for f in fracs}
    return [CLAIMS["A1"].row(setting=setting, measured="mean error [95%] by fraction; " + "; ".join(parts),
                             verdict=all_hold(verdicts)),
            CLAIMS["A2"].row(setting=setting + "; paired on the same graphs and straggler sets",
                             measured="optimal - fixed, mean over graphs [95%]: "
                                      + "; ".join(f"{f:g}: {e.text()}" for f, e in diffs.items()),
                             verdict=all_hold(less(e, 0.0) for e in diffs.values()))]


def _benchmark_rows(bench: pd.DataFrame, bench_table: pd.DataFrame) -> list:
    """``A3``: the spectral bound on every decode of the benchmark; ``A4``: our means against the published
    ones."""
    excess = float((bench["fixed"] - bench["bound"]).max())
    parts, verdicts = [], []
    for _, r in bench_table.iterrows():
        for col in ("bound", "fixed", "optimal"):
            ref = r[f"published_{col}"]
            if ref != ref:
                continue
            ok = abs(r[col] - ref) <= r[f"{col}_tol"]
            verdicts.append(exact(ok) if r[f"{col}_tol"] == r[f"{col}_tol"] else INCONCLUSIVE)
            parts.append(f"s = {int(r['s'])} {col}: {_g(r[col])} vs {_g(ref)} (tol {_g(r[f'{col}_tol'])})")
    runs = f"{bench['graph'].nunique()} graphs x {bench['draw'].nunique()} sets"
    return [CLAIMS["A3"].row(setting=f"the benchmark: n = 50, d = 3, s = "
                                     f"{', '.join(str(s) for s in sorted(bench['s'].unique()))}, {runs} each",
                             measured=f"largest error - bound over {len(bench)} decodes: {excess:.3g}",
                             verdict=exact(excess <= 1e-12)),
            CLAIMS["A4"].row(setting=f"our run: {runs} per s, our own random regular graphs and draws",
                             measured="ours vs published: " + "; ".join(parts),
                             verdict=all_hold(verdicts) if verdicts else INCONCLUSIVE)]


def _exact_code_rows(sweep: pd.DataFrame, summary: pd.DataFrame, d: int, setting: str) -> list:
    """``A5``: CRC of the same load decodes exactly up to its tolerance; ``A6``: beyond it, against the expander
    code's optimal decode."""
    crc = summary[summary["scheme"] == "CRC (exact)"]
    tolerated = crc[crc["s"] <= d - 1]
    worst = float(tolerated["worst_error"].max()) if len(tolerated) else math.nan
    beyond = sorted(crc.loc[crc["s"] > d - 1, "fraction"])
    cmp = {f: _paired_by_graph(sweep, "expander, optimal", "CRC (exact)", f) for f in beyond}
    compared = "; ".join(f"{f:g}: {e.text()}" for f, e in cmp.items()) or "no fraction beyond"
    return [CLAIMS["A5"].row(setting=setting, d1=d - 1, roundoff=ROUNDOFF,
                             measured=(f"worst error at s <= {d - 1}: {worst:.2g}" if len(tolerated)
                                       else f"no fraction with s <= {d - 1}"),
                             verdict=exact(worst <= ROUNDOFF) if len(tolerated) else INCONCLUSIVE),
            CLAIMS["A6"].row(setting=setting + "; paired on the graph index",
                             measured=f"expander optimal - CRC, mean over graphs [95%]: {compared}",
                             verdict=all_hold(less(e, 0.0) for e in cmp.values()) if cmp else INCONCLUSIVE)]


def error_rows(sweep: pd.DataFrame, summary: pd.DataFrame, bench: pd.DataFrame, bench_table: pd.DataFrame, *, n: int,
               d: int, setting: str) -> list:
    """The rows judged from the error study (``A1`` .. ``A6``)."""
    return [*_decoder_rows(sweep, summary, setting), *_benchmark_rows(bench, bench_table),
            *_exact_code_rows(sweep, summary, d, setting)]


def _paired_log(df: pd.DataFrame, value: str, a: str, b: str) -> Estimate:
    pa = df[df["scheme"] == a].set_index("seed")[value]
    pb = df[df["scheme"] == b].set_index("seed")[value].reindex(pa.index)
    return paired_difference(np.log10(pa.to_numpy()), np.log10(pb.to_numpy()))


def training_rows(totals: pd.DataFrame, floors: pd.DataFrame, times: pd.DataFrame, *, rel_target: float,
                  setting: str) -> list:
    """The rows judged from the training runs (``T1`` .. ``T5``)."""
    e1 = _paired_log(floors, "floor", "expander, optimal", "expander, fixed")
    e2 = _paired_log(floors, "floor", "expander, optimal", "ignore stragglers")
    approx = floors[~floors["scheme"].isin(("CRC (exact)", "uncoded"))]
    exact_runs = totals[totals["scheme"].isin(("CRC (exact)", "uncoded"))]
    lowest = float(approx["floor"].min())
    ok = bool((exact_runs["status"] == "converged").all()) and lowest > rel_target
    t = times[times["level"] == COARSE]
    e4 = _paired_log(t, "time", "expander, optimal", "CRC (exact)")
    e5 = _paired_log(t, "time", "ignore stragglers", "expander, optimal")
    return [
        CLAIMS["T1"].row(setting=setting + "; the level a run settles at: median gap over its last quarter",
                         measured=f"log10(optimal / fixed) of that level, mean over seeds [95%]: {e1.text()}",
                         verdict=less(e1, 0.0)),
        CLAIMS["T2"].row(setting=setting, measured=f"log10(expander optimal / ignore) of that level [95%]: "
                                                   f"{e2.text()}",
                         verdict=less(e2, 0.0)),
        CLAIMS["T3"].row(setting=setting,
                         measured=f"exact runs converged: {int((exact_runs['status'] == 'converged').sum())} of "
                                  f"{len(exact_runs)}; lowest level of an approximate run: {lowest:.3g} (target "
                                  f"{rel_target:g})",
                         verdict=exact(ok)),
        CLAIMS["T4"].row(setting=setting, measured=f"log10(expander optimal / CRC) of the time to it [95%]: "
                                                   f"{e4.text()}",
                         verdict=less(e4, 0.0)),
        CLAIMS["T5"].row(setting=setting, measured=f"log10(ignore / expander optimal) of the time to it [95%]: "
                                                   f"{e5.text()}",
                         verdict=less(e5, 0.0)),
    ]


def judge(sweep, summary, bench, bench_table, totals, curves, *, d: int, rel_target: float, workers: int,
          stragglers: int, shape: float, problem: str) -> pd.DataFrame:
    """The claims table of notebook 13 from its tables (see :func:`error_rows`, :func:`training_rows`): the
    error study's ``sweep`` and ``summary`` (:mod:`gclib.studies.approximate.study`), the benchmark and its table,
    and the training runs' ``totals`` and ``curves`` (:func:`gclib.studies.approximate.training.runs`)."""
    n = int(sweep["n"].iloc[0])
    fractions = ', '.join(f'{f:g}' for f in sorted(sweep['fraction'].unique()))
    error_setting = (f"n = {n}, load d = {d}, fractions {fractions}; {sweep['graph'].nunique()} random instances x "
                     f"{sweep['draw'].nunique()} straggler draws per fraction; uniform straggler sets of round(f n) "
                     f"(stochastic GC: independent, probability f)")
    training_setting = (f"{problem}, n = {workers} workers, load d = {d}, s = {stragglers}; Pareto compute times "
                        f"(shape {shape:g}, mean 1 per part); {totals['seed'].nunique()} seeds of the compute times; "
                        f"step 1/L")
    return table(error_rows(sweep, summary, bench, bench_table, n=n, d=d, setting=error_setting)
                 + training_rows(totals, floors(curves), time_to(curves, COARSE), rel_target=rel_target,
                                 setting=training_setting))
