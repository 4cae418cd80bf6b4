"""Claims of notebook 11: Ramamoorthy, Meng and Girimaji, "Leveraging partial stragglers within gradient coding"
(NeurIPS 2024, arXiv 2405.19509), reconstructed in :mod:`gclib.codes.partial_work`.

Only the abstract and a public summary were available: the ``paper`` rows judge the abstract's statements under
our models and our reconstruction of the protocol, the nearest setting we can build (the paper's own is not
available); ``reading`` rows judge what we made of what the abstract leaves open (the class of assignments and the
objective ``Q_max`` of the ordering, ``R0``; that a random order is slower, ``R4``); ``check`` rows are our own
verifications. Every threshold is a constant below, fixed before the numbers were read. The claims' texts and
criteria are the table :data:`CLAIMS` of :class:`gclib.claims.Claim` entries, filled in by short functions that
measure each.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from gclib.claims import (
    CHECK, FAILS, HOLDS, INCONCLUSIVE, PAPER, READING, Claim, Estimate, all_hold, exact, less, table)
from gclib.stats import paired_difference

CITE = "Ramamoorthy, Meng, Girimaji (NeurIPS 2024), abstract"
#: What the paper's setting is to us: only its abstract was available.
NEAREST = ("the paper's experimental setting is not available (only its abstract): our reconstruction of the "
           "protocol under our time models is the nearest we build")
#: "About 2x": a speedup within a factor of 1.5 of 2.
ABOUT_2X = (2 / 1.5, 2 * 1.5)
#: "Several orders of magnitude": at least two.
ORDERS = 100.0
#: The deadline of row P2, a fraction of GC's mean exact-recovery time (one of the study's ``fractions``).
P2_DEADLINE = 0.5
#: A ratio of mean errors is measured only when RMG's error is positive in at least this many trials.
MIN_NONZERO = 10
_OUR = "our check"


CLAIMS = {c.id: c for c in (
    Claim("R0", READING, "an ordering minimizing Q_max is found efficiently (N = n, equal replication)",
          f"our reading of {CITE}: 'for an important class of chunk assignments, we present efficient algorithms for "
          f"optimizing the relative ordering of chunks within the workers'; the class (N = n chunks, equal "
          f"replication) and the objective (Q_max) are ours, the abstract names neither",
          "holds when it is in every case"),
    Claim("R1", READING, "Q_max's minimum is 1 + (n - l) l + l (l - 1) / 2",
          "our reading of Q_max (worst-case chunk computations until every chunk is done once) and its bound",
          "holds when it does in every case"),
    Claim("P1", PAPER, "exact recovery about 2x faster than GC ({model})",
          f"{CITE}: exact recovery about 2x faster than the original GC protocols",
          f"holds when the paired 95% interval lies in [{ABOUT_2X[0]:.3g}, {ABOUT_2X[1]:g}] (within a factor 1.5 of "
          f"2) for every way of taking uploads in; does not hold when one lies wholly outside"),
    Claim("P3", PAPER, "the ordering of the chunks affects the execution time",
          f"{CITE}: the relative ordering of chunks within the workers 'affects the overall execution time'",
          "holds when the paired interval of random / natural excludes 1 in some setting (the two orderings take "
          "different times); does not hold when it contains 1 in every setting; else inconclusive"),
    Claim("R4", READING, "a random order is slower than the natural one",
          f"our reading of {CITE}: an ordering chosen for Q_max (the natural one meets its bound) should beat a random "
          f"one whatever the time model",
          "holds when the paired interval of random / natural lies above 1 in every setting; does not hold when it "
          "lies below 1 in some setting (a random order faster) or contains 1 in every setting"),
    Claim("R2", READING, "the protocol uploads fewer vectors than UC-MMC, and no more than GC",
          f"{CITE}: communication-efficient; our reading: one vector per picked worker",
          "holds when RMG's mean is below UC-MMC's and at most GC's (95% intervals) under every model"),
    Claim("R3", READING, "RMG beats UC-MMC only where the master takes uploads one at a time",
          "our reading: UC-MMC uses the same partial work, the difference is communication",
          "holds when UC-MMC / RMG > 1 (whole interval) under every model with uploads one at a time and not with "
          "uploads in parallel"),
    Claim("P2", PAPER, "approximate recovery: error orders of magnitude below GC's",
          f"{CITE}: approximate recovery with a mean-squared error several orders of magnitude lower",
          "at the deadline {deadline:g} x GC's mean exact time, under every model: holds when the paired 95% "
          "interval of GC's mean error over RMG's lies at or above {orders:g}; does not hold when it lies below "
          "{orders:g} under some model; a ratio is measured only when RMG's error is positive in at least "
          "{min_nonzero} trials (otherwise RMG is exact there and that model is inconclusive)"),
    Claim("C1", CHECK, "coverage decides exact recovery; the 0/1 decode is exact", _OUR,
          "holds when the rule and the exact rank test agree everywhere and every covering state decodes exactly "
          "with 0/1 coefficients"),
    Claim("C2", CHECK, "the matching ordering meets the bound; random orderings exceed it", _OUR,
          "holds when the optimal excess is 0 everywhere and the random mean excess positive everywhere"),
    Claim("C3", CHECK, "over MPI, the two-phase exchange uploads fewer full vectors than sending every chunk",
          _OUR + " of the runtime's two exchanges on the same injected delays",
          "the paired difference of vectors has its 95% interval above 0 and every decoded gradient is within 1e-9 "
          "of the full gradient (either fails: does not hold)"),
)}


def _speedup(t: pd.DataFrame, uploads: str, model: str, scheme: str) -> Estimate:
    r = t[(t.uploads == uploads) & (t.model == model) & (t.scheme == scheme)].iloc[0]
    return Estimate(float(r.speedup), float(r.speedup_lo), float(r.speedup_hi))


def _inside(e: Estimate, lo: float, hi: float) -> str:
    if not e.known:
        return INCONCLUSIVE
    if lo <= e.lo and e.hi <= hi:
        return HOLDS
    if e.hi < lo or e.lo > hi:
        return FAILS
    return INCONCLUSIVE


def _mean(t: pd.DataFrame, uploads: str, model: str, scheme: str, col: str = "time") -> Estimate:
    r = t[(t.uploads == uploads) & (t.model == model) & (t.scheme == scheme)].iloc[0]
    return Estimate.mean_ci(float(r[f"mean_{col}"]), float(r[f"ci95_{col}"]))


def _about_2x_rows(times: pd.DataFrame, models: list, uploads: list, setting: str) -> list:
    """``P1`` per model: RMG's exact recovery against GC's, for every way of taking uploads in."""
    out = []
    for k, m in enumerate(models):
        es = {u: _speedup(times, u, m, "GC") for u in uploads}
        out.append(CLAIMS["P1"].row(
            id=f"P1{'abcdef'[k]}", model=m, setting=f"{setting}; {m}; same load, paired trials; {NEAREST}",
            measured="; ".join(f"GC / RMG mean time, uploads {u}: {e.text()}" for u, e in es.items()),
            verdict=all_hold(_inside(e, *ABOUT_2X) for e in es.values())))
    return out


def _ordering_rows(times: pd.DataFrame, models: list, uploads: list, setting: str) -> list:
    """``P3``, ``R4``: the ordering changes the run time; a random order is slower than the natural one (which
    meets the bound)."""
    es = {(u, m): _speedup(times, u, m, "RMG (random order)") for u in uploads for m in models}
    above = [e.known and e.lo > 1 for e in es.values()]
    below = [e.known and e.hi < 1 for e in es.values()]
    none = [e.known and e.lo <= 1 <= e.hi for e in es.values()]
    measured = "; ".join(f"uploads {u}, {m}: random / natural {e.text()}" for (u, m), e in es.items())
    where = (f"{setting}; random ordering against the natural one (which on the cyclic assignment meets the Q_max "
             f"bound), paired")
    return [CLAIMS["P3"].row(setting=f"{where}; {NEAREST}", measured=measured,
                             verdict=(HOLDS if any(a or b for a, b in zip(above, below)) else FAILS if all(none)
                                      else INCONCLUSIVE)),
            CLAIMS["R4"].row(setting=where, measured=measured,
                             verdict=(HOLDS if all(above) else FAILS if any(below) or all(none) else INCONCLUSIVE))]


def _volume_row(times: pd.DataFrame, models: list, uploads: list, setting: str) -> dict:
    """``R2``: communication, one vector per picked worker."""
    parts, verdicts = [], []
    for m in models:
        v = {s: _mean(times, uploads[0], m, s, "volume") for s in ("RMG", "GC", "UC-MMC")}
        parts.append(f"{m}: RMG {v['RMG'].text()}, GC {v['GC'].text()}, UC-MMC {v['UC-MMC'].text()}")
        verdicts += [less(v["RMG"], v["UC-MMC"]), at_most_est(v["RMG"], v["GC"])]
    return CLAIMS["R2"].row(setting=f"{setting}; vectors received by the decode", measured="; ".join(parts),
                            verdict=all_hold(verdicts))


def _uc_mmc_row(times: pd.DataFrame, models: list, uploads: list, setting: str) -> dict:
    """``R3``: who wins against UC-MMC, by way of taking uploads in."""
    parts, beats = [], {}
    for u in uploads:
        for m in models:
            e = _speedup(times, u, m, "UC-MMC")
            parts.append(f"uploads {u}, {m}: UC-MMC / RMG {e.text()}")
        beats[u] = all(_speedup(times, u, m, "UC-MMC").lo > 1 for m in models)
    both = {"in parallel", "one at a time"} <= set(beats)
    return CLAIMS["R3"].row(setting=f"{setting}; RMG in UC-MMC's (natural) order, paired", measured="; ".join(parts),
                            verdict=(exact(beats["one at a time"] and not beats["in parallel"]) if both
                                     else INCONCLUSIVE))


def _time_rows(times: pd.DataFrame, setting: str) -> list:
    models = list(dict.fromkeys(times["model"]))
    uploads = list(dict.fromkeys(times["uploads"]))
    return [*_about_2x_rows(times, models, uploads, setting), *_ordering_rows(times, models, uploads, setting),
            _volume_row(times, models, uploads, setting), _uc_mmc_row(times, models, uploads, setting)]


def at_most_est(a: Estimate, b: Estimate) -> str:
    """``a <= b``: holds when ``a.hi <= b.lo`` or both are the same exact number."""
    if a.is_exact and b.is_exact:
        return exact(a.value <= b.value)
    return HOLDS if a.hi <= b.lo else FAILS if a.lo > b.hi else INCONCLUSIVE


def _mse_row(mse: pd.DataFrame, setting: str, deadline: float) -> dict:
    at = mse[np.isclose(mse["fraction"], deadline)]
    if at.empty:
        raise ValueError(f"mse_deadline must be one of the study's fractions {sorted(set(mse['fraction']))}, "
                         f"got {deadline}")
    parts, verdicts = [], []
    for m, g in at.groupby("model", sort=False):
        r = g[g.scheme == "RMG"].iloc[0]
        c = g[g.scheme == "GC"].iloc[0]
        nonzero = int(round((1 - r.exact_share) * r.trials))
        head = f"{m}: GC {c.mean_mse:.3g} [{c.lo:.3g}, {c.hi:.3g}], RMG {r.mean_mse:.3g} [{r.lo:.3g}, {r.hi:.3g}]"
        if nonzero < MIN_NONZERO:
            parts.append(f"{head}, RMG exact in all but {nonzero} of {int(r.trials)} trials: no ratio measured")
            verdicts.append(INCONCLUSIVE)
            continue
        e = Estimate(float(c.ratio_to_rmg), float(c.ratio_lo), float(c.ratio_hi))
        parts.append(f"{head}, GC / RMG {e.text()}")
        verdicts.append(INCONCLUSIVE if not e.known else HOLDS if e.lo >= ORDERS else
                        FAILS if e.hi < ORDERS else INCONCLUSIVE)
    return CLAIMS["P2"].row(setting=f"{setting}; judged at the deadline {deadline:g} x GC's mean exact time, paired "
                                    f"trials; {NEAREST}",
                            measured="; ".join(parts), verdict=all_hold(verdicts), deadline=deadline, orders=ORDERS,
                            min_nonzero=MIN_NONZERO)


def _mpi_row(ex: pd.DataFrame) -> dict:
    """Check C3: over MPI, on the same injected delays, the two-phase exchange uploads fewer full vectors than
    sending every chunk (paired by iteration), both decode exactly; the round trip's cost in time is measured."""
    w = ex.pivot(index="iteration", columns="exchange", values="vectors")
    t = ex.pivot(index="iteration", columns="exchange", values="time")
    over = (ex["time"] - ex["predicted"]).groupby(ex["exchange"]).mean()
    fewer = paired_difference(w["messages"].to_numpy(float), w["two-phase"].to_numpy(float))
    extra = paired_difference(t["two-phase"].to_numpy(float), t["messages"].to_numpy(float))
    worst = float(ex["grad_error"].max())
    n = len(w)
    return CLAIMS["C3"].row(
        setting=f"{n} iterations of each exchange, the same seed (paired by iteration)",
        measured=f"full vectors per iteration: every chunk {w['messages'].mean():.3g}, two-phase "
                 f"{w['two-phase'].mean():.3g} (difference {fewer.value:.3g}, 95% CI {fewer.lo:.3g} to "
                 f"{fewer.hi:.3g}); time: two-phase minus every chunk {1e3 * extra.value:+.3g} ms (95% CI "
                 f"{1e3 * extra.lo:+.3g} to {1e3 * extra.hi:+.3g}); mean time over the coverage time predicted: "
                 f"every chunk {1e3 * over['messages']:.3g} ms, two-phase {1e3 * over['two-phase']:.3g} ms; "
                 f"largest gradient error {worst:.1e}",
        verdict=HOLDS if fewer.lo > 0 and worst < 1e-9 else FAILS)


