"""Plain JSON values from gclib's results: the one conversion behind every ``to_dict`` / summary printed as JSON."""
from __future__ import annotations

import math

import numpy as np


def jsonable(obj):
    """``obj`` with NumPy scalars and arrays turned into Python numbers and lists, tuples into lists, dict keys into
    strings, non-finite floats into ``None`` and anything else into its ``str``; keys starting with ``_`` are
    dropped (a result's private fields)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, str) or obj is None:
        return obj
    return str(obj)
