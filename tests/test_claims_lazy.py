"""gclib.studies.lazy_aggregation.claims: the claims of notebook 06 judged on small hand-made tables whose verdicts are
known."""
import numpy as np
import pandas as pd
import pytest

from gclib.claims import FAILS, HOLDS, INCONCLUSIVE, check
from gclib.studies.lazy_aggregation import claims as lc

SEEDS = range(5)  # 5 of 5 seeds: Wilson [0.57, 1] > 1/2 (holds); 3 of 5: [0.23, 0.88] (inconclusive)
#: time, uploads, computations per scheme under "pareto 1.5". Worker side: G-LAG wins everything but computation
#: (above GD's); LAGC uploads less than GC but computes more, and is slower than LAG. Server side: LAG-PS uploads
#: less than G-LAG-PS (U-ps fails), while it uploads less than G-LAG-WK, which the worker-side claims must ignore.
HEAVY = {"gd": (10, 100, 100), "gc": (8, 90, 300), "grouping": (6, 50, 300),
         "lag-wk": (7, 20, 100), "lagc-wk": (9, 40, 320), "g-lag-wk": (3, 15, 120),
         "lag-ps": (7, 12, 12), "lagc-ps": (5, 60, 200), "g-lag-ps": (4, 14, 90)}
#: under "exp": GC slower than GD (gain 10/12 < 10/8), grouping's gain 10/8 < 10/6.
LIGHT = {**HEAVY, "gc": (12, 90, 300), "grouping": (8, 50, 300)}


def _totals():
    rows = []
    for model, base in (("pareto 1.5", HEAVY), ("exp", LIGHT)):
        for seed in SEEDS:
            for scheme, (t, u, c) in base.items():
                rows.append({"model": model, "scheme": scheme, "seed": seed, "status": "converged",
                             "time": float(t), "uploads": float(u), "computations": float(c)})
    tot = pd.DataFrame(rows)
    # exp, seeds 0 and 1: G-LAG-WK slower than LAG-WK -> fastest in 3 of 5 seeds
    tot.loc[(tot.model == "exp") & (tot.scheme == "g-lag-wk") & (tot.seed < 2), "time"] = 8.0
    return tot


def _lag():
    rows = [("gd", "none", 100), ("lag-wk", "silent", 30), ("lag-wk", "upload", 40), ("lag-ps", "silent", 60),
            ("lag-ps", "upload", 50)]
    return pd.DataFrame([{"scheme": s, "warmup": w, "status": "converged", "iterations": 10, "time": 1.0,
                          "uploads": u, "computations": u, "target": 1e-8, "workers": 9, "samples": 450}
                         for s, w, u in rows])


def _literal(diverged):
    return pd.DataFrame({"scheme": "lagc-wk", "seed": list(SEEDS),
                         "status": ["diverged" if d else "converged" for d in diverged]})


def _family(good_problems=4, bad_problems=1, chen_fails=True):
    """Problems where every claim's outcome is that of HEAVY, then problems where G-LAG-PS is the slowest."""
    rows = []
    for p in range(good_problems + bad_problems):
        for seed in range(3):
            for scheme, (t, u, c) in HEAVY.items():
                t = 100.0 if (p >= good_problems and scheme == "g-lag-ps") else t
                rows.append({"problem": f"p{p}", "model": "pareto 1.5", "scheme": scheme, "seed": seed,
                             "status": "converged", "iterations": 10, "time": float(t), "uploads": float(u),
                             "computations": float(c)})
        for scheme in ("lag-ps-chen", "g-lag-ps-chen"):
            bad = chen_fails and scheme == "g-lag-ps-chen" and p == 0
            rows.append({"problem": f"p{p}", "model": "pareto 1.5", "scheme": scheme, "seed": 0,
                         "status": "diverged" if bad else "converged", "iterations": np.nan if bad else 12,
                         "time": np.nan, "uploads": np.nan, "computations": np.nan})
    return pd.DataFrame(rows)


