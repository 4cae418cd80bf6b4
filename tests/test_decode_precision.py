"""The decoder's ill-conditioning warning follows the working precision (float32, float64, complex64, complex128)."""
import warnings

import numpy as np
import pytest

from gclib import codes
from gclib.codes import IllConditionedWarning, decoding_amplification
from gclib.codes.base import COND_WARN, amplification_threshold, unit_roundoff
from gclib.codes.conditioning import decoding_error


def decode_warns(code, idx, **kw) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code.decode(idx, check=False, **kw)
    return [str(w.message) for w in caught if issubclass(w.category, IllConditionedWarning)]


def test_the_threshold_scales_as_one_over_the_square_root_of_the_unit_roundoff():
    assert unit_roundoff(np.float64) == unit_roundoff(np.complex128) == 2.0 ** -53
    assert unit_roundoff(np.float32) == unit_roundoff(np.complex64) == 2.0 ** -24
    threshold = amplification_threshold
    assert threshold(np.float64) == threshold(np.complex128) == COND_WARN == 1e8
    assert threshold(np.float32) == threshold(np.complex64) == pytest.approx(1e8 * 2.0 ** -14.5)  # about 4316
    # u * threshold: the relative error a silent decode may reach, about sqrt(u) in either precision
    for dt in (np.float32, np.float64):
        assert 0.5 < unit_roundoff(dt) * threshold(dt) / np.sqrt(unit_roundoff(dt)) < 2


@pytest.mark.parametrize("dtype", [np.int64, "U3", object])
def test_a_dtype_that_is_not_floating_is_refused(dtype):
    code = codes.crc(5, 1)
    with pytest.raises(TypeError, match="dtype must be a floating or complex NumPy dtype"):
        code.decode(np.arange(4), dtype=dtype)


def test_a_float32_decode_with_a_large_error_warns_and_its_float64_decode_does_not():
    # RS, 24 workers, Chebyshev points in natural order, the first 6 straggling: error amplification 5e7
    code = codes.rs(24, 6, "chebyshev", assign="natural")
    idx = code.surviving(tuple(range(6)))
    A = code.decode(idx, check=False, warn=False)
    g = np.random.default_rng(1).standard_normal((code.n_parts, 32))
    assert decoding_error(code, A, idx, g, np.float32) > 1e-2  # useless in float32
    assert decoding_error(code, A, idx, g, np.float64) < 1e-6  # fine in float64
    assert decode_warns(code, idx) == []  # float64 is the default precision
    msgs = decode_warns(code, idx, dtype=np.float32)
    assert len(msgs) == 1 and "for float32" in msgs[0] and "unit roundoff 6.0e-08" in msgs[0]
    messages = code.encode(g.astype(np.float32))
    assert messages.dtype == np.float64  # B is float64: encode promotes; the caller states its precision
    assert len(decode_warns(code, idx, dtype=messages.astype(np.float32))) == 1  # or passes its messages


def test_every_float32_decode_whose_error_passes_1e_2_warns():
    # RS codes of 8 to 28 workers, the three point families in both assignments, random patterns: each decode is
    # run in its working precision (complex64 for the complex points) and its error measured
    rng = np.random.default_rng(0)
    large = silent_before = 0
    worst = 0.0
    for n in range(8, 29, 4):
        for s in (n // 4, n // 2):
            for points in ("equispaced", "chebyshev", "roots-of-unity"):
                for assign in ("spread", "natural"):
                    code = codes.rs(n, s, points, assign=assign)
                    work = np.complex64 if np.iscomplexobj(code.B) else np.float32
                    g = rng.standard_normal((code.n_parts, 16))
                    for _ in range(10):
                        idx = code.surviving(tuple(rng.choice(n, s, replace=False)))
                        A = code.decode(idx, check=False, warn=False)
                        err = decoding_error(code, A, idx, g, np.float32)
                        if err <= 1e-2:
                            continue
                        large += 1
                        worst = max(worst, err)
                        kappa = decoding_amplification(code.B[idx], A, code.target)
                        silent_before += kappa <= COND_WARN  # what a float64 threshold let through
                        assert decode_warns(code, idx, dtype=work), (n, s, points, assign, err, kappa)
    # the sweep reaches the cases the float64 threshold let through (30 decodes, worst error 0.87, all silent)
    assert large >= 20 and worst > 0.5 and silent_before >= 20


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_warned_exactly_above_the_threshold_of_the_precision(dtype):
    for n in (10, 16, 22, 28):
        code = codes.rs(n, n // 3, "chebyshev", assign="natural")
        idx = code.surviving(tuple(range(n // 3)))
        A = code.decode(idx, check=False, warn=False)
        kappa = decoding_amplification(code.B[idx], A, code.target)
        assert bool(decode_warns(code, idx, dtype=dtype)) == (kappa > amplification_threshold(dtype)), (n, kappa)
