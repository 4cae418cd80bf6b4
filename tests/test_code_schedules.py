"""gclib.code_schedules: schedules from the formulas equal those of the real codes; the study and its plan."""
import math

import numpy as np
import pytest

from gclib import code_schedules, codes
from gclib.codes import lcc, mmc
from gclib.codes.mmc import FullOrThreshold
from gclib.simulator import Schedule, simulate
from gclib.stragglers import Pareto, ShiftedExponential
from gclib.studies.scale import study as scale_study


def same_schedule(a: Schedule, b: Schedule):
    for k in ("sender", "ready", "size", "lengths"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.n_workers == b.n_workers
    assert type(a.rule) is type(b.rule)
    fields = ("msg_cluster", "full", "thresholds") if isinstance(a.rule, FullOrThreshold) else (
        "msg_class", "class_cluster", "thresholds")
    for k in fields:
        assert np.array_equal(getattr(a.rule, k), getattr(b.rule, k)), k


@pytest.mark.parametrize("fast, code", [
    (lambda: code_schedules.gc(12, 4), lambda: mmc.gc_cyclic(12, 4)),
    (lambda: code_schedules.gc(12, 4), lambda: codes.crc(12, 3)),
    (lambda: code_schedules.frc(12, 3), lambda: codes.frc(12, 2)),
    (lambda: code_schedules.uncoded(7), lambda: codes.uncoded(7)),
    (lambda: code_schedules.lcc(12, 4), lambda: lcc.lcc_code(12, 4)),
    (lambda: code_schedules.lcc(13, 4), lambda: lcc.lcc_code(13, 4)),
    (lambda: code_schedules.correlated(12, 4, 2), lambda: mmc.correlated(12, 4, 2)),
    (lambda: code_schedules.uc_mmc(10, 3), lambda: mmc.uc_mmc(10, 3)),
    (lambda: code_schedules.uncorrelated(12, 4, (2, 4)), lambda: mmc.uncorrelated(12, 4, (2, 4))),
    (lambda: code_schedules.clustered(lambda k: code_schedules.correlated(k, 4, 2), 27, 3, 4),
     lambda: mmc.gc_mmc_correlated(27, 4, 2, 3)),
    (lambda: code_schedules.clustered(lambda k: code_schedules.uncorrelated(k, 3, (1, 3)), 20, 4, 3),
     lambda: mmc.gc_mmc_uncorrelated(20, 3, (1, 3), 4)),
    (lambda: code_schedules.clustered(lambda k: code_schedules.gc(k, 3), 20, 1, 3), lambda: mmc.gc_cyclic(20, 3)),
])
def test_schedules_equal_the_real_codes(fast, code):
    same_schedule(fast(), Schedule.of(code()))


def test_a_schedule_simulates_like_its_code():
    model = Pareto(1, 1.5)
    a = simulate(code_schedules.clustered(lambda k: code_schedules.correlated(k, 4, 2), 27, 3, 4), model, 800, 3)
    b = simulate(mmc.gc_mmc_correlated(27, 4, 2, 3), model, 800, 3)
    for k in ("time", "messages", "cluster_messages", "computations", "volume"):
        assert np.array_equal(getattr(a, k), getattr(b, k))


def test_builders_refuse_bad_sizes():
    with pytest.raises(ValueError, match="load must divide workers = 10"):
        code_schedules.frc(10, 3)
    with pytest.raises(ValueError, match="order must be"):
        code_schedules.correlated(10, 3, 4)
    with pytest.raises(ValueError, match="load must be"):
        code_schedules.gc(5, 6)
    with pytest.raises(ValueError, match="LCC with load r = 1"):
        code_schedules.lcc(10, 1)
    with pytest.raises(ValueError, match="tile needs"):
        code_schedules.tile([])


def test_point_sizes():
    assert scale_study.point("load fraction", "GC", 1000) == {"load": 100, "order": None, "clusters": 1,
                                                               "messages": 1000}
    assert scale_study.point("load fraction", "UC-MMC", 1000)["messages"] == 100_000
    assert scale_study.point("cluster size", "GC-MMC", 1000) == {"load": 10, "order": 6, "clusters": 100,
                                                             "messages": 5000}
    with pytest.raises(ValueError, match="cluster_size must divide workers = 45"):
        scale_study.point("cluster size", "GC", 45)
    with pytest.raises(ValueError, match="setting must be one of"):
        scale_study.point("load", "GC", 40)


def test_plan_skips_and_estimates():
    p = scale_study.plan([40, 10_000], trials=1000, max_messages=100_000)
    big = p[(p["K"] == 10_000) & (p["setting"] == "load fraction") & (p["scheme"] == "UC-MMC")].iloc[0]
    assert "more than max_messages" in big["skipped"] and big["memory"] == 0
    ok = p[p["skipped"] == ""]
    assert (ok["memory"] > 0).all() and len(ok) == len(p) - (p["skipped"] != "").sum()


def test_study_small_agrees_with_closed_forms_and_pairs_the_gain():
    models = {"exp": ShiftedExponential(10, 0.01)}
    t = scale_study.study([40, 80], models, trials=3000, seed=1)
    assert set(t["scheme"]) == set(scale_study.SCHEMES)
    unc = t[t["scheme"] == "uncoded"]
    assert (unc["gain"] == 1).all()
    cf = t.dropna(subset=["closed_form_time"])
    assert set(cf["scheme"]) == {"uncoded", "GC", "FRC", "LCC"}
    z = (cf["mean_time"] - cf["closed_form_time"]) / (cf["ci95_time"] / 1.96)
    assert z.abs().max() < 5
    # the uncoded closed form by hand: alpha + H_K / mu
    u = unc[(unc["K"] == 40)].iloc[0]
    assert math.isclose(u["closed_form_time"], 0.01 + sum(1 / i for i in range(1, 41)) / 10)
    assert ((t["gain_lo"] <= t["gain"]) & (t["gain"] <= t["gain_hi"])).all()


def test_study_refuses_above_the_budget_before_running(monkeypatch):
    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", "10M")
    with pytest.raises(ValueError, match=r"scale study with K = 10000, .* needs about .* lower trials"):
        scale_study.study([10_000], {"exp": ShiftedExponential()}, trials=100_000)
    with pytest.raises(ValueError, match="one draw per worker"):
        scale_study.study([40], {"x": ShiftedExponential(per_task=True)})


@pytest.mark.parametrize("K, r", [(12, 3), (20, 4)])
def test_design_candidates_schedules_equal_their_codes(K, r):
    from gclib import design

    cands = design.candidates(K, r, max_orders=2)
    assert all(c.schedule is not None for c in cands)  # the hybrid's too (gclib.code_schedules.hybrid)
    for c in cands:
        same_schedule(c.schedule(), Schedule.of(c.build()))


def test_every_scheme_of_the_study_is_built_by_the_registry():
    from gclib import schemes

    assert set(scale_study.REGISTRY) == set(scale_study.SCHEMES)
    assert set(scale_study.REGISTRY.values()) <= set(schemes.SCHEMES)
    sch = scale_study.build("cluster size", "GC-MMC", 40)
    same_schedule(sch, schemes.simulable("gc-mmc-correlated", workers=40, load=10, order=6, clusters=4))
    same_schedule(scale_study.build("load fraction", "FRC", 40), code_schedules.frc(40, 4))
