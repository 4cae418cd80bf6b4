"""Claims of Zhang and Simeone (LAGC and G-LAG, IEEE TNNLS 2021, arXiv 1905.09148) and of Chen, Giannakis, Sun
and Yin (LAG, NeurIPS 2018, arXiv 1805.09965), judged from the tables of notebook 06.

:func:`judge` takes

* ``totals``: one row per (model, scheme, seed) with ``time, uploads, computations`` to the target (NaN when the
  run did not get there) and ``status`` (:func:`gclib.studies.lazy_aggregation.study.run_grid`), the schemes
  labelled as in
  :data:`gclib.studies.lazy_aggregation.study.ORDER` (every lazy scheme with both triggers);
* ``lag``: the LAG check on Chen et al.'s problem, one row per (scheme, warmup)
  (:func:`gclib.studies.lazy_aggregation.study.lag_check`);
* ``literal``: LAGC with the literal threshold ``M = n``, one row per seed (``status``);
* ``family``: the same schemes on a family of generic problems
  (:func:`gclib.studies.lazy_aggregation.study.robustness`);

and returns the claims table. Comparisons are like for like: a lazy scheme is compared with the other lazy
schemes *of the same trigger* (and with GD, GC and grouping, which have none), and every claim is judged once per
trigger. A claim is judged per compute-time model (all of mean 1): it is tested on every seed, and
:func:`gclib.claims.majority` says whether it holds on most seeds (the Wilson interval of the fraction of seeds
lies above one half), fails on most, or whether the seeds cannot tell (with fewer than four seeds they never
can). On the family, a claim holds on a problem when it holds on most of its seeds, and the verdict is
:func:`gclib.claims.majority` over the problems. The LAG check is one deterministic run per scheme (uncoded LAG's
iterates and uploads do not depend on the compute times), so its rows are exact.

Kinds: the abstract's three claims (time, uploads, computation) and the blog summary's "load gains of adaptive
selection" are ``paper``; that LAGC beats LAG in time and that G-LAG beats grouping in all three measures are our
readings of the blog's "combine the benefits" (``reading``); that coding gains more under the heavy tail is our
reading of the blog's "high"/"low" tails (``reading``); the rest is ``check``. :func:`overview`,
:func:`heavy_overview`, :func:`family_overview` and :func:`lag_text` render the outcomes as Markdown. The claims'
texts and criteria are the tables :data:`CLAIMS`, :data:`HEAVY` and :data:`OTHER_CLAIMS` of
:class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from gclib.claims import CHECK, PAPER, READING, Claim, exact, majority, proportion, table
from gclib.studies.lazy_aggregation.study import CHEN_CAP

#: Chen et al.'s stopping accuracy (``accuracy=1e-8``) on their loss, summed over the samples.
AUTHORS_ACCURACY = 1e-8
#: "Far fewer uploads than GD": at most this fraction of GD's uploads (fixed before looking at the numbers).
FAR_FEWER = 0.5
ABSTRACT = "Zhang and Simeone, abstract"
BLOG = "Zhang and Simeone, blog summary"
TRIGGERS = ("wk", "ps")
TRIGGER_WORDS = {"wk": "worker-side trigger", "ps": "server-side trigger"}
#: The comparison's claims, judged per model and trigger, keyed by their base id.
CLAIMS = {c.id: c for c in (
    Claim("T", PAPER, "G-LAG has the shortest wall-clock time", f"{ABSTRACT}: G-LAG gives 'the best wall-clock time'",
          "G-LAG's time below GD's, GC's, grouping's and LAG's and LAGC's of the same trigger, per seed; majority of "
          "seeds (Wilson 95%)"),
    Claim("U", PAPER, "G-LAG needs the fewest uploads", f"{ABSTRACT}: G-LAG gives the best 'communication performance'",
          "G-LAG's uploads at most GD's, GC's, grouping's and LAG's and LAGC's of the same trigger (a tie counts), per "
          "seed; majority of seeds"),
    Claim("C", PAPER, "G-LAG's computation stays low",
          f"{ABSTRACT}: G-LAG keeps 'a low computational cost' while buying robustness to stragglers",
          "G-LAG's computations at most GC's and LAGC's of the same trigger (the schemes of Figs. 2 and 3 that buy "
          "robustness to stragglers with redundant computation, as G-LAG does; GD and LAG, which have no "
          "redundancy, are shown beside), per seed; majority of seeds"),
    Claim("LU", PAPER, "LAG uploads less than GD",
          f"{BLOG}: LAG 'selects a subset of active workers at each iteration in order to reduce communication and "
          "computation loads'",
          "LAG's uploads below GD's (a run that missed the target fails), per seed; majority of seeds"),
    Claim("SU", PAPER, "LAGC uploads less than GC",
          f"{BLOG}: LAGC combines GC's robustness with 'the communication and computation load gains of adaptive "
          "selection'",
          "LAGC's uploads below GC's, per seed; majority of seeds"),
    Claim("SC", PAPER, "LAGC computes less than GC",
          f"{BLOG}: LAGC combines GC's robustness with 'the communication and computation load gains of adaptive "
          "selection'",
          "LAGC's partial-gradient computations below GC's, per seed; majority of seeds"),
    Claim("LT", READING, "LAGC is faster than LAG",
          f"our reading of the {BLOG}: LAGC and G-LAG combine the 'robustness to stragglers' of coding with the load "
          "gains of adaptive selection, so LAGC should run faster than LAG under stragglers (the text states no such "
          "ranking)",
          "LAGC's time below LAG's of the same trigger, per seed; majority of seeds"),
    Claim("G", READING, "G-LAG improves on grouping in time, uploads and computation",
          f"our reading of the {BLOG}: G-LAG is grouping plus adaptive selection, so it keeps grouping's robustness "
          "and adds the load gains",
          "G-LAG below grouping in all three measures, per seed; majority of seeds"),
)}
#: Coding speeds GD up more under a heavy tail than under a light one (per code, Pareto shape and light model).
HEAVY = Claim("H", READING, "coding ({code}) speeds GD up more under the Pareto tail than under the {light} model",
              f"our reading of the {BLOG}: GC and grouping buy 'robustness to stragglers' (Pareto: 'high' tail, "
              "exponential: 'low'), so their gain over GD should be larger under the heavy tail",
              "GD's time / {code}'s time above the same ratio under the {light} model (both of mean 1), seed by seed; "
              "majority of seeds")
#: The claims of the LAG check on Chen et al.'s problem, the literal threshold and the family's convergence.
OTHER_CLAIMS = {c.id: c for c in (
    Claim("L", PAPER, "{name} needs far fewer uploads than GD",
          "Chen et al.: LAG-WK and LAG-PS reach the target with far fewer communications than batch GD",
          f"at most {FAR_FEWER:g} x GD's uploads (one deterministic run each)"),
    Claim("W", CHECK, "{name}: our warm-up costs uploads",
          "our check: every worker uploading in the first D iterations, against Chen et al.'s code where none does",
          "more uploads with our warm-up (one deterministic run each)"),
    Claim("M", CHECK, "LAGC with the literal threshold M = n diverges",
          "our check: LAG's threshold with M = the number of units, applied to CRC messages",
          "status 'diverged' (gap above 1e8 x max(initial gap, 1), train's default), per seed; majority of seeds"),
    Claim("K", CHECK, "every scheme, with either trigger, reaches the target on every problem",
          "our check: a lazy rule must converge wherever GD does, on any problem",
          "exact: every run of every scheme (every problem, model and seed) converged"),
    Claim("K-chen", CHECK, "with Chen et al.'s server-side constant 10/D, G-LAG fails on part of the family",
          "our check of why G-LAG diverged: Chen et al.'s server-side weight xi = 10/D lets a unit's stale error "
          "grow ten times past the worker-side bound where L_u is tight",
          "exact: some G-LAG run with xi = 10/D did not converge (diverged or ran out of iterations) where every "
          "scheme with xi = 1/D converged"),
)}
#: Short names of the light models in ids.
SHORT = {"exp": "exp", "shifted-exp": "sexp"}


def short(model: str) -> str:
    """``"pareto 1.5"`` -> ``"p1.5"``, ``"shifted-exp"`` -> ``"sexp"``; other labels unchanged (for claim
    ids)."""
    if model.startswith("pareto "):
        return "p" + model.split()[1]
    return SHORT.get(model, model)


def _pivot(totals: pd.DataFrame, model: str, metric: str) -> pd.DataFrame:
    return totals[totals.model == model].pivot(index="seed", columns="scheme", values=metric)


def _spread(x: pd.Series) -> str:
    x = pd.to_numeric(x, errors="coerce")
    if x.notna().sum() == 0:
        return "never reached the target"
    if x.notna().all() and x.nunique() == 1:
        return f"{x.iloc[0]:.4g} in every seed"
    q = x.quantile([0.25, 0.5, 0.75])
    missed = int(x.isna().sum())
    tail = f", {missed} run(s) missed the target" if missed else ""
    return f"median {q[0.5]:.4g} (quartiles {q[0.25]:.4g}-{q[0.75]:.4g}{tail})"


def _seeds(ok: pd.Series, what: str = "seeds") -> str:
    k, n = int(ok.sum()), int(ok.size)
    return f"in {k} of {n} {what}: {proportion(k, n).text('.2f')}"


def _outcomes(T: pd.DataFrame, U: pd.DataFrame, C: pd.DataFrame, t: str) -> dict:
    """Per claim base of :data:`CLAIMS`: per seed (index of the pivots), whether it holds at trigger ``t``. A
    comparison with a run that missed the target (NaN) is False, so a missed run fails its seed."""
    g, lag, lagc = f"g-lag-{t}", f"lag-{t}", f"lagc-{t}"
    rivals = ["gd", "gc", "grouping", lag, lagc]

    def below(a, b):
        return a.lt(b) & a.notna() & b.notna()

    def at_most(a, b):
        return a.le(b) & a.notna() & b.notna()

    return {
        "T": below(T[g], T[rivals].min(axis=1, skipna=False)),
        "U": at_most(U[g], U[rivals].min(axis=1, skipna=False)),
        "C": at_most(C[g], C[["gc", lagc]].min(axis=1, skipna=False)),
        "LU": below(U[lag], U["gd"]),
        "SU": below(U[lagc], U["gc"]),
        "SC": below(C[lagc], C["gc"]),
        "LT": below(T[lagc], T[lag]),
        "G": below(T[g], T["grouping"]) & below(U[g], U["grouping"]) & below(C[g], C["grouping"]),
    }


def _involved(T: pd.DataFrame, U: pd.DataFrame, C: pd.DataFrame, t: str) -> dict:
    """Per claim base of :data:`CLAIMS`: the per-seed series its outcome at trigger ``t`` reads (to tell a claim
    measured once from one measured on every seed)."""
    g, lag, lagc = f"g-lag-{t}", f"lag-{t}", f"lagc-{t}"
    rivals = [g, "gd", "gc", "grouping", lag, lagc]
    return {"T": [T[x] for x in rivals], "U": [U[x] for x in rivals], "C": [C[x] for x in (g, "gc", lagc)],
            "LU": [U[lag], U["gd"]], "SU": [U[lagc], U["gc"]], "SC": [C[lagc], C["gc"]], "LT": [T[lagc], T[lag]],
            "G": [M[x] for M in (T, U, C) for x in (g, "grouping")]}


def deterministic(series) -> bool:
    """Whether every series (one value per seed) is the same in every seed and finite: then the seeds repeat one
    measurement and do not count as independent runs."""
    return all(len(x) > 0 and x.notna().all() and x.nunique() == 1 for x in series)


def seed_verdict(ok: pd.Series, fixed: bool) -> tuple[str, str]:
    """The verdict and its text on per-seed outcomes ``ok``: one exact measurement when the inputs are the same in
    every seed (``fixed``), else :func:`gclib.claims.majority` over the seeds."""
    if fixed:
        return exact(bool(ok.iloc[0])), (f"deterministic: identical in every seed ({len(ok)} seeds), one "
                                         f"measurement on one problem")
    return majority(ok.to_numpy(dtype=float)), f"holds {_seeds(ok)}"


def _measured(T, U, C, t: str) -> dict:
    g, lag, lagc = f"g-lag-{t}", f"lag-{t}", f"lagc-{t}"
    rivals = ["gd", "gc", "grouping", lag, lagc]
    best_t = T[rivals].median().idxmin()
    best_u = U[rivals].median().idxmin()
    return {
        "T": f"G-LAG {_spread(T[g])}; fastest other ({best_t}) {_spread(T[best_t])}",
        "U": f"G-LAG {_spread(U[g])}; fewest other ({best_u}) {_spread(U[best_u])}",
        "C": "; ".join(f"{s} {_spread(C[s])}" for s in (g, "gc", lagc, "gd", lag)),
        "LU": "; ".join(f"{s} {_spread(U[s])}" for s in (lag, "gd")),
        "SU": f"{lagc} {_spread(U[lagc])}; gc {_spread(U['gc'])}",
        "SC": f"{lagc} {_spread(C[lagc])}; gc {_spread(C['gc'])}",
        "LT": f"{lagc} {_spread(T[lagc])}; {lag} {_spread(T[lag])}",
        "G": "; ".join(f"{name} G-LAG {_spread(M[g])} vs grouping {_spread(M['grouping'])}"
                       for name, M in (("time", T), ("uploads", U), ("computations", C))),
    }


def _pivots(totals: pd.DataFrame, model: str):
    return tuple(_pivot(totals, model, m) for m in ("time", "uploads", "computations"))


#: The compute-time models of the paper's Figs. 2 and 3 (its parameters are not given: the nearest we can build).
PAPERS_MODELS = ("pareto", "exp")
#: Claims on LAGC that rest on our own server-side trigger for it: the paper's LAGC applies LAG's test to the coded
#: messages on the worker side (our reading); with the server-side test of LAG-PS our LAGC never skips a message
#: on this problem, so these rows judge our construction, not the paper.
OURS_ON_SERVER = ("SU", "SC")
_SERVER_LAGC = ("our reading: the paper's LAGC applies LAG's test to the coded messages on the worker side; LAGC "
                "with a server-side test is our own construction, which on this problem never skips a message (the "
                "smoothness of a coded message bounds its change loosely), so this row judges our construction, "
                "not the paper")


def papers_model(model: str) -> bool:
    """Whether ``model`` is one of the paper's two families of compute times (Pareto, exponential)."""
    return model.split()[0] in PAPERS_MODELS


