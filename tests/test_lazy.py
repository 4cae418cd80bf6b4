"""Lazy aggregation: the trigger rules, the simulated-clock optimizers and `gclib train`."""
import json

import numpy as np
import pandas as pd
import pytest

from gclib.codes import crc, frc, uncoded
from gclib.learning import lazy
from gclib.learning.optim import (LazyScheme, _class_representatives, decoding_weight, make_scheme, train,
                                  unit_smoothness)
from gclib.learning.problems import lag_synthetic, tandon_logistic
from gclib.stragglers import ComputeModel, Exponential, Pareto


class Constant(ComputeModel):
    """Every worker takes exactly one time unit per partial gradient: nobody straggles."""

    name = "constant"

    def task_draws(self, rng, shape):
        return np.ones(shape)


# ------------------------------------------------------------------------------------------ pure rules
def test_threshold_hand_computed():
    # xi / (lr^2 M^2) * sum = 0.1 / (0.25 * 4) * (1 + 2 + 3) = 0.6
    assert lazy.threshold(np.array([1.0, 2.0, 3.0]), lr=0.5, units=2, xi=0.1) == pytest.approx(0.6)
    assert lazy.default_xi("wk") == pytest.approx(0.1) and lazy.default_xi("ps") == pytest.approx(0.1)
    assert lazy.chen_xi("wk") == pytest.approx(0.1) and lazy.chen_xi("ps") == pytest.approx(1.0)
    assert lazy.chen_xi("ps", D=4) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="trigger"):
        lazy.chen_xi("xx")
    with pytest.raises(ValueError, match="trigger"):
        lazy.default_xi("xx")


def test_wk_and_ps_triggers_hand_computed():
    fresh = np.array([[1.0, 0.0], [0.0, 3.0]])
    last = np.array([[0.0, 0.0], [0.0, 0.0]])
    assert lazy.wk_trigger(fresh, last, rhs=4.0).tolist() == [False, True]  # 1 > 4? 9 > 4?
    theta_hat = np.array([[1.0, 1.0], [0.0, 0.0]])
    # L^2 * dist^2: 4 * 2 = 8 and 1 * 0 = 0
    assert lazy.ps_trigger(np.array([2.0, 1.0]), theta_hat, np.zeros(2), rhs=5.0).tolist() == [True, False]


def test_unit_smoothness_uncoded_equals_part_smoothness():
    p = lag_synthetic(workers=6, dim=20, seed=3)
    assert np.allclose(unit_smoothness(p, uncoded(6)), p.part_smoothness())
    # an FRC group's Hessian is the sum of its parts' Hessians (same eigenvector basis here: bounded above by
    # the sum of the parts' constants)
    Lg = unit_smoothness(p, frc(6, 1))
    Lj = p.part_smoothness()
    assert Lg.shape == (3,) and np.all(Lg <= Lj.reshape(3, 2).sum(axis=1) + 1e-12)


def test_decoding_weight_equals_lag_M_for_uncoded_and_frc():
    assert decoding_weight(uncoded(5)) == pytest.approx(5.0)
    assert decoding_weight(frc(12, 2)) == pytest.approx(4.0)
    assert decoding_weight(crc(8, 2, 0), "mean") >= 8.0 - 1e-9


# ------------------------------------------------------------------------------------------ behaviour
def test_lag_needs_far_fewer_uploads_than_gd():
    """Chen et al.'s defining behaviour on their heterogeneous 9-worker regression."""
    p = lag_synthetic(workers=9, seed=0)
    model = Exponential(1.0)
    gd = train(p, make_scheme("gd", 9), model, target=1e-8, seed=0).raise_for_status()
    for name in ("lag-wk", "lag-ps"):
        lag = train(p, make_scheme(name, 9, xi="chen"), model, target=1e-8, seed=0).raise_for_status()
        assert lag.totals(1e-8)["uploads"] < 0.5 * gd.totals(1e-8)["uploads"], name
    # LAG-WK computes as much as GD per iteration; LAG-PS computes only what it uploads
    ps = train(p, make_scheme("lag-ps", 9, xi="chen"), model, target=1e-8, seed=0)
    assert ps.computations[-1] == ps.uploads[-1]
    # gclib's server-side weight (1/D) is ten times stricter than Chen et al.'s, so it asks for more uploads
    ours = train(p, make_scheme("lag-ps", 9), model, target=1e-8, seed=0).raise_for_status()
    assert ps.totals(1e-8)["uploads"] < ours.totals(1e-8)["uploads"] < gd.totals(1e-8)["uploads"]


