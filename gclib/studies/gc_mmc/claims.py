"""Claims of notebook 04: Example 1 and Fig. 1 of Ozfatura, Gunduz and Ulukus, "Gradient Coding with Clustering
and Multi-message Communication" (arXiv 1903.01974), judged from our exact counts and simulations.

* ``E`` rows: Example 1, exact (rational arithmetic, every received set enumerated; :func:`gclib.codes.mmc.
  example1_facts`).
* ``F`` rows: the claims of the text about Fig. 1, one row per claim and timing model (letters ``a``, ``b``, ...
  follow the models in the order of the Fig. 1 table; under the paper's eq. 5 they are ``paper`` rows, under any
  other model ``extension`` rows), from :func:`gclib.studies.gc_mmc.study.fig1_models` and the order
  sweep
  :func:`gclib.studies.gc_mmc.study.order_sweep`.
* ``X`` rows: our check of the paper's threshold for GC-MMC-2 against exact decoding
  (:func:`gclib.design.exact_rule_table`).

Criteria, fixed before looking at the numbers: "as well as" = mean time at most :data:`AS_WELL_AS` times LCC's;
"faster" / "lower" = the whole 95% interval below the other's; "about one message per worker" = mean messages
within :data:`ABOUT` of ``K``. Overlapping intervals give ``inconclusive``.
"""
from __future__ import annotations

import pandas as pd

from gclib.claims import (
    EXTENSION, HOLDS, PAPER, Estimate, all_hold, any_holds, at_most, beyond, exact, greater, less, row, table, within)
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


def _t(g, label) -> Estimate:
    return Estimate.mean_ci(g.loc[label, "mean_time"], g.loc[label, "ci95_time"])


def _m(g, label, load="messages") -> Estimate:
    return Estimate.mean_ci(g.loc[label, f"mean_{load}"], g.loc[label, f"ci95_{load}"])


def fmt(e: Estimate) -> str:
    return e.text(".4g")