def _claim(base: str, t: str) -> Claim:
    """Comparison claim ``base`` at trigger ``t``: LAGC's server-side rows are readings of our construction."""
    c = CLAIMS[base]
    if t == "ps" and base in OURS_ON_SERVER:
        return replace(c, kind=READING, paper=f"{c.paper}; {_SERVER_LAGC}")
    return c


def _why(model: str, family: bool = False) -> str | None:
    """Why a comparison under ``model`` (on the family) is not the paper's setting, or None when it is: the paper's
    own claims are ``paper`` rows under its models on its problem, ``extension`` rows under another model or on
    the family (readings stay readings)."""
    why = []
    if not papers_model(model):
        why.append(f"the paper uses Pareto and exponential compute times; here {model}")
    if family:
        why.append("the paper uses one linear regression; here a family of linear and logistic regressions")
    return "; ".join(why) or None


def _comparison_rows(totals: pd.DataFrame, model: str, setting: str) -> list:
    T, U, C = _pivots(totals, model)
    where = "" if papers_model(model) else " (carried beyond the paper's models)"
    rows = []
    for t in TRIGGERS:
        ok, measured, inv = _outcomes(T, U, C, t), _measured(T, U, C, t), _involved(T, U, C, t)
        for base in CLAIMS:
            verdict, how = seed_verdict(ok[base], deterministic(inv[base]))
            rows.append(_claim(base, t).row(
                id=f"{base}-{t}:{short(model)}", carried=_why(model), verdict=verdict,
                setting=f"{model}{where}; {TRIGGER_WORDS[t]} for every lazy scheme; {setting}; the paper's "
                        f"parameters are not given, this is the nearest we build",
                measured=f"{measured[base]}; {how}"))
    return rows