@pytest.mark.parametrize("name,kw", [("gd", {}), ("gc", {"code": "crc"}), ("gc", {"code": "frc"}),
                                     ("gc", {"code": "uncoded"}), ("g-lag", {"trigger": None}),
                                     ("lagc", {"trigger": None}), ("lag-wk", {"trigger": None})])
def test_exact_schemes_give_the_gd_iterates_when_nobody_straggles(name, kw):
    p = tandon_logistic(n_samples=300, dim=8, parts=6, seed=2)
    sch = make_scheme(name, 6, groups=3, **kw)
    assert sch.exact
    res = train(p, sch, Constant(), target=1e-300, max_iter=40, keep_thetas=True)
    lr = 1.0 / p.smoothness
    theta = np.zeros(p.dim)
    for k in range(res.iterations):
        theta = theta - lr * p.partial_gradients(theta).sum(axis=0)
        assert np.allclose(res.thetas[k + 1], theta, rtol=1e-10, atol=1e-13), (name, k)
    assert res.iterations == 40 and res.status == "max_iter"


def test_gc_waits_for_fewer_workers_than_gd():
    p = lag_synthetic(workers=6, dim=20, seed=1)
    model = Pareto(1.0, 1.5)
    gd = train(p, make_scheme("gd", 6), model, target=1e-5, seed=4)
    gc = train(p, make_scheme("gc", 6, groups=3, code="frc"), model, target=1e-5, seed=4)
    # same iterates (exact), so the same iteration count
    assert gd.iterations == gc.iterations
    assert np.allclose(gd.gap, gc.gap, rtol=1e-8)
    # FRC waits for the fastest worker of each group (not the slowest of all) at twice the computation
    assert gc.time[-1] < gd.time[-1]
    assert gc.computations[-1] == 2 * gd.computations[-1] == 2 * 6 * gd.iterations


@pytest.mark.parametrize("name", ["lag-wk", "lag-ps", "lagc", "g-lag"])
def test_lazy_schemes_converge_on_strongly_convex_problem(name):
    p = tandon_logistic(n_samples=400, dim=10, parts=8, seed=5, reg=0.05)
    res = train(p, make_scheme(name, 8, groups=4), Pareto(1.0, 2.0), target=1e-7, seed=3, max_iter=5000)
    assert res.converged, res.message
    assert res.gap[-1] <= 1e-7 and np.all(np.diff(res.time) >= 0)


LAZY = ["lag-wk", "lag-ps", "lagc", "g-lag"]


def _two_workers(name, warmup):
    """A 2-worker LAG problem (``N = 8`` samples, ``d = 4``), nobody straggles, one group / CRC(2, 1)."""
    p = lag_synthetic(workers=2, dim=4, seed=0)
    sch = make_scheme(name, 2, groups=1, warmup=warmup)
    return p, sch, train(p, sch, Constant(), target=1e-300, max_iter=lazy.D_DEFAULT + 1, keep_thetas=True)


@pytest.mark.parametrize("name", LAZY)
def test_silent_warmup_steps_with_the_initial_copies(name):
    """Chen et al.'s warm-up: nobody uploads in the first D iterations; the server steps with its initial copies
    (all-ones partial gradients on the summed loss, i.e. 1/N on ours), so theta^j = -j lr k / N * ones."""
    p, sch, res = _two_workers(name, "silent")
    D, N, lr = sch.D, p.n_samples, 1.0 / p.smoothness
    assert sch.warmup == "silent" and res.info["warmup"] == "silent"
    assert res.uploads[D] == 0 and res.computations[D] == 0 and res.time[D] == 0.0
    for j in range(D + 1):
        np.testing.assert_allclose(res.thetas[j], -j * lr * 2 / N * np.ones(4), rtol=1e-12)
    # iteration D: the rule sees D equal differences ||lr k/N ones||^2 = (2 lr / N)^2 d
    rhs = lazy.threshold(np.full(D, (2 * lr / N) ** 2 * 4), lr, sch.threshold_units, sch.weight)
    thD = res.thetas[D]
    if sch.trigger == "ps":  # theta_hat = theta^0 = 0 for a unit that never uploaded
        asked = unit_smoothness(p, sch.code) ** 2 * np.sum(thD ** 2) > rhs
    else:  # each unit's fresh content against its initial copy B_u @ (ones / N)
        B = sch.code.B[_class_representatives(sch.code)]
        asked = lazy.wk_trigger(B @ p.partial_gradients(thD), B @ np.ones((2, 4)) / N, rhs)
    assert res.uploads[D + 1] == asked.sum() == res.active[D + 1]


