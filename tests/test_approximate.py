"""Approximate gradient codes (:mod:`gclib.codes.approximate`): hand-computed small cases, exhaustive checks of the
spectral bound and of unbiasedness, and the authors' published benchmark for the expander code."""
from __future__ import annotations

import math
from itertools import combinations, product

import numpy as np
import pytest

from gclib import schemes as sch
from gclib.cli import main
from gclib.codes import approximate as ap
from gclib.studies.approximate import study

# the 4-cycle 0-1-2-3-0: the only 2-regular simple graph on 4 vertices
C4 = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=float)


def _least_squares_error(B, rows):
    """``min_a ||a B_R - 1||_2`` by projecting ``1`` on the row space of ``B_R`` (an orthonormal basis from QR)."""
    Q, R = np.linalg.qr(B[list(rows)].T)
    keep = np.abs(np.diag(R)) > 1e-10
    Q = Q[:, keep]
    ones = np.ones(B.shape[1])
    return float(np.linalg.norm(ones - Q @ (Q.T @ ones)))


@pytest.mark.parametrize("n,d", [(10, 3), (12, 4), (9, 2), (7, 6)])
def test_a_random_regular_graph_is_simple_regular_and_seeded(n, d):
    A = ap.random_regular_graph(n, d, seed=5)
    assert np.array_equal(A, A.T) and not np.diag(A).any() and set(np.unique(A)) <= {0.0, 1.0}
    assert np.all(A.sum(axis=1) == d)
    assert np.array_equal(A, ap.random_regular_graph(n, d, seed=5))
    M = ap.random_assignment(n, d, seed=5)
    assert np.all(M.sum(axis=0) == d) and np.all(M.sum(axis=1) == d) and set(np.unique(M)) <= {0.0, 1.0}


def test_the_walk_leaves_the_start_and_seeds_differ():
    graphs = {ap.random_regular_graph(20, 3, seed=k).tobytes() for k in range(5)}
    assert len(graphs) == 5


def test_the_four_cycle_by_hand():
    opt = ap.expander(4, 1, 2, "optimal", adjacency=C4)
    fix = ap.expander(4, 1, 2, "fixed", adjacency=C4)
    assert np.array_equal(opt.B, C4 / 2) and opt.order[0] == (1, 3) and not opt.exact and opt.load == 2
    # one straggler: the opposite vertex has the same neighbours, so least squares is exact; the fixed weight 4/3
    # gives (2/3) [2, 1, 2, 1] and the error [1, -1, 1, -1] / 3, of norm 2/3
    for w in range(4):
        assert ap.decoding_error(opt, opt.surviving([w])) < 1e-12
        assert ap.decoding_error(fix, fix.surviving([w])) == pytest.approx(2 / 3)
    # stragglers 0 and 2: workers 1 and 3 remain, both {0, 2} / 2, so parts 1 and 3 are uncovered (least squares:
    # error sqrt(2)); the fixed weight 2 gives [2, 0, 2, 0], error norm 2
    assert ap.decoding_error(opt, opt.surviving([0, 2])) == pytest.approx(math.sqrt(2))
    assert ap.decoding_error(fix, fix.surviving([0, 2])) == pytest.approx(2.0)
    assert ap.uncovered_bound(opt, 2)[0] == pytest.approx(math.sqrt(2))
    assert fix.decode([1, 2, 3]).tolist() == [[4 / 3] * 3]


def test_the_optimal_decoder_is_least_squares_and_never_worse_than_the_fixed_one():
    opt = ap.expander(10, 3, 3, "optimal", seed=2)
    fix = ap.expander(10, 3, 3, "fixed", adjacency=opt.B * 3)
    for S in combinations(range(10), 3):
        rows = opt.surviving(S)
        e = ap.decoding_error(opt, rows)
        assert e == pytest.approx(_least_squares_error(opt.B, rows), abs=1e-9)
        assert e <= ap.decoding_error(fix, rows) + 1e-12


@pytest.mark.parametrize("n,d,s", [(12, 4, 3), (10, 3, 4), (8, 2, 1)])
def test_the_spectral_bound_holds_for_every_straggler_set(n, d, s):
    fix = ap.expander(n, s, d, "fixed", seed=1)
    adj = fix.B * d
    bound = ap.spectral_bound(adj, s)
    lam = np.sort(np.abs(np.linalg.eigvals(adj)))[-2]  # independent of eigvalsh
    assert bound == pytest.approx(lam / d * math.sqrt(n * s / (n - s)))
    worst = max(ap.decoding_error(fix, fix.surviving(S)) for S in combinations(range(n), s))
    assert worst <= bound + 1e-12