def _heavy_rows(totals: pd.DataFrame, model: str, light: str, setting: str) -> list:
    TH, TL = _pivot(totals, model, "time"), _pivot(totals, light, "time")
    rows = []
    for code in ("gc", "grouping"):
        gain, gain_light = TH["gd"] / TH[code], (TL["gd"] / TL[code]).reindex(TH.index)
        ok = gain > gain_light
        rows.append(HEAVY.row(id=f"H-{code}:{short(model)}/{short(light)}", code=code, light=light,
                              setting=f"{model} vs {light}; {setting}",
                              measured=f"GD/{code} time {_spread(gain)} under {model}, {_spread(gain_light)} under "
                                       f"{light}; holds {_seeds(ok)}",
                              verdict=majority(ok.to_numpy(dtype=float))))
    return rows


def _lag_rows(lag: pd.DataFrame) -> list:
    lag = lag.set_index(["scheme", "warmup"])
    gd = lag.loc[("gd", "none")]
    setting = (f"Chen et al.'s heterogeneous regression, {int(gd['workers'])} workers, gap {gd['target']:g} on "
               f"gclib's loss, Chen et al.'s constants (xi = 1/D worker side, 10/D server side)")
    rows = []
    for name in ("lag-wk", "lag-ps"):
        if (name, "silent") not in lag.index:
            continue
        up, ref = float(lag.loc[(name, "silent"), "uploads"]), float(gd["uploads"])
        ok = math.isfinite(up) and math.isfinite(ref) and up <= FAR_FEWER * ref
        rows.append(OTHER_CLAIMS["L"].row(
            id=f"L-{name[4:]}", name=name.upper(), setting=f"{setting}; Chen et al.'s warm-up",
            measured=f"{up:.0f} uploads against GD's {ref:.0f} ({up / ref:.2f} of GD's)", verdict=exact(ok)))
    for name in ("lag-wk", "lag-ps"):
        if not {(name, "silent"), (name, "upload")} <= set(lag.index):
            continue
        a, b = float(lag.loc[(name, "silent"), "uploads"]), float(lag.loc[(name, "upload"), "uploads"])
        rows.append(OTHER_CLAIMS["W"].row(
            id=f"W-{name[4:]}", name=name.upper(), setting=setting,
            measured=f"{b:.0f} uploads with every worker uploading, {a:.0f} with Chen et al.'s warm-up "
                     f"({100 * (b / a - 1):+.0f}%)",
            verdict=exact(math.isfinite(a) and math.isfinite(b) and b > a)))
    return rows


