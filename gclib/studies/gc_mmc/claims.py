"""Claims of notebook 04: Example 1 and Fig. 1 of Ozfatura, Gunduz and Ulukus, "Gradient Coding with Clustering
and Multi-message Communication" (arXiv 1903.01974), judged from our exact counts and simulations.

* ``E`` rows: Example 1, exact (rational arithmetic, every received set enumerated; :func:`gclib.codes.mmc.
  worked_example_facts`).
* ``F`` rows: the claims of the text about Fig. 1, one row per claim and timing model (letters ``a``, ``b``, ...
  follow the models in the order of the Fig. 1 table; under the paper's eq. 5 they are ``paper`` rows, under any
  other model ``extension`` rows), from :func:`gclib.studies.gc_mmc.study.fig1_models` and the order sweep
  :func:`gclib.studies.gc_mmc.study.order_sweep`.
* ``X`` rows: our check of the paper's threshold for GC-MMC-2 against exact decoding
  (:func:`gclib.design.exact_rule_table`).

Criteria, fixed before looking at the numbers: "as well as" = mean time at most :data:`AS_WELL_AS` times LCC's;
"faster" / "lower" = the whole 95% interval below the other's; "about one message per worker" = mean messages
within :data:`ABOUT` of ``K``. Overlapping intervals give ``inconclusive``. The claims' texts and criteria are the
table :data:`CLAIMS` of :class:`gclib.claims.Claim` entries, filled in by short functions that measure each.
"""
from __future__ import annotations

import pandas as pd

from gclib.claims import (
    CHECK, HOLDS, PAPER, Claim, Estimate, all_hold, any_holds, at_most, exact, greater, less, table, within)
from gclib.studies.mmc_design.claims import exact_rule_row

#: The workers of the paper's Fig. 1: the statements about it are the paper's only at this size (and under eq. 5).
PAPER_K = 40
#: "As well as LCC": mean completion time at most this factor times LCC's.
AS_WELL_AS = 1.05
#: "About one message per worker": mean messages within this fraction of ``K``.
ABOUT = 0.10
#: Fig. 1 of the paper: the top tick and the tick below it of each axis (a) E[T], (b) communication load.
AXES = {"time": (1.4, 1.6), "messages": (100.0, 120.0)}
_ALL_AS_WELL = '"the GC-MMC schemes can perform as well as LCC in terms of the average per-iteration completion time"'


