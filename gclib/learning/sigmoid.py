"""The logistic function and its logarithm, to the bit what ``scipy.special.expit`` and ``log_expit`` give, without
importing SciPy in a process that has not.

Importing ``scipy.special`` costs an MPI rank more CPU time than the rest of its imports together (SciPy's
array-API layer loads much of NumPy's namespace: ``python -X importtime -c "import scipy.special"``), and a rank of
a logistic problem needs nothing else from SciPy. Both functions here are what SciPy's are: ``expit(x) = 1 / (1 +
exp(-x))``, and ``log_expit(x) = x - log1p(exp(x))`` for ``x < 0``, ``-log1p(exp(-x))`` otherwise, with the C
library's ``exp`` and ``log1p``. NumPy's own ``exp`` may not be the C library's (it has vector versions that differ
in the last bit), so while SciPy is not loaded they are computed value by value with Python's ``math`` module,
which calls the C library; SciPy's ufuncs compute them once SciPy is loaded. Value by value is many times slower
than SciPy's ufunc, so an array of more than :data:`ELEMENTWISE_MAX` values loads SciPy, and so does
:func:`expect` for a process about to compute more than :data:`ELEMENTWISE_BUDGET` values in a timed run (an MPI
rank of a long run loads SciPy at its start, not in the middle of a measured iteration). A short run (the tests', an
example's) never loads it. ``tests/test_sigmoid.py`` checks that the two ways agree to the bit.
"""
from __future__ import annotations

import math
import sys

import numpy as np

#: The largest array computed value by value while SciPy is not loaded.
ELEMENTWISE_MAX = 1 << 14
#: The most values a run computes value by value (:func:`expect`): some milliseconds of work, well below what the
#: import costs.
ELEMENTWISE_BUDGET = 1 << 16


def _expit(v: float) -> float:
    try:
        return 1.0 / (1.0 + math.exp(-v))
    except OverflowError:  # exp(-v) beyond the largest float: the C library's exp gives inf, and 1 / inf is 0
        return 0.0


def _log_expit(v: float) -> float:
    if v < 0:
        return v - math.log1p(math.exp(v))
    return -math.log1p(math.exp(-v))


def _scipy_special(x):
    """``scipy.special`` when SciPy's ufunc is to compute ``x`` (SciPy is loaded already, or ``x`` has more than
    :data:`ELEMENTWISE_MAX` values), else None."""
    if "scipy.special" in sys.modules or np.size(x) > ELEMENTWISE_MAX:
        return load_scipy()
    return None


def load_scipy():
    """``scipy.special``, imported if it was not."""
    import scipy.special
    return scipy.special


def expect(values: int) -> None:
    """Say that this process is about to compute the logistic function of about ``values`` values in all (an MPI
    rank at the start of a run): more than :data:`ELEMENTWISE_BUDGET` loads SciPy now, so that its ufuncs compute
    them from the first iteration on."""
    if values > ELEMENTWISE_BUDGET:
        load_scipy()


def _elementwise(f, x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(f, a.ravel().tolist()), dtype=np.float64, count=a.size).reshape(a.shape)


def expit(x) -> np.ndarray:
    """``1 / (1 + exp(-x))`` elementwise, as ``scipy.special.expit`` gives it (float64)."""
    special = _scipy_special(x)
    if special is not None:
        return special.expit(np.asarray(x, dtype=np.float64))
    return _elementwise(_expit, x)


def log_expit(x) -> np.ndarray:
    """``log(1 / (1 + exp(-x)))`` elementwise, as ``scipy.special.log_expit`` gives it (float64)."""
    special = _scipy_special(x)
    if special is not None:
        return special.log_expit(np.asarray(x, dtype=np.float64))
    return _elementwise(_log_expit, x)
