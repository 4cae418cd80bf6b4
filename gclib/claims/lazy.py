"""Claims of Zhang and Simeone (LAGC and G-LAG, IEEE TNNLS 2021, arXiv 1905.09148) and of Chen, Giannakis, Sun
and Yin (LAG, NeurIPS 2018, arXiv 1805.09965), judged from the tables of notebook 06.

:func:`judge` takes

* ``totals``: one row per (model, scheme, seed) with ``time, uploads, computations`` to the target (NaN when the
  run did not get there) and ``status`` (:func:`gclib.learning.experiments.run_grid`);
* ``lag``: the LAG check on Chen et al.'s problem, one row per (scheme, warmup)
  (:func:`gclib.learning.experiments.lag_check`);
* ``literal``: LAGC with the literal threshold ``M = n``, one row per seed (``status``);

and returns the claims table. A claim about the comparison is judged per compute-time model: it is tested on every
seed, and :func:`gclib.claims.majority` says whether it holds on most seeds (the Wilson interval of the fraction
of seeds lies above one half), fails on most, or whether the seeds cannot tell (with fewer than four seeds they
never can). The LAG check is one deterministic run per scheme (uncoded LAG's iterates and uploads do not depend on
the compute times), so its rows are exact. :func:`overview` and :func:`lag_text` render the outcomes as Markdown.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import exact, majority, proportion, row, table

#: Chen et al.'s stopping accuracy (``accuracy=1e-8``) on their loss, summed over the samples.
AUTHORS_ACCURACY = 1e-8
#: "Far fewer uploads than GD": at most this fraction of GD's uploads (fixed before looking at the numbers).
FAR_FEWER = 0.5
ABSTRACT = "Zhang and Simeone, abstract"
BLOG = "Zhang and Simeone, blog summary"
#: The comparison's claims: base id -> (claim, paper, criterion). Judged per model.
CLAIMS = {
    "T": ("G-LAG has the shortest wall-clock time",
          f"{ABSTRACT}: G-LAG gives 'the best wall-clock time'",
          "G-LAG's time below every other scheme's, per seed; majority of seeds (Wilson 95%)"),
    "U": ("G-LAG needs the fewest uploads",
          f"{ABSTRACT}: G-LAG gives the best 'communication performance'",
          "G-LAG's uploads at most every other scheme's (a tie counts), per seed; majority of seeds"),
    "C": ("G-LAG's computation stays low",
          f"{ABSTRACT}: G-LAG keeps 'a low computational cost'",
          "G-LAG's computations at most GD's, GC's and LAGC's, per seed; majority of seeds"),
    "LU": ("LAG and LAGC upload less than GD and GC",
           f"{BLOG}: the lazy schemes bring 'the communication ... load gains of adaptive selection'",
           "LAG-WK's, LAG-PS's and LAGC's uploads all below GD's and GC's (a run that missed the target fails), "
           "per seed; majority of seeds"),
    "LT": ("LAGC is faster than LAG",
           f"{BLOG}: LAGC and G-LAG combine the 'robustness to stragglers' of coding with the load gains of "
           "adaptive selection; our reading: LAGC then runs faster than LAG under stragglers (the text states no "
           "such ranking)",
           "LAGC's time below LAG-WK's and LAG-PS's, per seed; majority of seeds"),
    "G": ("G-LAG improves on grouping in time, uploads and computation",
          "our check: G-LAG is grouping (FRC) plus the lazy rule",
          "G-LAG below grouping in all three measures, per seed; majority of seeds"),
}
#: The kind of every comparison claim (see :data:`gclib.claims.KINDS`).
KIND = {"T": "paper", "U": "paper", "C": "paper", "LU": "paper", "LT": "reading", "G": "check"}
#: Coding speeds GD up more under a heavy tail than under the exponential model (per code, per Pareto model).
HEAVY = ("coding ({code}) speeds GD up more under the Pareto tail than under the exponential",
         f"{BLOG}: GC and grouping buy 'robustness to stragglers' (Pareto: 'high' tail, exponential: 'low'); our "
         "reading: their gain over GD is larger under the heavy tail",
         "GD's time / {code}'s time above the same ratio under the exponential model, seed by seed; majority "
         "of seeds")


def short(model: str) -> str:
    """``"pareto 1.5"`` -> ``"p1.5"``; other labels unchanged (for claim ids)."""
    return "p" + model.split()[1] if model.startswith("pareto ") else model


def _pivot(totals: pd.DataFrame, model: str, metric: str) -> pd.DataFrame:
    return totals[totals.model == model].pivot(index="seed", columns="scheme", values=metric)


def _spread(x: pd.Series) -> str:
    x = pd.to_numeric(x, errors="coerce")
    if x.notna().sum() == 0:
        return "never reached the target"
    q = x.quantile([0.25, 0.5, 0.75])
    missed = int(x.isna().sum())
    tail = f", {missed} run(s) missed the target" if missed else ""
    return f"median {q[0.5]:.4g} (quartiles {q[0.25]:.4g}-{q[0.75]:.4g}{tail})"


def _seeds(ok: pd.Series) -> str:
    k, n = int(ok.sum()), int(ok.size)
    return f"in {k} of {n} seeds: {proportion(k, n).text('.2f')}"


def _comparison_rows(totals: pd.DataFrame, model: str, setting: str) -> list:
    T, U, C = (_pivot(totals, model, m) for m in ("time", "uploads", "computations"))
    others = [s for s in T.columns if s != "g-lag"]
    lazy = [s for s in ("lag-wk", "lag-ps", "lagc") if s in T]
    best_t = T[others].median().idxmin()
    best_u = U[others].median().idxmin()
    ok = {
        "T": T["g-lag"] < T[others].min(axis=1),
        "U": U["g-lag"] <= U[others].min(axis=1),
        "C": (C["g-lag"] <= C["gd"]) & (C["g-lag"] <= C["gc"]) & (C["g-lag"] <= C["lagc"]),
        "LU": U[lazy].max(axis=1, skipna=False) < U[["gd", "gc"]].min(axis=1),
        "LT": T["lagc"] < T[["lag-wk", "lag-ps"]].min(axis=1),
        "G": (T["g-lag"] < T["grouping"]) & (U["g-lag"] < U["grouping"]) & (C["g-lag"] < C["grouping"]),
    }
    measured = {
        "T": f"G-LAG {_spread(T['g-lag'])}; fastest other ({best_t}) {_spread(T[best_t])}",
        "U": f"G-LAG {_spread(U['g-lag'])}; fewest other ({best_u}) {_spread(U[best_u])}",
        "C": "; ".join(f"{s} {_spread(C[s])}" for s in ("g-lag", "gd", "gc", "lagc")),
        "LU": "; ".join(f"{s} {_spread(U[s])}" for s in ("gd", "gc", *lazy)),
        "LT": "; ".join(f"{s} {_spread(T[s])}" for s in ("lagc", "lag-wk", "lag-ps")),
        "G": "; ".join(f"{name} G-LAG {_spread(M['g-lag'])} vs grouping {_spread(M['grouping'])}"
                       for name, M in (("time", T), ("uploads", U), ("computations", C))),
    }
    rows = []
    for base, (claim, paper, criterion) in CLAIMS.items():
        rows.append(row(f"{base}:{short(model)}", claim, kind=KIND[base], paper=paper, setting=f"{model}; {setting}",
                        measured=f"{measured[base]}; holds {_seeds(ok[base])}", criterion=criterion,
                        verdict=majority(ok[base].to_numpy(dtype=float))))
    return rows


def _heavy_rows(totals: pd.DataFrame, model: str, light: str, setting: str) -> list:
    TH, TL = _pivot(totals, model, "time"), _pivot(totals, light, "time")
    rows = []
    for code in ("gc", "grouping"):
        gain, gain_light = TH["gd"] / TH[code], (TL["gd"] / TL[code]).reindex(TH.index)
        ok = gain > gain_light
        claim, paper, criterion = (x.format(code=code) for x in HEAVY)
        rows.append(row(f"H-{code}:{short(model)}", claim, kind="reading", paper=paper, setting=f"{model} vs {light}; {setting}",
                        measured=f"GD/{code} time {_spread(gain)} under {model}, {_spread(gain_light)} under "
                                 f"{light}; holds {_seeds(ok)}",
                        criterion=criterion, verdict=majority(ok.to_numpy(dtype=float))))
    return rows


def _lag_rows(lag: pd.DataFrame) -> list:
    lag = lag.set_index(["scheme", "warmup"])
    gd = lag.loc[("gd", "none")]
    setting = (f"Chen et al.'s heterogeneous regression, {int(gd['workers'])} workers, gap {gd['target']:g} on "
               f"gclib's loss")
    rows = []
    for name in ("lag-wk", "lag-ps"):
        if (name, "silent") not in lag.index:
            continue
        up, ref = float(lag.loc[(name, "silent"), "uploads"]), float(gd["uploads"])
        ok = math.isfinite(up) and math.isfinite(ref) and up <= FAR_FEWER * ref
        rows.append(row(f"L-{name[4:]}", f"{name.upper()} needs far fewer uploads than GD",
                        kind="paper", paper="Chen et al.: LAG-WK and LAG-PS reach the target with far fewer communications than "
                              "batch GD",
                        setting=f"{setting}; Chen et al.'s warm-up",
                        measured=f"{up:.0f} uploads against GD's {ref:.0f} ({up / ref:.2f} of GD's)",
                        criterion=f"at most {FAR_FEWER:g} x GD's uploads (one deterministic run each)",
                        verdict=exact(ok)))
    for name in ("lag-wk", "lag-ps"):
        if not {(name, "silent"), (name, "upload")} <= set(lag.index):
            continue
        a, b = float(lag.loc[(name, "silent"), "uploads"]), float(lag.loc[(name, "upload"), "uploads"])
        rows.append(row(f"W-{name[4:]}", f"{name.upper()}: our warm-up costs uploads",
                        kind="check", paper="our check: every worker uploading in the first D iterations, against Chen et al.'s "
                              "code where none does",
                        setting=setting, measured=f"{b:.0f} uploads with every worker uploading, {a:.0f} with "
                                                  f"Chen et al.'s warm-up ({100 * (b / a - 1):+.0f}%)",
                        criterion="more uploads with our warm-up (one deterministic run each)",
                        verdict=exact(math.isfinite(a) and math.isfinite(b) and b > a)))
    return rows


def _literal_row(literal: pd.DataFrame, light: str, setting: str) -> dict:
    div = literal["status"] == "diverged"
    return row("M", "LAGC with the literal threshold M = n diverges",
               kind="check", paper="our check: LAG's threshold with M = the number of units, applied to CRC messages",
               setting=f"{light}; {setting}", measured=f"diverged {_seeds(div)}",
               criterion="status 'diverged' (gap above 1e8 x max(initial gap, 1), train's default), per seed; "
                         "majority of seeds",
               verdict=majority(div.to_numpy(dtype=float)))


def judge(totals: pd.DataFrame, lag: pd.DataFrame | None = None, literal: pd.DataFrame | None = None, *,
          light: str = "exp", setting: str = "") -> pd.DataFrame:
    """The claims table of notebook 06 (see the module docstring for the inputs).

    Args:
        light: the label of the exponential model in ``totals.model``; every other model is a Pareto tail.
        setting: the comparison's parameters in words (:attr:`gclib.learning.experiments.Comparison.setting`).
    Returns:
        rows ``L-wk``, ``L-ps`` (Chen et al.), ``W-wk``, ``W-ps`` (the warm-ups) when ``lag`` is given; per model
        ``T, U, C, LU, LT, G`` (ids ``T:p1.5``, ``T:exp``, ...); per Pareto model ``H-gc`` and ``H-grouping``;
        ``M`` when ``literal`` is given.
    """
    need = {"model", "scheme", "seed", "time", "uploads", "computations"}
    if not need <= set(totals.columns):
        raise ValueError(f"totals needs the columns {sorted(need)}, got {list(totals.columns)}")
    models = list(dict.fromkeys(totals.model))
    if light not in models:
        raise ValueError(f"light must be one of the models {models}, got {light!r}")
    setting = setting or "notebook 06's comparison"
    rows = _lag_rows(lag) if lag is not None else []
    for model in models:
        rows += _comparison_rows(totals, model, setting)
    for model in models:
        if model != light:
            rows += _heavy_rows(totals, model, light, setting)
    if literal is not None:
        rows.append(_literal_row(literal, light, setting))
    return table(rows)


def overview(claims: pd.DataFrame) -> str:
    """Markdown: one line per claim of :func:`judge` judged per model, one column per model, the verdicts."""
    per = claims[claims["id"].str.contains(":")]
    base = per["id"].str.split(":").str[0]
    model = per["id"].str.split(":").str[1]
    grid = pd.DataFrame({"base": base, "model": model, "claim": per["claim"], "verdict": per["verdict"]})
    models = list(dict.fromkeys(grid.model))
    head = "| claim | " + " | ".join(models) + " |\n|---|" + "---|" * len(models) + "\n"
    lines = []
    for b, g in grid.groupby("base", sort=False):
        v = g.set_index("model")["verdict"]
        lines.append(f"| {g['claim'].iloc[0]} | " + " | ".join(v.get(m, "") for m in models) + " |\n")
    return head + "".join(lines)


def lag_text(lag: pd.DataFrame) -> str:
    """Markdown: the target on gclib's loss and on Chen et al.'s (summed over the samples, not divided by their
    number ``N``), then status, iterations, uploads and computations to it per scheme and warm-up."""
    target, n_samples = float(lag["target"].iloc[0]), int(lag["samples"].iloc[0])
    gd = float(lag.loc[lag.scheme == "gd", "uploads"].iloc[0])
    words = {"none": "-", "silent": "Chen et al.'s", "upload": "every worker uploads"}
    head = (f"Target: gap {target:g} on gclib's loss, which is the authors' loss divided by the N = {n_samples} "
            f"samples, so it is a gap of {target * n_samples:.3g} on the authors' loss (they stop at "
            f"{AUTHORS_ACCURACY:g} on theirs, which is {AUTHORS_ACCURACY / n_samples:.3g} on ours).\n\n"
            "| scheme | warm-up | status | iterations | uploads | uploads / GD's | computations |\n"
            "|---|---|---|---|---|---|---|\n")
    body = "".join(f"| {r.scheme} | {words.get(r.warmup, r.warmup)} | {r.status} | {r.iterations:.0f} | "
                   f"{r.uploads:.0f} | {r.uploads / gd:.2f} | {r.computations:.0f} |\n" for r in lag.itertuples())
    return head + body
