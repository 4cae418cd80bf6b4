"""Claims of notebook 08: what the papers' conclusions look like as the number of workers ``K`` grows from tens
to ten thousand, judged from :func:`gclib.studies.scale.study.study`.

* ``C``: our check that the Monte Carlo agrees with the closed forms of the order statistics (shifted
  exponential: ``E[k-th of n] = alpha + (H_n - H_{n-k}) / mu`` per unit of load; Pareto: the Gamma-function form)
  at every point that has one.
* ``G`` rows, per model: Tandon et al.'s coding gain over uncoded. ``G1``: at a fixed load fraction (``s``
  proportional to ``n``, as in their experiments) the gain of GC at the largest ``K`` exceeds that at the
  smallest; ``G2``: at a fixed load the gain of GC at the largest ``K`` is below that at the smallest (a fixed
  number of stragglers among ever more workers).
* ``M`` rows, per model, at a fixed load with GC-MMC in clusters of a fixed size (Fig. 1 of Ozfatura, Gunduz and
  Ulukus grown): ``M1`` GC-MMC faster than GC at every ``K``; ``M2`` GC-MMC sends fewer messages than UC-MMC at
  every ``K``; ``M3`` GC-MMC as fast as LCC (mean time at most :data:`AS_WELL_AS` times LCC's) at the largest
  ``K``. These are the statements of that Fig. 1 (at ``K = 40``) carried beyond the paper: ``extension`` rows; the
  ``G`` rows are our readings (Tandon et al. make no claim about scale).

Criteria, fixed before looking at the numbers: "exceeds", "below", "faster", "fewer" = the 95% intervals
separated in that direction (the gains have paired intervals: every scheme of one ``K`` sees the same worker
draws); overlapping intervals give ``inconclusive``. ``C`` holds when every ``|z|`` (the gap in standard errors)
is at most :data:`Z_MAX`, is inconclusive without a point to compare. The claims' texts and criteria are the
table :data:`CLAIMS` of :class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gclib.claims import (
    CHECK, EXTENSION, READING, Claim, Estimate, FAILS, HOLDS, INCONCLUSIVE, Z95, all_hold, at_most, beyond,
    count_text, counts, greater, ids, less, table)

#: Largest gap between a Monte Carlo mean and its closed form, in standard errors, that still agrees (with a few
#: dozen points, an absolute z above 4 has a chance below 0.3% under agreement).
Z_MAX = 4.0
#: "As fast as LCC": mean completion time at most this factor times LCC's.
AS_WELL_AS = 1.05
LOAD_FRACTION, CLUSTER_SIZE = "load fraction", "cluster size"
_TANDON = "Tandon et al. (ICML 2017)"
_MMC = "Ozfatura, Gunduz, Ulukus (2019)"
#: Why the Fig. 1 rows are extensions: the paper's figure is at K = 40.
_EVERY_K = "the paper's Fig. 1 is at K = 40; here every K of the sweep"


CLAIMS = {c.id: c for c in (
    Claim("C", CHECK, "Monte Carlo agrees with the order-statistic closed forms",
          "our check: E[k-th of n] = alpha + (H_n - H_{n-k}) / mu per unit of load (shifted exponential), its "
          "Gamma-function form (Pareto); FRC: the largest of the group minima",
          f"every |z| <= {Z_MAX:g} (z: gap in standard errors of the Monte Carlo mean)"),
    Claim("G1", READING, "at a fixed load fraction, GC's gain over uncoded grows with K",
          f"our reading of {_TANDON}, who make no claim about scale: their codes take s proportional to n, so the "
          f"gain should persist as n grows",
          "paired 95% interval of the gain at the largest K above that at the smallest"),
    Claim("G2", READING, "at a fixed load, GC's gain over uncoded shrinks as K grows",
          f"our reading of {_TANDON}, who make no claim about scale: a fixed load r tolerates r - 1 stragglers "
          f"whatever n, a vanishing fraction as n grows",
          "paired 95% interval of the gain at the largest K below that at the smallest"),
    Claim("M1", EXTENSION, "GC-MMC is faster than GC at every K",
          beyond(f"{_MMC}, Fig. 1: GC-MMC-1 well below GC", _EVERY_K),
          "95% interval of GC-MMC's mean time below GC's at every K"),
    Claim("M2", EXTENSION, "GC-MMC sends fewer messages than UC-MMC at every K",
          beyond(f"{_MMC}, Fig. 1: GC-MMC's communication load below UC-MMC's", _EVERY_K),
          "95% interval of GC-MMC's mean messages below UC-MMC's at every K"),
    Claim("M3", EXTENSION, "GC-MMC as fast as LCC at the largest K",
          beyond(f"{_MMC}, Fig. 1: 'the GC-MMC schemes can perform as well as LCC'",
                 "the paper's Fig. 1 is at K = 40; here the largest K"),
          f"GC-MMC's mean time at most {AS_WELL_AS:g} x LCC's, beyond both 95% intervals"),
)}


def _pick(t: pd.DataFrame, model, setting, scheme, K):
    g = t[(t["model"] == model) & (t["setting"] == setting) & (t["scheme"] == scheme) & (t["K"] == K)]
    return None if g.empty else g.iloc[0]


def _time(r) -> Estimate:
    return Estimate.mean_ci(r["mean_time"], r["ci95_time"]) if r is not None else Estimate(math.nan, math.nan,
                                                                                           math.nan)


def _msgs(r) -> Estimate:
    return Estimate.mean_ci(r["mean_messages"], r["ci95_messages"]) if r is not None else Estimate(
        math.nan, math.nan, math.nan)


def _gain(r) -> Estimate:
    if r is None or not np.isfinite(r["gain"]):
        return Estimate(math.nan, math.nan, math.nan)
    lo, hi = float(r["gain_lo"]), float(r["gain_hi"])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return Estimate(float(r["gain"]), math.nan, math.nan)
    return Estimate(float(r["gain"]), min(lo, float(r["gain"])), max(hi, float(r["gain"])))


def _gain_at_ends(t: pd.DataFrame, model: str, setting: str):
    """``(smallest K, largest K, GC's gain at the largest, GC's gain at the smallest)`` under ``model`` and
    ``setting``; the K are ``None`` (and the gains NaN) with fewer than two K."""
    ks = _ks(t, model, setting, "GC")
    lo_k, hi_k = (ks[0], ks[-1]) if len(ks) >= 2 else (None, None)
    return lo_k, hi_k, _gain(_pick(t, model, setting, "GC", hi_k)), _gain(_pick(t, model, setting, "GC", lo_k))


def z_scores(t: pd.DataFrame) -> pd.Series:
    """``(mean_time - closed_form_time) / (ci95_time / Z95)`` of the points with a closed form (0 where both the
    gap and the interval are zero)."""
    cf = t.dropna(subset=["closed_form_time"])
    cf = cf[np.isfinite(cf["closed_form_time"].astype(float))]
    gap = cf["mean_time"].astype(float) - cf["closed_form_time"].astype(float)
    se = cf["ci95_time"].astype(float) / Z95
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where((se == 0) & (gap == 0), 0.0, gap / se)
    return pd.Series(z, index=cf.index)


def _ks(t, model, setting, scheme):
    return sorted(t[(t["model"] == model) & (t["setting"] == setting) & (t["scheme"] == scheme)]["K"].unique())


def _check_row(t: pd.DataFrame) -> dict:
    """``C``: the Monte Carlo against the closed forms at every point that has one."""
    z = z_scores(t)
    zmax = float(np.nanmax(np.abs(z))) if len(z) and np.isfinite(z).any() else math.nan
    return CLAIMS["C"].row(setting=f"uncoded, GC, FRC, LCC; every K and model ({len(z)} points)",
                           measured=f"largest |z| = {zmax:.2f}" if np.isfinite(zmax) else "no point with a closed form",
                           verdict=INCONCLUSIVE if not np.isfinite(zmax) else (HOLDS if zmax <= Z_MAX else FAILS))


def _per_model(key: str, models: list, measure) -> list:
    """The rows of claim ``key``, one per model (ids ``key`` with ``a``, ``b``, ...); ``measure(model)`` gives a
    row's ``setting``, ``measured`` and ``verdict``."""
    return [CLAIMS[key].row(id=i, **measure(model)) for i, model in zip(ids(key, len(models)), models)]