def _literal_row(literal: pd.DataFrame, light: str, setting: str) -> dict:
    div = literal["status"] == "diverged"
    return OTHER_CLAIMS["M"].row(setting=f"{light}; worker-side trigger; {setting}",
                                 measured=f"diverged {_seeds(div)}", verdict=majority(div.to_numpy(dtype=float)))


def _on_family(c: Claim) -> Claim:
    """A comparison claim judged over the family's problems: on each problem by most of its seeds, then by the
    majority of the problems."""
    return replace(c, claim=f"{c.claim}, on the family",
                   criterion=f"on each problem: {c.criterion.replace('; majority of seeds', '')}, on most of its "
                             f"seeds; over the problems: majority (Wilson 95%)")


def _family_rows(family: pd.DataFrame, setting: str) -> list:
    """Per model of the family and trigger, every claim of :data:`CLAIMS` judged over the problems."""
    fam = family[~family["scheme"].str.endswith("-chen")]
    rows = []
    for model in dict.fromkeys(fam["model"]):
        per = {}
        for prob, g in fam[fam["model"] == model].groupby("problem", sort=False):
            T, U, C = _pivots(g, model)
            for t in TRIGGERS:
                for base, ok in _outcomes(T, U, C, t).items():
                    per.setdefault((base, t), []).append(float(ok.mean()) > 0.5)
        for t in TRIGGERS:
            for base in CLAIMS:
                ok = pd.Series(per[(base, t)])
                rows.append(_on_family(_claim(base, t)).row(
                    id=f"F{base}-{t}:{short(model)}", carried=_why(model, family=True),
                    setting=f"{model}; {TRIGGER_WORDS[t]} for every lazy scheme; {setting}",
                    measured=f"holds {_seeds(ok, 'problems')}", verdict=majority(ok.to_numpy(dtype=float))))
    return rows


