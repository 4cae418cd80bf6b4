"""The claims of notebook 09 (gclib.studies.advise.claims): every rule reaches each verdict it can give."""

import pandas as pd
import pytest

from gclib.claims import FAILS, HOLDS, INCONCLUSIVE
from gclib.studies.advise import claims as ca


def tables(covered=150, repeats=150, wins=140, fitted=(0.055, 0.053, 0.057), real_adv=(0.090, 0.087, 0.093),
           real_unc=(0.150, 0.145, 0.155), pred_adv=0.089, pred_unc=0.152):
    coverage = pd.DataFrame([{"truth": "shifted-exp per worker", "parameter": "mu", "true_value": 10.0,
                              "repeats": repeats, "covered": covered, "median_estimate": 10.1}])
    goodness = pd.DataFrame([{"truth": "shifted-exp per worker", "repeats": repeats, "wins": wins,
                              "other": "exp"}])
    machine = {"fit": "shifted-exp per worker", "injected": "shifted-exp (mu = 10, alpha = 0.01) x 0.5 s",
               "injected_mean": 0.055, "fitted_mean": fitted[0], "fitted_lo": fitted[1], "fitted_hi": fitted[2]}
    real = pd.DataFrame([
        {"role": "advised", "label": "uc-mmc r=3 P=1", "command": "--scheme uc-mmc --workers 8 --load 3",
         "predicted": pred_adv, "predicted_lo": pred_adv * 0.99, "predicted_hi": pred_adv * 1.01,
         "mean_time": real_adv[0], "lo": real_adv[1], "hi": real_adv[2], "iterations": 150},
        {"role": "uncoded", "label": "uncoded", "command": "--scheme uncoded --workers 8",
         "predicted": pred_unc, "predicted_lo": pred_unc * 0.99, "predicted_hi": pred_unc * 1.01,
         "mean_time": real_unc[0], "lo": real_unc[1], "hi": real_unc[2], "iterations": 150}])
    return coverage, goodness, machine, real


def verdict(t, key):
    return t.set_index("id").loc[key, "verdict"]


def test_all_hold_when_everything_agrees():
    t = ca.judge(*tables())
    assert list(t["id"]) == ["F1", "F2", "M1", "A1", "A2", "A3"]
    assert (t["verdict"] == HOLDS).all(), t[["id", "verdict", "measured"]]


@pytest.mark.parametrize("covered, expected", [(150, HOLDS), (100, FAILS), (14, INCONCLUSIVE)])
def test_coverage_rule(covered, expected):
    repeats = 15 if covered == 14 else 150
    assert verdict(ca.judge(*tables(covered=covered, repeats=repeats)), "F1") == expected


@pytest.mark.parametrize("wins, expected", [(140, HOLDS), (20, FAILS), (80, INCONCLUSIVE)])
def test_best_fit_rule(wins, expected):
    t = ca.judge(*tables(wins=wins))
    assert verdict(t, "F2") == expected
    assert "most often otherwise: exp" in t.set_index("id").loc["F2", "measured"]


@pytest.mark.parametrize("fitted, expected", [((0.056, 0.054, 0.058), HOLDS), ((0.070, 0.065, 0.075), FAILS),
                                              ((0.058, 0.050, 0.066), INCONCLUSIVE)])
def test_machine_fit_rule(fitted, expected):
    assert verdict(ca.judge(*tables(fitted=fitted)), "M1") == expected


@pytest.mark.parametrize("real, expected", [((0.090, 0.087, 0.093), HOLDS), ((0.070, 0.066, 0.074), FAILS),
                                            ((0.082, 0.075, 0.089), INCONCLUSIVE)])
def test_prediction_rule(real, expected):
    t = ca.judge(*tables(real_adv=real))
    assert verdict(t, "A1") == expected
    assert verdict(t, "A2") == HOLDS


