"""Claims of notebook 05 (choosing GC-MMC designs): the paper's trade-off claim and our own checks of the design
search, judged from the design table of :func:`gclib.studies.mmc_design.study.evaluate_models`.

The GC-MMC paper (Ozfatura, Gunduz, Ulukus, arXiv 1903.01974) leaves the choice of orders, order vectors and
clusters to future work; its one claim about the trade-off is that GC-MMC gives "a more flexible trade-off"
between completion time and communication load than GC and UC-MMC: a ``paper`` row under the paper's eq. 5 at its
``K = 40``, ``r = 10``, an ``extension`` under any other model or size. Everything else here is our check.

Every design of one model sees the same sampled compute times (common random numbers), so two designs are
compared trial by trial: by the 95% interval of the mean paired difference of their times (or loads), from
:func:`gclib.stats.paired_matrix` over the per-trial results (``per_trial`` of :func:`judge`). Without per-trial
results (a table alone) the difference's interval treats the designs as independent. Designs with identical
numbers (one code under two names: UC-MMC and the correlated design with ``m = 1``, GC and the correlated design
with ``m = r``, FRC and the hybrid without coded orders; or codes that finish at the same moment in every trial)
count as one design, named by all its labels (:func:`distinct`).

*On the front*: a design is surely on the Pareto front of time against load when every other design is surely
heavier or surely slower, surely off it when another design is at most as heavy and at most as slow (both
differences' intervals at or below 0), and undecided otherwise (:func:`front_verdicts`).

The claims' texts and criteria are the tables :data:`CLAIMS` and :data:`THRESHOLD_CLAIMS` of
:class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from gclib.design import label
from gclib.stats import Z95, PairedMatrix, paired_matrix
from gclib.claims import (
    CHECK, FAILS, HOLDS, INCONCLUSIVE, PAPER, Claim, Estimate, all_hold, any_holds, exact, greater, less, table)

#: Load columns of the design table and what they count.
LOADS = {"mean_messages": "messages until completion", "mean_cluster_messages": "messages until each cluster decodes"}
#: The GC-MMC families (the hybrid of section III-D included).
GC_MMC = ("gc-mmc-correlated", "gc-mmc-uncorrelated", "hybrid")
#: Families with a cluster count, checked by the clustering claim.
CLUSTERED = ("gc", "uc-mmc", "gc-mmc-correlated", "gc-mmc-uncorrelated")
#: The paper's Fig. 1 designs by their labels in :func:`gclib.design.candidates`; they are the paper's designs only
#: at ``K = 40`` workers and load ``r = 10``.
PAPER_DESIGNS = {"GC-MMC-1": label("gc-mmc-correlated", order=6, clusters=4),
                 "GC-MMC-2": label("gc-mmc-uncorrelated", orders=(6, 8, 10), clusters=4)}
PAPER_K, PAPER_R = 40, 10
#: GC and UC-MMC as in the paper's Fig. 1 (no clusters).
GC_REF, UC_REF = label("gc", clusters=1), label("uc-mmc", clusters=1)
_SAME = ["mean_time", "ci95_time", "mean_messages", "mean_cluster_messages"]
_FLEX = ('"the more flexible trade-off they provide between the completion time and the communication load '
         'compared to UC-MMC and GC"')
_THRESHOLD = 'uncorrelated design: "Kl - (sum m) + 1 coded partial gradients are required"'
#: The paper field of the exact-rule rows: a check of our two decoders against the paper's threshold.
_THRESHOLD_CHECK = (f"our check of the exact decoder against the paper's threshold ({_THRESHOLD}; whether the "
                    f"threshold is needed is the paper's statement judged in notebook 04, row E10)")


def distinct(g: pd.DataFrame) -> pd.DataFrame:
    """The designs of one model with twins (equal mean time, its interval and both loads) merged into the first,
    whose new column ``name`` joins all their labels (``"uc-mmc P=1 = corr m=1 P=1"``) and ``pos`` is its position
    among the model's rows (the row of its per-trial results)."""
    g = g.reset_index(drop=True)
    key = g[_SAME].astype(float).round(12).astype(str).agg("|".join, axis=1)
    names = {k: " = ".join(labels) for k, labels in g.groupby(key, sort=False)["label"]}
    first = ~key.duplicated()
    out = g[first].copy()
    out["name"] = [names[k] for k in key[first]]
    out["pos"] = np.flatnonzero(first.to_numpy())
    return out.reset_index(drop=True)


