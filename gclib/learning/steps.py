"""Parameter updates shared by the simulated optimizers and the MPI runtime.

Each update is a small object: ``state = Update.init(theta0)``, then ``theta, state = update.step(state, grad)``
where ``grad`` is the (decoded) full gradient at the point the update asked for (``update.query(state)``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class GD:
    """Plain gradient descent ``theta <- theta - lr * grad``."""

    lr: float

    def init(self, theta0):
        return {"theta": np.asarray(theta0, dtype=float).copy(), "t": 0}

    def query(self, state):
        return state["theta"]

    def step(self, state, grad):
        theta = state["theta"] - self.lr * grad
        return theta, {"theta": theta, "t": state["t"] + 1}


@dataclass
class TandonAGD:
    """The accelerated gradient method of Tandon et al.'s experiments.

    With ``th_t = 2 / (t + 2)``: ``y = (1 - th_t) beta + th_t u``; ``beta+ = y - lr * grad(y)``;
    ``u = beta + (beta+ - beta) / th_t``. ``grad`` is the gradient of the whole objective (its L2 term included)
    at the query point ``y``.
    """

    lr: float

    def init(self, theta0):
        b = np.asarray(theta0, dtype=float).copy()
        return {"theta": b, "u": b.copy(), "t": 0, "y": b.copy()}

    def query(self, state):
        th = 2.0 / (state["t"] + 2)
        return (1 - th) * state["theta"] + th * state["u"]

    def step(self, state, grad):
        th = 2.0 / (state["t"] + 2)
        y = self.query(state)
        beta_new = y - self.lr * grad
        u = state["theta"] + (beta_new - state["theta"]) / th
        return beta_new, {"theta": beta_new, "u": u, "t": state["t"] + 1, "y": y}