def _ordering_checks(exhaustive: pd.DataFrame) -> list:
    """``R0``, ``R1``: the matching ordering and the bound against every ordering of the small cases."""
    opt = exhaustive["optimal"] == exhaustive["exhaustive_min"]
    bound = exhaustive["bound"] == exhaustive["exhaustive_min"]
    return [CLAIMS["R0"].row(setting=f"{len(exhaustive)} small cases (n, l) of "
                                     f"{sorted(set(zip(exhaustive.n, exhaustive.l)))}, cyclic and random regular "
                                     f"assignments; perfect-matching ordering against every ordering",
                             measured=f"matching ordering at the exhaustive minimum in {int(opt.sum())} of "
                                      f"{len(exhaustive)} cases",
                             verdict=exact(bool(opt.all()))),
            CLAIMS["R1"].row(setting="the same small cases, exhaustive search over orderings",
                             measured=f"bound equals the exhaustive minimum in {int(bound.sum())} of {len(exhaustive)} "
                                      f"cases",
                             verdict=exact(bool(bound.all())))]


def _decode_row(exact_tab: pd.DataFrame) -> dict:
    """``C1``: coverage decides exact recovery, and the 0/1 decode is exact, in every progress state."""
    ok = (exact_tab.rule_disagreements == 0).all() and (exact_tab.exact_decodes == exact_tab.covering).all() \
        and (exact_tab.non_covering_decodable == 0).all()
    return CLAIMS["C1"].row(setting=f"every progress state of rmg(n, l) for (n, l) in "
                                    f"{list(zip(exact_tab.n, exact_tab.l))}, rational arithmetic",
                            measured=f"{int(exact_tab.states.sum())} states, {int(exact_tab.covering.sum())} covering, "
                                     f"{int(exact_tab.rule_disagreements.sum())} rule disagreements, "
                                     f"{int(exact_tab.exact_decodes.sum())} exact 0/1 decodes, "
                                     f"{int(exact_tab.non_covering_decodable.sum())} other states decodable",
                            verdict=exact(bool(ok)))


