"""The study of notebook 11 (gclib.studies.partial_stragglers) on cases small enough to check by hand."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gclib import claims
from gclib.codes import partial_work as R
from gclib.codes.mmc import gc_cyclic, uc_mmc
from gclib.simulator import Communication, arrival_times, simulate_chunk
from gclib.stragglers import ShiftedExponential, model_set
from gclib.studies.partial_stragglers import claims as ps_claims
from gclib.studies.partial_stragglers import study


def test_rmg_time_by_hand():
    # n = 4, l = 2, natural order: worker i computes i then i + 1; per-chunk times 1, 2, 3, 10
    code = R.rmg(4, 2, "cyclic")
    x = np.array([1.0, 2.0, 3.0, 10.0])
    finish = (x[:, None] * np.arange(1, 3))[None]  # (1, 4, 2)
    # chunk 0 at t = 1 (worker 0), 1 at 2 (worker 0 or 1), 2 at 3 (worker 2) or 4 (worker 1), 3 at 6 (worker 2)
    out = study.rmg_times(code, finish, Communication(latency=0.5, bandwidth=4.0))
    assert out["cover"][0] == 6.0
    # at t = 6: workers 0, 1, 2 have done 2, 2, 2 chunks: picks {0: 0, 1}, {2: 2, 3} -> 2 vectors
    assert out["volume"][0] == 2
    assert out["time"][0] == 6.0 + 3 * 0.5 + 1 / 4.0
    queued = study.rmg_times(code, finish, Communication(latency=0.5, bandwidth=4.0, queue=True))
    assert queued["time"][0] == 6.0 + 3 * 0.5 + 2 / 4.0
    # GC (load 2, s = 1) waits for the 3rd worker to finish both chunks: 3 * 2 = 6, plus latency and upload
    gc = simulate_chunk(gc_cyclic(4, 2), finish, Communication(latency=0.5, bandwidth=4.0))
    assert gc["time"][0] == 6.0 + 0.5 + 0.25


def test_rmg_covers_when_uc_mmc_decodes_on_the_same_draws():
    finish = ShiftedExponential(10, 0.01).sample(np.random.default_rng(0), 300, 8, 3)
    free = Communication()
    rmg = study.rmg_times(R.rmg(8, 3, "cyclic"), finish, free)
    uc = simulate_chunk(uc_mmc(8, 3), finish, free)
    np.testing.assert_array_equal(rmg["time"], uc["time"])
    assert (rmg["volume"] <= 8).all() and (rmg["volume"] < uc["volume"]).all()


def test_approximate_errors_are_the_coverage_and_least_squares_errors():
    code = R.rmg(6, 3, "optimal")
    gc = gc_cyclic(6, 3)
    finish = ShiftedExponential(10, 0.01).sample(np.random.default_rng(1), 50, 6, 3)
    T = float(np.median(finish[:, :, 1]))
    got = arrival_times(code, finish) <= T
    err = study._errors(code, got)
    prog = (finish <= T).sum(axis=2)
    assert np.allclose(err, [R.coverage_mse(code.order, k) for k in prog])
    got_gc = arrival_times(gc, finish) <= T
    err_gc = study._errors(gc, got_gc)
    for i in range(5):
        e = R.lstsq_mse(gc.B[np.flatnonzero(got_gc[i])], 6)
        assert err_gc[i] == pytest.approx(0.0 if e < study.ROUNDOFF else e)


def test_the_study_tables_and_the_claims_table():
    ex = study.exhaustive_table([4], [2, 3])
    assert (ex.optimal == ex.exhaustive_min).all() and (ex.bound == ex.exhaustive_min).all()
    q = study.qmax_table([6, 8], 3, draws=3)
    assert (q[q.ordering == "optimal"].excess_mean == 0).all()
    exact = study.exact_checks([4], [2])
    assert exact.states.iloc[0] == 81 and exact.rule_disagreements.iloc[0] == 0
    assert exact.exact_decodes.iloc[0] == exact.covering.iloc[0] and exact.non_covering_decodable.iloc[0] == 0
    models = model_set("mmc-design")
    times, per = study.exact_times(8, 3, models, trials=200, mmc_order=2, latency=0.005, bandwidth=10.0)
    assert len(times) == 2 * 2 * 5 and len(per) == 2 * 2 * 200
    rmg_rows = times[times.scheme == "RMG"]
    assert np.allclose(rmg_rows.speedup, 1.0)
    mse = study.approx_mse(8, 3, models, fractions=[0.5, 1.0], trials=100, mmc_order=2)
    assert set(mse.scheme) == {"RMG", "GC", "UC-MMC", "GC-MMC (m = 2)"} and (mse.mean_mse >= 0).all()
    table = ps_claims.judge(q, ex, exact, times, mse, time_setting="small", mse_setting="small")
    claims.check(table)
    assert {"P1a", "P1b", "P2", "P3", "R0", "R1", "R2", "R3", "R4", "C1", "C2"} == set(table["id"])
    assert table.set_index("id").loc[["R0", "R1", "C1", "C2"], "verdict"].eq(claims.HOLDS).all()
    # the abstract names neither Q_max nor the class of assignments: the ordering claim is our reading
    kinds = table.set_index("id")["kind"]
    assert kinds["R0"] == kinds["R4"] == "reading" and kinds["P3"] == "paper"


def _times(random=(1.2, 1.1, 1.3), uc=None):
    """A synthetic time table: two models, both ways of taking uploads in; ``random`` the random / natural
    speedup (value, lo, hi) everywhere; ``uc`` UC-MMC / RMG per upload name (default: beats it only one at a time)."""
    uc = uc or {"in parallel": (1.0, 0.9, 1.1), "one at a time": (1.5, 1.4, 1.6)}
    rows = []
    for u in ("one at a time", "in parallel"):  # not the study's order: the rows are found by name
        for m in ("exp", "pareto"):
            for s, sp in (("RMG", (1.0, 1.0, 1.0)), ("RMG (random order)", random), ("GC", (2.0, 1.9, 2.1)),
                          ("UC-MMC", uc[u])):
                rows.append({"uploads": u, "model": m, "scheme": s, "speedup": sp[0], "speedup_lo": sp[1],
                             "speedup_hi": sp[2], "mean_time": 1.0, "ci95_time": 0.01,
                             "mean_volume": {"RMG": 3.0, "GC": 5.0, "UC-MMC": 9.0}.get(s, 4.0), "ci95_volume": 0.1})
    return pd.DataFrame(rows)


def _verdicts(times):
    return {r["id"]: r["verdict"] for r in ps_claims._time_rows(times, "synthetic")}


def test_r3_finds_the_rows_by_upload_name():
    assert _verdicts(_times())["R3"] == claims.HOLDS
    swapped = {"in parallel": (1.5, 1.4, 1.6), "one at a time": (1.0, 0.9, 1.1)}
    assert _verdicts(_times(uc=swapped))["R3"] == claims.FAILS


@pytest.mark.parametrize("random, verdict", [((1.2, 1.1, 1.3), claims.HOLDS),  # a random order slower
                                             ((0.8, 0.7, 0.9), claims.FAILS),  # faster: not the claim
                                             ((1.0, 0.9, 1.1), claims.FAILS),  # no effect anywhere
                                             (None, claims.INCONCLUSIVE)])  # slower in some settings only
def test_r4_needs_a_random_order_slower(random, verdict):
    t = _times(random=random or (1.2, 1.1, 1.3))
    if random is None:
        t.loc[(t.scheme == "RMG (random order)") & (t.uploads == "in parallel"),
              ["speedup", "speedup_lo", "speedup_hi"]] = [1.05, 0.95, 1.15]
    assert _verdicts(t)["R4"] == verdict


@pytest.mark.parametrize("random, verdict", [((1.2, 1.1, 1.3), claims.HOLDS),  # slower: the ordering matters
                                             ((0.8, 0.7, 0.9), claims.HOLDS),  # faster: it matters too
                                             ((1.0, 0.9, 1.1), claims.FAILS)])  # no effect anywhere
def test_p3_holds_when_the_ordering_changes_the_time_either_way(random, verdict):
    assert _verdicts(_times(random=random))["P3"] == verdict


def _mse(rmg_mean, exact_share, ratio, fractions=(0.25, 0.5), trials=100):
    rows = []
    for m in ("exp", "pareto"):
        for f in fractions:
            rows.append({"model": m, "fraction": f, "scheme": "RMG", "mean_mse": rmg_mean, "lo": 0.0,
                         "hi": 2 * rmg_mean, "exact_share": exact_share, "ratio_to_rmg": 1.0, "ratio_lo": 1.0,
                         "ratio_hi": 1.0, "trials": trials})
            rows.append({"model": m, "fraction": f, "scheme": "GC", "mean_mse": 0.1, "lo": 0.09, "hi": 0.11,
                         "exact_share": 0.0, "ratio_to_rmg": ratio[0], "ratio_lo": ratio[1], "ratio_hi": ratio[2],
                         "trials": trials})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("rmg_mean, exact_share, ratio, verdict", [
    (1e-4, 0.5, (1000.0, 500.0, 1500.0), claims.HOLDS),
    (1e-2, 0.5, (10.0, 8.0, 12.0), claims.FAILS),
    (1e-3, 0.5, (100.0, 60.0, 140.0), claims.INCONCLUSIVE),
    # RMG exact in every trial (or all but a few): no ratio is measured, whatever GC's error
    (0.0, 1.0, (math.inf, math.nan, math.nan), claims.INCONCLUSIVE),
    (1e-5, 0.95, (1e4, 5e3, 2e4), claims.INCONCLUSIVE),
])
def test_p2_is_judged_on_the_ratio_interval_at_the_fixed_deadline(rmg_mean, exact_share, ratio, verdict):
    assert ps_claims._mse_row(_mse(rmg_mean, exact_share, ratio), "synthetic", 0.5)["verdict"] == verdict


def test_p2_ignores_the_other_deadlines_and_needs_its_own():
    # a large ratio at another deadline does not make the claim hold
    t = _mse(1e-2, 0.5, (10.0, 8.0, 12.0))
    t.loc[(t.fraction == 0.25) & (t.scheme == "GC"), ["ratio_to_rmg", "ratio_lo", "ratio_hi"]] = [1e4, 9e3, 2e4]
    assert ps_claims._mse_row(t, "synthetic", 0.5)["verdict"] == claims.FAILS
    with pytest.raises(ValueError, match="mse_deadline"):
        ps_claims._mse_row(t, "synthetic", 0.75)


def test_check_c3_pairs_the_two_exchanges_over_mpi_and_can_fail():
    """C3 (the full profile's MPI runs) on tables shaped like ``mpi_exchanges``': fewer vectors in every iteration
    holds; as many vectors, or an inexact gradient, does not."""
    from gclib.studies.partial_stragglers import claims as pc

    rng = np.random.default_rng(0)

    def runs(two_phase_vectors, error=1e-15):
        rows = []
        for it in range(12):
            base = 0.01 + rng.exponential(0.002)
            rows.append({"exchange": "messages", "iteration": it, "time": base, "predicted": base - 5e-4,
                         "vectors": 12 + int(rng.integers(0, 3)), "reports": 0, "grad_error": 1e-15})
            rows.append({"exchange": "two-phase", "iteration": it, "time": base + 7e-4, "predicted": base - 5e-4,
                         "vectors": two_phase_vectors(rows[-1]["vectors"]), "reports": 15, "grad_error": error})
        return pd.DataFrame(rows)

    ok = pc._mpi_row(runs(lambda v: 4))
    assert ok["verdict"] == claims.HOLDS and "two-phase minus every chunk +0.7 ms" in ok["measured"]
    assert pc._mpi_row(runs(lambda v: v))["verdict"] == claims.FAILS
    assert pc._mpi_row(runs(lambda v: 4, error=1e-6))["verdict"] == claims.FAILS
