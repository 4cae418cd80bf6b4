"""The decoding error of approximate gradient codes against the fraction of stragglers (notebook 13).

* :func:`benchmark`: the authors' published benchmark of the expander code (Raviv et al.'s public code,
  ``all1_approx_tests.py``: ``n = 50``, ``d = 3``, ``s = 3 .. 7``, 10 random graphs x 100 straggler sets), our
  run of it, with the spectral upper bound and the worst-case lower bound :data:`PUBLISHED` lists;
* :func:`sweep`: every code of :data:`SCHEMES` at every straggler fraction, over random graphs (assignments,
  CRC draws) and straggler sets: ``||a B_R - 1||_2`` and its normalized square ``||a B_R - 1||^2 / n``;
* :func:`summary`: means with 95% intervals over the graphs (the graph is the unit: straggler draws of one graph
  are not independent of one another).
"""
from __future__ import annotations

import math

import pandas as pd

from gclib import checks
from gclib.codes import crc, ignore_stragglers
from gclib.codes import approximate as ap
from gclib.progress import progress as _progress
from gclib.stats import Estimate

#: The authors' published benchmark (Raviv et al.'s public code, n = 50, d = 3, 10 random graphs x 100 straggler
#: sets, means): ``s -> (spectral upper bound, worst-case lower bound sqrt(s / d), fixed decoder, optimal)``.
PUBLISHED = {3: (1.653, 1.000, 1.008, 0.311), 4: (1.929, 1.155, 1.177, 0.411), 5: (2.181, 1.291, 1.324, 0.504),
             6: (2.416, 1.414, 1.475, 0.618), 7: (2.639, 1.528, 1.601, 0.727)}
#: The codes of :func:`sweep`, in display order.
SCHEMES = ("expander, optimal", "expander, fixed", "stochastic GC", "ignore stragglers", "CRC (exact)")
#: The straggler model of every code: a uniformly random set of ``round(f n)`` workers, except stochastic GC's own,
#: every worker independently with probability ``f``.
MODELS = {name: "uniform set" for name in SCHEMES} | {"stochastic GC": "independent"}


def benchmark(n: int = 50, d: int = 3, stragglers=(3, 4, 5, 6, 7), *, graphs: int = 10, draws: int = 100,
              seed=0) -> pd.DataFrame:
    """The authors' benchmark, our run: for every ``s`` and every one of ``graphs`` random ``d``-regular graphs,
    ``draws`` uniformly random sets of ``s`` stragglers, decoded by both decoders on the same sets.

    Returns:
        one row per (s, graph, draw): ``s, graph, draw, fixed, optimal`` (``||a B_F - 1||_2``), ``bound`` (the
        graph's spectral bound) and ``lower`` (``sqrt(s / d)``).
    """
    rng = checks.generator(seed, "seed")
    graphs = checks.integer("graphs", graphs, low=1)
    draws = checks.integer("draws", draws, low=1)
    rows = []
    for s in stragglers:
        for g in range(graphs):
            opt = ap.expander(n, s, d, "optimal", seed=rng)
            fix = ap.expander(n, s, d, "fixed", adjacency=opt.B * d)
            S = ap.uniform_stragglers(n, s, draws, rng)
            bound = ap.spectral_bound(opt.B * d, s)
            for k, (eo, ef) in enumerate(zip(ap.straggler_errors(opt, S), ap.straggler_errors(fix, S))):
                rows.append({"s": int(s), "graph": g, "draw": k, "fixed": ef, "optimal": eo, "bound": bound,
                             "lower": math.sqrt(s / d)})
    return pd.DataFrame(rows)