def _example1(f) -> list:
    """The ``E`` rows from :class:`gclib.codes.mmc.Example1Facts`."""
    enum = "exact: every received set enumerated in rational arithmetic"
    setting = "Example 1: K = 6, r = 3; correlated m = 2, uncorrelated m = [3, 2]"
    d4, n4 = f.count("correlated", "distinct messages", 4)
    d5, n5 = f.count("correlated", "distinct messages", 5)
    n_distinct = f.count("correlated", "distinct messages", 1)[1]
    w = {n: f.count("correlated", "workers", n) for n in (2, 3, 4)}
    g = {n: f.count("gc", "workers", n) for n in (3, 4)}
    u = {t: f.count("uncorrelated", "messages", t) for t in range(1, 9)}
    below = sum(u[t][0] for t in range(1, 6))
    triples = ", ".join("(" + ", ".join(map(str, t)) + ")" for t in f.failing_triples)
    return [
        row("E1", "eq. (2) reproduced", kind="paper", paper="eq. (2): the GC assignment matrix", setting=setting,
            measured="equal entry by entry" if f.eq2 else "differs", criterion="exact: entry by entry",
            verdict=exact(f.eq2)),
        row("E2", "red entries of eq. (2) reproduced", kind="paper", paper="the last r - m ones of each row (red in eq. (2))",
            setting=setting, measured="the same six entries" if f.red else "differ",
            criterion="exact: the removed entries equal the red ones", verdict=exact(f.red)),
        row("E3", "eq. (3) reproduced", kind="paper", paper="eq. (3): the mask of the real and virtual workers", setting=setting,
            measured="equal entry by entry" if f.eq3 else "differs", criterion="exact: entry by entry",
            verdict=exact(f.eq3)),
        row("E4", "6 distinct messages, any 5 decode",
            kind="paper", paper='6 coded partial gradients, any 5 decode (printed as "K - m = 6" and "K - m - 1 = 5": '
                  "typos for K and K - m + 1)",
            setting=setting, measured=f"{n_distinct} distinct messages; {d5} of {n5} sets of 5 decode",
            criterion=enum, verdict=exact(n_distinct == 6 and d5 == n5)),
        row("E5", "no 4 distinct messages decode", kind="check", paper="our check: 5 is the least number that decodes",
            setting=setting, measured=f"{d4} of {n4} sets of 4 decode", criterion=enum, verdict=exact(d4 == 0)),
        row("E6", "workers 1, 2, 4 decode", kind="paper", paper="workers 1, 2 and 4 sending two messages each give c1..c5",
            setting=setting, measured="decode" if f.workers_124 else "do not decode", criterion=enum,
            verdict=exact(f.workers_124)),
        row("E7", "three workers can suffice, GC needs four",
            kind="paper", paper='"can complete an iteration with results from only three workers"; GC needs four',
            setting=setting,
            measured=(f"GC-MMC: {w[3][0]} of {w[3][1]} triples decode (all but {triples}), {w[2][0]} of {w[2][1]} "
                      f"pairs, {w[4][0]} of {w[4][1]} quadruples; GC: {g[3][0]} of {g[3][1]} triples, "
                      f"{g[4][0]} of {g[4][1]} quadruples"),
            criterion=f"{enum}: some triple decodes GC-MMC, no triple and every quadruple decode GC",
            verdict=exact(w[3][0] > 0 and g[3][0] == 0 and g[4][0] == g[4][1])),
        row("E8", "the fast rule is exact (correlated)", kind="check", paper="our check: distinct-message rule of the simulator",
            setting=setting, measured="agree on all 4095 received sets" if f.rule_agrees else "disagree",
            criterion=f"{enum}, duplicates included", verdict=exact(f.rule_agrees)),
        row("E9", "any 8 of 12 messages decode (uncorrelated)",
            kind="paper", paper='"the full gradient can be recovered from any 8 coded partial gradients"', setting=setting,
            measured=f"{u[8][0]} of {u[8][1]} sets of 8 decode", criterion=enum, verdict=exact(u[8][0] == u[8][1])),
        row("E10", "at least 8 messages are needed (uncorrelated)",
            kind="paper", paper='"the master needs at least 8 coded gradients"', setting=setting,
            measured=(f"{u[6][0]} of {u[6][1]} sets of 6 and {u[7][0]} of {u[7][1]} sets of 7 decode; "
                      f"{below} sets of at most 5"),
            criterion=(f"{enum}; linear decoding (target in the row span); the interpolation decoder needs 8 by "
                       f"construction, a general linear decoder does not"),
            verdict=exact(u[6][0] == 0 and u[7][0] == 0 and below == 0)),
        row("E11", "three full and two partial workers decode, not GC",
            kind="paper", paper="three non-stragglers, two non-persistent stragglers, one persistent: GC-MMC decodes, GC does not",
            setting=setting,
            measured=(f"GC-MMC {'decodes' if f.scenario else 'does not decode'}; GC "
                      f"{'decodes' if f.scenario_gc else 'does not decode'}"),
            criterion=enum, verdict=exact(f.scenario and not f.scenario_gc)),
    ]