def _gain_trend(t: pd.DataFrame, model: str, setting: str, load: str, rule) -> dict:
    """``G1``, ``G2``: GC's gain at the largest K against that at the smallest, judged by ``rule`` (``greater`` or
    ``less``)."""
    lo_k, hi_k, a, b = _gain_at_ends(t, model, setting)
    return {"setting": f"{model}; load r = {load}; K = {lo_k} against K = {hi_k}",
            "measured": f"gain {a.text('.3g')} at K = {hi_k}, {b.text('.3g')} at K = {lo_k}", "verdict": rule(a, b)}


def _every_k(t: pd.DataFrame, model: str, other: str, value) -> tuple[list, list]:
    """GC-MMC against ``other`` at every K of the fixed-load sweep (``value``: :func:`_time` or :func:`_msgs`):
    the K and the verdicts of "below"."""
    ks = _ks(t, model, CLUSTER_SIZE, "GC-MMC")
    return ks, [less(value(_pick(t, model, CLUSTER_SIZE, "GC-MMC", k)), value(_pick(t, model, CLUSTER_SIZE, other, k)))
                for k in ks]


def _mmc_rows(t: pd.DataFrame, models: list, fixed: str) -> list:
    """``M1`` to ``M3`` per model (``fixed``: the fixed-load setting in words)."""
    def faster(model):
        ks, v = _every_k(t, model, "GC", _time)
        return {"setting": f"{model}; {fixed}; K = {', '.join(map(str, ks))}",
                "measured": f"{v.count(HOLDS)} of {len(v)} K faster{_worst(ks, v)}",
                "verdict": all_hold(v) if v else INCONCLUSIVE}

    def fewer(model):
        ks, v = _every_k(t, model, "UC-MMC", _msgs)
        return {"setting": f"{model}; {fixed}", "measured": f"{v.count(HOLDS)} of {len(v)} K fewer{_worst(ks, v)}",
                "verdict": all_hold(v) if v else INCONCLUSIVE}

    def as_lcc(model):
        ks = [k for k in _ks(t, model, CLUSTER_SIZE, "GC-MMC") if _pick(t, model, CLUSTER_SIZE, "LCC", k) is not None]
        k = ks[-1] if ks else None
        a, b = _time(_pick(t, model, CLUSTER_SIZE, "GC-MMC", k)), _time(_pick(t, model, CLUSTER_SIZE, "LCC", k))
        return {"setting": f"{model}; {fixed}; K = {k}", "measured": f"GC-MMC {a.text('.4g')}, LCC {b.text('.4g')}",
                "verdict": at_most(a, b, AS_WELL_AS)}

    return [*_per_model("M1", models, faster), *_per_model("M2", models, fewer), *_per_model("M3", models, as_lcc)]


