"""`gclib advise`: the ranking where the answer is known, the budget, the JSON, the stability margin, every
design's `gclib run` options, the figure and the command line."""
import json
import math
import shlex

import numpy as np
import pytest

from gclib import advise as adv
from gclib.advise import race
from gclib.cli import main, options
from gclib.cli import run as cli_run
from gclib.codes.conditioning import unit_roundoff
from gclib.simulator import Communication, Schedule
from gclib.stragglers import Pareto, Persistent, ShiftedExponential

STEADY = ShiftedExponential(mu=1e9, alpha=1.0)  # every task takes one time unit: no variation at all
HEAVY = Pareto(scale=0.05, shape=1.2)


@pytest.fixture(scope="module")
def heavy():
    return adv.advise({"heavy": HEAVY, "steady": STEADY}, 8, trials=400, seed=1)


def test_default_max_load():
    assert [adv.default_max_load(K) for K in (2, 3, 8, 9, 10, 100)] == [2, 2, 3, 3, 4, 10]


def test_no_variation_uncoded_wins():
    a = adv.advise({"steady": STEADY}, 8, trials=200, seed=0)
    assert a.best["label"] == "uncoded" and a.best["load"] == 1
    assert a.ranked.iloc[0]["label"] == "uncoded"
    # a load of r parts per worker costs r time units when nobody straggles
    crc = a.ranked.set_index("label").loc["crc r=3"]
    assert crc["mean_time"] == pytest.approx(3.0, rel=1e-6)


def test_heavy_stragglers_a_code_wins(heavy):
    b = heavy.best
    assert b["family"] != "uncoded" and b["load"] > 1
    assert b["speedup_lo"] > 1.5  # paired interval of the speed-up over uncoded
    assert heavy.settings["primary"] == "heavy"
    r = heavy.ranked
    assert r["mean_time"].is_monotonic_increasing and r["rank"].tolist() == list(range(1, len(r) + 1))
    # the robustness columns are the table's: the worst ratio to each model's best, the models where it is tied
    rows = heavy.table[heavy.table.label == b["label"]]
    assert b["worst_ratio"] == pytest.approx(rows["ratio"].max()) and b["best_under"] == rows["tied"].sum()
    crc = heavy.table[(heavy.table.model == "steady") & (heavy.table.label == "crc r=3")].iloc[0]
    assert crc["ratio"] == pytest.approx(3.0) and not crc["tied"]  # three parts cost three units without stragglers


def test_persistent_straggler_uncoded_never_completes():
    a = adv.advise({"dead": Persistent(ShiftedExponential(10, 0.01), count=1)}, 8, trials=200, seed=0)
    unc = a.ranked.set_index("label").loc["uncoded"]
    assert math.isinf(unc["mean_time"]) and unc["failed"] == 1.0
    assert a.best["failed"] == 0 and a.best["family"] != "uncoded"
    assert a.ranked.iloc[-1]["mean_time"] == math.inf


def test_budget_excludes_the_designs_over_it(heavy):
    a = adv.advise({"heavy": HEAVY}, 8, trials=400, seed=1, budget=8)
    assert a.best["messages"] <= 8
    over = a.ranked[a.ranked.messages > 8]
    assert len(over) and not over["feasible"].any()
    assert heavy.best["messages"] > 8  # without the budget the winner sends more
    first_over = a.ranked.index[~a.ranked["feasible"]].min()
    assert a.ranked.loc[:first_over - 1, "feasible"].all()  # feasible rows first


def test_same_seed_same_numbers():
    m = {"p": Pareto(0.05, 2.0)}
    a, b = (adv.advise(m, 8, trials=200, seed=3) for _ in range(2))
    assert a.to_json() == b.to_json()