#: Every pattern of Example 1 is decided exactly: the rule of most ``E`` rows.
_ENUM = "exact: every received set enumerated in rational arithmetic"
_AS_WELL_RULE = f"mean time at most {AS_WELL_AS:g} x LCC's, beyond both 95% intervals"
_ORDERS = "correlated design of every order m in GC-MMC-1's clusters"
CLAIMS = {c.id: c for c in (
    Claim("E1", PAPER, "eq. (2) reproduced", "eq. (2): the GC assignment matrix", "exact: entry by entry"),
    Claim("E2", PAPER, "red entries of eq. (2) reproduced", "the last r - m ones of each row (red in eq. (2))",
          "exact: the removed entries equal the red ones"),
    Claim("E3", PAPER, "eq. (3) reproduced", "eq. (3): the mask of the real and virtual workers",
          "exact: entry by entry"),
    Claim("E4", PAPER, "6 distinct messages, any 5 decode",
          '6 coded partial gradients, any 5 decode (printed as "K - m = 6" and "K - m - 1 = 5": typos for K and '
          'K - m + 1)', _ENUM),
    Claim("E5", CHECK, "no 4 distinct messages decode", "our check: 5 is the least number that decodes", _ENUM),
    Claim("E6", PAPER, "workers 1, 2, 4 decode", "workers 1, 2 and 4 sending two messages each give c1..c5", _ENUM),
    Claim("E7", PAPER, "three workers can suffice, GC needs four",
          '"can complete an iteration with results from only three workers"; GC needs four',
          f"{_ENUM}: some triple decodes GC-MMC, no triple and every quadruple decode GC"),
    Claim("E8", CHECK, "the fast rule is exact (correlated)", "our check: distinct-message rule of the simulator",
          f"{_ENUM}, duplicates included"),
    Claim("E9", PAPER, "any 8 of 12 messages decode (uncorrelated)",
          '"the full gradient can be recovered from any 8 coded partial gradients"', _ENUM),
    Claim("E10", PAPER, "at least 8 messages are needed (uncorrelated)",
          '"the master needs at least 8 coded gradients"',
          f"{_ENUM}; linear decoding (target in the row span); the interpolation decoder needs 8 by construction, a "
          f"general linear decoder does not"),
    Claim("E11", PAPER, "three full and two partial workers decode, not GC",
          "three non-stragglers, two non-persistent stragglers, one persistent: GC-MMC decodes, GC does not", _ENUM),
    Claim("F1", PAPER, "GC-MMC-1 as well as LCC", _ALL_AS_WELL, _AS_WELL_RULE),
    Claim("F2", PAPER, "GC-MMC-2 as well as LCC", _ALL_AS_WELL + '; "GC-MMC-2 achieves the same performance as LCC"',
          _AS_WELL_RULE),
    Claim("F3", PAPER, "more messages beat LCC",
          '"the GC-MMC schemes can even outperform the LCC if the number of messages are increased"',
          "some order m < {order} (more messages than GC-MMC-1) has a mean time below LCC's, beyond both 95% "
          "intervals"),
    Claim("F4", PAPER, "UC-MMC faster than GC-MMC", "UC-MMC (m = 1) improves the completion time",
          "UC-MMC's mean time below both GC-MMC's, beyond the 95% intervals"),
    Claim("F5", PAPER, "... at a higher load", '"at the expense of an increase in the communication load"',
          "UC-MMC's mean messages until completion above both GC-MMC's, beyond the 95% intervals"),
    Claim("F6", PAPER, "GC-MMC between GC and UC-MMC", '"more flexible trade-off ... compared to UC-MMC and GC"',
          "each GC-MMC is faster than GC and sends fewer messages than UC-MMC, beyond the 95% intervals"),
    Claim("F7", PAPER, "GC-MMC-2 sends about one message per worker",
          '"sending only a single message per-worker per-iteration on average"',
          f"mean messages until completion within {ABOUT:.0%} of K, 95% interval inside the band"),
    Claim("F8", CHECK, "our tallest bars fit Fig. 1's axes",
          f"our check: Fig. 1's axes end at E[T] = {AXES['time'][1]:g} and load = {AXES['messages'][1]:g} (bar "
          f"values not given)",
          f"each tallest bar lies between the axis' last two ticks ({AXES['time'][0]:g}, {AXES['time'][1]:g}] and "
          f"({AXES['messages'][0]:g}, {AXES['messages'][1]:g}] (an axis ends at the first tick above its tallest "
          f"bar), beyond the 95% intervals"),
    Claim("F9", CHECK, "lower orders: faster, more messages",
          "our check: the orders fill the range between GC (m = r) and UC-MMC (m = 1) monotonically",
          "at every step from order m + 1 to m the mean time falls and the mean messages rise, beyond both 95% "
          "intervals"),
)}


def _t(g, label) -> Estimate:
    return Estimate.mean_ci(g.loc[label, "mean_time"], g.loc[label, "ci95_time"])


def _m(g, label, load="messages") -> Estimate:
    return Estimate.mean_ci(g.loc[label, f"mean_{load}"], g.loc[label, f"ci95_{load}"])


def fmt(e: Estimate) -> str:
    return e.text(".4g")


def _worked_example_figures(f) -> dict:
    """``{id: (measured, verdict)}`` of the matrices of Example 1 (rows ``E1`` to ``E3``, ``E8``)."""
    return {"E1": ("equal entry by entry" if f.eq2 else "differs", exact(f.eq2)),
            "E2": ("the same six entries" if f.red else "differ", exact(f.red)),
            "E3": ("equal entry by entry" if f.eq3 else "differs", exact(f.eq3)),
            "E8": ("agree on all 4095 received sets" if f.rule_agrees else "disagree", exact(f.rule_agrees))}


def _worked_example_counts(f) -> dict:
    """``{id: (measured, verdict)}`` of Example 1's counts of decoding sets (rows ``E4`` to ``E7``, ``E9`` to
    ``E11``)."""
    d4, n4 = f.count("correlated", "distinct messages", 4)
    d5, n5 = f.count("correlated", "distinct messages", 5)
    n_distinct = f.count("correlated", "distinct messages", 1)[1]
    w = {n: f.count("correlated", "workers", n) for n in (2, 3, 4)}
    g = {n: f.count("gc", "workers", n) for n in (3, 4)}
    u = {t: f.count("uncorrelated", "messages", t) for t in range(1, 9)}
    below = sum(u[t][0] for t in range(1, 6))
    triples = ", ".join("(" + ", ".join(map(str, t)) + ")" for t in f.failing_triples)
    return {
        "E4": (f"{n_distinct} distinct messages; {d5} of {n5} sets of 5 decode", exact(n_distinct == 6 and d5 == n5)),
        "E5": (f"{d4} of {n4} sets of 4 decode", exact(d4 == 0)),
        "E6": ("decode" if f.workers_124 else "do not decode", exact(f.workers_124)),
        "E7": (f"GC-MMC: {w[3][0]} of {w[3][1]} triples decode (all but {triples}), {w[2][0]} of {w[2][1]} pairs, "
               f"{w[4][0]} of {w[4][1]} quadruples; GC: {g[3][0]} of {g[3][1]} triples, {g[4][0]} of {g[4][1]} "
               f"quadruples", exact(w[3][0] > 0 and g[3][0] == 0 and g[4][0] == g[4][1])),
        "E9": (f"{u[8][0]} of {u[8][1]} sets of 8 decode", exact(u[8][0] == u[8][1])),
        "E10": (f"{u[6][0]} of {u[6][1]} sets of 6 and {u[7][0]} of {u[7][1]} sets of 7 decode; {below} sets of at "
                f"most 5", exact(u[6][0] == 0 and u[7][0] == 0 and below == 0)),
        "E11": (f"GC-MMC {'decodes' if f.scenario else 'does not decode'}; GC "
                f"{'decodes' if f.scenario_gc else 'does not decode'}", exact(f.scenario and not f.scenario_gc)),
    }


