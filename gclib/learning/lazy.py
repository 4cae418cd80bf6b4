"""Lazy-aggregation trigger rules (LAG, Chen, Giannakis, Sun and Yin, NeurIPS 2018) as small pure functions.

The parameter server keeps the latest upload ``c_u`` of every lazy *unit* ``u`` (a worker in LAG, a coded message
in LAGC, a group in G-LAG) and steps ``theta^{k+1} = theta^k - lr * decode(c)``. A unit uploads again only when
its content moved enough compared with how much the iterates moved lately:

* right-hand side (both rules): ``rhs_k = xi / (lr^2 M^2) * sum_{d=1}^{D} ||theta^{k+1-d} - theta^{k-d}||^2``
  with one weight ``xi`` for every ``d`` and ``M`` the number of units aggregated. gclib's default is
  ``xi = 1/D`` for both rules (:func:`default_xi`); Chen et al.'s code uses ``D = 10`` and ``xi = 1/D`` for the
  worker-side rule but ``xi = 10/D`` for the server-side rule (:func:`chen_xi`);
* LAG-WK (worker side): unit ``u`` computes its fresh content ``g_u`` and uploads iff
  ``||g_u - c_u||^2 > rhs_k``;
* LAG-PS (server side): the server asks unit ``u`` to compute and upload iff
  ``L_u^2 ||theta_hat_u - theta^k||^2 > rhs_k``, ``theta_hat_u`` the iterate of ``u``'s last upload and ``L_u``
  the smoothness constant of ``u``'s content as a function of ``theta``; units not asked compute nothing.

Why the server-side default differs from Chen et al.'s: the server-side test bounds a unit's gradient change by
``L_u ||theta_hat_u - theta||``, which is never smaller than the change itself, so with the *same* ``xi`` it asks
every unit the worker-side test would upload, and the stale error it lets through obeys the worker-side bound
``||sum_u (c_u - g_u)||^2 <= xi / lr^2 * sum_d ||theta^{k+1-d} - theta^{k-d}||^2``. With ``xi = 10/D`` that bound is
ten times looser, and only the slack of ``L_u`` (large on Chen et al.'s problem, where each worker's curvature is
dominated by one direction) keeps the iteration stable: where ``L_u`` is tight (a unit holding many samples of a
well-spread design, such as a G-LAG group) the stale error outgrows the step and the iteration diverges.
Notebook 06 measures both constants on a family of generic problems.

The rules need ``D`` past iterate differences, so they start at iteration ``D`` (0-based). In the authors' code
(``if iter>triggerslot``) no worker uploads before that: the server's stored gradients keep their initial value,
the all-ones vector, and the iterate moves with their sum. :func:`gclib.learning.optim.train` does the same by
default (``warmup="silent"``) and offers ``warmup="upload"`` (every unit uploads in those iterations) as an option.
These functions are shared by the simulated optimizers (:mod:`gclib.learning.optim`) and may be reused by a real
runtime.
"""
from __future__ import annotations

import math

import numpy as np

#: Chen et al.'s window length (``triggerslot``).
D_DEFAULT = 10


#: The total weight ``D * xi`` of Chen et al.'s code, per rule.
CHEN_WEIGHT = {"wk": 1.0, "ps": 10.0}


def default_xi(trigger: str, D: int = D_DEFAULT) -> float:
    """gclib's weight per past difference: ``1/D`` for both rules (see the module docstring)."""
    if trigger in CHEN_WEIGHT:
        return 1.0 / D
    raise ValueError(f"trigger must be 'wk' or 'ps', got {trigger!r}")


def chen_xi(trigger: str, D: int = D_DEFAULT) -> float:
    """Chen et al.'s weight per past difference: ``1/D`` for ``"wk"``, ``10/D`` for ``"ps"``."""
    if trigger in CHEN_WEIGHT:
        return CHEN_WEIGHT[trigger] / D
    raise ValueError(f"trigger must be 'wk' or 'ps', got {trigger!r}")


def threshold(diff_sq, lr: float, units: int, xi: float) -> float:
    """Right-hand side of both trigger rules.

    Args:
        diff_sq: ``(D,)`` squared norms ``||theta^{k+1-d} - theta^{k-d}||^2`` for ``d = 1 .. D`` (any order).
        lr: step size. units: ``M``, the number of units aggregated. xi: weight of every past difference.
    Returns:
        ``xi / (lr^2 M^2) * sum(diff_sq)``: ``inf`` when ``lr M`` is so small that its square underflows (the
        limit, nobody uploads), 0 when the numerator is.
    """
    den = lr * lr * units * units
    if den == 0:  # underflow of a tiny lr M
        return math.inf if xi * float(np.sum(diff_sq)) > 0 else 0.0
    return float(xi / den * np.sum(diff_sq))


def wk_trigger(fresh: np.ndarray, last: np.ndarray, rhs: float) -> np.ndarray:
    """Worker-side rule: which units upload.

    Args:
        fresh: ``(U, w)`` fresh contents. last: ``(U, w)`` latest uploads held by the server. rhs: threshold.
    Returns:
        ``(U,)`` bool, ``||fresh - last||^2 > rhs``.
    """
    diff = np.asarray(fresh) - np.asarray(last)
    return np.sum(np.abs(diff) ** 2, axis=-1) > rhs


def ps_trigger(smoothness: np.ndarray, theta_hat: np.ndarray, theta: np.ndarray, rhs: float) -> np.ndarray:
    """Server-side rule: which units the server asks to compute and upload.

    Args:
        smoothness: ``(U,)`` ``L_u``. theta_hat: ``(U, d)`` iterate at each unit's last upload. theta: ``(d,)``.
    Returns:
        ``(U,)`` bool, ``L_u^2 ||theta_hat_u - theta||^2 > rhs``.
    """
    dist = np.sum((np.asarray(theta_hat) - np.asarray(theta)[None, :]) ** 2, axis=1)
    return np.asarray(smoothness) ** 2 * dist > rhs