def test_json_schema(heavy):
    d = json.loads(heavy.to_json())
    assert set(d) == {"settings", "best", "recommendation", "warnings", "ranked", "models"}
    assert set(d["settings"]) >= {"K", "max_load", "budget", "trials", "seed", "primary", "models", "candidates",
                                  "screened", "stability_rows", "stability_patterns"}
    assert all(set(r) == set(adv.COLUMNS) for r in d["ranked"])
    assert {r["model"] for r in d["models"]} == {"heavy", "steady"}
    assert d["best"]["label"] == d["ranked"][0]["label"] and d["best"]["command"].startswith("--scheme ")
    digits = [r["digits"] for r in d["ranked"]]
    assert sum(x is not None for x in digits) == adv.STABILITY_ROWS


def test_text_names_the_recommendation(heavy):
    text = heavy.text()
    lines = text.splitlines()
    assert len(lines) <= adv.TEXT_ROWS + 9  # uncoded's row too, after "...", when it ranks lower
    assert any(ln.split()[1:2] == ["uncoded"] for ln in lines)
    assert heavy.best["label"] in lines[-1] and "gclib run --scheme" in lines[-1] and "95% CI" in lines[-1]


def test_stability_margin_uncoded_and_lcc():
    from gclib import codes
    from gclib.codes.lcc import lcc_code

    K = 8
    m = adv.stability_margin(codes.uncoded(K), ShiftedExponential(10, 0.01), patterns=20, seed=0)
    # uncoded: the all-ones decode of unit rows amplifies by sqrt(K)
    assert m["digits"] == pytest.approx(-math.log10(unit_roundoff() * math.sqrt(K)))
    assert m["patterns"] == 20 and m["distinct"] == 1
    lcc = adv.stability_margin(lcc_code(K, 3), ShiftedExponential(10, 0.01), patterns=5)
    assert math.isnan(lcc["digits"])  # the simulator stand-in cannot decode real messages


def _run_parser():
    p = options.Parser(prog="gclib run")
    cli_run.add_arguments(p)
    return p


def _same_schedule(a: Schedule, b: Schedule, rng):
    assert a.n_workers == b.n_workers
    assert np.array_equal(a.sender, b.sender) and np.array_equal(a.ready, b.ready)
    assert np.allclose(a.size, b.size) and np.array_equal(a.lengths, b.lengths)
    arr = rng.random((50, a.n_messages))
    assert np.array_equal(a.rule.cluster_times(arr).max(axis=1), b.rule.cluster_times(arr).max(axis=1))


@pytest.mark.parametrize("K,R", [(8, 3), (12, 4)])
def test_every_command_builds_the_same_design(K, R):
    p = _run_parser()
    rng = np.random.default_rng(0)
    designs = adv.candidates(K, R, network=Communication(0.01, 7.0))  # charged: the partial-straggler protocol too
    assert {d.family for d in designs} >= set(adv.FAMILIES) - ({"kadhe"} if K % 3 else set())
    for d in designs:
        sch = d.schedule()
        if d.scheme is None:
            assert d.family == "lcc" and d.command == ""
            continue
        a = p.parse_args(shlex.split(d.command))
        options.reject_unused(a)
        code = options.code_from_args(a)
        assert code.n_workers == K and int(Schedule.of(code).load) == d.load, d.label
        _same_schedule(Schedule.of(code), sch, rng)
        _same_schedule(Schedule.of(d.build()), sch, rng)