@pytest.mark.parametrize("name", LAZY)
def test_upload_warmup_is_gd_for_d_iterations(name):
    """Our option: every unit uploads in the first D iterations, so the iterates are GD's."""
    p, sch, res = _two_workers(name, "upload")
    D, lr = sch.D, 1.0 / p.smoothness
    assert res.info["warmup"] == "upload"
    assert res.uploads[:D + 1].tolist() == [j * sch.n_units for j in range(D + 1)]
    theta = np.zeros(4)
    for j in range(D):
        theta = theta - lr * p.gradient(theta)
    np.testing.assert_allclose(res.thetas[D], theta, rtol=1e-10)


def test_warmup_can_be_overridden_by_train_and_is_checked():
    p = lag_synthetic(workers=2, dim=4, seed=0)
    sch = make_scheme("lag-wk", 2)
    res = train(p, sch, Constant(), target=1e-300, max_iter=3, warmup="upload")
    assert res.uploads[-1] == 6 and res.info["warmup"] == "upload"
    with pytest.raises(ValueError, match="warmup"):
        make_scheme("lag-wk", 2, warmup="none")
    with pytest.raises(ValueError, match="warmup"):
        train(p, sch, Constant(), warmup="late")
    with pytest.raises(ValueError, match="initial"):
        make_scheme("lag-ps", 2, initial=float("nan"))


def _authors_loop(p, kind, steps, D=10):
    """Chen et al.'s LAG-PS / LAG-WK loop, transcribed on the summed loss (no division by N): stored gradients
    start at ones, theta_hat at 0, the rules start once D differences are known. Returns iterates and uploads."""
    Xs, ys = [p.X[i] for i in p.parts], [p.y[i] for i in p.parts]
    M, d = len(Xs), p.dim
    L = [np.linalg.eigvalsh(X.T @ X).max() for X in Xs]
    step = 1 / np.linalg.eigvalsh(p.X.T @ p.X).max()
    thr = (10 if kind == "ps" else 1) / (step ** 2 * M ** 2) / D
    grads, that, thetas, ups = np.ones((M, d)), np.zeros((M, d)), [np.zeros(d)], [0]
    for k in range(steps):
        th, n = thetas[-1], 0
        for i in range(M):
            g = Xs[i].T @ (Xs[i] @ th - ys[i])
            if k >= D:
                rhs = thr * sum(np.sum((thetas[-j] - thetas[-j - 1]) ** 2) for j in range(1, D + 1))
                lhs = L[i] ** 2 * np.sum((that[i] - th) ** 2) if kind == "ps" else np.sum((g - grads[i]) ** 2)
                if lhs > rhs:
                    grads[i], that[i], n = g, th, n + 1
        thetas.append(th - step * grads.sum(axis=0))
        ups.append(ups[-1] + n)
    return np.array(thetas), np.array(ups)


@pytest.mark.parametrize("name", ["lag-wk", "lag-ps"])
def test_silent_warmup_matches_the_authors_loop(name):
    p = lag_synthetic(workers=3, dim=6, seed=1)
    res = train(p, make_scheme(name, 3, xi="chen"), Pareto(1.0, 1.5), target=1e-300, max_iter=60, keep_thetas=True,
                seed=2)
    thetas, ups = _authors_loop(p, name[-2:], 60)
    np.testing.assert_allclose(res.thetas, thetas, rtol=1e-9, atol=1e-12)
    assert res.uploads.tolist() == ups.tolist() and ups[-1] > 0


