"""The data model and Tandon's codes: construction, decoding, fast rules against the span oracle, bad input."""
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gclib import codes
from gclib.codes import DecodingError, GradientCode, threshold
from gclib.codes.mmc import gc_mmc_uncorrelated, uc_mmc


def _check_all_patterns(code, s=None):
    """Every straggler pattern decodes, and the decoded gradient of random partial gradients is the true sum."""
    s = code.stragglers if s is None else s
    rng = np.random.default_rng(0)
    g = rng.standard_normal((code.n_parts, 7))
    msgs = code.encode(g)
    for pat in combinations(range(code.n_workers), s):
        idx = code.surviving(pat)
        A = code.decode(idx)
        np.testing.assert_allclose(A @ code.B[idx], code.target, atol=1e-8)
        np.testing.assert_allclose(code.combine(A, msgs[idx], 7), g.sum(axis=0), atol=1e-8)


def test_tandon_n3_example():
    B, A = codes.example_n3()
    np.testing.assert_array_equal(A @ B, np.ones((3, 3)))
    code = codes.example_n3_code()
    for w in range(3):  # straggler w: row w of A, which is zero at w
        alive = [i for i in range(3) if i != w]
        a = code.decode(code.worker_messages(alive))
        np.testing.assert_allclose(a[0], A[w, alive])


@pytest.mark.parametrize("n,s", [(4, 1), (6, 2), (6, 1), (8, 3), (9, 2)])
def test_frc_structure_and_decoding(n, s):
    code = codes.frc(n, s)
    assert code.load == s + 1
    assert np.all((code.B != 0).sum(axis=0) == s + 1)  # every part held by s+1 workers
    _check_all_patterns(code)
    # one worker per group is enough
    groups = n // (s + 1)
    assert code.is_decodable([q * (s + 1) for q in range(groups)])
    assert not code.is_decodable([q * (s + 1) for q in range(groups - 1)])


@pytest.mark.parametrize("n,s", [(3, 1), (5, 2), (7, 3), (8, 2), (10, 4), (6, 0)])
def test_crc_structure_and_decoding(n, s):
    code = codes.crc(n, s, seed=3)
    for i, o in enumerate(code.order):
        assert o == tuple((i + t) % n for t in range(s + 1))
        assert set(np.flatnonzero(code.B[i])) <= set(o)
    assert np.all((code.B != 0).sum(axis=0) == s + 1)
    _check_all_patterns(code)


def test_crc_is_seeded():
    np.testing.assert_array_equal(codes.crc(8, 3, seed=5).B, codes.crc(8, 3, seed=5).B)
    assert not np.array_equal(codes.crc(8, 3, seed=5).B, codes.crc(8, 3, seed=6).B)


def test_crc_exact_matches_float():
    code = codes.crc(6, 2, seed=2, exact=True)
    assert code.B_exact is not None
    np.testing.assert_allclose(np.array(code.B_exact.tolist(), dtype=float), code.B)
    _check_all_patterns(code)


def test_partial_stragglers():
    code = codes.partial_stragglers(5, 1, pieces=4, seed=1)
    assert code.n_parts == 5 * 3 and code.n_messages == 10
    assert all(len(o) == 4 for o in code.order)
    # every first message plus any n - s coded messages decode; losing a first message does not
    assert code.is_decodable(list(range(5)) + [5, 6, 7, 8])
    assert not code.is_decodable(list(range(1, 5)) + [5, 6, 7, 8, 9])
    _check_all_patterns(code)


def test_ignore_stragglers_rescales():
    code = codes.ignore_stragglers(5, 2)
    assert not code.exact
    A = code.decode([0, 3, 4])
    np.testing.assert_allclose(A, np.full((1, 3), 5 / 3))
    with pytest.raises(DecodingError):
        code.decode([0, 1])


def test_uncoded_needs_everyone():
    code = codes.uncoded(4)
    assert code.is_decodable([0, 1, 2, 3]) and not code.is_decodable([0, 1, 2])
    with pytest.raises(DecodingError):
        code.decode([0, 1, 2])


def test_clustered_decodes_per_cluster():
    parts = [codes.crc(4, 1, seed=1), codes.crc(5, 2, seed=2)]
    code = codes.clustered(parts)
    assert code.n_workers == 9 and code.n_parts == 9 and code.rule.n_clusters == 2
    # cluster 0 needs 3 of workers 0-3, cluster 1 needs 3 of workers 4-8
    assert code.is_decodable([0, 1, 2, 4, 5, 6])
    assert not code.is_decodable([0, 1, 4, 5, 6, 7, 8])
    A = code.decode([0, 1, 2, 4, 5, 6])
    np.testing.assert_allclose(A @ code.B[[0, 1, 2, 4, 5, 6]], code.target, atol=1e-9)


def test_rs_any_threshold_set_decodes():
    for points in ("chebyshev", "equispaced", "roots-of-unity"):
        code = codes.rs(7, 2, points=points)
        _check_all_patterns(code)


