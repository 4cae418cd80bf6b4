"""gclib.claims.lazy: the claims of notebook 06 judged on small hand-made tables whose verdicts are known."""
import numpy as np
import pandas as pd
import pytest

from gclib.claims import FAILS, HOLDS, INCONCLUSIVE, check
from gclib.claims import lazy as lc

SEEDS = range(5)  # 5 of 5 seeds: Wilson [0.57, 1] > 1/2 (holds); 3 of 5: [0.23, 0.88] (inconclusive)
#: time, uploads, computations per scheme; under "pareto 1.5" G-LAG wins everything but LAGC is slower than LAG.
HEAVY = {"gd": (10, 100, 100), "gc": (8, 90, 300), "grouping": (6, 50, 300), "lag-wk": (7, 20, 80),
         "lag-ps": (7, 30, 30), "lagc": (9, 40, 280), "g-lag": (3, 10, 60)}
#: under "exp": GC slower than GD (gain 10/12 < 10/8), grouping's gain 10/8 < 10/6; G-LAG uploads more than LAG-WK.
LIGHT = {**HEAVY, "gc": (12, 90, 300), "grouping": (8, 50, 300), "lag-wk": (5, 20, 80), "g-lag": (4, 25, 60)}


def _totals():
    rows = []
    for model, base in (("pareto 1.5", HEAVY), ("exp", LIGHT)):
        for seed in SEEDS:
            for scheme, (t, u, c) in base.items():
                rows.append({"model": model, "scheme": scheme, "seed": seed, "status": "converged",
                             "time": float(t), "uploads": float(u), "computations": float(c)})
    tot = pd.DataFrame(rows)
    # exp, seeds 0 and 1: G-LAG slower than LAG-WK -> fastest in 3 of 5 seeds
    tot.loc[(tot.model == "exp") & (tot.scheme == "g-lag") & (tot.seed < 2), "time"] = 6.0
    return tot


def _lag():
    rows = [("gd", "none", 100), ("lag-wk", "silent", 30), ("lag-wk", "upload", 40), ("lag-ps", "silent", 60),
            ("lag-ps", "upload", 50)]
    return pd.DataFrame([{"scheme": s, "warmup": w, "status": "converged", "iterations": 10, "time": 1.0,
                          "uploads": u, "computations": u, "target": 1e-8, "workers": 9, "samples": 450}
                         for s, w, u in rows])


def _literal(diverged):
    return pd.DataFrame({"scheme": "lagc", "seed": list(SEEDS),
                         "status": ["diverged" if d else "converged" for d in diverged]})


def test_every_verdict_of_a_hand_made_grid():
    t = lc.judge(_totals(), _lag(), _literal([1, 1, 1, 1, 1]), light="exp", setting="toy")
    check(t)
    v = dict(zip(t["id"], t["verdict"]))
    assert v == {
        "L-wk": HOLDS, "L-ps": FAILS,            # 30 <= 50; 60 > 50 (half of GD's 100)
        "W-wk": HOLDS, "W-ps": FAILS,            # our warm-up: 40 > 30; 50 < 60
        "T:p1.5": HOLDS, "U:p1.5": HOLDS, "C:p1.5": HOLDS, "LU:p1.5": HOLDS, "LT:p1.5": FAILS, "G:p1.5": HOLDS,
        "T:exp": INCONCLUSIVE, "U:exp": FAILS, "C:exp": HOLDS, "LU:exp": HOLDS, "LT:exp": FAILS, "G:exp": HOLDS,
        "H-gc:p1.5": HOLDS, "H-grouping:p1.5": HOLDS,   # 10/8 > 10/12 and 10/6 > 10/8
        "M": HOLDS,
    }
    m = t.set_index("id")["measured"]
    assert "in 3 of 5 seeds" in m["T:exp"] and "fastest other (lag-wk)" in m["T:exp"]
    assert "40 uploads with every worker uploading, 30 with Chen et al.'s warm-up (+33%)" == m["W-wk"]
    assert "30 uploads against GD's 100 (0.30 of GD's)" == m["L-wk"]
    assert t.set_index("id").loc["T:p1.5", "setting"] == "pareto 1.5; toy"


def test_a_run_that_missed_the_target_fails_its_seed():
    tot = _totals()
    miss = (tot.model == "pareto 1.5") & (tot.scheme == "lagc")
    tot.loc[miss, ["uploads", "time", "status"]] = [np.nan, np.nan, "max_iter"]
    v = lc.judge(tot).set_index("id")["verdict"]
    assert v["LU:p1.5"] == FAILS and v["LU:exp"] == HOLDS
    assert "never reached the target" in lc.judge(tot).set_index("id").loc["LU:p1.5", "measured"]


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
    with pytest.raises(ValueError, match="totals needs"):
        lc.judge(_totals().drop(columns="uploads"))


def test_overview_has_one_line_per_claim_and_one_column_per_model():
    md = lc.overview(lc.judge(_totals(), _lag(), light="exp"))
    lines = md.strip().splitlines()
    assert lines[0] == "| claim | p1.5 | exp |" and len(lines) == 2 + 6 + 2
    assert "| G-LAG has the shortest wall-clock time | holds | inconclusive |" in lines
    assert any(x.startswith("| coding (gc)") and x.endswith("| holds |  |") for x in lines)


def test_lag_text_renders_the_target_on_both_scales():
    md = lc.lag_text(_lag())
    assert "N = 450 samples" in md and "gap of 4.5e-06 on the authors' loss" in md
    assert "2.22e-11 on ours" in md
    assert "| lag-wk | every worker uploads | converged | 10 | 40 | 0.40 | 40 |" in md
    assert "| gd | - | converged | 10 | 100 | 1.00 | 100 |" in md


def test_short_ids():
    assert lc.short("pareto 1.25") == "p1.25" and lc.short("exp") == "exp"