def benchmark_table(bench: pd.DataFrame) -> pd.DataFrame:
    """Per ``s``: our means of :func:`benchmark` (over graphs: 95% half-widths ``*_ci``) beside :data:`PUBLISHED`
    (``published_*``), and the tolerance of each comparison, ``4 sqrt(2)`` standard errors of a mean over the
    graphs (ours and theirs spread alike) plus ``1e-3`` (their rounding)."""
    out = []
    for s, g in bench.groupby("s"):
        row = {"s": int(s)}
        for col, ref in zip(("bound", "lower", "fixed", "optimal"), PUBLISHED.get(int(s), (math.nan,) * 4)):
            per_graph = g.groupby("graph")[col].mean()
            est = Estimate.of(per_graph)
            se = float(per_graph.std(ddof=1)) / math.sqrt(len(per_graph)) if len(per_graph) > 1 else math.nan
            row |= {col: est.value, f"{col}_ci": est.value - est.lo, f"published_{col}": ref,
                    f"{col}_tol": 4 * math.sqrt(2) * se + 1e-3}
        out.append(row)
    return pd.DataFrame(out)


def sweep(n: int = 50, d: int = 3, fractions=(0.05, 0.1, 0.2, 0.3, 0.4), *, graphs: int = 10, draws: int = 100,
          seed=0, progress: bool = False) -> pd.DataFrame:
    """The decoding error of every code of :data:`SCHEMES` against the straggler fraction ``f``.

    For every ``f`` and graph index, one random instance of each code (the expander's graph, shared by its two
    decoders; stochastic GC's assignment; CRC's ``H``), then ``draws`` straggler draws: a uniformly random set of
    ``s = round(f n)`` workers, shared by every code but stochastic GC, whose workers straggle independently with
    probability ``f`` (its own model; its decoder weight is ``1 / (d (1 - f))``). Ignore-stragglers has load 1;
    CRC has the same load ``d`` as the approximate codes and tolerates ``d - 1`` stragglers exactly, beyond which
    its least-squares decode is shown.

    Returns:
        one row per (scheme, f, graph, draw): ``scheme, n, fraction, s, graph, draw, stragglers`` (the number drawn),
        ``error`` (``||a B_R - 1||_2``) and ``sq_error`` (``||a B_R - 1||^2 / n``).
    """
    rng = checks.generator(seed, "seed")
    n = checks.integer("n", n, low=2)
    graphs = checks.integer("graphs", graphs, low=1)
    draws = checks.integer("draws", draws, low=1)
    fractions = [checks.real("fraction", f, above=0, below=1) for f in fractions]
    rows = []
    for f in _progress(fractions, "fractions", progress):
        s = int(round(f * n))
        if not 0 < s < n:
            raise ValueError(f"fraction {f:g} of n = {n} workers gives {s} stragglers; it must give 1 to {n - 1}")
        for g in range(graphs):
            uniform = ap.uniform_stragglers(n, s, draws, rng)
            independent = rng.random((draws, n)) < f
            opt = ap.expander(n, s, d, "optimal", seed=rng)
            codes = {"expander, optimal": opt, "expander, fixed": ap.expander(n, s, d, "fixed", adjacency=opt.B * d),
                     "stochastic GC": ap.stochastic(n, s, d, seed=rng, p=f),
                     "ignore stragglers": ignore_stragglers(n, s), "CRC (exact)": crc(n, d - 1, seed=rng)}
            for name, code in codes.items():
                S = independent if MODELS[name] == "independent" else uniform
                err = ap.straggler_errors(code, S)
                for k in range(draws):
                    rows.append({"scheme": name, "n": n, "fraction": f, "s": s, "graph": g, "draw": k,
                                 "stragglers": int(S[k].sum()), "error": float(err[k]),
                                 "sq_error": float(err[k]) ** 2 / n})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per (scheme, fraction): the mean ``error`` and ``sq_error`` with 95% half-widths over the graphs (each
    graph's mean over its draws is one sample), and the largest error drawn."""
    out = []
    for (name, f), g in df.groupby(["scheme", "fraction"], sort=False):
        row = {"scheme": name, "fraction": f, "s": int(g["s"].iloc[0]), "model": MODELS[name]}
        for col in ("error", "sq_error"):
            est = Estimate.of(g.groupby("graph")[col].mean())
            row |= {col: est.value, f"{col}_ci": est.value - est.lo}
        row["worst_error"] = float(g["error"].max())
        out.append(row)
    return pd.DataFrame(out)