@pytest.mark.parametrize("make", [
    lambda: codes.crc(6, 6), lambda: codes.crc(6, -1), lambda: codes.frc(7, 2), lambda: codes.uncoded(0),
    lambda: codes.crc(2.5, 1), lambda: codes.partial_stragglers(5, 1, pieces=2), lambda: codes.rs(4, 4),
])
def test_bad_parameters_raise_value_error(make):
    with pytest.raises(ValueError) as e:
        make()
    assert any(w in str(e.value) for w in ("workers", "stragglers", "pieces"))


@pytest.mark.parametrize("make,match", [
    (lambda: codes.crc_matrix(3, 5), r"stragglers must be at most 2 for 3 workers, got 5"),
    (lambda: codes.crc_matrix(4, -1), r"stragglers must be a non-negative integer, got -1"),
    (lambda: codes.crc(5, True), r"stragglers must be a non-negative integer, got True"),
    (lambda: codes.uncoded(True), r"workers must be a positive integer, got True"),
])
def test_crc_matrix_and_bools_are_validated(make, match):
    # crc_matrix used to fail with LinAlgError / numpy errors; bools passed as sizes with a TypeError.
    with pytest.raises(ValueError, match=match):
        make()


def test_frc_error_names_divisibility():
    with pytest.raises(ValueError, match="divisible"):
        codes.frc(10, 3)


def test_received_set_from_outside_the_code():
    code = codes.crc(5, 1)
    with pytest.raises(ValueError, match=r"received message ids must lie in \[0, 5\)"):
        code.decode([0, 1, 2, 7])
    with pytest.raises(ValueError, match="distinct"):
        code.decode([0, 0, 1, 2])
    with pytest.raises(ValueError, match="workers must lie"):
        code.surviving([9])


def test_non_integer_ids_raise_instead_of_truncating():
    # 1.5 used to be truncated to 1 silently (a different received set than the caller meant).
    code = codes.crc(5, 1)
    with pytest.raises(ValueError, match=r"received must be integer .* got \[0.5, 1.7, 2.0, 3.0\]"):
        code.decode([0.5, 1.7, 2, 3])
    with pytest.raises(ValueError, match=r"workers must be integer worker ids, got \[1.5\]"):
        code.surviving([1.5])
    # integral floats are still accepted as ids
    assert code.surviving([1.0]).tolist() == [0, 2, 3, 4]
    assert code.decode([0.0, 1.0, 2.0, 3.0]).shape == (1, 4)


def test_data_model_rejects_messages_using_uncomputed_parts():
    with pytest.raises(ValueError, match="not computed"):
        GradientCode(name="bad", n_workers=2, n_parts=2, order=[(0, 1), (1, 0)], B=np.ones((2, 2)),
                     sender=[0, 1], ready=[1, 2], rule=threshold(2, 2), stragglers=0)


def test_split_pieces_and_combine_round_trip():
    g = np.arange(2 * 5, dtype=float).reshape(2, 5)
    P = codes.split_pieces(g, 2)
    assert P.shape == (4, 3)
    np.testing.assert_array_equal(P[1], [3, 4, 0])  # part 0, piece 1, zero padded


# ------------------------------------------------------------------------------------------- property tests
CODES = st.one_of(
    st.tuples(st.integers(3, 9), st.integers(0, 8), st.integers(0, 10)).filter(lambda t: t[1] < t[0]).map(
        lambda t: codes.crc(t[0], t[1], seed=t[2])),
    st.sampled_from([(4, 1), (6, 2), (6, 1), (8, 3), (9, 2)]).map(lambda t: codes.frc(*t)),
    st.integers(2, 6).map(codes.uncoded),
    st.tuples(st.integers(3, 6), st.integers(0, 2)).filter(lambda t: t[1] < t[0] - 1).map(
        lambda t: codes.partial_stragglers(t[0], t[1], pieces=t[1] + 3, seed=1)),
    st.tuples(st.integers(3, 8), st.integers(0, 5)).filter(lambda t: t[1] < t[0]).map(
        lambda t: codes.rs(t[0], t[1])),
    st.just(None).map(lambda _: codes.clustered([codes.crc(4, 1, seed=0), codes.frc(4, 1)])),
)


@settings(max_examples=60, deadline=None)
@given(code=CODES, data=st.data())
def test_fast_rule_agrees_with_span_oracle(code, data):
    """The simulator's fast rule says 'decodable' exactly when the target is in the row span."""
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=code.n_messages, max_size=code.n_messages)))
    assert bool(code.rule.decodable(mask)) == code.is_decodable(mask)


@settings(max_examples=40, deadline=None)
@given(code=CODES, seed=st.integers(0, 1000))
def test_decoded_gradient_is_the_sum(code, seed):
    """Whenever the rule says decodable, the decoder returns the exact sum of the partial gradients."""
    rng = np.random.default_rng(seed)
    mask = rng.random(code.n_messages) < 0.8
    if not code.rule.decodable(mask):
        return
    g = rng.standard_normal((code.n_parts, 5))
    idx = np.flatnonzero(mask)
    A = code.decode(idx)
    np.testing.assert_allclose(code.combine(A, code.encode(g)[idx], 5), g.sum(axis=0), atol=1e-7)