def test_iteration_cap_and_divergence_stop_with_a_message():
    p = lag_synthetic(workers=4, dim=10, seed=0)
    capped = train(p, make_scheme("gd", 4), Exponential(), target=1e-12, max_iter=3)
    assert capped.status == "max_iter" and "max_iter = 3" in capped.message and capped.iterations == 3
    bad = train(p, make_scheme("gd", 4), Exponential(), lr=10 / p.smoothness, max_iter=10_000)
    assert bad.status == "diverged" and "diverged" in bad.message
    with pytest.raises(RuntimeError, match="diverged"):
        bad.raise_for_status()


def test_bad_parameters_name_themselves():
    with pytest.raises(ValueError, match="groups"):
        make_scheme("g-lag", 12, groups=5)
    with pytest.raises(ValueError, match="scheme"):
        make_scheme("sgd", 12)
    with pytest.raises(ValueError, match="parts"):
        train(lag_synthetic(workers=4, dim=10), make_scheme("gd", 5), Exponential())
    with pytest.raises(ValueError, match="trigger"):
        LazyScheme("x", uncoded(3), trigger="both")


def test_same_seed_same_numbers():
    p = lag_synthetic(workers=8, dim=20, seed=0)
    a = train(p, make_scheme("g-lag", 8, groups=4), Pareto(1.0, 1.5), seed=7, target=1e-5)
    b = train(p, make_scheme("g-lag", 8, groups=4), Pareto(1.0, 1.5), seed=7, target=1e-5)
    assert np.array_equal(a.time, b.time) and np.array_equal(a.gap, b.gap)