def test_the_fixed_decoder_is_unbiased_over_uniform_straggler_sets():
    n, s, d = 10, 3, 3
    fix = ap.expander(n, s, d, "fixed", seed=4)
    total = np.zeros(n)
    sets = list(combinations(range(n), s))
    for S in sets:
        rows = fix.surviving(S)
        total += (fix.decode(rows) @ fix.B[rows])[0]
    assert np.allclose(total / len(sets), 1.0)


def test_stochastic_gc_is_unbiased_over_independent_stragglers():
    n, d, p = 8, 3, 0.25
    code = ap.stochastic(n, 2, d, seed=3, p=p)
    assert np.array_equal(code.B, ap.random_assignment(n, d, seed=3))  # plain sums
    assert code.decode([0, 1]).tolist() == [[1 / (d * (1 - p))] * 2]
    mean = np.zeros(n)
    for pattern in product([False, True], repeat=n):  # every straggler pattern, with its probability
        stragglers = np.flatnonzero(pattern)
        prob = p ** stragglers.size * (1 - p) ** (n - stragglers.size)
        rows = code.surviving(stragglers)
        if rows.size:  # nothing received: the estimate is the empty sum, 0
            mean += prob * (code.decode(rows) @ code.B[rows])[0]
    assert np.allclose(mean, 1.0)
    assert ap.stochastic(10, 2, 3).decoder.weight == pytest.approx(1 / (3 * 0.8))  # p = s / n by default


def test_the_threshold_rule_admits_exactly_the_sets_the_master_waits_for_and_their_error_is_bounded():
    n, d, s = 10, 4, 3
    opt = ap.expander(n, s, d, seed=6)
    for size in range(1, n + 1):
        for rows in combinations(range(n), size):
            mask = np.zeros(n, dtype=bool)
            mask[list(rows)] = True
            ok = bool(opt.rule.decodable(mask))
            assert ok == (size >= n - s)
            if ok:  # what the rule accepts, the decoder decodes within the bound of its stragglers
                assert ap.decoding_error(opt, rows) <= ap.spectral_bound(opt.B * d, n - size) + 1e-12


#: Mean ||a B_F - 1||_2 of the authors' published benchmark (n = 50, d = 3, 10 random graphs x 100 straggler
#: sets): s -> (spectral upper bound, fixed decoder, optimal decoder).
PUBLISHED = {3: (1.653, 1.008, 0.311), 5: (2.181, 1.324, 0.504), 7: (2.639, 1.601, 0.727)}


@pytest.mark.parametrize("s", sorted(PUBLISHED))
def test_the_expander_code_agrees_with_the_authors_published_benchmark(s):
    res = study.benchmark(50, 3, [s], graphs=10, draws=100, seed=11)
    for column, ref in zip(("bound", "fixed", "optimal"), PUBLISHED[s]):
        per_graph = res.groupby("graph")[column].mean()
        # our mean and theirs each spread like the mean of 10 graphs: tolerance 4 sigma of their difference
        se = float(per_graph.std(ddof=1)) / math.sqrt(len(per_graph))
        tol = 4 * math.sqrt(2) * se + 1e-3
        assert abs(float(per_graph.mean()) - ref) <= tol, (column, float(per_graph.mean()), ref, tol)


def test_registry_and_verify_report_the_decoding_error(capsys):
    code = sch.build("expander", workers=10, stragglers=2, load=4, decoder="fixed", seed=1)
    assert np.array_equal(code.B, ap.expander(10, 2, 4, "fixed", seed=1).B)
    assert sch.build("stochastic", workers=10, stragglers=2).load == 3
    # the only 2-regular graph on 4 vertices is the 4-cycle: every single straggler costs 2/3 (see above)
    assert main(["verify", "--scheme", "expander", "--workers", "4", "--load", "2", "--stragglers", "1",
                 "--decoder", "fixed"]) == 0
    out = capsys.readouterr().out
    assert "approximate" in out and "4 straggler patterns" in out and "mean 0.6667, worst 0.6667" in out
    assert "exactly" not in out