def test_rules_reject_masks_and_arrivals_of_the_wrong_length():
    # A mask one entry too long used to be truncated silently (decodable) and a too-long arrival array too.
    from gclib.codes.mmc import hybrid, with_exact_rule

    for code in [codes.crc(5, 1), hybrid(4, 2, [1, 2]), with_exact_rule(codes.crc(4, 1)),
                 codes.kadhe(5, 1, 3, [[1, 0, 1, 0, 1], [0, 1, 1, 0, 0], [0, 0, 0, 1, 1]])]:  # BasesRule
        N = code.n_messages
        with pytest.raises(ValueError, match=rf"received needs one entry per message .*\({N}\)"):
            code.rule.decodable(np.ones(N + 1, bool))
        with pytest.raises(ValueError, match=rf"arrival needs one entry per message .*\({N}\)"):
            code.rule.completion(np.ones((2, N + 2)))
        assert code.rule.decodable(np.ones(N, bool))
        assert np.all(code.rule.completion(np.ones((2, N))) == 1.0)


def test_generator_seed_is_not_stored_in_params():
    # crc recorded seed=None for a Generator, partial_stragglers stored the Generator object itself.
    for make in (lambda g: codes.crc(4, 1, g), lambda g: codes.partial_stragglers(4, 1, 3, g)):
        assert make(np.random.default_rng(0)).summary()["seed"] is None
        assert make(7).summary()["seed"] == 7


def test_data_model_checks_message_sizes():
    # A scalar or short size used to be accepted and broke (or broadcast in) the simulator's volume accounting.
    from dataclasses import replace

    code = codes.crc(4, 1)
    for bad in (1.0, [1.0, 1.0], [1.0, 1.0, 1.0, -1.0], [1.0, 1.0, 1.0, np.nan]):
        with pytest.raises(ValueError, match=r"size must hold one non-negative message size per message \(4\)"):
            replace(code, size=bad)
    assert replace(code, size=[1, 2, 1, 2]).size.tolist() == [1.0, 2.0, 1.0, 2.0]


def test_scheme_build_none_means_default():
    # clusters=None used to raise "needs --clusters" although clusters defaults to 1.
    from gclib import schemes

    code = schemes.build("gc", workers=8, load=2, clusters=None, seed=None, exact=None)
    assert code.n_workers == 8 and code.load == 2 and code.rule.n_clusters == 1
    with pytest.raises(ValueError, match="needs --workers"):
        schemes.build("gc", workers=None, load=2)


def test_frc_decoder_does_not_depend_on_the_rule():
    # The FRC decoder read the groups from code.rule.msg_class, so with_exact_rule(frc(...)) failed to decode
    # with an AttributeError.
    from gclib.codes.mmc import with_exact_rule

    for code in (codes.frc(6, 2), with_exact_rule(codes.frc(6, 2))):
        A = code.decode([0, 4])
        np.testing.assert_allclose(A @ code.B[[0, 4]], code.target)
        with pytest.raises(DecodingError, match=r"no message from groups \[1\]"):
            code.decode([0, 1])


def test_summary_keeps_pieces_per_gradient_apart_from_tandons_P():
    s = codes.partial_stragglers(5, 1, pieces=4).summary()
    assert s["pieces"] == 1 and s["P"] == 4



@pytest.mark.parametrize("make", [lambda: codes.frc(6, 1), lambda: codes.crc(6, 2),
                                  lambda: codes.ignore_stragglers(5, 2), lambda: codes.partial_stragglers(6, 2, 5),
                                  lambda: uc_mmc(6, 3), lambda: gc_mmc_uncorrelated(6, 3, [1, 2, 3], P=2)],
                         ids=["frc", "crc", "ignore", "partial", "uc-mmc", "gc-mmc-uncorrelated"])
def test_threshold_tracker_agrees_with_the_rule_at_every_arrival(make):
    """The runtime master's incremental check: after every arrival of a random order, whether the set decodes
    and which single messages would complete it are what the rule says of the whole set."""
    code = make()
    rule, n = code.rule, code.n_messages
    assert isinstance(rule, codes.ThresholdRule)
    rng = np.random.default_rng(5)
    for _ in range(20):
        tracker, received = rule.tracker(), np.zeros(n, dtype=bool)
        for m in rng.permutation(n):
            alone = np.repeat(received[None, :], n, axis=0)
            alone[np.arange(n), np.arange(n)] = True
            expected = [int(x) for x in np.flatnonzero(~received & rule.decodable(alone))]
            assert tracker.completing() == expected
            received[m] = True
            assert tracker.add(int(m)) == bool(rule.decodable(received)) == tracker.decodable
