"""How well a decode is conditioned and how accurate it is: the one home of gclib's conditioning and error
measures.

* :func:`decoding_amplification` (``kappa``): the decode's error amplification, the quantity
  :meth:`gclib.codes.GradientCode.decode` warns about (:class:`IllConditionedWarning`) above
  :func:`amplification_threshold` of the working precision (:func:`unit_roundoff`), and the MPI runtime records
  for every iteration;
* :func:`condition_number`: the 2-norm condition number of a matrix, tiny singular values treated as zero;
* :func:`decoding_condition`: ``sigma_1 / sigma_r`` of the rows a decode actually uses, ``r`` the rank a
  decodable set of the code has (no truncation);
* :func:`decoding_error`: the relative error of a decoded gradient when the messages are computed and decoded in
  a given precision.

The studies built on them are :mod:`gclib.diagnostics` (per pattern, worst case, what the decoder does) and
:mod:`gclib.studies.reed_solomon.study` (the stability study of notebooks 02 and 03). This module imports nothing of
gclib but
:mod:`gclib.checks`: the codes' base module leans on it.
"""
from __future__ import annotations

import numpy as np

from gclib import checks

#: Error amplification above which a float64 (or complex128) decode warns: the decoded gradient may have lost
#: about half of its digits. Other precisions scale it as ``1 / sqrt(u)`` (see :func:`amplification_threshold`).
COND_WARN = 1e8


class IllConditionedWarning(RuntimeWarning):
    """The decoding system is so badly conditioned that the decoded gradient may be inaccurate."""


