"""Communication-efficient codes (Ye-Abbe reconstruction, Kadhe et al. framework): exact verification, fast rules
and decoders against the oracle, the parameter map, generator checks, the CLI and the simulator."""
import json
from itertools import combinations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from gclib import schemes
from gclib.cli import main as cli_main
from gclib.codes import frc, kadhe, min_distance, repetition_generator, ye_abbe
from gclib.codes.comm_efficient import BasesRule, top_coefficient_weights
from gclib.simulator import Communication, simulate
from gclib.stragglers import ShiftedExponential
from gclib.symbolic import check_rule, verify

from code_helpers import roundtrip


# ------------------------------------------------------------------------------------------ Ye and Abbe
@pytest.mark.parametrize("n,s,m", [(5, 1, 2), (6, 2, 2), (6, 1, 3), (5, 1, 4), (4, 0, 2)])
def test_ye_abbe_exact(n, s, m):
    code = ye_abbe(n, s, m, exact=True)
    assert code.n_pieces == m and code.load == s + m
    assert np.allclose(code.size, 1 / m)
    assert verify(code).ok
    assert check_rule(code) == []


def test_ye_abbe_supports_are_cyclic_and_load_is_s_plus_m():
    code = ye_abbe(7, 2, 2)
    for w in range(7):
        cols = np.flatnonzero(np.abs(code.B[w]) > 0) // 2
        assert set(cols.tolist()) <= set(code.order[w])
        assert len(code.order[w]) == 4


@pytest.mark.parametrize("points", ["chebyshev", "equispaced", "roots-of-unity"])
def test_ye_abbe_fast_decoder_every_pattern(points):
    code = ye_abbe(8, 2, 3, points)
    rng = np.random.default_rng(0)
    for stg in combinations(range(8), 2):
        est, true = roundtrip(code, stg, rng, length=11)
        assert np.allclose(est, true, atol=1e-8)
    if points == "roots-of-unity":
        assert np.allclose(code.size, 2 / 3)


def test_top_coefficient_weights():
    x = np.array([-1.5, -0.2, 0.3, 1.1, 1.9])
    coef = np.array([2.0, -1.0, 0.5, 3.0, -4.0])  # degree 4, highest first
    y = np.polyval(coef, x)
    assert np.allclose(top_coefficient_weights(x, 3) @ y, coef[:3])


def test_ye_abbe_bad_parameters():
    with pytest.raises(ValueError, match="comm"):
        ye_abbe(5, 2, 4)
    with pytest.raises(ValueError, match="comm"):
        ye_abbe(5, 1, 0)


# ------------------------------------------------------------------------------------------ Kadhe et al.
@pytest.mark.parametrize("n,s,m", [(6, 1, 2), (8, 2, 2), (4, 1, 3)])
def test_kadhe_gaussian_exact(n, s, m):
    code = kadhe(n, s, m, "gaussian", seed=3, exact=True)
    assert code.load == s + m and code.params["min_distance"] == s + 1
    assert all(isinstance(v, sp.Rational) for v in code.B_exact)
    assert verify(code).ok
    assert check_rule(code) == []


def test_kadhe_repetition_m1_is_fractional_repetition():
    code = kadhe(6, 2, 1, "repetition")
    ref = frc(6, 2)
    assert np.array_equal(code.B, ref.B)
    assert code.order == ref.order
    # same decodability as FRC on every received set
    for r in range(1, 7):
        for rows in combinations(range(6), r):
            mask = np.zeros(6, bool)
            mask[list(rows)] = True
            assert bool(code.rule.decodable(mask)) == bool(ref.rule.decodable(mask))


def test_kadhe_repetition_m2():
    code = kadhe(6, 2, 2, "repetition", exact=True)  # [6, 2, 3] code: load 6, tolerates 2
    assert code.load == 6 and code.params["min_distance"] == 3
    assert verify(code).ok
    assert check_rule(code) == []


def test_min_distance():
    assert min_distance(np.array([[1, 0, 1, 1], [0, 1, 1, 2]])) == 3  # MDS [4, 2, 3]
    assert min_distance(np.array([[1, 1, 1, 0], [0, 0, 0, 1]])) == 1
    assert min_distance(repetition_generator(2, 3)) == 3
    assert min_distance(np.array([[1, 1, 1, 1, 1]])) == 5
    with pytest.raises(ValueError, match="full row rank"):
        min_distance(np.array([[1, 2], [2, 4]]))