@pytest.mark.parametrize("unc, expected", [((0.150, 0.145, 0.155), HOLDS), ((0.080, 0.075, 0.085), FAILS),
                                           ((0.092, 0.085, 0.099), INCONCLUSIVE)])
def test_faster_than_uncoded(unc, expected):
    assert verdict(ca.judge(*tables(real_unc=unc)), "A3") == expected


def test_a_missing_run_is_inconclusive_and_conclusions_render():
    c, g, m, real = tables()
    t = ca.judge(c, g, m, real[real["role"] == "advised"])
    assert verdict(t, "A2") == INCONCLUSIVE and verdict(t, "A3") == INCONCLUSIVE
    text = ca.conclusions(t)
    assert "1 of 1 parameters covered" in text and "**inconclusive**" in text


def network_case(free="uc-mmc r=3 P=1", charged="frc r=2", real_free=(0.030, 0.029, 0.031),
                 real_charged=(0.024, 0.023, 0.025), pred_free=0.020, pred_charged=0.0245, link=(0.0296, 0.010)):
    from types import SimpleNamespace

    from gclib.message_cost import NetworkProfile

    def adv(label):
        return SimpleNamespace(best={"label": label}, settings={"K": 8})

    rows = []
    for label, real, lk in ((free, real_free, link[0]), (charged, real_charged, link[1])):
        if label in [r["label"] for r in rows]:
            continue
        rows.append({"role": "both" if free == charged else ("free" if label == free else "charged"),
                     "label": label, "free": pred_free, "free_lo": pred_free * 0.99, "free_hi": pred_free * 1.01,
                     "charged": pred_charged, "charged_lo": pred_charged * 0.99, "charged_hi": pred_charged * 1.01,
                     "mean_time": real[0], "lo": real[1], "hi": real[2], "iterations": 100, "messages": 10.0,
                     "sent": 24.0, "link": lk})
    return SimpleNamespace(free=adv(free), charged=adv(charged), real=pd.DataFrame(rows),
                           network=NetworkProfile(5e-5, 2e-5, 1e9, 800), where="two hosts")


def test_network_rows():
    t = ca.judge(*tables(), network=network_case())
    assert list(t["id"])[-6:] == ["N1", "N2", "N3", "N4", "N5-uc-mmc r=3 P=1", "N5-frc r=2"]
    assert [verdict(t, k) for k in ("N1", "N2", "N3", "N4")] == [HOLDS, HOLDS, HOLDS, FAILS]
    assert "latency 50 us" in t.set_index("id").loc["N1", "setting"]
    assert "K = 8 workers, two hosts;" in t.set_index("id").loc["N1", "setting"]
    # N5: against the larger of the charged prediction and the link's time: the free pick's real 0.030 [0.029,
    # 0.031] lies within 10% of its link time 0.0296 (its charged 0.0245 alone would not hold); the charged pick's
    # link time 0.010 is below its charged prediction 0.0245, which its real time matches
    assert verdict(t, "N5-uc-mmc r=3 P=1") == HOLDS and verdict(t, "N5-frc r=2") == HOLDS
    t = ca.judge(*tables(), network=network_case(link=(0.040, 0.010)))
    assert verdict(t, "N5-uc-mmc r=3 P=1") == FAILS
    assert "link's time for every message sent: **does not hold**" in ca.conclusions(t)
    # the charged choice slower in real runs, or indistinguishable
    t = ca.judge(*tables(), network=network_case(real_charged=(0.035, 0.034, 0.036)))
    assert verdict(t, "N2") == FAILS
    t = ca.judge(*tables(), network=network_case(real_charged=(0.030, 0.025, 0.035)))
    assert verdict(t, "N2") == INCONCLUSIVE
    # the two advices agree: nothing changed, nothing to compare
    t = ca.judge(*tables(), network=network_case(charged="uc-mmc r=3 P=1"))
    assert verdict(t, "N1") == FAILS and verdict(t, "N2") == INCONCLUSIVE
    assert "than the one advised without: **inconclusive**" in ca.conclusions(t)