def test_the_advice_can_name_the_partial_straggler_protocol():
    model = {"per task": ShiftedExponential(1, 0.01, per_task=True)}
    free = adv.advise(model, 8, max_load=3, trials=300)
    assert "rmg" not in set(free.ranked["family"])  # UC-MMC in one cluster, listed once
    # bandwidth alone, independent delays: every design pays one vector's transfer, and the protocol's round
    # trip costs nothing more: its time is UC-MMC's in one cluster, and it wins the tie on the vectors it uploads
    a = adv.advise(model, 8, max_load=3, trials=300, network=Communication(0.0, 1e4))
    r = a.ranked.set_index("label")
    assert r.at["rmg r=3", "mean_time"] == r.at["uc-mmc r=3 P=1", "mean_time"]
    assert r.at["rmg r=3", "messages"] < r.at["uc-mmc r=3 P=1", "messages"]
    assert r.at["rmg r=3", "rank"] < r.at["uc-mmc r=3 P=1", "rank"]
    assert a.best["label"] == "rmg r=3"
    assert a.best["command"] == "--scheme rmg --workers 8 --load 3 --ordering cyclic --exchange two-phase"
    assert "gclib run --scheme rmg" in a.sentence()
    p = _run_parser()
    args = p.parse_args(shlex.split(a.best["command"]))
    options.reject_unused(args)
    code = options.code_from_args(args)
    assert code.name == "rmg" and code.params["ordering"] == "cyclic" and code.n_workers == 8
    assert args.exchange == "two-phase"  # the exchange the advice charged it for
    # a latency: the round trip costs two small messages more than UC-MMC's one message
    b = adv.advise(model, 8, max_load=3, trials=300, network=Communication(0.01, 1e4)).ranked.set_index("label")
    assert b.at["rmg r=3", "mean_time"] == pytest.approx(b.at["uc-mmc r=3 P=1", "mean_time"] + 0.02, abs=1e-9)
    assert b.at["rmg r=3", "rank"] > b.at["uc-mmc r=3 P=1", "rank"]


def test_plot_writes_the_figure(heavy, tmp_path):
    import matplotlib.pyplot as plt

    fig = heavy.plot(tmp_path / "front.png")
    plt.close(fig)
    assert (tmp_path / "front.png").stat().st_size > 10_000


def test_bad_arguments():
    with pytest.raises(ValueError, match="models must be a non-empty mapping"):
        adv.advise({}, 8)
    with pytest.raises(TypeError, match=r"models\['x'\] must be a gclib.stragglers.ComputeModel"):
        adv.advise({"x": 3}, 8)
    with pytest.raises(ValueError, match="primary must be one of the models"):
        adv.advise({"a": STEADY}, 8, primary="b")
    with pytest.raises(ValueError, match="max_load"):
        adv.advise({"a": STEADY}, 8, max_load=9)
    with pytest.raises(ValueError, match="budget"):
        adv.advise({"a": STEADY}, 8, budget=0)


def _usage_error(capsys, argv, needle):
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("gclib: error: ") and needle in lines[0], err
    return lines[0]


def _write(path, rows, header="iteration,worker,task,seconds"):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


def _trace_rows(iterations=30, workers=4, tasks=2, seed=0):
    rng = np.random.default_rng(seed)
    return [(i, w, t, round(0.01 + rng.exponential(0.1), 6)) for i in range(iterations) for w in range(workers)
            for t in range(1, tasks + 1)]


@pytest.mark.parametrize("case,needle", [
    ("missing", "seconds"),
    ("negative", "durations >= 0"),
    ("nan", "NaN"),
    ("few", "samples"),
])
def test_cli_bad_trace_one_line_exit_2(case, needle, tmp_path, capsys):
    rows = _trace_rows()
    if case == "missing":
        f = _write(tmp_path / "t.csv", [r[:3] for r in rows], header="iteration,worker,task")
    elif case == "negative":
        f = _write(tmp_path / "t.csv", rows[:-1] + [rows[-1][:3] + (-1.0,)])
    elif case == "nan":
        f = _write(tmp_path / "t.csv", rows[:-1] + [rows[-1][:3] + ("nan",)])
    else:
        f = _write(tmp_path / "t.csv", rows[:2] + [(0, 1, 1, 0.1)])
    _usage_error(capsys, ["advise", "--trace", str(f), "--workers", "8"], needle)


def test_cli_bad_options(tmp_path, capsys):
    f = _write(tmp_path / "t.csv", _trace_rows())
    _usage_error(capsys, ["advise", "--trace", str(f), "--workers", "8", "--max-load", "9"], "--max-load")
    _usage_error(capsys, ["advise", "--trace", str(tmp_path / "none.csv"), "--workers", "8"], "--trace")
    _usage_error(capsys, ["advise", "--trace", str(f), "--workers", "1"], "--workers")


