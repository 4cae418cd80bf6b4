"""The back-test of the advice: fit on the first iterations, check on the held-out rest with every worker kept;
the observed times by hand, the drift of the slowest worker, the targets and their warnings, and bad traces."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gclib import advise, timings
from gclib.cli import main
from gclib.timings import Timings


def _trace(I=24, W=6, J=2, slow=1.6, drift=0.0, seed=0):
    """Worker 2 is ``slow`` times slower in every iteration, its pace ``1 + drift`` times that in the second half;
    iteration and residual effects of 5%."""
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 0.05, (I, 1)) + rng.normal(0, 0.05, (I, W))
    d = np.exp(y)[:, :, None] * rng.uniform(0.95, 1.05, (I, W, J))
    d[:, 2, :] *= slow
    d[I // 2:, 2, :] *= 1 + drift
    return d


def test_observed_times_by_hand():
    # 2 iterations, 2 workers, one task each: uncoded waits for both; frc r=2 (one group) for the faster one,
    # which computes both parts (two tasks at its pace)
    d = np.array([[[1.0], [3.0]], [[2.0], [0.5]]])
    o = advise.observed(d, 2, 2).set_index("label")
    assert o.at["uncoded", "mean_time"] == pytest.approx((3.0 + 2.0) / 2)
    assert o.at["frc r=2", "mean_time"] == pytest.approx((2 * 1.0 + 2 * 0.5) / 2)
    with pytest.raises(ValueError, match="K must be the trace's 2 workers"):
        advise.observed(d, 3)


def test_backtest_keeps_the_slow_worker_where_independent_rows_lose_it():
    t = Timings.from_array(_trace())
    b = advise.backtest(t, 0.5, seed=0, bootstrap=50, trials=1000)
    assert b.settings["fit_iterations"] == 12 and b.settings["held_iterations"] == 12
    assert b.fit.primary == "replay by iteration"
    unc = b.rows.set_index("role").loc["uncoded"]
    assert abs(unc["error_fit"]) < 0.01  # the fitted half, replayed whole, is reproduced
    replay = b.by_model.set_index("model").loc["replay"]
    assert replay["uncoded_error_fit"] < -0.05  # drawn rows miss the slow worker in some iterations
    assert set(b.targets) == {"uncoded in sample", "advised in sample", "advised held out", "regret"}
    assert b.regret >= 0 and b.best_held in set(b.observed_held["label"])
    assert b.drift["worker"] == 2 and abs(b.drift["drift"]) < 0.05
    d = b.to_dict()
    json.dumps(d)
    assert d["advice"]["primary_reason"].startswith("'replay by iteration'") and "back-test" in b.text()


def test_drift_of_the_slow_worker_is_reported_and_warned():
    t = Timings.from_array(_trace(drift=0.3, seed=1))
    b = advise.backtest(t, 0.5, seed=0, bootstrap=50, trials=1000)
    # against the other workers (who share the iterations' effects), the slow worker ran 30% slower held out
    assert (1 + b.drift["drift"]) / (1 + b.drift["median_drift"]) == pytest.approx(1.3, abs=0.08)
    unc = b.rows.set_index("role").loc["uncoded"]
    assert unc["error_held"] < -0.15
    assert any("drift of +" in w for w in b.warnings)
    assert b.fit.reliance is not None and b.fit.reliance["worker"] == 2


def test_reliance_of_the_speedup_on_the_slowest_worker():
    t = Timings.from_array(_trace(slow=3.0, seed=2))
    ta = advise.from_trace(t, seed=0, bootstrap=50, trials=1000)
    r = ta.reliance
    assert ta.primary == "replay by iteration" and ta.advice.best["label"] != "uncoded"
    # a code that leaves the slow worker out saves time; with that worker at the median pace, it would not
    assert r["speedup"] > 1.3 and r["speedup_without"] <= 1.0 + 1e-9 and r["share"] >= 0.99
    assert "rests on worker 2" in advise.reliance_text(r) and "rests on worker 2" in ta.text()


def test_backtest_refuses_short_and_incomplete_traces():
    with pytest.raises(ValueError, match=r"holdout 0.5 needs at least 10 iterations .* the trace has 8"):
        advise.backtest(Timings.from_array(_trace(I=8, W=6, J=2)), 0.5)
    with pytest.raises(ValueError, match="needs at least 19 iterations"):
        advise.backtest(Timings.from_array(_trace(I=12)), 0.25)
    d = _trace()
    d[20, 4, :] = np.nan
    with pytest.raises(ValueError, match="worker 4 is missing from iteration 20"):
        advise.backtest(Timings.from_array(d), 0.5)
    with pytest.raises(ValueError, match="holdout"):
        advise.backtest(Timings.from_array(_trace()), 1.0)


def _usage_error(capsys, argv, needle):
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("gclib: error: ") and needle in lines[0], err
    return lines[0]


def test_cli_holdout_json_and_warnings(tmp_path, capsys):
    p = timings.write(tmp_path / "t.csv", _trace(drift=0.3, seed=1))
    assert main(["advise", "--trace", str(p), "--holdout", "0.5", "--trials", "500", "--json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert d["settings"]["K"] == 6 and {r["role"] for r in d["rows"]} >= {"uncoded", "advised"}
    assert d["targets"]["regret"]["limit"] == 0.03 and d["advice"]["fits"] and d["trace"]["workers"] == 6
    warned = [ln for ln in cap.err.splitlines() if ln.startswith("gclib: warning: ")]
    assert warned and any("drift" in w for w in warned)
    assert main(["advise", "--trace", str(p), "--holdout", "0.5", "--trials", "500"]) == 0
    out = capsys.readouterr().out
    assert "back-test of gclib advise" in out and "regret:" in out and "drift: worker 2" in out


def test_cli_holdout_bad_input(tmp_path, capsys):
    p = timings.write(tmp_path / "t.csv", _trace())
    _usage_error(capsys, ["advise", "--trace", p, "--holdout", "0.5", "--workers", "8"],
                 "the back-test keeps the trace's 6 workers")
    _usage_error(capsys, ["advise", "--trace", p], "argument --workers: required without --holdout")
    _usage_error(capsys, ["advise", "--trace", p, "--holdout", "1.5"], "argument --holdout")
    short = timings.write(tmp_path / "s.csv", _trace(I=8))
    _usage_error(capsys, ["advise", "--trace", short, "--holdout", "0.5"], "needs at least 10 iterations")


def test_cli_holdout_reads_a_shipped_parquet_trace_and_refuses_a_missing_worker(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    st = timings.shipped()["ST"]
    assert main(["advise", "--trace", str(st), "--holdout", "0.5", "--trials", "200", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["settings"]["K"] == 2 and d["settings"]["fit_iterations"] == 16 and d["settings"]["held_iterations"] == 16
    gap = _trace()
    gap[20, 4, :] = np.nan
    p = timings.write(tmp_path / "gap.csv", gap)
    _usage_error(capsys, ["advise", "--trace", p, "--holdout", "0.5"], "worker 4 is missing from iteration 20")