def _chen_row(chen: pd.DataFrame, setting: str) -> dict:
    """``K-chen``: G-LAG with Chen et al.'s server-side constant on the family (``chen``: its runs)."""
    parts = []
    for s, st in chen.groupby("scheme", sort=False)["status"]:
        vc = st.value_counts()
        parts.append(f"{s[:-5]}: " + ", ".join(f"{k} {int(v)}" for k, v in vc.items()) + f" of {len(st)}")
    g_lag = chen[chen["scheme"] == "g-lag-ps-chen"]["status"]
    return OTHER_CLAIMS["K-chen"].row(
        setting=f"{setting}; xi = 10/D on the server side, first model and seed, at most {_cap()} x GD's iterations",
        measured="; ".join(parts), verdict=exact(len(g_lag) > 0 and bool((g_lag != "converged").any())))


def _convergence_rows(family: pd.DataFrame, setting: str) -> list:
    ours = family[~family["scheme"].str.endswith("-chen")]
    g = ours.groupby("scheme", sort=False)["status"]
    bad = {s: int((st != "converged").sum()) for s, st in g}
    text = "; ".join(f"{s}: {int(g.size()[s]) - bad[s]} of {int(g.size()[s])}" for s in bad)
    out = [OTHER_CLAIMS["K"].row(setting=setting, measured=f"runs that reached the target: {text}",
                                 verdict=exact(len(ours) > 0 and sum(bad.values()) == 0))]
    chen = family[family["scheme"].str.endswith("-chen")]
    if len(chen):
        out.append(_chen_row(chen, setting))
    return out