def test_kadhe_user_generator_non_mds_uses_bases_rule():
    G = np.array([[1, 1, 0, 0], [0, 0, 1, 1]])  # [4, 2, 2]: pieces repeated, not MDS
    code = kadhe(8, 1, None, G, exact=True)
    assert code.n_pieces == 2 and code.params["min_distance"] == 2
    assert verify(code).ok
    G2 = np.array([[1, 0, 1, 0, 1], [0, 1, 1, 0, 0], [0, 0, 0, 1, 1]])  # not uniform: needs a BasesRule
    code2 = kadhe(5, 1, 3, G2, exact=True)
    assert isinstance(code2.rule, BasesRule)
    assert check_rule(code2) == []
    assert verify(code2).ok


def test_kadhe_user_generator_too_weak():
    G = np.array([[1, 0, 1], [0, 1, 1]])  # [3, 2, 2]
    with pytest.raises(ValueError, match=r"stragglers = 2 is too many .* minimum distance 2 tolerates at most 1"):
        kadhe(6, 2, None, G)
    with pytest.raises(ValueError, match="dimension K = 2"):
        kadhe(6, 1, 3, G)
    with pytest.raises(ValueError, match="multiple of the block length d = 3"):
        kadhe(7, 1, None, G)


def test_kadhe_generator_file(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("# a [3, 2, 2] code\n1 0 1/2\n0 1 1\n")
    code = kadhe(6, 1, None, str(f))
    assert code.params["generator"] == "custom" and code.B_exact is not None
    assert verify(code).ok
    with pytest.raises(ValueError, match="generator"):
        kadhe(6, 1, None, str(tmp_path / "missing.txt"))


def test_kadhe_malformed_generator_files(tmp_path):
    # These used to escape as ZeroDivisionError, FileNotFoundError, a pickle message or LinAlgError.
    (tmp_path / "div0.txt").write_text("1 0 1\n1/0 1 1\n")
    np.save(tmp_path / "nan.npy", np.array([[1.0, np.nan, 1.0], [0.0, 1.0, 1.0]]))
    np.save(tmp_path / "obj.npy", np.array([[1, None, 1]], dtype=object), allow_pickle=True)
    cases = {"div0.txt": "not numbers", "nan.npy": "not finite", "obj.npy": "holds Python objects; expected a gen",
             "missing.npy": "readable matrix file"}
    for name, match in cases.items():
        with pytest.raises(ValueError, match=match):
            kadhe(6, 1, None, str(tmp_path / name))
    with pytest.raises(ValueError, match="finite"):
        kadhe(3, 0, None, np.array([[1.0, np.inf, 1.0]]))


@settings(max_examples=15, deadline=None)
@given(groups=st.integers(1, 3), s=st.integers(0, 3), m=st.integers(1, 3), seed=st.integers(0, 10 ** 6))
def test_kadhe_fast_decoder_random(groups, s, m, seed):
    d = s + m
    code = kadhe(groups * d, s, m, "gaussian", seed)
    rng = np.random.default_rng(seed)
    stg = rng.choice(code.n_workers, size=s, replace=False)
    est, true = roundtrip(code, stg, rng, length=11)
    assert np.allclose(est, true, atol=1e-7)
    # and the best case: m workers of every group suffice
    keep = [q * d + t for q in range(groups) for t in range(m)]
    mask = np.zeros(code.n_messages, bool)
    mask[keep] = True
    assert code.rule.decodable(mask) and code.is_decodable(np.flatnonzero(mask))


def test_kadhe_decoder_reports_missing_group():
    from gclib.codes import DecodingError

    code = kadhe(6, 1, 2)
    with pytest.raises(DecodingError):
        code.decode([0, 1, 2])


# ------------------------------------------------------------------------------------------ simulator, CLI
def test_volume_counts_message_sizes():
    model = ShiftedExponential(mu=10, alpha=0.01)
    for code, per in [(ye_abbe(12, 2, 3), 1 / 3), (kadhe(12, 2, 2), 1 / 2)]:
        res = simulate(code, model, trials=300, seed=1, comm=Communication(latency=0.01, bandwidth=5.0))
        assert np.allclose(res.volume, res.messages * per)
    from gclib.codes import rs

    res = simulate(rs(10, 2, "roots-of-unity"), model, trials=200, seed=1)
    assert np.allclose(res.volume, 2 * res.messages)


def test_schemes_registered():
    for name in ("rs", "ye-abbe", "kadhe"):
        assert name in schemes.SCHEMES
    code = schemes.build("ye-abbe", workers=8, stragglers=2, comm=2)
    assert code.n_pieces == 2
    assert schemes.build("kadhe", workers=8, stragglers=1).n_pieces == 1  # comm: the constructor's default, 1
    assert schemes.build("ye-abbe", workers=8, stragglers=1).n_pieces == 1
    with pytest.raises(ValueError, match="comm"):
        schemes.build("kadhe", workers=8, stragglers=1, comm=0)


def test_cli_verify_and_simulate(capsys):
    assert cli_main(["verify", "--scheme", "kadhe", "--workers", "6", "--stragglers", "1", "--comm", "2"]) == 0
    assert "every one decodes" in capsys.readouterr().out
    assert cli_main(["verify", "--scheme", "ye-abbe", "--workers", "6", "--stragglers", "2", "--comm", "2"]) == 0
    assert cli_main(["verify", "--scheme", "rs", "--workers", "6", "--stragglers", "2",
                     "--points", "equispaced"]) == 0
    capsys.readouterr()
    assert cli_main(["simulate", "--scheme", "ye-abbe", "--workers", "8", "--stragglers", "2", "--comm", "2",
                     "--trials", "200", "--json", "--network", "latency=0.01,bandwidth=10,queue=no"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["code"]["pieces"] == 2 and np.isclose(out["mean_volume"], out["mean_messages"] / 2)


def test_cli_errors(capsys, tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("1 0 1\n0 1 1\n")
    assert cli_main(["verify", "--scheme", "kadhe", "--workers", "6", "--stragglers", "2",
                     "--generator", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gclib: error: stragglers = 2 is too many") and err.count("\n") == 1
    assert cli_main(["verify", "--scheme", "rs", "--workers", "6", "--stragglers", "2",
                     "--points", "roots-of-unity"]) == 2
    assert "roots-of-unity" in capsys.readouterr().err


def test_warning_fires_for_ye_abbe_not_for_kadhe():
    import warnings

    from gclib.codes import DecodingError, IllConditionedWarning

    bad = ye_abbe(24, 6, 2, "chebyshev", assign="natural")
    with pytest.warns(IllConditionedWarning, match="condition number"):
        bad.decode(bad.surviving(range(6)))
    hopeless = ye_abbe(40, 18, 2, "chebyshev", assign="natural")
    with pytest.raises(DecodingError, match="not in floating point"):
        hopeless.decode(hopeless.surviving(range(18)))
    good = kadhe(40, 18, 2, "gaussian", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllConditionedWarning)
        A = good.decode(good.surviving(range(18)))
    assert A.shape == (2, 22)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(3, 12), s=st.integers(0, 5), m=st.integers(1, 4), seed=st.integers(0, 10 ** 6),
       points=st.sampled_from(["equispaced", "chebyshev", "roots-of-unity"]))
def test_ye_abbe_random_against_oracle(n, s, m, seed, points):
    if s + m > n:
        with pytest.raises(ValueError, match="comm" if s < n else "stragglers"):
            ye_abbe(n, s, m, points)
        return
    code = ye_abbe(n, s, m, points)
    rng = np.random.default_rng(seed)
    est, true = roundtrip(code, rng.choice(n, size=s, replace=False), rng, length=11)
    assert np.allclose(est, true, atol=1e-8)
    for _ in range(5):  # the threshold rule agrees with the span test on random received sets
        mask = rng.random(n) < rng.random()
        if mask.any():
            assert bool(code.rule.decodable(mask)) == code.is_decodable(np.flatnonzero(mask))


# ------------------------------------------------------------------------------- the notebook's studies
def test_paired_change_by_hand():
    from gclib.stats import paired_change

    # means 3 and 1.5: ratio 2; a - 2 b = 0 in every trial, so the interval has width 0
    assert paired_change(np.array([2.0, 4.0]), np.array([1.0, 2.0])) == (1.0, 1.0, 1.0, 2)
    # means 2 and 1: ratio 2; a - 2 b = (-1, 1), sd sqrt(2): half-width 1.96 sqrt(2) / (sqrt(2) * 1)
    c, lo, hi, n = paired_change(np.array([1.0, 3.0]), np.array([1.0, 1.0]))
    assert (c, n) == (1.0, 2) and lo == pytest.approx(1 - 1.959963984540054) and hi == pytest.approx(2.959963984540054)
    # a trial that never completes is left out of both
    assert paired_change(np.array([2.0, np.inf, 4.0]), np.array([1.0, 1.0, 2.0]))[3] == 2
    c, lo, hi, n = paired_change(np.array([2.0]), np.array([1.0]))
    assert c == 1.0 and np.isnan(lo) and np.isnan(hi)
    with pytest.raises(ValueError, match="same length"):
        paired_change(np.ones(3), np.ones(2))


def test_comm_efficient_sweep_skips_and_pairs():
    from gclib.sweeps import comm_efficient_sweep

    sw = comm_efficient_sweep(6, 1, [1, 2, 4], ShiftedExponential(), comm=Communication(0.01, 1.0), trials=500,
                              seed=0)
    t = sw.table
    # Kadhe needs (s + m) | n: m = 4 (d = 5) is skipped for n = 6; Ye-Abbe takes every m with s + m <= n
    assert list(zip(t["scheme"], t["m"])) == [("ye-abbe", 1), ("ye-abbe", 2), ("ye-abbe", 4), ("kadhe", 1),
                                              ("kadhe", 2), ("crc", 1), ("uncoded", 1)]
    assert list(zip(sw.skipped["scheme"], sw.skipped["m"])) == [("kadhe", 4)]
    assert "multiple of the block length" in sw.skipped["reason"].iloc[0]
    assert list(t["load"]) == [2, 3, 5, 2, 3, 2, 1]
    assert len(sw.changes) == 7 * 6
    ch = sw.changes.set_index(["scheme_a", "m_a", "scheme_b", "m_b"])
    # Ye-Abbe with m = 1 and CRC both wait for any n - s workers with load s + 1: the same time in every trial
    assert tuple(ch.loc[("ye-abbe", 1, "crc", 1), ["change", "lo", "hi"]]) == (0.0, 0.0, 0.0)
    # the change is the ratio of the table's means
    m = t.set_index(["scheme", "m"])["mean_time"]
    assert ch.loc[("kadhe", 2, "uncoded", 1), "change"] == pytest.approx(m[("kadhe", 2)] / m[("uncoded", 1)] - 1)
    assert (t.loc[t["scheme"] == "ye-abbe", "mean_messages"] == 5).all()


def test_tradeoff_reads_the_loads_off_the_codes():
    from gclib.codes.comm_efficient import tradeoff

    df = tradeoff([1], [1, 2])
    got = {(c, m): (d, s) for c, m, d, s in zip(df["construction"], df["m"], df["load d"], df["tolerated"])}
    assert got == {("ye-abbe", 1): (2, 1), ("ye-abbe", 2): (3, 1), ("kadhe gaussian", 1): (2, 1),
                   ("kadhe gaussian", 2): (3, 1), ("kadhe repetition", 1): (2, 1), ("kadhe repetition", 2): (4, 1)}
    assert set(df.loc[df["m"] == 2, "message size"]) == {0.5}
    assert set(df["family"]) == {"MDS", "repetition"}


def test_generator_report_of_hamming_and_repetition():
    from gclib.codes.comm_efficient import HAMMING_7_4, generator_report

    h = generator_report(HAMMING_7_4, workers=28)
    assert {k: h[k] for k in ("N", "K", "D", "stragglers", "mds_load", "refused")} == \
        {"N": 7, "K": 4, "D": 3, "stragglers": 2, "mds_load": 6, "refused": True}
    assert "tolerates at most 2" in h["refusal"]
    r = generator_report(np.array([[1, 1, 1]]))  # [3, 1, 3] repetition: D = 3 stragglers would leave nobody
    assert (r["D"], r["stragglers"], r["refused"]) == (3, 2, True)


def test_exact_checks_and_derivation():
    from gclib.symbolic import comm_efficient_derivation, exact_checks

    ya, kd = ye_abbe(4, 1, 2, exact=True), kadhe(3, 1, 2, exact=True)
    df = exact_checks({"ye-abbe": ya, "kadhe": kd})
    assert list(df["patterns"]) == [4, 3] and df["verified"].all() and (df["rule_disagreements"] == 0).all()
    assert list(df["load"]) == [3, 3] and list(df["message size"]) == [0.5, 0.5]
    md = comm_efficient_derivation(ya, kd)
    assert "n = 4, s = 1, m = 2" in md and "$$B = " in md and "G = " in md
    with pytest.raises(ValueError, match="exact=True"):
        comm_efficient_derivation(ye_abbe(4, 1, 2), kd)