def judge(t: pd.DataFrame, *, load_fraction: float, load: int, cluster_size: int) -> pd.DataFrame:
    """The claims table of notebook 08 from :func:`gclib.studies.scale.study.study` (its columns) and the study's
    parameters (for the ``setting`` column; GC-MMC's order is read from the table)."""
    orders = t[(t["setting"] == CLUSTER_SIZE) & (t["scheme"] == "GC-MMC")]["order"].dropna()
    order = int(orders.iloc[0]) if len(orders) else "?"
    models = list(dict.fromkeys(t["model"]))
    return table([
        _check_row(t),
        *_per_model("G1", models, lambda m: _gain_trend(t, m, LOAD_FRACTION, f"{load_fraction:g} K", greater)),
        *_per_model("G2", models, lambda m: _gain_trend(t, m, CLUSTER_SIZE, f"{load}", less)),
        *_mmc_rows(t, models, f"load r = {load}, order m = {order}, clusters of {cluster_size}")])


def _worst(ks, verdicts) -> str:
    bad = [str(k) for k, v in zip(ks, verdicts) if v != HOLDS]
    return f" (not at K = {', '.join(bad)})" if bad else ""


def trends(t: pd.DataFrame) -> pd.DataFrame:
    """Which gains grow with ``K`` and which vanish: per model, setting and coded scheme, the paired gain over
    uncoded at the smallest and the largest ``K`` simulated; ``trend``: ``grows`` / ``shrinks`` when their 95%
    intervals are separated, ``no change`` when they overlap; ``at the largest K``: ``faster than uncoded`` /
    ``slower than uncoded`` when the interval of the gain lies above / below 1, ``as uncoded`` otherwise."""
    out = []
    for (model, setting, scheme), g in t[t["scheme"] != "uncoded"].groupby(["model", "setting", "scheme"],
                                                                          sort=False):
        g = g.sort_values("K")
        if len(g) < 2:
            continue
        first, last = g.iloc[0], g.iloc[-1]
        a, b = _gain(last), _gain(first)
        trend = {HOLDS: "grows", FAILS: "shrinks"}.get(greater(a, b), "no change")
        end = {HOLDS: "faster than uncoded", FAILS: "slower than uncoded"}.get(greater(a, 1.0), "as uncoded")
        out.append({"model": model, "setting": setting, "scheme": scheme, "K_small": int(first["K"]),
                    "gain_small": b.text(".3g"), "K_large": int(last["K"]), "gain_large": a.text(".3g"),
                    "trend": trend, "at the largest K": end})
    return pd.DataFrame(out, columns=["model", "setting", "scheme", "K_small", "gain_small", "K_large",
                                      "gain_large", "trend", "at the largest K"])


def conclusions(verdicts: pd.DataFrame, trend: pd.DataFrame) -> str:
    """The notebook's conclusions as Markdown, rendered from the claims table and :func:`trends`."""
    lines = [f"**Claims:** {count_text(counts(verdicts))}."]
    for (model, setting), g in trend.groupby(["model", "setting"], sort=False):
        parts = []
        for word in ("grows", "shrinks", "no change"):
            names = list(g[g["trend"] == word]["scheme"])
            if names:
                parts.append(f"{word}: {', '.join(names)}")
        slower = list(g[g["at the largest K"] == "slower than uncoded"]["scheme"])
        faster = list(g[g["at the largest K"] == "faster than uncoded"]["scheme"])
        k = int(g["K_large"].max())
        lines.append(f"- *{model}, {setting}*: the gain over uncoded {'; '.join(parts)}. At each scheme's "
                     f"largest K (up to {k}) faster than uncoded: {', '.join(faster) or 'none'}; slower: "
                     f"{', '.join(slower) or 'none'}.")
    return "\n".join(lines)