def _cap() -> int:
    return CHEN_CAP


def _models(totals: pd.DataFrame, light: str, lights, claim_models) -> tuple[list, list, list]:
    """The models of ``totals``, the light models and the models whose claims are judged, checked (ValueError
    naming what is missing)."""
    need = {"model", "scheme", "seed", "time", "uploads", "computations"}
    if not need <= set(totals.columns):
        raise ValueError(f"totals needs the columns {sorted(need)}, got {list(totals.columns)}")
    models = list(dict.fromkeys(totals.model))
    if light not in models:
        raise ValueError(f"light must be one of the models {models}, got {light!r}")
    lights = [m for m in models if not m.startswith("pareto ")] if lights is None else list(lights)
    claim_models = models if claim_models is None else list(claim_models)
    missing = [m for m in [*lights, *claim_models] if m not in models]
    if missing:
        raise ValueError(f"lights and claim_models must be among the models {models}, got {missing}")
    schemes = set(totals.scheme)
    need_s = {"gd", "gc", "grouping", *(f"{n}-{t}" for n in ("lag", "lagc", "g-lag") for t in TRIGGERS)}
    if not need_s <= schemes:
        raise ValueError(f"totals needs the schemes {sorted(need_s)}, missing {sorted(need_s - schemes)}")
    return models, lights, claim_models


