"""GC-MMC: Example 1 of the paper, the designs' fast rules against the oracle, clustering and the hybrid."""
from itertools import combinations

import numpy as np
import pytest

from gclib import ShiftedExponential, simulate
from gclib.codes import mmc
from gclib.symbolic import check_rule, is_decodable_exact, exact_matrix, exact_target, verify


@pytest.fixture(scope="module")
def ex1():
    return mmc.worked_example()


def test_worked_example_matrices(ex1):
    assert np.array_equal(ex1.M, mmc.PAPER_EQ2)
    assert sorted(ex1.dropped) == sorted(mmc.PAPER_EQ2_RED)
    assert np.array_equal(ex1.M_ext, mmc.PAPER_EQ3)
    # Removing the red entries leaves the cyclic order-2 mask, whose rows are the supports of c_1..c_6.
    assert np.array_equal(ex1.M_tilde, mmc.assignment_mask(6, 2))


def test_worked_example_correlated_any_five_distinct(ex1):
    code = ex1.correlated
    assert code.n_messages == 12 and code.rule.class_cluster.size == 6
    # Exact rule check on every subset of the 12 messages (duplicates included).
    assert check_rule(code) == []
    B, T = exact_matrix(code), exact_target(code)
    first = {int(c): int(np.flatnonzero(code.rule.msg_class == c)[0]) for c in range(6)}
    for t, want in ((4, False), (5, True)):
        for cls in combinations(range(6), t):
            assert is_decodable_exact(B, [first[c] for c in cls], T) is want


def test_worked_example_correlated_three_workers(ex1):
    code = ex1.correlated
    B, T = exact_matrix(code), exact_target(code)
    dec = {ws: is_decodable_exact(B, code.worker_messages(ws).tolist(), T) for ws in combinations(range(6), 3)}
    # The paper's instance: workers 1, 2, 4 (0-based 0, 1, 3) give c_1..c_5 and decode.
    assert dec[(0, 1, 3)]
    # Some three workers do not (0, 1, 2 give only c_1..c_4); every four workers do; no two workers do.
    assert not dec[(0, 1, 2)]
    assert all(is_decodable_exact(B, code.worker_messages(ws).tolist(), T) for ws in combinations(range(6), 4))
    assert not any(is_decodable_exact(B, code.worker_messages(ws).tolist(), T) for ws in combinations(range(6), 2))
    # Of C(6, 3) = 20 triples, only the 6 runs of three consecutive workers (4 distinct messages) fail.
    assert sum(dec.values()) == 14
    assert {ws for ws, ok in dec.items() if not ok} == {tuple(sorted((i + t) % 6 for t in range(3))) for i in range(6)}


def test_worked_example_uncorrelated_threshold(ex1):
    code = ex1.uncorrelated
    assert code.n_messages == 12 and int(code.rule.thresholds[0]) == 8
    assert verify(code, messages=8).ok
    # The paper's threshold is sufficient but not necessary: B has 6 columns, so many 6- and 7-sets decode.
    bad = check_rule(code)
    assert all(len(b) in (6, 7) for b in bad)
    assert not any(code.rule.decodable(np.isin(np.arange(12), b)) for b in bad)
    assert sum(len(b) == 6 for b in bad) == 864 and sum(len(b) == 7 for b in bad) == 786
    assert check_rule(code, sizes=range(1, 6)) == []
    # The exact span rule agrees with the oracle everywhere.
    exact = mmc.with_exact_rule(code)
    for t in (5, 6, 7):
        for rows in combinations(range(12), t):
            assert bool(exact.rule.decodable(np.isin(np.arange(12), rows))) == code.is_decodable(list(rows))


def test_worked_example_uncorrelated_scenario(ex1):
    code = ex1.uncorrelated
    # Workers 0, 1, 2 send both messages, workers 3 and 4 only the order-2 (virtual) one, worker 5 nothing.
    rows = [0, 1, 2, 3, 4, 5, 7, 9]
    assert code.ready[7] == 2 and code.ready[9] == 2
    assert code.is_decodable(rows) and bool(code.rule.decodable(np.isin(np.arange(12), rows)))