def _worked_example(f) -> list:
    """The ``E`` rows from :class:`gclib.codes.mmc.WorkedExampleFacts`."""
    setting = "Example 1: K = 6, r = 3; correlated m = 2, uncorrelated m = [3, 2]"
    measures = {**_worked_example_figures(f), **_worked_example_counts(f)}
    return [CLAIMS[key].row(setting=setting, measured=measures[key][0], verdict=measures[key][1])
            for key in (f"E{i}" for i in range(1, 12))]


def _fig1_bars(g: pd.DataFrame, t: dict, m: dict, K: int) -> dict:
    """``{id: (measured, verdict)}`` of the rows ``F1``, ``F2``, ``F4`` to ``F7`` from the bars of Fig. 1 (``t``,
    ``m``: time and messages per scheme)."""
    gc_mmc = ("GC-MMC-1", "GC-MMC-2")
    return {
        "F1": (f"GC-MMC-1 {fmt(t['GC-MMC-1'])} vs LCC {fmt(t['LCC'])}", at_most(t["GC-MMC-1"], t["LCC"], AS_WELL_AS)),
        "F2": (f"GC-MMC-2 {fmt(t['GC-MMC-2'])} vs LCC {fmt(t['LCC'])}", at_most(t["GC-MMC-2"], t["LCC"], AS_WELL_AS)),
        "F4": (f"UC-MMC {fmt(t['UC-MMC'])} vs GC-MMC-1 {fmt(t['GC-MMC-1'])}, GC-MMC-2 {fmt(t['GC-MMC-2'])}",
               all_hold([less(t["UC-MMC"], t[x]) for x in gc_mmc])),
        "F5": (f"UC-MMC {fmt(m['UC-MMC'])} vs {fmt(m['GC-MMC-1'])}, {fmt(m['GC-MMC-2'])} messages",
               all_hold([greater(m["UC-MMC"], m[x]) for x in gc_mmc])),
        "F6": (f"GC {fmt(t['GC'])} at {fmt(m['GC'])}; GC-MMC-1 {fmt(t['GC-MMC-1'])} at {fmt(m['GC-MMC-1'])}; "
               f"GC-MMC-2 {fmt(t['GC-MMC-2'])} at {fmt(m['GC-MMC-2'])}; UC-MMC {fmt(t['UC-MMC'])} at "
               f"{fmt(m['UC-MMC'])} messages",
               all_hold([less(t[x], t["GC"]) for x in gc_mmc] + [less(m[x], m["UC-MMC"]) for x in gc_mmc])),
        "F7": (f"{fmt(m['GC-MMC-2'])} messages until completion ({fmt(_m(g, 'GC-MMC-2', 'cluster_messages'))} until "
               f"each cluster decodes), K = {K}", within(m["GC-MMC-2"], K, ABOUT)),
    }


def _fig1(letter: str, model: str, g: pd.DataFrame, sw: pd.DataFrame, K: int, order: int,
          trials: int, sweep_trials: int, papers_model: bool = True) -> list:
    """The ``F`` rows of one timing model (``g``: the Fig. 1 rows indexed by label; ``sw``: the order sweep). Under
    a model that is not the paper's (``papers_model`` False), a row that tests the paper's statement is that
    statement carried beyond the paper, not the paper's claim."""
    s, sweep = f"{model}; K = {K}; {trials} trials", f"{model}; {_ORDERS}; {sweep_trials} trials"
    t = {x: _t(g, x) for x in g.index}
    m = {x: _m(g, x) for x in g.index}
    corr = sw[sw["family"] == "gc-mmc-correlated"].sort_values("order")
    measures = {**_fig1_bars(g, t, m, K), "F3": _more_messages(corr, sw[sw["family"] == "lcc"].iloc[0], order),
                "F8": _axes(t, m), "F9": _monotone(corr)}
    carried = None if papers_model else (f"the paper's Fig. 1 is at K = {PAPER_K} under eq. 5 (one draw per "
                                         f"worker); here K = {K} under {model}")
    return [CLAIMS[key].row(id=f"{key}{letter}", setting=sweep if key in ("F3", "F9") else s,
                            measured=measures[key][0], verdict=measures[key][1], carried=carried, order=order)
            for key in (f"F{i}" for i in range(1, 10))]