def unit_roundoff(dtype=np.float64) -> float:
    """Unit roundoff ``u`` of a floating or complex dtype (of its real part): ``2**-53`` for float64 and
    complex128, ``2**-24`` for float32 and complex64.

    Raises:
        TypeError: ``dtype`` is not a floating or complex dtype (e.g. an integer dtype).
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise checks.ParameterTypeError(f"dtype must be a floating or complex NumPy dtype, got {dtype!r}") from None
    if not np.issubdtype(dt, np.inexact):
        raise checks.ParameterTypeError(f"dtype must be a floating or complex NumPy dtype, got {dt}")
    return float(np.finfo(dt).eps) / 2


def working_dtype(dtype, B: np.ndarray) -> np.dtype:
    """The precision of a decode: ``dtype`` (a dtype, or an array whose dtype is taken), else that of ``B``."""
    if dtype is None:
        return B.dtype
    if isinstance(dtype, np.ndarray):
        dtype = dtype.dtype
    unit_roundoff(dtype)  # refuses integer and non-numeric dtypes
    return np.dtype(dtype)


def condition_number(M: np.ndarray) -> float:
    """2-norm condition number of a (possibly rectangular) matrix: largest over smallest nonzero-rank value.

    For a rank-deficient matrix the ratio uses the singular values above a relative tolerance, so duplicated
    messages (fractional repetition) do not count as ill-conditioned.
    """
    sv = np.linalg.svd(np.asarray(M), compute_uv=False)
    if sv.size == 0 or sv[0] == 0:
        return np.inf
    keep = sv[sv > 1e-12 * sv[0]]
    return float(keep[0] / keep[-1])


def decoding_amplification(BR: np.ndarray, A: np.ndarray, target: np.ndarray) -> float:
    """Condition number of a decode as an error amplification factor.

    ``max_t sum_i |A[t, i]| * |BR[i]|_2 / |target[t]|_2``: a rounding error of relative size ``eps`` in every
    message (``|delta y_i| <= eps |BR[i]| |G|``) moves the decoded piece ``t`` by at most ``eps`` times this
    factor relative to the size of a sum of independent random parts. Unlike ``cond(BR)`` it does not change
    when a worker scales its message (a row of ``BR``), which the decoding error does not either; the stability
    study (``gclib.studies.reed_solomon.study``) shows that ``eps`` times it predicts the measured relative error of
    polynomial codes within a small factor, while ``cond(BR)`` overstates it by up to 20 orders of magnitude.

    Args:
        BR: ``(r, n_parts * n_pieces)`` received rows; A: ``(n_pieces, r)`` decoding coefficients;
        target: ``(n_pieces, n_parts * n_pieces)``.
    """
    rn = np.linalg.norm(BR, axis=1)
    tn = np.linalg.norm(target, axis=1)
    with np.errstate(all="ignore"):
        amp = (np.abs(A) @ rn) / tn
    return float(np.max(amp)) if amp.size else np.inf


def amplification_threshold(dtype=np.float64) -> float:
    """The error amplification (:func:`decoding_amplification`) above which a decode computed in ``dtype`` is not
    trusted: :meth:`GradientCode.decode` warns above it, and the MPI runtime flags such iterations.

    The rule: a decode is not trusted once its error bound ``u * kappa`` (``u`` the unit roundoff of the working
    precision, :func:`unit_roundoff`; ``kappa`` the error amplification) passes about ``sqrt(u)``, i.e. once about
    half of the precision's digits may be lost. The threshold is therefore proportional to ``1 / sqrt(u)``,
    anchored at :data:`COND_WARN` ``= 1e8`` for float64 (``1 / sqrt(2**-53)`` is ``9.5e7``):
    ``amplification_threshold(dtype) = COND_WARN * sqrt(u_float64 / u)``, ``1e8`` for float64 and complex128
    (relative error up to about ``1.1e-8``) and about ``4.3e3`` for float32 and complex64 (up to about ``2.6e-4``).

    Raises:
        TypeError: ``dtype`` is not a floating or complex dtype.
    """
    return COND_WARN * float(np.sqrt(unit_roundoff(np.float64) / unit_roundoff(dtype)))


def decoding_condition(code, idx: np.ndarray, A: np.ndarray) -> float:
    """Condition number of the decoding system actually solved.

    Args:
        code: a :class:`~gclib.codes.GradientCode`. idx: ``(r,)`` received message ids; A: ``(n_pieces, r)``
            decoding coefficients.
    Returns:
        ``sigma_1 / sigma_rank`` of ``B[used]`` (``used``: the received rows with a nonzero coefficient),
        ``rank = min(code.decoder.decodable_rank, rows, columns)`` - the rank every decodable set of the code
        has (the number of rows used when the family does not say).
    """
    used = idx[np.any(A != 0, axis=0)]
    if used.size == 0:
        return np.inf
    M = code.B[used]
    sv = np.linalg.svd(M, compute_uv=False)
    rank = code.decoder.decodable_rank
    r = min(int(used.size if rank is None else rank), used.size, M.shape[1])
    if sv[r - 1] == 0:
        return np.inf
    return float(sv[0] / sv[r - 1])


def decoding_error(code, A: np.ndarray, idx: np.ndarray, g: np.ndarray, dtype=np.float64) -> float:
    """Relative error ``|g_hat - g| / |g|`` of the gradient decoded from the messages ``idx``.

    Args:
        code: a :class:`~gclib.codes.GradientCode`. A: ``(n_pieces, len(idx))`` decoding coefficients.
        g: ``(n_parts, length)`` partial gradients.
        dtype: precision in which the messages are computed and decoded (complex of it for complex codes).
    Returns:
        the relative error, ``inf`` when it is not finite.
    """
    cplx = np.iscomplexobj(code.B)
    work = (np.complex64 if dtype == np.float32 else np.complex128) if cplx else dtype
    G = code.pieces(g).astype(work)
    msgs = code.B[idx].astype(work) @ G
    est = code.combine(A.astype(work), msgs, g.shape[1]).astype(np.float64)
    true = g.sum(axis=0)
    with np.errstate(all="ignore"):
        err = np.linalg.norm(est - true) / np.linalg.norm(true)
    return float(err) if np.isfinite(err) else np.inf
