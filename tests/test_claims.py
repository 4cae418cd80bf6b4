"""gclib.claims: the verdict rules on hand-computed intervals, the table's schema, and its renderings."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from gclib import claims
from gclib.claims import FAILS, HOLDS, INCONCLUSIVE, Estimate


def est(lo, hi):
    return Estimate((lo + hi) / 2, lo, hi)


@pytest.mark.parametrize("a, b, factor, verdict", [
    (est(1, 2), est(3, 4), 1.0, HOLDS),            # wholly below
    (est(1, 3.5), est(3, 4), 1.0, INCONCLUSIVE),   # overlap
    (est(4, 5), est(3, 4), 1.0, FAILS),            # at or above: a.lo >= b.hi
    (2.0, 2.0, 1.0, FAILS),                        # an exact tie is not "less"
    (1.0, 2.0, 1.0, HOLDS),
    (est(1, 2), est(1.5, 1.8), 2.0, HOLDS),        # 2 * [1.5, 1.8] = [3, 3.6]
])
def test_less(a, b, factor, verdict):
    assert claims.less(a, b, factor) == verdict


@pytest.mark.parametrize("a, b, factor, verdict", [
    (est(1.0, 1.05), est(1.0, 1.01), 1.05, HOLDS),       # 1.05 <= 1.05 * 1.0
    (est(1.0, 1.06), est(1.0, 1.01), 1.05, INCONCLUSIVE),
    (est(1.07, 1.2), est(1.0, 1.01), 1.05, FAILS),       # 1.07 > 1.05 * 1.01 = 1.0605
    (2.0, 2.0, 1.0, HOLDS),                              # a tie is "at most"
])
def test_at_most_and_greater(a, b, factor, verdict):
    assert claims.at_most(a, b, factor) == verdict
    assert claims.greater(a, b, factor) == {HOLDS: FAILS, FAILS: HOLDS}.get(verdict, verdict)


@pytest.mark.parametrize("a, verdict", [(est(38, 42), HOLDS), (est(30, 35), FAILS), (est(45, 46), FAILS),
                                        (est(35, 41), INCONCLUSIVE)])
def test_within_ten_percent_of_forty(a, verdict):
    assert claims.within(a, 40, 0.1) == verdict  # the band is [36, 44]


def test_an_unknown_interval_is_inconclusive():
    nan = Estimate.mean_ci(1.0, math.nan)
    assert not nan.known
    assert claims.less(nan, 5.0) == claims.at_most(nan, 5.0) == claims.within(nan, 1, 0.5) == INCONCLUSIVE


def test_estimates_from_samples_and_means():
    e = Estimate.of([1.0, 2.0, 3.0])  # mean 2, sd 1, t(0.975, 2) = 4.3027
    assert e.value == 2 and e.n == 3
    assert e.hi - e.value == pytest.approx(4.302652729 / math.sqrt(3), rel=1e-8)
    assert not Estimate.of([5.0]).known and Estimate.of([5.0]).value == 5
    assert Estimate.of([math.nan, 1.0, 3.0]).n == 2
    m = Estimate.mean_ci(0.27, 0.002, n=1000)
    assert (m.lo, m.hi) == pytest.approx((0.268, 0.272))
    assert Estimate.exact(3).is_exact and Estimate.exact(3).text() == "3"
    assert m.text() == "0.27 [0.268, 0.272]" and "no interval" in Estimate.of([5.0]).text()
    with pytest.raises(ValueError, match="lo <= value <= hi"):
        Estimate(1.0, 2.0, 3.0)


def test_median_interval_from_order_statistics_by_hand():
    # k = 10: P(Bin(10, 1/2) <= 1) = 11/1024 < 0.025 <= P(<= 2) = 56/1024, so j = 2: [x_(2), x_(9)]
    e = Estimate.median([7.0, 1.0, 10.0, 2.0, 9.0, 3.0, 8.0, 4.0, 6.0, 5.0])
    assert (e.value, e.lo, e.hi, e.n) == (5.5, 2.0, 9.0, 10)
    # k = 6: P(<= 0) = 1/64 < 0.025 <= P(<= 1) = 7/64, so j = 1: the extremes
    six = Estimate.median([1, 2, 3, 4, 5, math.inf])
    assert (six.lo, six.value, six.hi) == (1, 3.5, math.inf)
    # k = 5: P(<= 0) = 1/32 >= 0.025: no rank gives 95%, so no interval (and every rule is inconclusive)
    five = Estimate.median([1, 2, 3, 4, math.nan, 5])
    assert five.value == 3 and five.n == 5 and not five.known
    assert claims.less(five, 100.0) == INCONCLUSIVE


def test_ids_of_several_rows():
    assert claims.ids("T3", 1) == ["T3"]
    assert claims.ids("T3", 3) == ["T3a", "T3b", "T3c"]
    assert claims.ids("M1", 27)[:2] == ["M1.1", "M1.2"] and len(set(claims.ids("M1", 27))) == 27


def test_wilson_interval_by_hand():
    # k = 10, n = 10: centre (1 + z^2/20) / (1 + z^2/10), half z * sqrt(z^2/400) / (1 + z^2/10)
    z2 = claims.Z95 ** 2
    lo, hi = claims.wilson(10, 10)
    assert lo == pytest.approx((1 + z2 / 20 - math.sqrt(z2) * math.sqrt(z2 / 400)) / (1 + z2 / 10))
    assert hi == pytest.approx(1.0) and lo == pytest.approx(0.7225, abs=1e-4)
    assert all(math.isnan(x) for x in claims.wilson(0, 0))


@pytest.mark.parametrize("runs, verdict", [
    ([True] * 10, HOLDS),                   # Wilson lower bound 0.72 > 1/2
    ([True, True], INCONCLUSIVE),           # two seeds cannot carry a verdict: [0.34, 1]
    ([True] * 5 + [False] * 5, INCONCLUSIVE),
    ([False] * 10, FAILS),
    ([True] * 9 + [math.nan], HOLDS),       # a run that never finished counts against (9 of 10: [0.60, 0.98])
])
def test_majority(runs, verdict):
    assert claims.majority(runs) == verdict


def test_combinations_of_verdicts():
    assert claims.all_hold([HOLDS, HOLDS]) == HOLDS
    assert claims.all_hold([HOLDS, INCONCLUSIVE]) == INCONCLUSIVE
    assert claims.all_hold([INCONCLUSIVE, FAILS]) == FAILS
    assert claims.any_holds([FAILS, HOLDS]) == HOLDS
    assert claims.any_holds([FAILS, INCONCLUSIVE]) == INCONCLUSIVE
    assert claims.any_holds([FAILS, FAILS]) == FAILS
    assert claims.exact(True) == HOLDS and claims.exact(False) == FAILS
    with pytest.raises(ValueError, match="verdicts must be among"):
        claims.all_hold(["maybe"])


def _rows():
    return [claims.row("A1", "a is faster than b", kind="paper", paper="a beats b", setting="n = 4",
                       measured="1 vs 2", criterion="a < b", verdict=HOLDS),
            claims.row("A2", "b is cheap", kind="check", paper="our check: b is cheap", setting="n = 4",
                       measured="3 [2, 4]", criterion="b < 3", verdict=INCONCLUSIVE)]


def test_table_write_read_round_trip(tmp_path):
    t = claims.table(_rows())
    assert list(t.columns) == list(claims.COLUMNS)
    p = claims.write(t, "04_gc_mmc", tmp_path)
    assert p.name == "04_claims.csv"
    back = claims.read(p)
    pd.testing.assert_frame_equal(back, t.astype(str))
    none = dict.fromkeys(claims.VERDICTS, 0)
    assert claims.counts(back) == {**none, HOLDS: 1, INCONCLUSIVE: 1}
    assert claims.count_text(claims.counts(back)) == "2 claims: 1 holds, 0 do not hold, 1 inconclusive"
    assert claims.counts_by_kind(back) == {"paper": {**none, HOLDS: 1}, "extension": none, "reading": none,
                                           "check": {**none, INCONCLUSIVE: 1}}


def test_a_claim_entry_fills_its_fields_and_is_carried_beyond_the_paper():
    entry = claims.Claim("A", "paper", "{code} is fast", "Paper: {code} is fast", "time below {bound}")
    r = entry.row(id="A1", setting="n = 4", measured="3", verdict=HOLDS, code="FRC", bound=5)
    assert (r["id"], r["kind"], r["claim"], r["paper"], r["criterion"]) == (
        "A1", "paper", "FRC is fast", "Paper: FRC is fast", "time below 5")
    out = entry.row(setting="n = 4", measured="3", verdict=HOLDS, carried="here {a model}", code="CRC", bound=5)
    assert out["id"] == "A" and out["kind"] == "extension"
    assert out["paper"] == "Paper: CRC is fast; carried beyond the paper: here {a model}"
    check = claims.Claim("B", "check", "b holds", "our check: b", "b")
    assert check.row(setting="s", measured="m", verdict=FAILS, carried="another model") == check.row(
        setting="s", measured="m", verdict=FAILS)


def test_an_extension_says_so_and_only_a_paper_row_is_not_testable():
    ext = claims.row("X", "x", kind="extension", paper=claims.beyond("Paper: x is fast", "another model"),
                     setting="s", measured="m", criterion="c", verdict=HOLDS)
    assert ext["paper"] == "Paper: x is fast; carried beyond the paper: another model"
    with pytest.raises(ValueError, match="an extension's paper field must say 'carried beyond the paper'"):
        claims.row("X", "x", kind="extension", paper="Paper: x is fast", setting="s", measured="m", criterion="c",
                   verdict=HOLDS)
    with pytest.raises(ValueError, match="only a paper row can be 'not testable here'"):
        claims.row("X", "x", kind="check", paper="p", setting="s", measured="m", criterion="c",
                   verdict=claims.NOT_TESTABLE)
    u = claims.untestable("U", "x is fast on EC2", paper="Paper, Fig. 2: -20%", missing="the EC2 cluster",
                          setting="EC2, 10 workers")
    assert u["kind"] == "paper" and u["verdict"] == claims.NOT_TESTABLE and "the EC2 cluster" in u["measured"]
    entry = claims.Claim("U", "paper", "x is fast on EC2", "Paper, Fig. 2: -20%", claims.NOT_REBUILT)
    assert entry.untestable(setting="EC2, 10 workers", missing="the EC2 cluster") == u
    t = claims.table([u, ext, *_rows()])
    rep = claims.reproduction(t)
    assert list(rep["id"]) == ["U", _rows()[0]["id"]] and list(rep.columns) == list(claims.REPRODUCTION)
    text = claims.reproduction_markdown(t)
    assert text.startswith("**Reproduction table**: the paper's results in the paper's setting, 2 claims: 1 holds, "
                           "0 do not hold, 0 inconclusive, 1 not testable here (the claims table at the end also "
                           "holds 1 extension, 1 check).")
    assert "| U | x is fast on EC2 | Paper, Fig. 2: -20% |" in text and "**not testable here** |" in text
    assert claims.all_hold([HOLDS, claims.NOT_TESTABLE]) == INCONCLUSIVE


def test_bad_tables_are_refused(tmp_path):
    with pytest.raises(ValueError, match="verdict must be one of"):
        claims.row("A", "x", kind="paper", paper="p", setting="s", measured="m", criterion="c", verdict="true")
    with pytest.raises(ValueError, match="kind must be one of"):
        claims.row("A", "x", kind="ours", paper="p", setting="s", measured="m", criterion="c", verdict=HOLDS)
    with pytest.raises(ValueError, match="claim field measured must be a non-empty string"):
        claims.row("A", "x", kind="paper", paper="p", setting="s", measured=" ", criterion="c", verdict=HOLDS)
    with pytest.raises(ValueError, match="claim ids must be unique"):
        claims.table(_rows() + _rows()[:1])
    (tmp_path / "01_claims.csv").write_text("claim,holds\nx,1\n")
    with pytest.raises(ValueError, match="a claims table has the columns"):
        claims.read(tmp_path / "01_claims.csv")
    with pytest.raises(ValueError, match="two-digit number"):
        claims.path("index", tmp_path)


def test_markdown_rendering_counts_and_escapes():
    rows = _rows()
    rows[0]["measured"] = "a | b"
    md = claims.markdown(claims.table(rows))
    assert md.startswith("paper: 1 claim: 1 holds, 0 do not hold, 0 inconclusive; check: 1 claim: 0 hold, 0 do not "
                         "hold, 1 inconclusive.")
    assert "| A1 | paper | a is faster than b | a beats b | a \\| b | a < b | **holds** |" in md
    assert "**inconclusive**" in md