@pytest.mark.parametrize("call,needle", [
    (lambda: ap.expander(10, 2, 3, "nope"), "decoder must be one of"),
    (lambda: ap.expander(10, 2, 10), "degree must be at most"),
    (lambda: ap.expander(9, 2, 3), "must be even"),
    (lambda: ap.expander(4, 1, 2, adjacency=np.eye(4)), "adjacency must be"),
    (lambda: ap.stochastic(10, 2, 3, p=1.0), "p must be"),
    (lambda: ap.stochastic(10, 2, 11), "degree must be"),
])
def test_bad_input_names_the_parameter(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_the_training_summaries_read_a_hand_made_run():
    import pandas as pd

    from gclib.studies.approximate import training

    curves = pd.DataFrame({"scheme": ["a"] * 5 + ["b"] * 3, "seed": 0, "iteration": [0, 1, 2, 3, 4, 0, 1, 2],
                           "time": [0, 1, 2, 3, 4, 0, 2, 5], "rel_gap": [1, 0.1, 1e-3, 2e-3, 1e-3, 1, 0.5, 1e-4]})
    f = training.floors(curves, tail=0.4).set_index("scheme")
    assert f.loc["a", "floor"] == pytest.approx(1.5e-3) and f.loc["a", "iterations"] == 4  # median of the last 2
    assert f.loc["b", "floor"] == pytest.approx(0.5 * (0.5 + 1e-4))
    t = training.time_to(curves, 1e-3).set_index("scheme")["time"]
    assert t["a"] == 2 and t["b"] == 5
    assert training.time_to(curves, 1e-6)["time"].tolist() == [math.inf, math.inf]


def test_the_error_sweep_shares_straggler_sets_and_ignore_errs_by_its_formula():
    df = study.sweep(12, 2, [0.25], graphs=2, draws=5, seed=0)
    assert set(df["scheme"]) == set(study.SCHEMES) and (df["s"] == 3).all()
    uniform = df[df["scheme"] != "stochastic GC"]
    assert (uniform["stragglers"] == 3).all()
    ign = df[df["scheme"] == "ignore stragglers"]["error"]
    assert np.allclose(ign, math.sqrt(12 * 3 / 9))
    crc = df[df["scheme"] == "CRC (exact)"]  # load 2 tolerates 1 straggler, not 3
    assert (crc["error"] > 1e-6).any()
    s = study.summary(df)
    assert len(s) == len(study.SCHEMES)
    row = s.set_index("scheme").loc["ignore stragglers"]
    assert row["sq_error"] == pytest.approx(3 / 9) and row["worst_error"] == pytest.approx(2.0)  # 12 * 3 / 9 / 12


def test_the_claims_table_of_a_small_study():
    from gclib import claims
    from gclib.studies.approximate import claims as approx_claims
    from gclib.studies.approximate import training

    sweep = study.sweep(12, 2, [0.25, 0.5], graphs=2, draws=4, seed=1)
    bench = study.benchmark(50, 3, [3], graphs=2, draws=3, seed=1)
    totals, curves = training.runs(8, 3, 2, seeds=(0, 1), max_iter=40, rel_target=1e-3)
    table = approx_claims.judge(sweep, study.summary(sweep), bench, study.benchmark_table(bench), totals, curves,
                                d=2, rel_target=1e-3, workers=8, stragglers=2, shape=1.5, problem="linreg")
    claims.check(table)
    v = table.set_index("id")["verdict"]
    assert list(v.index) == [f"A{i}" for i in range(1, 7)] + [f"T{i}" for i in range(1, 6)]
    assert v["A5"] == claims.INCONCLUSIVE  # no fraction within CRC's one straggler: nothing to judge
    assert v["A3"] == claims.HOLDS  # a theorem, on every decode
    # an identity, not a claim: with weight n / (n - s) on n - s uncoded messages the error vector has n - s entries
    # s / (n - s) and s entries -1, so ignore-stragglers errs by exactly sqrt(n s / (n - s))
    ign = sweep[sweep["scheme"] == "ignore stragglers"]
    assert len(ign) and np.allclose(ign["error"], np.sqrt(12 * ign["s"] / (12 - ign["s"])), rtol=0, atol=1e-9)
    # A1 reverses the abstract's wording, T1 applies Glasgow and Wootters to another code, T1 and T2 judge the
    # settled level, not speed: readings, not the papers' own statements
    kind = table.set_index("id")["kind"]
    assert kind[["A1", "T1", "T2"]].eq(claims.READING).all() and not kind.eq(claims.PAPER).any()