def judge(totals: pd.DataFrame, lag: pd.DataFrame | None = None, literal: pd.DataFrame | None = None, *,
          light: str = "exp", lights=None, claim_models=None, setting: str = "",
          family: pd.DataFrame | None = None, family_setting: str = "") -> pd.DataFrame:
    """The claims table of notebook 06 (see the module docstring for the inputs).

    Args:
        light: the label of the exponential model in ``totals.model`` (``LAGC``'s literal threshold is judged
            under it). lights: the light-tailed models every Pareto model is compared with (default every model
            of ``totals`` that is not a Pareto tail).
        claim_models: the models whose comparison claims are judged (default every model of ``totals``).
        setting: the comparison's parameters in words
            (:attr:`gclib.studies.lazy_aggregation.study.Comparison.setting`).
        family, family_setting: :attr:`gclib.studies.lazy_aggregation.study.Robustness.totals` and its setting.
    Returns:
        rows ``L-wk``, ``L-ps`` (Chen et al.), ``W-wk``, ``W-ps`` (the warm-ups) when ``lag`` is given; per model
        of ``claim_models`` and trigger ``T, U, C, LU, SU, SC, LT, G`` (ids ``T-ps:p1.5``, ``T-wk:exp``, ...); per
        Pareto model, code and light model ``H`` (``H-gc:p1.5/exp``); ``M`` when ``literal`` is given; with
        ``family``, ``K`` (convergence), ``K-chen`` (Chen et al.'s constant) and every comparison claim over the
        problems (``FT-ps:p1.5``, ...).
    """
    models, lights, claim_models = _models(totals, light, lights, claim_models)
    setting = setting or "notebook 06's comparison"
    rows = _lag_rows(lag) if lag is not None else []
    for model in claim_models:
        rows += _comparison_rows(totals, model, setting)
    for model in models:
        if model.startswith("pareto "):
            for lt in lights:
                rows += _heavy_rows(totals, model, lt, setting)
    if literal is not None:
        rows.append(_literal_row(literal, light, setting))
    if family is not None:
        fs = family_setting or "the generic family"
        rows += _convergence_rows(family, fs)
        rows += _family_rows(family, fs)
    return table(rows)


def _grid(claims: pd.DataFrame, pattern: str, row_key, col_key, label) -> str:
    per = claims[claims["id"].str.match(pattern)]
    if per.empty:
        return ""
    keys = [(row_key(i), col_key(i), c, v) for i, c, v in zip(per["id"], per["claim"], per["verdict"])]
    cols = list(dict.fromkeys(k[1] for k in keys))
    lines = {}
    for rk, ck, c, v in keys:
        lines.setdefault(rk, {"claim": label(rk, c)})[ck] = v
    head = "| claim | " + " | ".join(cols) + " |\n|---|" + "---|" * len(cols) + "\n"
    return head + "".join(f"| {d['claim']} | " + " | ".join(d.get(c, "") for c in cols) + " |\n"
                          for d in lines.values())


def overview(claims: pd.DataFrame) -> str:
    """Markdown: one line per comparison claim and trigger of :func:`judge`, one column per model, the
    verdicts."""
    return _grid(claims, rf"^({'|'.join(CLAIMS)})-(wk|ps):", lambda i: i.split(":")[0], lambda i: i.split(":")[1],
                 lambda rk, c: f"{c} ({TRIGGER_WORDS[rk.split('-')[1]]})")


def heavy_overview(claims: pd.DataFrame) -> str:
    """Markdown: one line per code and light model of the heavy-tail claims, one column per Pareto shape."""
    return _grid(claims, r"^H-", lambda i: i.split(":")[0] + "/" + i.split("/")[1],
                 lambda i: i.split(":")[1].split("/")[0], lambda rk, c: c)


def family_overview(claims: pd.DataFrame) -> str:
    """Markdown: one line per comparison claim and trigger judged on the family, one column per model, the
    verdicts with the number of problems on which the claim holds."""
    per = claims[claims["id"].str.match(rf"^F({'|'.join(CLAIMS)})-(wk|ps):")].copy()
    if per.empty:
        return ""
    per["verdict"] = [f"{v} ({m.split(': ')[0].replace('holds in ', '')})" for v, m in zip(per["verdict"],
                                                                                        per["measured"])]
    return _grid(per, r"^F", lambda i: i.split(":")[0], lambda i: i.split(":")[1],
                 lambda rk, c: f"{c} ({TRIGGER_WORDS[rk.split('-')[1]]})")


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