def _more_messages(corr: pd.DataFrame, lcc, order: int) -> tuple:
    """Some order below GC-MMC-1's (more messages) beats LCC (``corr``: the correlated rows of the order sweep):
    the measured text and the verdict."""
    tl = Estimate.mean_ci(lcc["mean_time"], lcc["ci95_time"])
    beat = {int(x["order"]): less(Estimate.mean_ci(x["mean_time"], x["ci95_time"]), tl) for _, x in corr.iterrows()}
    fast = corr.loc[corr["mean_time"].idxmin()]
    winners = [o for o, v in beat.items() if v == HOLDS]
    return (f"orders faster than LCC: m = {', '.join(map(str, winners)) or 'none'}; fastest m = "
            f"{int(fast['order'])}: {fmt(Estimate.mean_ci(fast['mean_time'], fast['ci95_time']))} at "
            f"{fast['mean_messages']:.4g} messages; LCC {fmt(tl)}",
            any_holds([v for o, v in beat.items() if o < order]))


def _axes(t: dict, m: dict) -> tuple:
    """Our tallest bars (``t``, ``m``: time and messages per scheme) against the last ticks of Fig. 1's axes: the
    measured text and the verdict."""
    tmax, mmax = max(t.values(), key=lambda e: e.value), max(m.values(), key=lambda e: e.value)
    (t0, t1), (m0, m1) = AXES["time"], AXES["messages"]
    return (f"tallest bars: E[T] {fmt(tmax)}, load {fmt(mmax)} messages",
            all_hold([greater(tmax, t0), at_most(tmax, t1), greater(mmax, m0), at_most(mmax, m1)]))


def _monotone(corr: pd.DataFrame) -> tuple:
    """Each step down in order (m + 1 to m) lowers the mean time and raises the mean messages: the measured text
    and the verdict."""
    steps, others = [], []
    c = corr.sort_values("order").reset_index(drop=True)
    for i in range(len(c) - 1):
        lo, hi = c.iloc[i], c.iloc[i + 1]
        v = all_hold([less(Estimate.mean_ci(lo["mean_time"], lo["ci95_time"]),
                           Estimate.mean_ci(hi["mean_time"], hi["ci95_time"])),
                      greater(Estimate.mean_ci(lo["mean_messages"], lo["ci95_messages"]),
                              Estimate.mean_ci(hi["mean_messages"], hi["ci95_messages"]))])
        steps.append(v)
        if v != HOLDS:
            others.append(f"m = {int(hi['order'])} to {int(lo['order'])}: {v}")
    return (f"{steps.count(HOLDS)} of {len(steps)} steps hold" + (f"; {'; '.join(others)}" if others else ""),
            all_hold(steps))


def judge(facts, fig1: pd.DataFrame, sweep: pd.DataFrame, exact_rule: pd.DataFrame, *, K: int, order: int,
          trials: int, sweep_trials: int) -> pd.DataFrame:
    """The claims table of notebook 04.

    Args:
        facts: :func:`gclib.codes.mmc.worked_example_facts`.
        fig1: :func:`gclib.studies.gc_mmc.study.fig1_models` (``model, label`` with labels ``GC, LCC, UC-MMC, GC-MMC-1,
            GC-MMC-2``; means and 95% half-widths of time, messages and cluster messages).
        sweep: :func:`gclib.studies.gc_mmc.study.order_sweep` (``model, family, order``, means and half-widths of time,
            mean messages), under the same model names.
        exact_rule: :func:`gclib.design.exact_rule_table` for GC-MMC-2 under the paper's model (the first model of
            ``fig1``; rows under the other models test the paper's statements as our checks).
        K: workers. order: GC-MMC-1's order. trials, sweep_trials: Monte Carlo trials (for the settings).
    Returns:
        the claims table (columns :data:`gclib.claims.COLUMNS`).
    """
    rows = _worked_example(facts)
    models = list(dict.fromkeys(fig1["model"]))
    for i, model in enumerate(models):
        g = fig1[fig1["model"] == model].set_index("label")
        rows += _fig1("abcdefgh"[i], model, g, sweep[sweep["model"] == model], K, order, trials, sweep_trials,
                      papers_model=i == 0 and K == PAPER_K)
    for i, (_, x) in enumerate(exact_rule.iterrows(), 1):
        rows.append(exact_rule_row(f"X{i}", x, f"{models[0]}; K = {K}; {int(x['trials'])} trials"))
    return table(rows)