def matrices(d: pd.DataFrame, per_trial: dict | None = None) -> dict:
    """``{column: PairedMatrix}`` of the designs of ``d`` (from :func:`distinct`) for ``mean_time`` and every load
    of :data:`LOADS`: paired over the trials from ``per_trial`` (:func:`gclib.design.evaluate`'s per-trial arrays
    of the model, rows in the model's order), else with the designs taken as independent (their covariance
    from the table's 95% half-widths, zero between designs)."""
    out = {}
    for col in ("mean_time", *LOADS):
        key = col.replace("mean_", "")
        if per_trial is not None:
            out[col] = paired_matrix(np.asarray(per_trial[key], dtype=float)[d["pos"].to_numpy()])
            continue
        n = 10**9  # any large count: only se^2 = cov / n matters
        se = d[col.replace("mean_", "ci95_")].to_numpy(float) / Z95
        out[col] = PairedMatrix(d[col].to_numpy(float), np.diag(se ** 2 * n), n)
    return out


def _diff(m: PairedMatrix, i: int, j: int) -> Estimate:
    return m.difference(i, j)


def _time(r) -> Estimate:
    return Estimate.mean_ci(r["mean_time"], r["ci95_time"])


def _load(r, load: str) -> Estimate:
    return Estimate.mean_ci(r[load], r[load.replace("mean_", "ci95_")])


def _point(r, load: str) -> str:
    return f"{r['name']}: {_time(r).text('.4g')} at {_load(r, load).text('.4g')} messages"


def _find(d: pd.DataFrame, lab: str):
    """The row of ``d`` (from :func:`distinct`) one of whose labels is ``lab``, or None."""
    hit = d[d["name"].str.split(" = ").map(lambda labels: lab in labels)]
    return None if hit.empty else hit.iloc[0]


def front_verdicts(d: pd.DataFrame, load: str, mats: dict | None = None) -> pd.DataFrame:
    """Is each design on the Pareto front of (``load``, ``mean_time``), judged by the 95% intervals of the
    differences between designs?

    Args:
        d: designs (rows), with ``mean_time, ci95_time``, ``load`` and its ``ci95_`` column.
        mats: :func:`matrices` of ``d`` (default: the designs taken as independent).
    Returns:
        ``(len(d), 2)``, index of ``d``: ``verdict`` (holds: every other design is surely heavier or surely slower;
        does not hold: another is at most as heavy and at most as slow, both differences' intervals at or below
        0; inconclusive otherwise) and ``witness`` (position of the fastest design that dominates it, or of the
        design closest in time that it cannot be told from; -1 when it holds).
    """
    mats = matrices(d) if mats is None else mats
    mt, ml = mats["mean_time"], mats[load]
    T = mt.mean
    DT, DL = T[:, None] - T[None, :], ml.mean[:, None] - ml.mean[None, :]
    HT, HL = mt.half_widths(), ml.half_widths()
    # [e, x]: design e surely dominates design x / e surely does not dominate x (NaN compares False: undecided).
    dom = (DL + HL <= 0) & (DT + HT <= 0)
    clear = (DL - HL > 0) | (DT - HT > 0)
    np.fill_diagonal(dom, False)
    np.fill_diagonal(clear, True)
    verdict, witness = [], []
    for x in range(len(d)):
        if dom[:, x].any():
            e = np.flatnonzero(dom[:, x])
            verdict.append(FAILS)
            witness.append(int(e[np.argmin(T[e])]))
        elif clear[:, x].all():
            verdict.append(HOLDS)
            witness.append(-1)
        else:
            e = np.flatnonzero(~clear[:, x])
            verdict.append(INCONCLUSIVE)
            witness.append(int(e[np.argmin(np.abs(T[e] - T[x]))]))
    return pd.DataFrame({"verdict": verdict, "witness": witness}, index=d.index)