def test_every_verdict_of_a_hand_made_grid():
    t = lc.judge(_totals(), _lag(), _literal([1, 1, 1, 1, 1]), light="exp", setting="toy")
    check(t)
    v = dict(zip(t["id"], t["verdict"]))
    expected = {
        "L-wk": HOLDS, "L-ps": FAILS,            # 30 <= 50; 60 > 50 (half of GD's 100)
        "W-wk": HOLDS, "W-ps": FAILS,            # our warm-up: 40 > 30; 50 < 60
        # worker side: G-LAG-WK 3 < 6; 15 < 20 (LAG-PS's 12 is another trigger); 120 <= GC's 300 and LAGC's 320
        # (above GD's 100, which has no redundancy); LAG-WK 20 < GD 100
        "T-wk:p1.5": HOLDS, "U-wk:p1.5": HOLDS, "C-wk:p1.5": HOLDS, "LU-wk:p1.5": HOLDS, "SU-wk:p1.5": HOLDS,
        "SC-wk:p1.5": FAILS, "LT-wk:p1.5": FAILS, "G-wk:p1.5": HOLDS,
        # server side: 4 < 5; 14 > LAG-PS's 12; 90 <= 100; LAGC-PS 60 < 90 but LAG-PS ... both < GD, GC
        "T-ps:p1.5": HOLDS, "U-ps:p1.5": FAILS, "C-ps:p1.5": HOLDS, "LU-ps:p1.5": HOLDS, "SU-ps:p1.5": HOLDS,
        "SC-ps:p1.5": HOLDS, "LT-ps:p1.5": HOLDS, "G-ps:p1.5": HOLDS,
        "T-wk:exp": INCONCLUSIVE, "T-ps:exp": HOLDS,
        "H-gc:p1.5/exp": HOLDS, "H-grouping:p1.5/exp": HOLDS,   # 10/8 > 10/12 and 10/6 > 10/8
        "M": HOLDS,
    }
    assert {k: v[k] for k in expected} == expected
    kinds = dict(zip(t["id"], t["kind"]))
    assert kinds["T-wk:p1.5"] == "paper" and kinds["LT-ps:exp"] == "reading" and kinds["G-wk:exp"] == "reading"
    assert kinds["H-gc:p1.5/exp"] == "reading" and kinds["M"] == "check" and kinds["L-wk"] == "paper"
    m = t.set_index("id")["measured"]
    assert "in 3 of 5 seeds" in m["T-wk:exp"] and "fastest other (lag-wk)" in m["T-wk:exp"]
    assert "fewest other (lag-ps)" in m["U-ps:p1.5"] and "fewest other (lag-wk)" in m["U-wk:p1.5"]
    assert "40 uploads with every worker uploading, 30 with Chen et al.'s warm-up (+33%)" == m["W-wk"]
    assert "30 uploads against GD's 100 (0.30 of GD's)" == m["L-wk"]
    assert t.set_index("id").loc["T-ps:p1.5", "setting"].startswith("pareto 1.5; server-side trigger for every lazy "
                                                                    "scheme; toy; the paper's parameters")
    # the same numbers in every seed are one measurement, judged exactly; seeds that differ are judged by majority
    assert m["U-wk:p1.5"].endswith("deterministic: identical in every seed (5 seeds), one measurement on one problem")
    assert "15 in every seed" in m["U-wk:p1.5"] and "holds in" not in m["U-wk:p1.5"]
    # LAGC's server-side rows judge our construction of it, not the paper
    assert kinds["SU-ps:p1.5"] == kinds["SC-ps:exp"] == "reading" and kinds["SU-wk:p1.5"] == "paper"
    assert "our own construction" in t.set_index("id").loc["SC-ps:p1.5", "paper"]


def test_a_model_beyond_the_papers_gives_extensions():
    tot = _totals()
    tot = pd.concat([tot, tot[tot.model == "exp"].assign(model="shifted-exp")])
    t = lc.judge(tot, family=_family(), family_setting="five problems").set_index("id")
    assert t.loc["T-wk:sexp", "kind"] == "extension" and t.loc["T-wk:exp", "kind"] == "paper"
    assert "carried beyond the paper: the paper uses Pareto and exponential" in t.loc["T-wk:sexp", "paper"]
    assert t.loc["FT-ps:p1.5", "kind"] == "extension" and t.loc["FLT-ps:p1.5", "kind"] == "reading"
    assert "a family of linear and logistic regressions" in t.loc["FT-ps:p1.5", "paper"]


def test_claim_models_and_lights_choose_the_rows():
    t = lc.judge(_totals(), claim_models=["exp"], lights=["exp"])
    ids = set(t["id"])
    assert "T-wk:exp" in ids and "T-wk:p1.5" not in ids and "H-gc:p1.5/exp" in ids
    with pytest.raises(ValueError, match="claim_models"):
        lc.judge(_totals(), claim_models=["shifted-exp"])


