"""The study of notebook 11 (gclib.studies.partial_stragglers) on cases small enough to check by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gclib import claims
from gclib.codes import rmg as R
from gclib.codes.mmc import gc_cyclic, uc_mmc
from gclib.simulate import Communication, arrival_times, simulate_chunk
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
    assert {"P1a", "P1b", "P2", "P3", "P4", "R1", "R2", "R3", "C1", "C2"} == set(table["id"])
    assert table.set_index("id").loc[["P4", "R1", "C1", "C2"], "verdict"].eq(claims.HOLDS).all()