CLAIMS = {c.id: c for c in (
    Claim("F", PAPER, "GC-MMC fills the trade-off between GC and UC-MMC", _FLEX,
          f"some GC-MMC design ({', '.join(GC_MMC)}) is surely on the overall front, surely heavier than {GC_REF} and "
          f"surely lighter than {UC_REF} (paired 95% intervals of the load differences); none surely, some "
          f"undecided: inconclusive"),
    Claim("P", CHECK, "{name} on the overall front", "our check ({name} = {lab}{where})",
          "paired 95% intervals of the differences: every other design is surely heavier or surely slower: holds; "
          "another is at most as heavy and at most as slow: does not hold; otherwise inconclusive"),
    Claim("B", CHECK, "fastest design within {budget:g} messages",
          "our check (the paper leaves the orders to future work)",
          "the fastest design whose mean load is at most the budget is faster than the next fastest such design: "
          "the paired 95% interval of their time difference wholly below 0 (containing 0: inconclusive; the only "
          "design: holds; none: does not hold)"),
    Claim("C", CHECK, "clustering helps every family",
          'our check (the paper: clustering "may also be disadvantageous" with MMC)',
          f"in each of {', '.join(CLUSTERED)}, the fastest design with more than one cluster is faster than the "
          f"fastest without clusters: the paired 95% interval of their time difference wholly below 0"),
)}
#: The exact-rule checks (rows ``X``): where the paper's threshold exceeds the parts of a cluster, and where not.
THRESHOLD_CLAIMS = {
    "exceeds": Claim("X", CHECK, "exact decoding beats the threshold: {design}", _THRESHOLD_CHECK,
                     "exact-rule mean time lower than the threshold rule's beyond both 95% intervals (overlap: "
                     "inconclusive)"),
    "within": Claim("X", CHECK, "threshold and exact decoding agree in every trial: {design}", _THRESHOLD_CHECK,
                    "both rules give the same completion time in every trial"),
}


def _flexibility(id_, d, fv, mats, load, setting, beyond_why: str | None = None) -> dict:
    gc, uc = _find(d, GC_REF), _find(d, UC_REF)
    if gc is None or uc is None:
        return CLAIMS["F"].row(id=id_, setting=setting, measured=f"{GC_REF} or {UC_REF} is not among this run's "
                                                                 f"designs",
                               verdict=INCONCLUSIVE, carried=beyond_why)
    ml = mats[load]
    lgc, luc = _load(gc, load), _load(uc, load)
    verdicts, on = [], {}
    for x, r in d[d["family"].isin(GC_MMC)].iterrows():
        v = all_hold([greater(_diff(ml, x, gc.name), 0.0), less(_diff(ml, x, uc.name), 0.0), fv.loc[x, "verdict"]])
        verdicts.append(v)
        on.setdefault(v, []).append(r)
    sure = sorted(on.get(HOLDS, []), key=lambda r: r[load])
    names = ", ".join(r["name"] for r in sure[:4]) + (", ..." if len(sure) > 4 else "")
    measured = (f"between {GC_REF} ({lgc.text('.4g')} messages) and {UC_REF} ({luc.text('.4g')}): "
                f"GC-MMC designs surely on the front: {len(sure)}" + (f" ({names})" if sure else "")
                + f"; undecided: {len(on.get(INCONCLUSIVE, []))}")
    return CLAIMS["F"].row(id=id_, setting=setting, measured=measured, verdict=any_holds(verdicts),
                           carried=beyond_why)


def _on_front(id_, name, d, fv, load, setting, K, r) -> dict:
    lab = PAPER_DESIGNS[name]
    x = _find(d, lab) if (K, r) == (PAPER_K, PAPER_R) else None
    if x is None:
        return CLAIMS["P"].row(id=id_, name=name, lab=lab, where=f", K = {PAPER_K}, r = {PAPER_R}", setting=setting,
                               measured=f"{name} is not among this run's designs (K = {K}, r = {r})",
                               verdict=INCONCLUSIVE)
    v = fv.loc[x.name]
    if v["verdict"] == HOLDS:
        other = "every other design is surely heavier or surely slower"
    else:
        w = d.iloc[int(v["witness"])]
        other = ("dominated by " if v["verdict"] == FAILS else "not told apart from ") + _point(w, load)
    return CLAIMS["P"].row(id=id_, name=name, lab=lab, where="", setting=setting,
                           measured=f"{_point(x, load)}; {other}", verdict=v["verdict"])


