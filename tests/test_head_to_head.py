"""Notebook 14's study: the designs beside the design space (the partial-straggler protocol, the approximate codes,
the sequential schemes) read the same draws as the rest, and the claims are judged from them."""
import math

import numpy as np
import pytest

from gclib import schemes
from gclib.simulator import simulate_chunk
from gclib.simulator import Schedule
from gclib.stragglers import ShiftedExponential
from gclib.studies.head_to_head import claims as h2h_claims
from gclib.studies.head_to_head import study as h2h


def test_round_times_interpolate_between_tasks_and_extrapolate_at_the_pace():
    x = np.array([[[1.0], [2.0]]])  # one round, two workers, one draw each: eq. 5 finishes at j * x
    finish = x * np.arange(1, 4)  # (1, 2, 3)
    at = h2h.round_times(finish)
    assert np.allclose(at(2.5), [[2.5], [5.0]])
    assert np.allclose(at(0.5), [[0.5], [1.0]])
    assert np.allclose(at(6.0), [[6.0], [12.0]])  # beyond the 3 tasks: the mean pace of the round
    uneven = np.array([[[1.0, 4.0]]])  # one worker whose second task takes 3
    assert np.allclose(h2h.round_times(uneven)(1.5), [[2.5]])


def test_the_partial_straggler_protocol_takes_uc_mmcs_coverage_time_on_the_same_draws():
    K, r, trials = 10, 3, 300
    finish = ShiftedExponential(10.0, 0.01).sample(np.random.default_rng(5), trials, K, r)
    uc = simulate_chunk(Schedule.of(schemes.simulable("uc-mmc", workers=K, load=r)), finish)
    (entry,) = [e for e in h2h.rmg_entries(K, r) if e.load == r]
    (row,) = entry.run(finish)
    assert np.array_equal(np.asarray(row["time"], float), np.asarray(uc["time"], float))
    assert (row["volume"] <= K).all() and (row["volume"] < uc["volume"]).all()  # one vector per picked worker


def test_ignore_stragglers_error_is_the_closed_form_and_the_stragglers_are_each_iterations_slowest():
    # identity code, survivors weighted n/(n-s): ||a B_R - 1||^2 = (n-s)(s/(n-s))^2 + s = s n / (n - s)
    K, s, trials = 12, 3, 50
    entries = h2h.approximate_entries(K, 3, fraction=0.25, patterns=20)
    finish = ShiftedExponential(10.0, 0.01).sample(np.random.default_rng(2), trials, K, 3)
    (ig,) = [e for e in entries if e.family == "ignore"]
    (row,) = ig.run(finish)
    assert ig.load == 1 and ig.kind == "approximate"
    assert row["error"] == pytest.approx(math.sqrt(s * K / (K - s)))
    # its time is the (K - s)-th fastest worker's single task, on the same draws as every other design
    assert np.allclose(row["time"], np.sort(finish[:, :, 0], axis=1)[:, K - s - 1])
    for e in entries:
        if e.family == "expander":
            assert 0 < e.run(finish)[0]["error"] < row["error"]
    # the stragglers of every iteration are its own slowest: workers that are always slowest are always missing
    slow = finish.copy()
    slow[:, :3] *= 100.0
    (exp2,) = [e for e in entries if e.family == "expander" and e.load == 2]
    code = schemes.build("expander", workers=K, stragglers=s, load=2)
    from gclib.codes import approximate as ap

    mask = np.zeros((1, K), bool)
    mask[0, :3] = True
    assert exp2.run(slow)[0]["error"] == pytest.approx(float(ap.straggler_errors(code, mask)[0]))


def test_sequential_gc_on_equal_workers_takes_one_part_per_gradient():
    K, rounds = 6, 40
    finish = np.ones((rounds, K, 1)) * np.arange(1, 3)  # every worker one time unit per part, no straggler
    (gc,) = [e for e in h2h.sequential_entries(K, 2, max_delay=2) if e.family == "gc (deadline)"]
    rows = gc.run(finish)
    best = min(rows, key=lambda r: np.mean(r["time"]))
    assert best["label"] == "gc s=0" and best["load"] == pytest.approx(1.0)
    assert np.mean(best["time"]) == pytest.approx(1.0)
    assert np.mean(best["volume"]) == pytest.approx(K)  # GC runs one round per gradient: one vector per worker


def test_claims_of_a_small_study():
    models = {"shifted-exp": ShiftedExponential(10.0, 0.01)}
    st = h2h.study(8, 3, models, trials=200, seed=1, extra=h2h.rmg_entries(8, 3))
    table = h2h_claims.judge(st)
    assert set(table["kind"]) == {"check"}
    v = dict(zip(table["id"], table["verdict"]))
    assert v["Q1"] == "holds"
    assert v["S1"] == "inconclusive"  # no sequential scheme in this study
    # with communication free, the protocol and UC-MMC in one cluster finish when the finished chunks first cover
    # every part: on the same draws their mean times agree at every load (two implementations of one rule)
    t = st.table
    r = t[t["family"] == "rmg"].set_index("load")["mean_time"]
    u = t[(t["family"] == "uc-mmc") & t["label"].str.endswith(" P=1")].set_index("load")["mean_time"]
    common = sorted(set(r.index) & set(u.index))
    assert len(common) >= 2
    assert np.allclose(r[common].to_numpy(), u[common].to_numpy(), rtol=1e-9, atol=0)
    assert "rmg" in set(st.fastest()["family"])


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="K"):
        h2h.study(1, 1, {})
    with pytest.raises(ValueError, match="traces"):
        h2h.models(8, traces=("nope",))