def test_a_run_that_missed_the_target_fails_its_seed():
    tot = _totals()
    miss = (tot.model == "pareto 1.5") & (tot.scheme == "lag-wk")
    tot.loc[miss, ["uploads", "time", "status"]] = [np.nan, np.nan, "max_iter"]
    t = lc.judge(tot).set_index("id")
    assert t.loc["LU-wk:p1.5", "verdict"] == FAILS and t.loc["LU-wk:exp", "verdict"] == HOLDS
    assert "never reached the target" in t.loc["LU-wk:p1.5", "measured"]


def test_the_family_rows_count_problems():
    t = lc.judge(_totals(), family=_family(), family_setting="five problems")
    v, m = t.set_index("id")["verdict"], t.set_index("id")["measured"]
    assert v["FT-ps:p1.5"] == INCONCLUSIVE and m["FT-ps:p1.5"].startswith("holds in 4 of 5 problems")
    assert v["K"] == HOLDS and v["K-chen"] == HOLDS
    assert "g-lag-ps: converged 4, diverged 1 of 5" in m["K-chen"]
    t = lc.judge(_totals(), family=_family(good_problems=9, chen_fails=False)).set_index("id")
    assert t.loc["FT-ps:p1.5", "verdict"] == HOLDS and t.loc["FU-ps:p1.5", "verdict"] == FAILS
    assert t.loc["K-chen", "verdict"] == FAILS
    fam = _family()
    fam.loc[(fam.scheme == "gc") & (fam.problem == "p2"), "status"] = "max_iter"
    assert lc.judge(_totals(), family=fam).set_index("id").loc["K", "verdict"] == FAILS


def test_literal_threshold_and_optional_tables():
    t = lc.judge(_totals(), literal=_literal([1, 1, 0, 1, 0]))
    assert t.set_index("id").loc["M", "verdict"] == INCONCLUSIVE and not t["id"].str.startswith("L-").any()
    assert lc.judge(_totals(), literal=_literal([0] * 5)).set_index("id").loc["M", "verdict"] == FAILS
    assert "M" not in set(lc.judge(_totals())["id"])
    only_silent = _lag()[lambda d: d.warmup != "upload"]
    ids = set(lc.judge(_totals(), only_silent)["id"])
    assert {"L-wk", "L-ps"} <= ids and not ids & {"W-wk", "W-ps"}


def test_bad_tables_name_the_problem():
    with pytest.raises(ValueError, match="light"):
        lc.judge(_totals(), light="exponential")
    with pytest.raises(ValueError, match="totals needs the columns"):
        lc.judge(_totals().drop(columns="uploads"))
    with pytest.raises(ValueError, match="totals needs the schemes"):
        lc.judge(_totals()[lambda d: d.scheme != "lagc-ps"])


def test_overviews_have_one_line_per_claim_and_trigger():
    t = lc.judge(_totals(), _lag(), light="exp", family=_family())
    lines = lc.overview(t).strip().splitlines()
    assert lines[0] == "| claim | p1.5 | exp |" and len(lines) == 2 + 2 * len(lc.CLAIMS)
    assert "| G-LAG has the shortest wall-clock time (worker-side trigger) | holds | inconclusive |" in lines
    heavy = lc.heavy_overview(t).strip().splitlines()
    assert heavy[0] == "| claim | p1.5 |" and len(heavy) == 2 + 2
    fam = lc.family_overview(t).strip().splitlines()
    assert fam[0] == "| claim | p1.5 |" and len(fam) == 2 + 2 * len(lc.CLAIMS)
    assert any("inconclusive (4 of 5 problems)" in x for x in fam)


def test_lag_text_renders_the_target_on_both_scales():
    md = lc.lag_text(_lag())
    assert "N = 450 samples" in md and "gap of 4.5e-06 on the authors' loss" in md
    assert "2.22e-11 on ours" in md
    assert "| lag-wk | every worker uploads | converged | 10 | 40 | 0.40 | 40 |" in md
    assert "| gd | - | converged | 10 | 100 | 1.00 | 100 |" in md


def test_short_ids():
    assert lc.short("pareto 1.25") == "p1.25" and lc.short("exp") == "exp" and lc.short("shifted-exp") == "sexp"