def _budget(id_, d, mats, load, budget, setting) -> dict:
    ok = d[d[load] <= budget].sort_values("mean_time", kind="stable")
    if ok.empty:
        measured, verdict = f"no design has a mean load of at most {budget:g}", FAILS
    elif len(ok) == 1:
        measured, verdict = f"only {_point(ok.iloc[0], load)}", HOLDS
    else:
        a, b = ok.iloc[0], ok.iloc[1]
        e = _diff(mats["mean_time"], a.name, b.name)
        measured = f"{_point(a, load)}; next {_point(b, load)}; paired difference {e.text('.3g')}"
        verdict = less(e, 0.0)
    return CLAIMS["B"].row(id=id_, budget=budget, setting=f"{setting}; budget {budget:g}", measured=measured,
                           verdict=verdict)


def exact_rule_row(id_: str, r, setting: str) -> dict:
    """One check on a row of :func:`gclib.design.exact_rule_table` (of our decoders, not of the paper: the paper's
    statement that the threshold is required is judged in notebook 04, row ``E10``): where the paper's threshold
    exceeds the parts of a cluster it is sufficient but not necessary, so exact decoding should finish earlier
    (exact-rule mean time lower beyond both intervals); where it does not, the two rules should agree on every
    trial (an exact verdict on the simulated trials, not a proof for every arrival order)."""
    design = f"unc {r['orders']} P={r['clusters']}"
    fast = Estimate.mean_ci(r["time_threshold_rule"], r["ci95_time_threshold_rule"])
    ex = Estimate.mean_ci(r["time_exact"], r["ci95_time_exact"])
    setting = f"{setting}; threshold {r['threshold']} messages per cluster of {r['parts_per_cluster']} parts"
    if r["threshold"] > r["parts_per_cluster"]:
        return THRESHOLD_CLAIMS["exceeds"].row(
            id=id_, design=design, setting=setting, verdict=less(ex, fast),
            measured=(f"exact span test {ex.text('.4g')} vs threshold rule {fast.text('.4g')}; messages "
                      f"{r['messages_exact']:.4g} vs {r['messages_threshold_rule']:.4g}"))
    return THRESHOLD_CLAIMS["within"].row(
        id=id_, design=design, setting=setting, verdict=exact(r["differing"] == 0),
        measured=(f"{r['differing']} of {r['trials']} trials differ; exact span test {ex.text('.4g')} vs threshold "
                  f"rule {fast.text('.4g')}"))


def _clustering(id_, g, mt, setting) -> dict:
    parts, texts = [], []
    for fam in CLUSTERED:
        f = g[g["family"] == fam]
        one, many = f[f["clusters"] == 1], f[f["clusters"] > 1]
        if one.empty or many.empty:
            parts.append(INCONCLUSIVE)
            texts.append(f"{fam}: no {'unclustered' if one.empty else 'clustered'} design")
            continue
        a, b = many.loc[many["mean_time"].idxmin()], one.loc[one["mean_time"].idxmin()]
        e = _diff(mt, a.name, b.name)
        parts.append(less(e, 0.0))
        texts.append(f"{fam}: {a['label']} {_time(a).text('.4g')} vs {b['label']} {_time(b).text('.4g')}, paired "
                     f"difference {e.text('.3g')}")
    return CLAIMS["C"].row(id=id_, setting=setting, measured="; ".join(texts), verdict=all_hold(parts))


def _why_beyond(model: str, papers_model: str, K: int, r: int) -> str | None:
    """Why a run is not the paper's setting (its eq. 5, which is the first model of the notebook, at ``K = 40``,
    ``r = 10``), or ``None`` when it is."""
    why = []
    if model != papers_model:
        why.append(f"the paper assumes the shifted exponential of eq. 5; here {model}")
    if (K, r) != (PAPER_K, PAPER_R):
        why.append(f"the paper's Fig. 1 has K = {PAPER_K}, r = {PAPER_R}; here K = {K}, r = {r}")
    return "; ".join(why) or None