def test_cli_json_and_figure(tmp_path, capsys):
    f = _write(tmp_path / "t.csv", _trace_rows())
    png = tmp_path / "front.png"
    assert main(["advise", "--trace", str(f), "--workers", "8", "--trials", "200", "--json", "--figure",
                 str(png)]) == 0
    d = json.loads(capsys.readouterr().out)
    # K = 8 from a trace of 4 workers: the replay by iteration (the trace's own workers) is not among the models
    assert "replay" in d["settings"]["models"] and "worker effects" in d["settings"]["models"]
    assert "replay by iteration" not in d["settings"]["models"]
    assert d["settings"]["primary"] in d["settings"]["models"] and d["primary_reason"].startswith(
        f"'{d['settings']['primary']}'")
    assert {r["model"] for r in d["support"]} >= {"replay", "replay by iteration", "worker effects"}
    assert d["best"]["command"] and png.stat().st_size > 10_000
    assert main(["advise", "--trace", str(f), "--workers", "8", "--trials", "200", "--budget", "8"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-3].startswith("Recommended: ") and lines[-2].startswith("Ranked under '")
    assert lines[-1].startswith("One iteration here: one gradient over 8 data parts")


def test_cli_more_persistent_stragglers_than_workers(tmp_path, capsys):
    rows = [(i, w, t, "inf" if w < 3 else s) for i, w, t, s in _trace_rows(workers=6)]
    f = _write(tmp_path / "t.csv", rows)
    _usage_error(capsys, ["advise", "--trace", str(f), "--workers", "2"], "3 workers per iteration that never answered")


def test_cli_fits_the_trace_once_and_checks_the_workload_once(tmp_path, capsys, monkeypatch):
    """gclib advise fits the trace once (the fits it checks for persistent stragglers are the advice's) and the
    command line checks the workload once; the advice under those fits is the library's from the trace."""
    from gclib import fit

    f = _write(tmp_path / "t.csv", _trace_rows())
    calls = {"fit": 0, "check_workload": 0}

    def counted(name, fn):
        def wrapper(*a, **k):
            calls[name] += 1
            return fn(*a, **k)
        return wrapper

    monkeypatch.setattr(fit, "fit", counted("fit", fit.fit))
    monkeypatch.setattr(adv, "check_workload", counted("check_workload", adv.check_workload))
    for extra in ([], ["--holdout", "0.5"]):
        calls.update(fit=0, check_workload=0)
        workers = ["--workers", "4"] if not extra else []
        assert main(["advise", "--trace", str(f), *workers, *extra, "--trials", "200", "--json"]) == 0
        capsys.readouterr()
        assert calls == {"fit": 1, "check_workload": 1}, (extra, calls)


def test_one_record_for_a_candidate_design():
    """The design search's candidates and the advice's are one record (gclib.design_space.Candidate)."""
    from gclib import design, design_space

    assert design.Candidate is design_space.Candidate and adv.Design is design_space.Candidate
    searched, advised = design.candidates(8, 2, max_orders=1), adv.candidates(8, 2)
    assert {type(c) for c in searched + advised} == {design_space.Candidate}
    assert all(c.command == "" and c.spec is None for c in searched)
    assert all(c.spec is not None and (c.scheme is None) == (c.command == "") for c in advised)


def test_cli_prints_the_fits_and_what_it_leaves_out(tmp_path, capsys):
    f = _write(tmp_path / "t.csv", _trace_rows())
    assert main(["advise", "--trace", str(f), "--workers", "4", "--trials", "200"]) == 0
    out = capsys.readouterr().out
    assert "fitted models" in out and "shifted-exp per worker" in out and "pareto per task" in out
    d_all = main(["advise", "--trace", str(f), "--workers", "4", "--trials", "200", "--all-models", "--json"])
    every = json.loads(capsys.readouterr().out)
    assert d_all == 0 and all(x["advised_under"] for x in every["fits"])
    assert len(every["settings"]["models"]) == len(every["fits"]) + 3  # every fit and the three replays
    assert main(["advise", "--trace", str(f), "--workers", "4", "--trials", "200", "--json"]) == 0
    some = json.loads(capsys.readouterr().out)
    kept = [x["name"] for x in some["fits"] if x["advised_under"]]
    assert sorted(some["settings"]["models"]) == sorted(kept + ["replay", "replay by iteration", "worker effects"])
    assert all(x["p_value"] >= 0.05 for x in some["fits"] if x["advised_under"])


@pytest.mark.parametrize("K", [12, 30])
def test_the_screen_keeps_the_exhaustive_best_or_one_tied_with_it(K):
    """The race costs no correctness: the screened advice recommends the exhaustive search's best, or a design
    whose paired interval against it holds no difference (same trials, same seed, common random numbers)."""
    from gclib.stats import paired_change

    models = {"heavy": Pareto(0.05, 1.5), "se": ShiftedExponential(10, 0.01, per_task=True)}
    for primary in models:
        a = adv.advise(models, K, trials=600, seed=2, primary=primary, screen=True)
        e = adv.advise(models, K, trials=600, seed=2, primary=primary, screen=False)
        assert a.settings["screened"] < e.settings["screened"] == a.settings["candidates"]
        assert a.settings["screen"]["rounds"] == list(adv.SCREEN_ROUNDS) and e.settings["screen"] is None
        if a.best["label"] == e.best["label"]:
            continue
        t = adv.trial_times([a.best["label"], e.best["label"]], models[primary], K, trials=600, seed=2)
        _, lo, _, _ = paired_change(t[a.best["label"]], t[e.best["label"]])
        assert lo <= 0, (a.best["label"], e.best["label"])


def test_the_race_drops_only_what_another_design_beats():
    rng = np.random.default_rng(0)
    base = rng.exponential(1.0, 64)
    lo = np.stack([base, base + 0.5, base + 1e-3 * rng.standard_normal(64), base - 0.2])
    msgs = np.array([[10.0], [10.0], [10.0], [50.0]]).repeat(64, axis=1)
    runnable = np.array([True, True, True, False])
    out = race._dominated(lo, lo, msgs, msgs, runnable, level=5.0)
    # 1 is slower by 0.5 in every trial with as many messages: dropped; 2 ties with 0; 3 is faster (more messages)
    assert out.tolist() == [False, True, False, False]
    # a design that cannot run never drops one that can
    out = race._dominated(lo[[1, 3]], lo[[1, 3]], np.full((2, 64), 10.0), np.full((2, 64), 10.0),
                         np.array([True, False]), level=5.0)
    assert not out.any()
    # a design that fails in a trial is beaten by one that never fails
    bad = lo[:2].copy()
    bad[1] = base - 0.5
    bad[1, 3] = np.inf
    assert race._dominated(bad, bad, msgs[:2], msgs[:2], runnable[:2], level=5.0).tolist() == [False, True]


def test_default_trials_stop_once_the_means_are_precise():
    a = adv.advise({"steady": STEADY}, 8, seed=0)  # no variation: the least trials do
    assert a.settings["trials"] == adv.MIN_TRIALS and a.settings["precision"] == adv.PRECISION
    b = adv.advise({"heavy": HEAVY}, 8, seed=0)  # a heavy tail: the most
    assert b.settings["trials"] == adv.TRIALS
    half = (b.ranked["ci95_time"] / b.ranked["mean_time"]).max()
    assert half > adv.PRECISION
    c = adv.advise({"heavy": HEAVY}, 8, seed=0, trials=300)
    assert c.settings["trials"] == 300 and c.settings["precision"] is None


def test_the_workload_counts_the_shared_draws_and_the_queue():
    w = adv.workload(8, 3, trials=100)
    assert w["candidates"] <= adv.SCREEN_ABOVE and w["cells"] == 100 * 8 * 3  # no race: the draws of the trials
    q = adv.workload(8, 3, trials=100, queue=True)
    loads = [d.load for d in adv.candidates(8, 3)]
    assert q["cells"] == w["cells"] + 100 * 8 * sum(loads)  # every message of every design, from its schedule
    big = adv.workload(10_000)  # the race and the most trials of the default, one model: allowed
    assert big["cells"] == (adv.SCREEN_TRIALS + adv.TRIALS) * 10_000 * 100 < adv.MAX_CELLS
    assert adv.workload(10_000, models=3)["cells"] == 3 * big["cells"]
    with pytest.raises(ValueError, match="would simulate about 2.4e"):
        adv.check_workload(8, trials=10 ** 12)
    with pytest.raises(ValueError, match=r"loads up to 2000\).*--max-load"):
        adv.check_workload(10_000, 2000)


# ------------------------------------------------------------------------------------------------ across iterations
def test_task_delays_read_the_finish_time_of_the_load_s_last_part():
    from gclib import sequential as sq

    finish = np.cumsum(np.arange(1, 25, dtype=float).reshape(2, 3, 4), axis=2)  # (rounds, workers, tasks)
    at = sq.task_delays(finish)
    assert np.array_equal(at(1 / 3), finish[:, :, 0].T)  # one part of three: the first task's finish
    assert np.array_equal(at(2 / 3), finish[:, :, 1].T)
    half = at(1.5 / 3)  # one and a half parts: halfway between the first and the second task
    assert np.allclose(half, (finish[:, :, 0].T + finish[:, :, 1].T) / 2)
    assert np.allclose(at(0.5 / 3), finish[:, :, 0].T / 2)
    with pytest.raises(ValueError, match="5 parts"):
        at(5 / 3)
    with pytest.raises(ValueError, match="non-negative"):
        sq.task_delays(-finish)


def test_the_advice_across_iterations_keeps_the_load_and_agrees_with_the_one_shot_uncoded_time():
    """No coding across iterations waits for every worker each round: its time per gradient estimates what the
    one-shot simulation of uncoded does (the slowest of K workers), on other draws of the same model."""
    from gclib import sequential as sq

    model = ShiftedExponential(1.0, 1.0)
    t = sq.advice(model, 8, 3, probe=40, held=60, seeds=4, seed=1).set_index("scheme")
    assert list(t.index) == list(sq.ADVISED)
    assert (t["parts"] <= 3 + 1e-9).all() and (t["lo"] <= t["time"]).all() and (t["time"] <= t["hi"]).all()
    one_shot = adv.advise({"m": model}, 8, max_load=3, trials=4000).ranked.set_index("label").loc["uncoded"]
    lo, hi = t.at["no-coding", "lo"], t.at["no-coding", "hi"]
    assert lo - one_shot["ci95_time"] <= one_shot["mean_time"] <= hi + one_shot["ci95_time"]
    assert t.at["sr-sgc", "T"] >= 1 and t.at["m-sgc", "T"] >= 1
    with pytest.raises(ValueError, match="max_parts"):
        sq.advice(model, 8, 9)


def test_cli_weighs_coding_across_iterations(tmp_path, capsys):
    f = _write(tmp_path / "t.csv", _trace_rows())
    assert main(["advise", "--trace", str(f), "--workers", "6", "--trials", "200", "--sequential"]) == 0
    out = capsys.readouterr().out
    assert "Coding across iterations" in out and "sr-sgc" in out and "m-sgc" in out
    assert "Best across iterations: " in out and "rounds late" in out
    assert main(["advise", "--trace", str(f), "--workers", "6", "--trials", "200", "--sequential", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["scheme"] for r in d["sequential"]] == ["no-coding", "gc", "sr-sgc", "m-sgc"]
    assert all(r["parts"] <= d["settings"]["max_load"] + 1e-9 for r in d["sequential"])


def test_the_advice_across_iterations_says_which_schemes_do_not_fit_the_load():
    from gclib import sequential as sq

    t = sq.advice(ShiftedExponential(1.0, 1.0), 8, 1, probe=10, held=10, seeds=2).set_index("scheme")
    assert t.at["gc", "chosen"] == "gc s=0" and np.isfinite(t.at["gc", "time"])
    for scheme in ("sr-sgc", "m-sgc"):  # SR-SGC needs 2 parts a round, M-SGC more than 1
        assert t.at[scheme, "chosen"] == "none within 1 parts" and np.isnan(t.at[scheme, "time"])