@pytest.mark.parametrize("K,r,orders", [(5, 4, (4, 3)), (5, 3, (3, 1)), (4, 4, (4, 2, 1))])
def test_uncorrelated_rule_exact_when_threshold_at_most_parts(K, r, orders):
    code = mmc.uncorrelated(K, r, orders, points=np.arange(K * len(orders)) - K)
    t = K * len(orders) - sum(orders) + 1
    assert int(code.rule.thresholds[0]) == t
    if t <= K:
        assert check_rule(code) == []
    assert verify(code, messages=t).ok


@pytest.mark.parametrize("K,r,m", [(4, 3, 1), (5, 3, 2), (5, 3, 3), (6, 4, 3)])
def test_correlated_rule_matches_oracle(K, r, m):
    code = mmc.correlated(K, r, m, seed=1, exact=True)
    assert code.n_messages == K * (r - m + 1)
    assert check_rule(code) == []


def test_correlated_structure():
    code = mmc.correlated(6, 3, 2)
    assert code.sender.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert code.ready.tolist() == [2, 3] * 6
    assert code.rule.msg_class.tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0]
    uc = mmc.uc_mmc(4, 2)
    assert np.array_equal(np.unique(uc.B, axis=0), np.eye(4)[::-1]) and int(uc.rule.thresholds[0]) == 4


def test_clustered_rules_match_oracle():
    code = mmc.gc_mmc_correlated(6, 2, 1, 2)
    assert code.rule.n_clusters == 2
    assert check_rule(code, sizes=range(1, 7)) == []
    unc = mmc.gc_mmc_uncorrelated(7, 3, (3, 2), 2, points="chebyshev")
    assert unc.params["cluster_sizes"] == [4, 3]
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = rng.random(unc.n_messages) < 0.6
        assert bool(unc.rule.decodable(mask)) <= unc.is_decodable(np.flatnonzero(mask)) or not mask.any()


def test_clustering_refuses_small_clusters():
    with pytest.raises(ValueError, match="clusters = 5"):
        mmc.gc_mmc_correlated(40, 10, 6, 5)
    with pytest.raises(ValueError, match="orders must lie"):
        mmc.uncorrelated(6, 3, (4,))
    with pytest.raises(ValueError, match="distinct"):
        mmc.uncorrelated(6, 3, (2, 2))
    with pytest.raises(ValueError, match="not divisible"):
        mmc.hybrid(10, 3, (3, 2))


def test_fig1_thresholds():
    c1 = mmc.gc_mmc_correlated(40, 10, 6, 4)
    assert c1.n_messages == 200 and c1.rule.thresholds.tolist() == [5] * 4
    c2 = mmc.gc_mmc_uncorrelated(40, 10, (6, 8, 10), 4)
    assert c2.n_messages == 120 and c2.rule.thresholds.tolist() == [7] * 4


def test_hybrid_rule_matches_oracle():
    code = mmc.hybrid(5, 5, (5, 3), points=np.arange(5) - 2)
    assert code.n_messages == 10 and int(code.rule.thresholds[0]) == 3
    for t in range(1, 11):
        for rows in combinations(range(10), t):
            mask = np.isin(np.arange(10), rows)
            assert bool(code.rule.decodable(mask)) == code.is_decodable(list(rows))
    two = mmc.hybrid(4, 2, (2, 1))
    for t in range(1, 9):
        for rows in combinations(range(two.n_messages), t):
            mask = np.isin(np.arange(two.n_messages), rows)
            assert bool(two.rule.decodable(mask)) == two.is_decodable(list(rows))


def test_simulate_fast_rule_never_beats_exact():
    code = mmc.worked_example().uncorrelated
    m = ShiftedExponential(10, 0.01)
    fast = simulate(code, m, 300, 3)
    exact = simulate(mmc.with_exact_rule(code), m, 300, 3)
    assert np.all(exact.time <= fast.time + 1e-12) and np.any(exact.time < fast.time)


