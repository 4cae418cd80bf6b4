"""From compute-time models of a cluster, or a measured timing trace, to a ranked recommendation of the code to run.

The front door is three functions:

* :func:`advise`: rank every candidate design for ``K`` workers under compute-time models (an :class:`Advice`);
* :func:`from_trace`: fit the models to a trace, choose the one to rank under, and advise (a :class:`TraceAdvice`);
* :func:`backtest`: fit and advise on a trace's first iterations, check the advice on the rest (a
  :class:`Backtest`).

Each step is a module of its own, in the order the work runs:

* :mod:`gclib.advise.designs`: the candidate designs (:func:`candidates`, :class:`Design`) and the limits of the
  work, known before it (:func:`workload`, :func:`check_workload`);
* :mod:`gclib.advise.race`: the screening race that drops, per model, the designs another one beats;
* :mod:`gclib.advise.simulation`: the full simulation of the designs kept, on common random numbers, and the
  numerical-stability margin of a code;
* :mod:`gclib.advise.ranking`: the ranking under the primary model (:func:`advise`, :class:`Advice`);
* :mod:`gclib.advise.model_choice`: a trace checked and fitted, and the model the advice ranks under
  (:func:`from_trace`, :func:`fit_trace`, :func:`reliance`);
* :mod:`gclib.advise.backtesting`: the back-test on held-out iterations (:func:`backtest`, :func:`observed`);
* :mod:`gclib.advise.report`: what a person reads of an advice (the table, the warnings, the figure).
"""
from __future__ import annotations

from gclib.advise.backtesting import MIN_PART, TARGETS, Backtest, backtest, iterations_needed, observed
from gclib.advise.designs import (DRAW_BUDGET, FAMILIES, KEPT_AT_MOST, MAX_CELLS, MAX_WORKERS, MIN_TRIALS, PRECISION,
                                  RACE_ALPHA, SCREEN_ABOVE, SCREEN_KEEP, SCREEN_ROUNDS, SCREEN_TRIALS,
                                  STABILITY_BYTES, STABILITY_PATTERNS, STABILITY_ROWS, TRIALS, Design, candidates,
                                  check_workload, default_max_load, stability_patterns, workload)
from gclib.advise.model_choice import (BOOTSTRAP, REJECT_LEVEL, TIME_RANGE, TraceAdvice, TraceFit, check_trace,
                                       fit_trace, from_trace, reliance)
from gclib.advise.ranking import COLUMNS, TEXT_ROWS, Advice, advise, network_text
from gclib.advise.report import reliance_text
from gclib.advise.simulation import stability_margin, trial_times
from gclib.design_space import GRID_DENSE, GRID_RATIO, MAX_CLUSTER_COUNTS, grid

__all__ = [
    # the front door
    "advise", "from_trace", "backtest", "Advice", "TraceAdvice", "Backtest",
    # the steps
    "candidates", "Design", "default_max_load", "workload", "check_workload", "stability_patterns",
    "stability_margin", "trial_times", "network_text", "check_trace", "fit_trace", "TraceFit", "reliance",
    "reliance_text", "observed", "iterations_needed", "grid",
    # the constants
    "BOOTSTRAP", "COLUMNS", "DRAW_BUDGET", "FAMILIES", "GRID_DENSE", "GRID_RATIO", "KEPT_AT_MOST", "MAX_CELLS",
    "MAX_CLUSTER_COUNTS", "MAX_WORKERS", "MIN_PART", "MIN_TRIALS", "PRECISION", "RACE_ALPHA", "REJECT_LEVEL",
    "SCREEN_ABOVE", "SCREEN_KEEP", "SCREEN_ROUNDS", "SCREEN_TRIALS", "STABILITY_BYTES", "STABILITY_PATTERNS",
    "STABILITY_ROWS", "TARGETS", "TEXT_ROWS", "TIME_RANGE", "TRIALS",
]