def _qmax_row(qmax: pd.DataFrame) -> dict:
    """``C2``: the matching ordering meets the bound, random orderings exceed it."""
    o = qmax[qmax.ordering == "optimal"]
    r = qmax[qmax.ordering == "random"]
    return CLAIMS["C2"].row(setting=f"(n, l) in {sorted(set(zip(qmax.n, qmax.l)))}, {int(qmax.draws.iloc[0])} draws, "
                                    f"cyclic and random assignments",
                            measured=f"optimal: largest excess {o.excess_mean.max():g}; random: mean excess "
                                     f"{r.excess_mean.min():.3g} to {r.excess_mean.max():.3g}",
                            verdict=exact(bool((o.excess_mean == 0).all() and (r.excess_mean > 0).all())))


def judge(qmax: pd.DataFrame, exhaustive: pd.DataFrame, exact_tab: pd.DataFrame, times: pd.DataFrame,
          mse: pd.DataFrame, *, time_setting: str, mse_setting: str, mse_deadline: float = P2_DEADLINE,
          exchanges: pd.DataFrame | None = None) -> pd.DataFrame:
    """The claims table of notebook 11 from the study's tables (:mod:`gclib.studies.partial_stragglers.study`);
    row P2 is judged at ``mse_deadline`` (a fraction of GC's mean exact time, one of the study's ``fractions``);
    ``exchanges``: the runs over MPI of :func:`~gclib.studies.partial_stragglers.study.mpi_exchanges` (check C3),
    or ``None`` (no row)."""
    rows = [*_ordering_checks(exhaustive), *_time_rows(times, time_setting), _mse_row(mse, mse_setting, mse_deadline),
            _decode_row(exact_tab), _qmax_row(qmax)]
    if exchanges is not None and len(exchanges):
        rows.append(_mpi_row(exchanges))
    return table(rows)
