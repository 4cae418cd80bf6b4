"""Claims of notebook 14: our checks of how the lines of work compare, per model, judged from
:class:`gclib.studies.head_to_head.study.Study`. Every row is kind ``check``: the papers' own claims are judged in
their notebooks (11, 12, 13 and the earlier ones); these rows put them side by side.

* ``P`` rows: using partial work pays. The fastest exact design among the schemes that use the stragglers'
  finished parts (:data:`PARTIAL`) is faster than the fastest among those that wait for whole workers.
* ``Q`` rows: the partial-straggler protocol of 2024 (``rmg``) against UC-MMC in one cluster, the 2019 scheme that
  uses the same partial work on the same cyclic assignment and order: the protocol receives fewer gradient-length
  vectors (one per picked worker, against one per chunk received); it does not hold where every worker must be
  picked anyway. (With communication free both finish when the finished chunks first cover every part, so their
  mean times agree at every load by construction: a unit test keeps that, it is not a claim.)
* ``S`` rows: coding across iterations pays at the same computation. The fastest sequential scheme (SR-SGC or
  M-SGC, per gradient: its run time over the gradients) is faster than the fastest one-shot exact design whose
  load is no greater than its own. The sequential schemes are replayed under their deadline rule and the one-shot
  designs are not, so each row also states the rule's cost: GC under the rule against one-shot uncoded, both at
  load 1.

Criteria, fixed before looking at the numbers: "faster", "fewer" = the 95% intervals separated in that direction;
a row whose schemes are absent from the study is inconclusive. The claims' texts and criteria are the table
:data:`CLAIMS` of :class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import math

import pandas as pd

from gclib.claims import CHECK, Claim, Estimate, INCONCLUSIVE, all_hold, count_text, counts, less, table

#: The schemes that code across iterations (Krishnan et al.), beside GC under their deadline rule.
SEQUENTIAL = ("sr-sgc", "m-sgc")
#: The exact families that use a straggler's finished parts.
PARTIAL = ("uc-mmc", "gc-mmc-correlated", "gc-mmc-uncorrelated", "hybrid", "rmg")
_NONE = Estimate(math.nan, math.nan, math.nan)


_SIDE_BY_SIDE = "our check: the lines of work side by side on one model"
#: The claims, each judged per model (``{model}``).
CLAIMS = {c.id: c for c in (
    Claim("P", CHECK, "{model}: the fastest design that uses partial work is faster than the fastest that waits for "
                      "whole workers", _SIDE_BY_SIDE, "95% intervals of the two mean times separated (paired draws)"),
    Claim("Q", CHECK, "{model}: the 2024 protocol receives fewer vectors than UC-MMC at every load", _SIDE_BY_SIDE,
          "at every common load: vectors fewer (intervals separated)"),
    Claim("S", CHECK, "{model}: the fastest sequential scheme (per gradient) is faster than the fastest one-shot "
                      "exact design of no greater load", _SIDE_BY_SIDE,
          "95% intervals of the two mean times per gradient separated; the one-shot designs limited to the "
          "sequential scheme's load"),
)}


def _est(r, what="time") -> Estimate:
    return _NONE if r is None else Estimate.mean_ci(float(r[f"mean_{what}"]), float(r[f"ci95_{what}"]))


def _fastest(t: pd.DataFrame):
    t = t[t["mean_time"].notna()]
    return None if t.empty else t.loc[t["mean_time"].idxmin()]


def _fmt(r, what="time") -> str:
    if r is None:
        return "absent"
    return f"{r['label']}: {r[f'mean_{what}']:.4g} +/- {r[f'ci95_{what}']:.2g}"


def _partial(t) -> tuple[str, str]:
    """``P``: the measured text and the verdict under one model (``t``: its rows of the study's table)."""
    exact = t[t["kind"] == "exact"]
    a = _fastest(exact[exact["family"].isin(PARTIAL)])
    b = _fastest(exact[~exact["family"].isin(PARTIAL)])
    return f"{_fmt(a)} against {_fmt(b)}", less(_est(a), _est(b))


def _rmg(t) -> tuple[str, str]:
    """``Q``: the measured text and the verdict under one model."""
    r = t[t["family"] == "rmg"].set_index("load")
    u = t[(t["family"] == "uc-mmc") & t["label"].str.endswith(" P=1")].set_index("load")
    loads = sorted(set(r.index) & set(u.index))
    if not loads:
        return "absent", INCONCLUSIVE
    fewer = [less(_est(r.loc[x], "volume"), _est(u.loc[x], "volume")) for x in loads]
    mv = "; ".join(f"r={x:g}: {r.loc[x]['mean_volume']:.3g} vs {u.loc[x]['mean_volume']:.3g}" for x in loads)
    return mv, all_hold(fewer)


def _load1(t, family: str):
    g = t[(t["family"] == family) & ((t["load"] - 1.0).abs() < 1e-9)]
    return None if g.empty else g.iloc[0]


def _sequential(t) -> tuple[str, str]:
    """``S``: the measured text and the verdict under one model."""
    a = _fastest(t[t["family"].isin(SEQUENTIAL)])
    if a is None:
        return "no sequential scheme in this study", INCONCLUSIVE
    exact_ = t[t["kind"] == "exact"]
    b = _fastest(exact_[exact_["load"] <= float(a["load"]) + 1e-9])
    gc, unc = _load1(t, "gc (deadline)"), _load1(exact_, "uncoded")
    cost = (f"; the deadline rule's cost: GC under it {_fmt(gc)} against one-shot {_fmt(unc)}, both at load 1"
            if gc is not None and unc is not None else "")
    measured = (f"{_fmt(a)} (load {float(a['load']):.3g}) against {_fmt(b)}"
                + (f" (load {float(b['load']):.3g})" if b is not None else "") + cost)
    return measured, less(_est(a), _est(b))


def judge(study) -> pd.DataFrame:
    """The claims table of a :class:`gclib.studies.head_to_head.study.Study`."""
    t = study.table
    K = study.settings["K"]
    rows = []
    for prefix, rule in (("P", _partial), ("Q", _rmg), ("S", _sequential)):
        for i, model in enumerate(dict.fromkeys(t["model"])):
            measured, verdict = rule(t[t["model"] == model])
            rows.append(CLAIMS[prefix].row(id=f"{prefix}{i + 1}", model=model, measured=measured, verdict=verdict,
                                           setting=f"K = {K}, loads up to {study.settings['max_load']}, {model}"))
    return table(rows)


def conclusions(verdicts: pd.DataFrame, study) -> str:
    """The notebook's conclusions as Markdown, rendered from the claims table and the study: per model, the
    fastest family of every kind and the verdicts."""
    lines = [f"**Claims:** {count_text(counts(verdicts))}."]
    fast = study.fastest()
    for model, g in fast.groupby("model", sort=False):
        parts = []
        for kind in ("exact", "sequential", "approximate"):
            k = g[g["kind"] == kind]
            if not k.empty:
                r = k.iloc[0]
                parts.append(f"{kind}: {r['family']} ({r['label']}, {r['mean_time']:.4g} +/- {r['ci95_time']:.2g})")
        lines.append(f"- *{model}*: fastest {'; '.join(parts)}.")
    return "\n".join(lines)