def test_cli_train_json(capsys):
    from gclib.cli import main

    rc = main(["train", "--algorithm", "g-lag", "--problem", "linreg", "--workers", "12", "--groups", "4",
               "--model", "pareto", "--shape", "1.5", "--target", "1e-6", "--seed", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == "converged" and out["final_gap"] <= 1e-6
    assert {"time", "uploads", "computations", "iterations"} <= set(out)


def test_cli_train_bad_groups_exits_2(capsys):
    from gclib.cli import main

    assert main(["train", "--algorithm", "g-lag", "--groups", "5"]) == 2
    assert "groups" in capsys.readouterr().err


def test_grid_on_a_tiny_grid():
    from gclib.studies.lazy_aggregation.study import ORDER, paper_schemes, run_grid, spread

    p = lag_synthetic(workers=8, dim=20, seed=0)
    schemes = paper_schemes(8, 4)
    assert tuple(schemes) == ORDER
    models = {"pareto 1.5": Pareto(1.0, 1.5), "exp": Exponential(1.0)}
    totals, curves = run_grid(p, schemes, models, seeds=[0, 1], target=1e-4, curves_seed=0)
    assert len(totals) == 2 * 2 * len(ORDER) and (totals.status == "converged").all()
    assert set(curves.model) == set(models) and (curves.groupby(["model", "scheme"]).time.diff().dropna() >= 0).all()
    s = spread(totals, "uploads")
    assert (s.q25 <= s["median"]).all() and (s["median"] <= s.q75).all()
    # the curves of a seed in the grid come from the grid run; a seed outside it gets its own run: same curves
    _, alone = run_grid(p, schemes, models, seeds=[1], target=1e-4, curves_seed=0)
    assert (curves.seed == 0).all()
    pd.testing.assert_frame_equal(curves, alone)


@pytest.mark.parametrize("make_code", [lambda: __import__("gclib").codes.partial_stragglers(4, 1, 3),
                                       lambda: __import__("gclib").codes.clustered([crc(4, 1, 0), frc(4, 1)])])
def test_multi_message_and_clustered_codes_give_the_gd_iterates(make_code):
    code = make_code()
    p = tandon_logistic(n_samples=240, dim=6, parts=code.n_parts, seed=1)
    res = train(p, LazyScheme("gc", code), Constant(), target=1e-300, max_iter=20, keep_thetas=True)
    theta, lr = np.zeros(p.dim), 1.0 / p.smoothness
    for k in range(20):
        theta = theta - lr * p.partial_gradients(theta).sum(axis=0)
    assert np.allclose(res.thetas[-1], theta, rtol=1e-10, atol=1e-13)


def test_smoothness_of_wide_and_tall_problems_is_the_largest_squared_singular_value():
    from gclib.learning.problems import Problem, split_parts

    rng = np.random.default_rng(0)
    for n, d in ((40, 7), (6, 300)):  # tall (d x d Gram) and wide (n x n Gram)
        X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
        p = Problem("t", "linreg", X, y, split_parts(n, 3), reg=0.1)
        assert p.smoothness == pytest.approx(np.linalg.norm(X, 2) ** 2 / n + 0.1, rel=1e-12)
        Lj = [np.linalg.norm(X[idx], 2) ** 2 / n + 0.1 / 3 for idx in p.parts]
        np.testing.assert_allclose(p.part_smoothness(), Lj, rtol=1e-12)
        q = Problem("t", "logistic", X, np.sign(y), split_parts(n, 3), reg=0.1)
        assert q.smoothness == pytest.approx(0.25 * np.linalg.norm(X, 2) ** 2 / n + 0.1, rel=1e-12)


def test_too_many_silent_workers_stall_with_a_message_naming_them():
    from gclib.stragglers import Persistent

    p = lag_synthetic(workers=4, dim=10, seed=0)
    model = Persistent(Exponential(), workers=[1])
    ok = train(p, make_scheme("gc", 4, stragglers=1), model, target=1e-6)  # CRC tolerates one
    assert ok.converged
    res = train(p, make_scheme("gd", 4), model, target=1e-6)
    assert res.status == "stalled" and res.iterations == 0 and res.gap.size == 1
    assert "workers [1] never answer" in res.message and "tolerates 0 stragglers" in res.message
    with pytest.raises(RuntimeError, match="never decodes"):
        res.raise_for_status()


def test_silent_warmup_needs_no_worker_until_the_rule_asks():
    """A worker that never answers stalls GD-like lazy schemes at once with our warm-up, but only once the rule
    needs it with Chen et al.'s (the warm-up steps use the server's copies)."""
    from gclib.stragglers import Persistent

    p = lag_synthetic(workers=4, dim=10, seed=0)
    model = Persistent(Exponential(), workers=[1])
    for name in ("lag-wk", "lag-ps"):
        silent = train(p, make_scheme(name, 4), model, target=1e-6)
        assert silent.status == "stalled" and silent.iterations == lazy.D_DEFAULT, name
        upload = train(p, make_scheme(name, 4, warmup="upload"), model, target=1e-6)
        assert upload.status == "stalled" and upload.iterations == 0, name


# ------------------------------------------------------------------------------------------ notebook 06's runs
def test_lag_check_runs_gd_once_and_each_lazy_scheme_per_warmup():
    from gclib.studies.lazy_aggregation.study import lag_check

    p, tot, cur = lag_check(3, 6, 1, target=1e-4)
    assert p.n_samples == 18 and tot[["scheme", "warmup"]].values.tolist() == [
        ["gd", "none"], ["lag-wk", "silent"], ["lag-wk", "upload"], ["lag-ps", "silent"], ["lag-ps", "upload"]]
    assert (tot.status == "converged").all() and (tot.target == 1e-4).all() and (tot.samples == 18).all()
    direct = train(p, make_scheme("lag-ps", 3, warmup="upload"), Exponential(1.0), target=1e-4, seed=1)
    row = tot[(tot.scheme == "lag-ps") & (tot.warmup == "upload")].iloc[0]
    assert row.uploads == direct.totals()["uploads"] and row.iterations == direct.iterations
    assert len(cur) == int(tot.iterations.sum()) + len(tot) and list(cur.columns[:2]) == ["scheme", "warmup"]
    _, only, _ = lag_check(3, 6, 1, target=1e-4, warmups=["silent"])
    assert len(only) == 3
    with pytest.raises(ValueError, match="warmups"):
        lag_check(3, 6, warmups=["late"])


def test_comparison_on_a_tiny_grid():
    from gclib.studies.lazy_aggregation.study import ORDER, comparison

    c = comparison(4, 2, 8, 0, shapes=[1.5], seeds=2, target=1e-3, max_iter=2000)
    assert set(c.totals.model) == {"pareto 1.5", "exp", "shifted-exp"} and len(c.totals) == 3 * 2 * len(ORDER)
    assert set(c.curves.seed) == {0} and set(c.curves.model) == {"pareto 1.5", "exp", "shifted-exp"}
    assert c.literal.seed.tolist() == [0, 1] and set(c.literal.scheme) == {"lagc-wk"}
    d = c.describe()
    assert list(d.index) == list(ORDER) and d.loc["lag-wk", "warmup"] == "silent" and d.loc["gd", "warmup"] is None
    assert d.loc["g-lag-wk", "trigger"] == "wk" and d.loc["g-lag-ps", "trigger"] == "ps"
    assert d.loc["g-lag-ps", "xi"] == pytest.approx(0.1)  # gclib's server-side weight, not Chen et al.'s 10/D
    assert d.loc["lagc-ps", "threshold_units"] == pytest.approx(decoding_weight(c.schemes["lagc-ps"].code, "mean"))
    assert "4 workers, 2 groups (load 2)" in c.setting and "seeds 0-1" in c.setting and "mean 1" in c.setting
    assert c.setting.endswith("Chen et al.'s warm-up")
    with pytest.raises(ValueError, match="seeds"):
        comparison(4, 2, 8, seeds=0)
    with pytest.raises(ValueError, match="warmup"):
        comparison(4, 2, 8, seeds=1, warmup="late")


def test_comparison_counts_runs_and_picks_curves():
    from gclib.studies.lazy_aggregation.study import Comparison

    totals = pd.DataFrame({"status": ["converged", "max_iter", "converged"]})
    curves = pd.DataFrame({"model": ["pareto 1.5", "exp", "exp"], "iteration": [0, 0, 1]})
    c = Comparison(None, {}, {}, totals, curves, pd.DataFrame(), "")
    assert c.runs() == "3 runs; 1 did not reach the target"
    assert c.curves_of("pareto 1.5")["iteration"].tolist() == [0] and c.curves_of("exp")["iteration"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="pareto 3"):
        c.curves_of("pareto 3")


def test_mean_one_models_match_the_mean_and_say_the_spread():
    from gclib.studies.lazy_aggregation.study import mean_one_models, model_table

    m = mean_one_models([1.5, 3.0], shift=0.25)
    assert list(m) == ["pareto 1.5", "pareto 3", "exp", "shifted-exp"]
    rng = np.random.default_rng(0)
    for name, model in m.items():
        if name != "pareto 1.5":  # infinite variance: its sample mean converges too slowly for a tight check
            assert model.sample(rng, 200_000, 1, 1).mean() == pytest.approx(1.0, rel=0.01), name
    t = model_table(m).set_index("model")
    assert (t["mean"] == 1.0).all()
    assert t.loc["pareto 1.5", "cv"] == np.inf and t.loc["pareto 3", "cv"] == pytest.approx(1 / np.sqrt(3))
    assert t.loc["exp", "cv"] == 1.0 and t.loc["shifted-exp", "cv"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="shape"):
        mean_one_models([1.0])
    with pytest.raises(ValueError, match="shift"):
        mean_one_models([2.0], shift=1.0)


def test_paper_schemes_build_every_lazy_scheme_with_each_trigger():
    from gclib.studies.lazy_aggregation.study import lazy_label, paper_schemes

    s = paper_schemes(8, 4, triggers=["ps"])
    assert list(s) == ["gd", "gc", "grouping", "lag-ps", "lagc-ps", "g-lag-ps"]
    assert {s[k].trigger for k in ("lag-ps", "lagc-ps", "g-lag-ps")} == {"ps"} and s["gd"].trigger is None
    assert lazy_label("g-lag", "wk") == "g-lag-wk"
    with pytest.raises(ValueError, match="triggers"):
        paper_schemes(8, 4, triggers=["xx"])
    with pytest.raises(ValueError, match="lazy scheme"):
        lazy_label("gd", "wk")


def test_generic_problems_have_the_asked_conditioning_and_labels():
    from gclib.learning import family, generic

    for design in ("gaussian", "correlated"):
        p = generic("linreg", design, 50.0, 0, samples=20_000, dim=10)
        ev = np.linalg.eigvalsh(p.X.T @ p.X / p.n_samples)
        assert ev[-1] / ev[0] == pytest.approx(50.0, rel=0.1), design
    q = generic("logistic", "correlated", 10.0, 3)
    assert set(np.unique(q.y)) == {-1.0, 1.0} and q.reg == 0.01 and q.n_parts == 12
    assert q.info == {"kind": "logistic", "design": "correlated", "cond": 10.0, "seed": 3}
    assert np.array_equal(generic("linreg", seed=5).X, generic("linreg", seed=5).X)
    assert len(family(conds=(1.0, 10.0), seeds=(0,))) == 2 * 2 * 2
    with pytest.raises(ValueError, match="design"):
        generic("linreg", "banded")
    with pytest.raises(ValueError, match="cond"):
        generic("linreg", cond=0.5)


def test_every_scheme_with_either_trigger_converges_on_the_generic_family():
    """GD, GC, grouping, LAG, LAGC and G-LAG (each lazy one with both triggers) reach the target on every problem of
    the family (both losses, both designs, condition numbers 1 to 100, two data seeds); with Chen et al.'s
    server-side constant G-LAG does not (the reason gclib's differs)."""
    from gclib.learning import family
    from gclib.studies.lazy_aggregation.study import ORDER, mean_one_models, robustness

    problems = family(conds=(1.0, 10.0, 100.0), seeds=(0, 1))
    models = {"pareto 1.5": mean_one_models([1.5])["pareto 1.5"]}
    r = robustness(problems, models, seeds=1, rel_target=1e-6)
    conv = r.convergence().set_index("scheme")
    assert set(ORDER) <= set(conv.index)
    assert (conv.loc[list(ORDER), "converged"] == len(problems)).all(), conv
    assert conv.loc["g-lag-ps-chen", "converged"] < len(problems)
    assert {"problem", "kind", "design", "cond", "model", "scheme", "seed"} <= set(r.totals.columns)
    assert "24 generic problems" in r.setting and "1e-06 x the initial gap" in r.setting


def test_robustness_refuses_bad_input():
    from gclib.learning import generic
    from gclib.studies.lazy_aggregation.study import robustness

    p = generic("linreg", parts=6)
    with pytest.raises(ValueError, match="12 parts"):
        robustness([p], {"exp": Exponential(1.0)})
    with pytest.raises(ValueError, match="at least one"):
        robustness([], {"exp": Exponential(1.0)})
    with pytest.raises(ValueError, match="seeds"):
        robustness([generic("linreg")], {"exp": Exponential(1.0)}, seeds=0)


def test_bar_data_medians_and_written_tables(tmp_path):
    from gclib.studies.lazy_aggregation.study import bar_data, medians, model_label, write_table

    assert model_label(1.5) == "pareto 1.5" and model_label() == "exp"
    rows = [{"model": "exp", "scheme": s, "seed": k, "status": "converged", "time": float(k + 1) * f,
             "uploads": 10.0 * f, "computations": 20.0 * f} for s, f in (("g-lag-ps", 1), ("gd", 2)) for k in range(3)]
    tot = pd.DataFrame(rows)
    b = bar_data(tot, "exp")
    assert b[["metric", "scheme"]].values.tolist() == [[m, s] for m in ("time", "uploads", "computations")
                                                      for s in ("gd", "g-lag-ps")]  # display order
    gt = b[(b.metric == "time") & (b.scheme == "g-lag-ps")].iloc[0]
    assert (gt["median"], gt.q25, gt.q75, gt.runs, gt.failed) == (2.0, 1.5, 2.5, 3, 0)
    m = medians(b)
    assert list(m.columns) == ["time", "uploads", "computations"] and m.loc["gd", "uploads"] == 20.0
    with pytest.raises(ValueError, match="model"):
        bar_data(tot, "pareto 2")
    path = write_table(pd.DataFrame({"x": [1 / 3, 2.0]}), "06_t", tmp_path)
    assert path.read_bytes() == b"x\n0.333333\n2\n"
