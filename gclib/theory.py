"""Closed forms for expected completion times, drawn beside the Monte Carlo.

With one draw per worker (``per_task=False``) and every worker sending one message after ``r`` partial
gradients, the completion time is ``r`` times an order statistic of ``n`` i.i.d. draws:

* threshold codes (uncoded, ignore-stragglers, CRC, RS): the ``t``-th smallest, ``t`` the threshold;
* fractional repetition: the largest of the group minima.
"""
from __future__ import annotations

import numpy as np

from gclib.codes.base import GradientCode
from gclib.codes.rules import ThresholdRule
from gclib.stragglers import ComputeModel, expected_max_of_group_minima, expected_order_statistic


def expected_time(code: GradientCode, model: ComputeModel, comm=None) -> float:
    """Closed-form expected completion time, or ``nan`` where none applies (multi-message codes, per-task
    models, unequal loads, unequal groups).

    ``comm`` (a :class:`gclib.simulator.Communication`) adds its delay when every message has the same size (then
    every arrival is shifted by the same amount, and so is the completion time); ``nan`` otherwise, and for the
    master's queue (``comm.queue``), whose waits depend on the order of the arrivals."""
    t = _expected_compute_time(code, model)
    if comm is None or not np.isfinite(t):
        return t
    if comm.queue:
        return np.nan
    size = np.asarray(code.size, dtype=float)
    if size.size == 0 or np.any(size != size[0]):
        return np.nan
    return t + float(comm.delay(size[0]))


def _expected_compute_time(code: GradientCode, model: ComputeModel) -> float:
    rule = code.rule
    if getattr(model, "per_task", True) or not isinstance(rule, ThresholdRule):
        return np.nan
    if code.n_messages != code.n_workers or np.unique(code.ready).size != 1:
        return np.nan
    r = float(code.ready[0])
    n = code.n_workers
    n_classes = rule.class_cluster.size
    try:
        if rule.n_clusters == 1 and n_classes == n:
            return expected_order_statistic(model, n, int(rule.thresholds[0]), load=r)
        sizes = np.bincount(rule.msg_class)
        if n_classes == rule.n_clusters and np.all(rule.thresholds == 1) and np.unique(sizes).size == 1:
            return expected_max_of_group_minima(model, rule.n_clusters, int(sizes[0]), load=r)
    except ValueError:
        return np.nan
    return np.nan