def _fig1(letter: str, model: str, g: pd.DataFrame, sw: pd.DataFrame, K: int, order: int,
          trials: int, sweep_trials: int, papers_model: bool = True) -> list:
    """The ``F`` rows of one timing model (``g``: the Fig. 1 rows indexed by label; ``sw``: the order sweep). Under
    a model that is not the paper's (``papers_model`` False), a row that tests the paper's statement is our check
    of it under that model, not the paper's claim."""
    s = f"{model}; K = {K}; {trials} trials"
    t = {x: _t(g, x) for x in g.index}
    m = {x: _m(g, x) for x in g.index}
    rows = [
        row(f"F1{letter}", "GC-MMC-1 as well as LCC", kind="paper", paper=_ALL_AS_WELL, setting=s,
            measured=f"GC-MMC-1 {fmt(t['GC-MMC-1'])} vs LCC {fmt(t['LCC'])}",
            criterion=f"mean time at most {AS_WELL_AS:g} x LCC's, beyond both 95% intervals",
            verdict=at_most(t["GC-MMC-1"], t["LCC"], AS_WELL_AS)),
        row(f"F2{letter}", "GC-MMC-2 as well as LCC",
            kind="paper", paper=_ALL_AS_WELL + '; "GC-MMC-2 achieves the same performance as LCC"', setting=s,
            measured=f"GC-MMC-2 {fmt(t['GC-MMC-2'])} vs LCC {fmt(t['LCC'])}",
            criterion=f"mean time at most {AS_WELL_AS:g} x LCC's, beyond both 95% intervals",
            verdict=at_most(t["GC-MMC-2"], t["LCC"], AS_WELL_AS)),
    ]
    corr = sw[sw["family"] == "gc-mmc-correlated"].sort_values("order")
    rows.append(_more_messages(f"F3{letter}", model, corr, sw[sw["family"] == "lcc"].iloc[0], order, sweep_trials))
    rows += [
        row(f"F4{letter}", "UC-MMC faster than GC-MMC",
            kind="paper", paper="UC-MMC (m = 1) improves the completion time", setting=s,
            measured=f"UC-MMC {fmt(t['UC-MMC'])} vs GC-MMC-1 {fmt(t['GC-MMC-1'])}, GC-MMC-2 {fmt(t['GC-MMC-2'])}",
            criterion="UC-MMC's mean time below both GC-MMC's, beyond the 95% intervals",
            verdict=all_hold([less(t["UC-MMC"], t["GC-MMC-1"]), less(t["UC-MMC"], t["GC-MMC-2"])])),
        row(f"F5{letter}", "... at a higher load",
            kind="paper", paper='"at the expense of an increase in the communication load"', setting=s,
            measured=f"UC-MMC {fmt(m['UC-MMC'])} vs {fmt(m['GC-MMC-1'])}, {fmt(m['GC-MMC-2'])} messages",
            criterion="UC-MMC's mean messages until completion above both GC-MMC's, beyond the 95% intervals",
            verdict=all_hold([greater(m["UC-MMC"], m["GC-MMC-1"]), greater(m["UC-MMC"], m["GC-MMC-2"])])),
        row(f"F6{letter}", "GC-MMC between GC and UC-MMC", kind="paper", paper=('"more flexible trade-off ... compared to UC-MMC '
                                                                'and GC"'), setting=s,
            measured=(f"GC {fmt(t['GC'])} at {fmt(m['GC'])}; GC-MMC-1 {fmt(t['GC-MMC-1'])} at {fmt(m['GC-MMC-1'])}; "
                      f"GC-MMC-2 {fmt(t['GC-MMC-2'])} at {fmt(m['GC-MMC-2'])}; UC-MMC {fmt(t['UC-MMC'])} at "
                      f"{fmt(m['UC-MMC'])} messages"),
            criterion="each GC-MMC is faster than GC and sends fewer messages than UC-MMC, beyond the 95% intervals",
            verdict=all_hold([less(t[x], t["GC"]) for x in ("GC-MMC-1", "GC-MMC-2")]
                             + [less(m[x], m["UC-MMC"]) for x in ("GC-MMC-1", "GC-MMC-2")])),
        row(f"F7{letter}", "GC-MMC-2 sends about one message per worker",
            kind="paper", paper='"sending only a single message per-worker per-iteration on average"', setting=s,
            measured=(f"{fmt(m['GC-MMC-2'])} messages until completion ({fmt(_m(g, 'GC-MMC-2', 'cluster_messages'))}"
                      f" until each cluster decodes), K = {K}"),
            criterion=f"mean messages until completion within {ABOUT:.0%} of K, 95% interval inside the band",
            verdict=within(m["GC-MMC-2"], K, ABOUT)),
    ]
    rows.append(_axes(f"F8{letter}", s, t, m))
    rows.append(_monotone(f"F9{letter}", model, corr, sweep_trials))
    if not papers_model:
        for r in rows:
            if r["kind"] == PAPER:
                r["kind"] = EXTENSION
                r["paper"] = beyond(r["paper"], f"the paper's Fig. 1 is at K = {PAPER_K} under eq. 5 (one draw per "
                                                f"worker); here K = {K} under {model}")
    return rows


