"""Timing traces: the measured time of every partial gradient, as a tidy CSV, and traces in other shapes converted.

This module gathers the two modules that hold them, under the names the notebooks, the documentation and the
command line use (``gclib.timings.read``, ``gclib.timings.convert``, ...):

* :mod:`gclib.timing_trace`: the trace itself, one row per (iteration, worker, task) with columns :data:`COLUMNS`
  (documented in ``docs/advise.md``, "The timing trace"): :class:`Timings`, :func:`read` and :func:`write` of its
  CSV, :func:`from_frame` the checks of a table;
* :mod:`gclib.trace_convert`: real traces in other shapes (``docs/advise.md``, "Real traces in"): :func:`convert`
  (a tidy CSV with other column names, a wide CSV, a per-operation parquet trace) to a :class:`Conversion`,
  :func:`load`, :func:`check_complete`, :func:`shipped`.
"""
from __future__ import annotations

from gclib.timing_trace import (  # noqa: F401  (this module's interface)
    COLUMNS, INF_WORDS, MAX_COLUMNS, MAX_ROWS, MIN_SAMPLES, OPTIONAL, TRACE_BUDGET, Timings, found_columns, from_frame,
    read, write)
from gclib.trace_convert import (  # noqa: F401  (this module's interface)
    COMPUTE_OPS, FORMATS, OPS_COLUMNS, OPS_MAX_BYTES, OPS_MAX_ROWS, SHIPPED_DIR, STAGE_RULES, Conversion,
    check_complete, convert, load, parse_columns, shipped)