def test_fig1_simulation_sanity():
    m = ShiftedExponential(10, 0.01)
    res = simulate(mmc.gc_mmc_uncorrelated(40, 10, (6, 8, 10), 4), m, 2000, 0)
    assert np.all(res.cluster_messages == 28)
    assert np.all(res.messages >= 28)
    gc = simulate(mmc.gc_cyclic(40, 10), m, 2000, 0)
    assert np.all(gc.messages == 31)


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 7), st.data())
def test_correlated_rule_random_sets(K, data):
    r = data.draw(st.integers(1, K))
    m = data.draw(st.integers(1, r))
    P = data.draw(st.integers(1, max(1, K // r)))
    code = mmc.gc_mmc_correlated(K, r, m, P, seed=data.draw(st.integers(0, 5)))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=code.n_messages, max_size=code.n_messages)))
    if mask.any():
        assert bool(code.rule.decodable(mask)) == code.is_decodable(np.flatnonzero(mask))


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 6), st.data())
def test_uncorrelated_threshold_sufficient_random_sets(K, data):
    r = data.draw(st.integers(1, K))
    orders = data.draw(st.lists(st.integers(1, r), min_size=1, max_size=3, unique=True))
    code = mmc.uncorrelated(K, r, orders, exact=True)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=code.n_messages, max_size=code.n_messages)))
    fast = bool(code.rule.decodable(mask))
    if fast:
        assert code.is_decodable(np.flatnonzero(mask))
    assert int(code.rule.thresholds[0]) == K * len(orders) - sum(orders) + 1
    assert fast == (mask.sum() >= code.rule.thresholds[0])


def test_uncorrelated_exact_attaches_the_integer_matrix_beyond_float_precision():
    # K=12, r=6, orders [1, 6]: entries reach ~6.7e18 > 2**53, where the float B is only a rounded integer matrix.
    # exact=True used to rely on symbolic.exact_matrix reading that float B back as "exact" integers.
    import sympy as sp

    from gclib.symbolic import exact_matrix

    code = mmc.uncorrelated(12, 6, (1, 6), exact=True)
    assert code.B_exact is not None and np.abs(code.B).max() > 2.0 ** 53
    alpha = [sp.Integer(a) for a in np.arange(24) - 12]
    row, col = np.unravel_index(np.argmax(np.abs(code.B)), code.B.shape)
    zeros = [t for t in range(24) if code.B_exact[t, col] == 0]
    assert code.B_exact[row, col] == sp.prod([alpha[row] - alpha[t] for t in zeros])
    assert exact_matrix(code) == code.B_exact
    from dataclasses import replace

    with pytest.raises(ValueError, match="no exact form"):
        exact_matrix(replace(code, B_exact=None))
    small = mmc.uncorrelated(6, 3, (3, 2), exact=True)
    assert exact_matrix(replace(small, B_exact=None)) == small.B_exact


def test_worked_example_facts(ex1):
    f = mmc.worked_example_facts(ex1)
    assert f.eq2 and f.red and f.eq3 and f.rule_agrees and f.workers_124 and f.scenario and not f.scenario_gc
    assert f.count("correlated", "distinct messages", 5) == (6, 6)
    assert f.count("correlated", "distinct messages", 4) == (0, 15)
    assert f.count("correlated", "workers", 3) == (14, 20) and f.count("gc", "workers", 3) == (0, 20)
    assert f.count("gc", "workers", 4) == (15, 15)
    assert f.count("uncorrelated", "messages", 6) == (864, 924) and f.count("uncorrelated", "messages", 8) == (495, 495)
    # The failing triples are the six runs of three consecutive workers (cyclically), 1-based.
    assert sorted(f.failing_triples) == sorted(tuple(sorted((i + t) % 6 + 1 for t in range(3))) for i in range(6))
    wide = f.table()
    assert wide.loc[("uncorrelated", "messages"), 7] == "786 of 792" and wide.loc[("gc", "workers"), 7] == ""
    with pytest.raises(ValueError, match="no count"):
        f.count("gc", "messages", 3)