def _more_messages(id_: str, model: str, corr: pd.DataFrame, lcc, order: int, sweep_trials: int) -> dict:
    """Some order below GC-MMC-1's (more messages) beats LCC (``corr``: the correlated rows of the order sweep)."""
    tl = Estimate.mean_ci(lcc["mean_time"], lcc["ci95_time"])
    beat = {int(x["order"]): less(Estimate.mean_ci(x["mean_time"], x["ci95_time"]), tl) for _, x in corr.iterrows()}
    fast = corr.loc[corr["mean_time"].idxmin()]
    winners = [o for o, v in beat.items() if v == HOLDS]
    return row(
        id_, "more messages beat LCC",
        kind="paper", paper='"the GC-MMC schemes can even outperform the LCC if the number of messages are increased"',
        setting=f"{model}; correlated design of every order m in GC-MMC-1's clusters; {sweep_trials} trials",
        measured=(f"orders faster than LCC: m = {', '.join(map(str, winners)) or 'none'}; fastest m = "
                  f"{int(fast['order'])}: {fmt(Estimate.mean_ci(fast['mean_time'], fast['ci95_time']))} at "
                  f"{fast['mean_messages']:.4g} messages; LCC {fmt(tl)}"),
        criterion=(f"some order m < {order} (more messages than GC-MMC-1) has a mean time below LCC's, beyond both "
                   f"95% intervals"),
        verdict=any_holds([v for o, v in beat.items() if o < order]))


def _axes(id_: str, setting: str, t: dict, m: dict) -> dict:
    """Our tallest bars (``t``, ``m``: time and messages per scheme) against the last ticks of Fig. 1's axes."""
    tmax, mmax = max(t.values(), key=lambda e: e.value), max(m.values(), key=lambda e: e.value)
    (t0, t1), (m0, m1) = AXES["time"], AXES["messages"]
    return row(
        id_, "our tallest bars fit Fig. 1's axes",
        kind="check", paper=f"our check: Fig. 1's axes end at E[T] = {t1:g} and load = {m1:g} (bar values not given)",
        setting=setting, measured=f"tallest bars: E[T] {fmt(tmax)}, load {fmt(mmax)} messages",
        criterion=(f"each tallest bar lies between the axis' last two ticks ({t0:g}, {t1:g}] and ({m0:g}, {m1:g}] "
                   f"(an axis ends at the first tick above its tallest bar), beyond the 95% intervals"),
        verdict=all_hold([greater(tmax, t0), at_most(tmax, t1), greater(mmax, m0), at_most(mmax, m1)]))


def _monotone(id_: str, model: str, corr: pd.DataFrame, sweep_trials: int) -> dict:
    """Each step down in order (m + 1 to m) lowers the mean time and raises the mean messages."""
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
    return row(id_, "lower orders: faster, more messages",
               kind="check", paper="our check: the orders fill the range between GC (m = r) and UC-MMC (m = 1) monotonically",
               setting=f"{model}; correlated design of every order m in GC-MMC-1's clusters; {sweep_trials} trials",
               measured=(f"{steps.count(HOLDS)} of {len(steps)} steps hold"
                         + (f"; {'; '.join(others)}" if others else "")),
               criterion=("at every step from order m + 1 to m the mean time falls and the mean messages rise, beyond "
                          "both 95% intervals"),
               verdict=all_hold(steps))


def judge(facts, fig1: pd.DataFrame, sweep: pd.DataFrame, exact_rule: pd.DataFrame, *, K: int, order: int,
          trials: int, sweep_trials: int) -> pd.DataFrame:
    """The claims table of notebook 04.

    Args:
        facts: :func:`gclib.codes.mmc.example1_facts`.
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
    rows = _example1(facts)
    models = list(dict.fromkeys(fig1["model"]))
    for i, model in enumerate(models):
        g = fig1[fig1["model"] == model].set_index("label")
        rows += _fig1("abcdefgh"[i], model, g, sweep[sweep["model"] == model], K, order, trials, sweep_trials,
                      papers_model=i == 0 and K == PAPER_K)
    for i, (_, x) in enumerate(exact_rule.iterrows(), 1):
        rows.append(exact_rule_row(f"X{i}", x, f"{models[0]}; K = {K}; {int(x['trials'])} trials"))
    return table(rows)
