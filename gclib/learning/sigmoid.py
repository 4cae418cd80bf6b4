"""The logistic function and its logarithm, to the bit what ``scipy.special.expit`` and ``log_expit`` give, without
importing SciPy in a process that has not.

Importing ``scipy.special`` costs an MPI rank more CPU time than the rest of its imports together (SciPy's
array-API layer loads much of NumPy's namespace: ``python -X importtime -c "import scipy.special"``), and a rank of
a logistic problem needs nothing else from SciPy. Both functions here are what SciPy's are: ``expit(x) = 1 / (1 + exp(-x))``, ``log_expit(x) =
x - log1p(exp(x))`` for ``x < 0`` and ``-log1p(exp(-x))`` otherwise, with the C library's ``exp`` and ``log1p``.
NumPy's own ``exp`` may not be the C library's (it has vector versions that differ in the last bit), so they are
computed value by value with Python's ``math`` module, which calls the C library, until the process has computed
:data:`ELEMENTWISE_BUDGET` values that way or has loaded SciPy; from then on SciPy's ufuncs compute them. Value by
value is some twenty times slower than SciPy's ufunc: the budget is about what importing ``scipy.special`` costs, so
that a short run never pays for the import and a long one pays at most twice what it would have.
``tests/test_sigmoid.py`` checks that the two ways agree to the bit.
"""
from __future__ import annotations

import math
import sys

import numpy as np

#: Values a process computes one by one before it loads ``scipy.special`` (they take about the CPU time of the
#: import).
ELEMENTWISE_BUDGET = 1 << 20
_spent = 0


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
    """``scipy.special`` when SciPy's ufunc is to compute ``x`` (SciPy is loaded already, or ``x`` would take the
    values computed one by one beyond :data:`ELEMENTWISE_BUDGET`), else None (and ``x`` is counted)."""
    global _spent
    if "scipy.special" not in sys.modules and _spent + np.size(x) <= ELEMENTWISE_BUDGET:
        _spent += np.size(x)
        return None
    import scipy.special
    return scipy.special


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