def _model_rows(model: str, d: pd.DataFrame, mats: dict, best: pd.DataFrame, n: dict, *, why, K: int, r: int,
                run: str) -> list:
    """The ``F``, ``P`` and ``B`` rows of one model (``d``: its :func:`distinct` designs; ``mats``: their
    :func:`matrices`; ``run``: the trials of the setting), for each load of :data:`LOADS`; ``n`` counts the rows of
    each letter over the models."""
    rows = []
    for load in LOADS:
        where = f"{model}; load = {LOADS[load]}; K = {K}, r = {r}; {run}"
        fv = front_verdicts(d, load, mats)
        n["F"] += 1
        rows.append(_flexibility(f"F{n['F']}", d, fv, mats, load, where, why))
        for name in PAPER_DESIGNS:
            n["P"] += 1
            rows.append(_on_front(f"P{n['P']}", name, d, fv, load, where, K, r))
        for _, b in best[(best["model"] == model) & (best["load"] == load)].iterrows():
            n["B"] += 1
            rows.append(_budget(f"B{n['B']}", d, mats, load, b["budget"], where))
    return rows


def _clustering_row(i: int, model: str, g: pd.DataFrame, pt: dict | None, setting: str) -> dict:
    """``C{i}``: clustering under one model (``g``: its designs; ``pt``: their per-trial results, or None)."""
    mt = (paired_matrix(np.asarray(pt["time"], dtype=float)) if pt is not None else
          matrices(g.assign(pos=np.arange(len(g))))["mean_time"])
    return _clustering(f"C{i}", g, mt, setting)


def judge(designs: pd.DataFrame, best: pd.DataFrame, exact_rule: pd.DataFrame, *, K: int, r: int, trials: int,
          per_trial: dict | None = None) -> pd.DataFrame:
    """The claims table of notebook 05.

    Args:
        designs: :func:`gclib.studies.mmc_design.study.evaluate_models` (one row per design and model; ``model, family,
            label, clusters``, means and 95% half-widths of time and both loads).
        best: :func:`gclib.studies.mmc_design.study.best_per_budget` (its ``model, load, budget`` say which budgets are
            judged).
        exact_rule: :func:`gclib.design.exact_rule_table` under the first model of ``designs``.
        K, r: workers and load of the search. trials: Monte Carlo trials per design (for the setting).
        per_trial: ``evaluate_models(..., keep_trials=True)``'s per-trial results, for paired comparisons (without
            them the designs are compared as independent samples).
    Returns:
        rows ``F`` (the paper's trade-off claim, per model and load), ``P`` (GC-MMC-1 and -2 on the front), ``B``
        (the fastest design within each budget), ``X`` (the paper's threshold against exact decoding) and ``C``
        (clustering), with the columns of :data:`gclib.claims.COLUMNS`.
    """
    rows, n = [], {"F": 0, "P": 0, "B": 0}
    models = list(dict.fromkeys(designs["model"]))
    how = "paired by trial" if per_trial is not None else "designs compared as independent samples"
    for model in models:
        g = designs[designs["model"] == model].reset_index(drop=True)
        pt = per_trial.get(model) if per_trial is not None else None
        if pt is not None and len(pt["time"]) != len(g):
            raise ValueError(f"per_trial[{model!r}] has {len(pt['time'])} designs, the table {len(g)}")
        d = distinct(g)
        rows += _model_rows(model, d, matrices(d, pt), best, n, why=_why_beyond(model, models[0], K, r), K=K, r=r,
                            run=f"{trials} trials, common random numbers, {how}")
    for i, (_, x) in enumerate(exact_rule.iterrows(), 1):
        rows.append(exact_rule_row(f"X{i}", x, f"{models[0]}; K = {K}, r = {r}; {int(x['trials'])} trials"))
    for i, model in enumerate(models, 1):
        g = designs[designs["model"] == model].reset_index(drop=True)
        rows.append(_clustering_row(i, model, g, per_trial.get(model) if per_trial is not None else None,
                                    f"{model}; K = {K}, r = {r}; {trials} trials, {how}"))
    return table(rows)
