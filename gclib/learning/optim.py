"""Optimizers on a simulated wall clock: GD, GC, LAG-WK, LAG-PS, LAGC and G-LAG (Zhang and Simeone, 2021).

Every scheme is one engine, :func:`train`, run on a gradient code and a trigger rule (:class:`LazyScheme`):

==========  =========================================  ==============  =====================================
scheme      code                                       trigger         the server waits for
==========  =========================================  ==============  =====================================
``gd``      ``uncoded(n)``                             none            every worker
``gc``      any code (``crc(n, s)`` by default)        none            a decodable set (``n - s`` for CRC)
``lag-wk``  ``uncoded(n)``                             worker side     every worker (upload or skip notice)
``lag-ps``  ``uncoded(n)``                             server side     the workers it asked
``lagc``    ``crc(n, s)``                              worker side     a decodable set of fresh + held msgs
``g-lag``   ``frc(n, n/G - 1)`` (``G`` groups)          server side     the fastest worker of each asked group
==========  =========================================  ==============  =====================================

One iteration ``k`` at ``theta^k`` (see :mod:`gclib.learning.lazy` for the rules):

1. *Units* are the code's message classes (messages of identical content: a worker's message for CRC and
   uncoded, a whole group for FRC). The server holds the latest upload ``c_u`` of every unit.
2. Server-side trigger: the server asks the units passing ``L_u^2 ||theta_hat_u - theta^k||^2 > rhs`` (and any
   unit it holds nothing from) to compute; the others' held messages are available at time 0. Otherwise every
   worker computes. Warm-up (the first ``D`` iterations, before the rules have their ``D`` differences): by
   default (``warmup="silent"``, Chen et al.'s code) nobody computes or uploads and the server steps with its
   initial copies (the code rows applied to all-ones partial gradients on the summed loss), which costs no
   time; with ``warmup="upload"`` every unit computes and uploads.
3. Worker ``w`` computing ``r`` parts finishes its ``j``-th part at ``finish[w, j]`` (the compute-time model,
   sampled afresh every iteration; with ``per_task=False`` that is ``j * X_w``). A message arrives when its
   sender has computed ``ready`` parts. Worker-side trigger: a unit whose fresh content passes
   ``||g_u - c_u||^2 > rhs`` uploads; one that does not sends a skip notice at the same time (not an upload).
4. The iteration ends at the earliest time the available messages decode (``code.rule.completion``); the
   gradient is REALLY decoded: ``A = code.decode(received)`` and ``g = A @ messages`` with the actual message
   vectors (fresh ones for units whose upload arrived, held ones otherwise). Late messages are discarded (the
   worker is interrupted) and do not update the server's copy.
5. ``theta^{k+1} = theta^k - lr * g``; the clock advances by the completion time.

Reconstructed details (the LAGC paper body was not available; each is a parameter):

* ``trigger`` of LAGC is worker side (our reading: LAG-WK's test applied to each coded message) and of G-LAG
  server side (our reading: the server waits for the fastest worker of each group it asks); both can be
  switched, and notebook 06 runs every lazy scheme with both.
* ``xi`` of the server-side rule is ``1/D`` like the worker side's, not the ``10/D`` of Chen et al.'s code, under
  which LAG-PS and G-LAG diverge on plain regressions whose units' smoothness bounds are tight (see
  :mod:`gclib.learning.lazy`); ``xi="chen"`` restores Chen et al.'s constants.
* ``units`` (``M`` in the threshold) is the number of units aggregated (workers, groups) for LAG and G-LAG;
  for LAGC it defaults to the mean l1 norm of the CRC decoding coefficients (:func:`decoding_weight`), because
  with ``M = n`` the stale coded messages, multiplied by large decoding coefficients, make LAGC diverge.
* The smoothness ``L_u`` of a unit's content (server-side rule) is exact for linear regression
  (``||sum_j b_uj H_j||_2``) and the bound ``sum_j |b_uj| L_j`` otherwise.
* ``warmup="silent"`` is Chen et al.'s warm-up (their code, for uncoded workers); for coded units (LAGC's CRC
  messages, G-LAG's groups) we start each unit's copy from its code row applied to the all-ones partial
  gradients, so that every code decodes the same sum and every lazy scheme takes the same first ``D`` steps.
* ``computation="assigned"`` counts every partial gradient a worker was asked to compute (the full load ``r``
  of every computing worker); ``"finished"`` counts only those done when the server moved on.
* ``duplicates="cancel"`` counts one upload per fresh unit (the server stops a group's other members once one
  copy arrived); ``"count"`` counts every message that arrived before the iteration ended.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from gclib.learning.sigmoid import expit

from gclib import checks
from gclib.codes.base import GradientCode, split_pieces
from gclib.progress import progress as _progress
from gclib.simulator import arrival_times
from gclib.stragglers import ComputeModel
from gclib.learning import lazy
from gclib.learning.model import Model, as_model, model_name, step_size
from gclib.learning.problems import Problem
from gclib.learning.training_schemes import (  # noqa: F401  (this module's interface)
    CODE_PARAMS, SCHEME_NAMES, WARMUPS, LazyScheme, code_names, decoding_weight, make_scheme)

#: Pre-sampled iterations of compute times per block (the numbers for a seed depend on it, so it is fixed).
BLOCK = 256
#: Bytes of the history :func:`train` keeps per iteration (five numbers, in lists then arrays), for its memory check.
HISTORY_BYTES = 200


class ConvergenceError(RuntimeError):
    """Raised by :meth:`TrainResult.raise_for_status` when a run stopped without reaching its target."""


@dataclass
class TrainResult:
    """One training run. Per-iteration arrays have ``iterations + 1`` entries (index 0: the start).

    Attributes:
        gap: optimality gap ``F(theta^k) - F*`` (the loss ``F(theta^k)`` for a model without a known optimum:
            ``info["objective"]``). time, uploads, computations: cumulative wall clock, uploads
            (messages) and partial-gradient computations after ``k`` iterations. active: units whose fresh
            content was used in iteration ``k`` (0 at index 0).
        status: ``"converged"``, ``"max_iter"``, ``"diverged"`` or ``"stalled"`` (an iteration could never
            decode: more workers never answer than the code tolerates); message: a sentence saying why it stopped.
    """

    scheme: str
    status: str
    message: str
    target: float
    gap: np.ndarray
    time: np.ndarray
    uploads: np.ndarray
    computations: np.ndarray
    active: np.ndarray
    theta: np.ndarray
    thetas: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def iterations(self) -> int:
        return int(self.gap.size - 1)

    @property
    def converged(self) -> bool:
        return self.status == "converged"

    def totals(self, target: float | None = None) -> dict:
        """Time, uploads, computations and iterations at the first iterate with ``gap <= target`` (default the
        run's target); ``None`` values when the run never got there."""
        eps = self.target if target is None else target
        hit = np.flatnonzero(self.gap <= eps)
        if hit.size == 0:
            return {"iterations": None, "time": None, "uploads": None, "computations": None}
        k = int(hit[0])
        return {"iterations": k, "time": float(self.time[k]), "uploads": int(self.uploads[k]),
                "computations": int(self.computations[k])}

    def summary(self) -> dict:
        """JSON-ready totals: scheme, status, message, target, iterations, time, uploads, computations,
        final_gap, and the scheme description."""
        return {"scheme": self.scheme, "status": self.status, "message": self.message, "target": self.target,
                "iterations": self.iterations, "time": float(self.time[-1]), "uploads": int(self.uploads[-1]),
                "computations": int(self.computations[-1]), "final_gap": float(self.gap[-1]), **self.info}

    def frame(self):
        """``pandas.DataFrame`` with one row per iterate: iteration, gap, time, uploads, computations, active."""
        import pandas as pd  # here, as in compare: every MPI rank imports this module

        return pd.DataFrame({"scheme": self.scheme, "iteration": np.arange(self.gap.size), "gap": self.gap,
                             "time": self.time, "uploads": self.uploads, "computations": self.computations,
                             "active": self.active})

    def raise_for_status(self) -> "TrainResult":
        if not self.converged:
            raise ConvergenceError(self.message)
        return self


def unit_smoothness(problem: Model, code: GradientCode) -> np.ndarray:
    """``(n_units,)`` smoothness constant of every unit's content ``theta -> B[u] @ (partial gradients)``.

    Exact for linear regression with unsplit messages (``||sum_j b_uj H_j||_2``, ``H_j`` the constant Hessian of
    ``f_j``); otherwise the bound ``sum_j max_piece |b_uj| L_j`` (``L_j`` of the model's ``part_smoothness()``).
    """
    rule = code.rule
    rep = _class_representatives(code)
    m = code.n_pieces
    Bp = np.abs(code.B).reshape(code.n_messages, code.n_parts, m).max(axis=2)
    if getattr(problem, "kind", None) == "linreg" and m == 1 and not np.iscomplexobj(code.B):
        H = [problem.X[idx].T @ problem.X[idx] / problem.n_samples + problem.reg / problem.n_parts
             * np.eye(problem.dim) for idx in problem.parts]
        out = []
        for j in rep:
            M = sum(code.B[j, p] * H[p] for p in range(code.n_parts) if code.B[j, p] != 0)
            out.append(np.abs(np.linalg.eigvalsh(M)).max() if np.ndim(M) else 0.0)
        return np.array(out)
    Lj = problem.part_smoothness()
    return Bp[rep] @ Lj if rule is not None else np.zeros(len(rep))


def _class_representatives(code: GradientCode) -> np.ndarray:
    """``(n_units,)`` the first message of every class."""
    cls = code.rule.msg_class
    n = code.rule.class_cluster.size
    rep = np.full(n, -1)
    for j in range(code.n_messages - 1, -1, -1):
        rep[cls[j]] = j
    return rep


def partial_gradient_fn(problem: Model):
    """A ``theta -> (k, d)`` partial gradients of ``problem``: for a :class:`Problem`, a fast one (the same formulas
    as :meth:`Problem.partial_gradients`, with the part blocks sliced once and batched when the parts are equal);
    for any other model, its ``partial_gradients``."""
    if not isinstance(problem, Problem):
        return problem.partial_gradients
    N, k, reg = problem.n_samples, problem.n_parts, problem.reg
    sizes = {len(idx) for idx in problem.parts}
    logistic = problem.kind == "logistic"
    if len(sizes) == 1:
        Xs = np.stack([problem.X[idx] for idx in problem.parts])  # (k, n_j, d)
        Ys = np.stack([problem.y[idx] for idx in problem.parts])  # (k, n_j)

        def grads(theta):
            z = Xs @ theta
            r = -Ys * expit(-Ys * z) if logistic else z - Ys
            return np.einsum("kni,kn->ki", Xs, r) / N + reg * theta / k
        return grads
    blocks = [(problem.X[idx], problem.y[idx]) for idx in problem.parts]

    def grads(theta):
        out = []
        for Xj, yj in blocks:
            z = Xj @ theta
            r = -yj * expit(-yj * z) if logistic else z - yj
            out.append(Xj.T @ r / N + reg * theta / k)
        return np.stack(out)
    return grads


def _check_train(problem: Model, scheme: LazyScheme, *, target, lr, max_iter, computation, duplicates,
                 warmup, keep_thetas) -> tuple[str, float]:
    """The arguments of :func:`train` checked, and what the run may keep (a cap of iterations too large is refused,
    not run for days); returns ``(warmup, lr)`` with their defaults filled in."""
    code = scheme.code
    if problem.n_parts != code.n_parts:
        raise ValueError(f"problem has {problem.n_parts} parts but code '{code.name}' needs {code.n_parts}")
    if computation not in ("assigned", "finished"):
        raise ValueError(f"computation must be 'assigned' or 'finished', got {computation!r}")
    if duplicates not in ("cancel", "count"):
        raise ValueError(f"duplicates must be 'cancel' or 'count', got {duplicates!r}")
    warmup = scheme.warmup if warmup is None else warmup
    if warmup not in WARMUPS:
        raise ValueError(f"warmup must be one of {list(WARMUPS)}, got {warmup!r}")
    checks.integer("max_iter", max_iter, low=1)
    checks.real("target", target, above=0)
    if scheme.trigger == "ps" and not hasattr(problem, "part_smoothness"):
        raise ValueError(f"scheme {scheme.name!r}: its server-side trigger needs the smoothness of every part "
                         f"(part_smoothness), which model {getattr(problem, 'name', type(problem).__name__)!r} does "
                         f"not give")
    lr = step_size(problem, lr)
    checks.need_memory("train", (max_iter + 1) * (HISTORY_BYTES + (8 * problem.dim if keep_thetas else 0)),
                       sizes=f"max_iter = {max_iter}" + (f", dim = {problem.dim} (keep_thetas)" if keep_thetas else ""),
                       lower="max_iter (gclib train --iterations)")
    return warmup, lr


class _Server:
    """The server of one :func:`train` run: the code's units and what it holds of them.

    Fixed for the run: ``cls`` ``(n_msg,)`` unit of every message, ``B_rep`` ``(U, k*m)`` the code row of every
    unit, ``loads`` ``(n,)``, ``msg_workers`` (per unit, the workers sending it), the trigger and its constants.
    Updated every iteration: ``held`` ``(U, width)`` the latest upload of every unit, ``has`` ``(U,)`` whether
    there is one, ``theta_hat`` ``(U, d)`` the iterate it was computed at, ``diffs`` the last ``D`` squared steps,
    and ``decoded``: the decoding coefficients of every received set met so far (they depend on the set only).
    """

    def __init__(self, problem: Model, scheme: LazyScheme, warmup: str, max_iter: int, theta: np.ndarray):
        code = self.code = scheme.code
        self.problem, self.m, self.d = problem, code.n_pieces, problem.dim
        self.cls = code.rule.msg_class
        self.U = U = scheme.n_units
        self.B_rep = code.B[_class_representatives(code)]
        self.loads = np.array([len(o) for o in code.order])
        self.msg_workers = [np.unique(code.sender[self.cls == u]) for u in range(U)]
        self.trig = trig = scheme.trigger
        self.L_u = unit_smoothness(problem, code) if trig == "ps" else None
        self.xi, self.M_thr, self.D = scheme.weight if trig else 0.0, scheme.threshold_units, scheme.D
        self.part_grads = partial_gradient_fn(problem)
        self.decoded: dict = {}
        problem.prepare(max_iter)  # what up to max_iter iterations will need, loaded before the first
        self.held = np.zeros((U, -(-self.d // self.m)), dtype=self.B_rep.dtype)
        self.has = np.zeros(U, dtype=bool)
        self.theta_hat = np.zeros((U, self.d))
        self.silent = trig is not None and warmup == "silent"
        if self.silent:  # Chen et al.: the server starts with a copy of every unit, taken at theta^0
            ones = np.full((code.n_parts, self.d), scheme.initial / (problem.n_samples or 1))
            self.held[:] = self.B_rep @ split_pieces(ones, self.m)
            self.has[:] = True
            self.theta_hat[:] = theta
        self.diffs = deque(maxlen=min(self.D, max_iter + 1))  # a longer window holds no more (and D may be huge)

    def ask(self, theta: np.ndarray, lazy_on: bool, rhs: float) -> tuple[np.ndarray, np.ndarray]:
        """Step 1, who computes: ``(asked (U,), computing (n,))``."""
        U = self.U
        if self.silent and not lazy_on:  # warm-up: nobody may upload, so nobody computes
            asked = np.zeros(U, dtype=bool)
        elif self.trig == "ps" and lazy_on:
            asked = lazy.ps_trigger(self.L_u, self.theta_hat, theta, rhs) | ~self.has
        else:
            asked = np.ones(U, dtype=bool)
        computing = np.zeros(self.code.n_workers, dtype=bool)
        for u in np.flatnonzero(asked):
            computing[self.msg_workers[u]] = True
        return asked, computing

    def fresh(self, theta: np.ndarray, asked: np.ndarray, lazy_on: bool, rhs: float):
        """Step 2, the fresh contents of the asked units and which of them upload: ``(fresh, upload)``."""
        fresh = np.zeros_like(self.held)
        if asked.any():
            fresh[asked] = self.B_rep[asked] @ split_pieces(self.part_grads(theta), self.m)  # (k*m, width)
        if self.trig == "wk" and lazy_on:
            upload = asked & (lazy.wk_trigger(fresh, self.held, rhs) | ~self.has)
        else:
            upload = asked.copy()
        return fresh, upload

    def arrivals(self, finish: np.ndarray, asked: np.ndarray, upload: np.ndarray) -> tuple[float, np.ndarray]:
        """Step 3, when the iteration ends: held messages of units not asked are in hand at 0, computed ones at
        the sender's finish. Returns ``(t_done, received)`` (``t_done`` infinite when nothing decodes)."""
        code, cls = self.code, self.cls
        arrival = arrival_times(code, finish[None])[0].astype(float)
        arrival[~asked[cls]] = 0.0
        arrival[~self.has[cls] & ~upload[cls]] = np.inf  # nothing held and nothing sent: cannot be used
        t_done = float(code.rule.completion(arrival[None, :])[0])
        return t_done, np.flatnonzero(arrival <= t_done)

    def receive(self, theta: np.ndarray, fresh: np.ndarray, upload: np.ndarray, received: np.ndarray) -> np.ndarray:
        """The fresh uploads that arrived in time replace the held copies; returns them, ``(U,)`` bool."""
        arrived_unit = np.zeros(self.U, dtype=bool)
        arrived_unit[self.cls[received]] = True
        used_fresh = upload & arrived_unit
        self.held[used_fresh] = fresh[used_fresh]
        self.theta_hat[used_fresh] = theta
        self.has |= used_fresh
        return used_fresh

    def step(self, theta: np.ndarray, received: np.ndarray, lr: float) -> np.ndarray:
        """Step 4, decode the real messages and step: ``theta^{k+1}``."""
        key = received.tobytes()
        A = self.decoded.get(key)
        if A is None:  # the coefficients depend only on the received set: decode each set once
            A = self.decoded[key] = self.code.decode(received, warn=False)
        grad = self.code.combine(A, self.held[self.cls[received]], self.d)
        new = theta - lr * grad
        self.diffs.append(float(np.sum((new - theta) ** 2)))
        return new

    def work(self, used_fresh, received, computing, finish, t_done, computation: str, duplicates: str):
        """Step 5, accounting: ``(uploads, computations)`` of this iteration (conventions: module docstring)."""
        if duplicates == "cancel":
            uploads = int(used_fresh.sum())
        else:
            uploads = int(np.sum(used_fresh[self.cls[received]]))
        if computation == "assigned":
            return uploads, int(self.loads[computing].sum())
        done = (finish <= t_done).sum(axis=1)
        return uploads, int(np.minimum(done, self.loads)[computing].sum())


def train(problem: Model, scheme: LazyScheme, model: ComputeModel, *, target: float = 1e-6, seed=0,
          lr: float | None = None, max_iter: int = 20_000, diverge: float = 1e8, theta0=None,
          computation: str = "assigned", duplicates: str = "cancel", keep_thetas: bool = False,
          warmup: str | None = None, progress: bool = False) -> TrainResult:
    """Run ``scheme`` on ``problem`` until ``gap <= target``, ``max_iter`` iterations, divergence, or an iteration
    that can never decode (status ``"stalled"``).

    Args:
        problem: any :class:`gclib.learning.model.Model` of ``k = scheme.code.n_parts`` parts; its optimality gap
            (``gap``, as a :class:`Problem` knows its optimum) is what the run tracks, or, for a model without one,
            its loss (``info["objective"]`` says which, and ``TrainResult.gap`` holds it).
            model: compute-time model (sampled afresh every iteration).
        target: optimality gap ``epsilon`` (or loss) to reach. seed: seed or Generator of the compute times (the draws
            are the same for every scheme with the same seed and workers: common random numbers).
        lr: step size (default ``1 / L``, Chen et al.'s choice; a model without ``smoothness`` needs it).
            max_iter: iteration cap.
        diverge: stop as diverged when the gap exceeds ``diverge * max(gap_0, 1)`` or is not finite.
        theta0: ``(d,)`` start (default the model's ``initial()``: zeros for a :class:`Problem`). computation,
            duplicates: accounting conventions (module doc).
        keep_thetas: keep every iterate in ``thetas`` ``(iterations + 1, d)``.
        warmup: override the scheme's warm-up (``"silent"`` or ``"upload"``, see :class:`LazyScheme`); ``None``
            keeps ``scheme.warmup``. progress: a progress bar over the iterations (on stderr).
    Returns:
        :class:`TrainResult` (check ``status``; ``raise_for_status()`` raises on a run that did not converge).
    """
    problem = as_model(problem, "problem")
    warmup, lr = _check_train(problem, scheme, target=target, lr=lr, max_iter=max_iter, computation=computation,
                              duplicates=duplicates, warmup=warmup, keep_thetas=keep_thetas)
    objective = "gap" if hasattr(problem, "gap") else "loss"
    measure = getattr(problem, objective)
    rng = checks.generator(seed, "seed")
    code = scheme.code
    theta = np.array(problem.initial() if theta0 is None else theta0, dtype=float)
    server = _Server(problem, scheme, warmup, max_iter, theta)
    gap0 = measure(theta)
    hist = _History(gap0, theta, keep_thetas)
    status, message = ("converged" if gap0 <= target else "max_iter"), ""
    limit = diverge * max(gap0, 1.0)
    steps = range(max_iter if status != "converged" else 0)
    for k in _progress(steps, "train", progress, unit="iteration", delay=2):  # (shown past 2 s)
        if k % BLOCK == 0:
            block = model.sample(rng, BLOCK, code.n_workers, code.load)  # (BLOCK, n, load)
        done = _iteration(server, theta, block[k % BLOCK], lr, computation, duplicates)
        if done is None:
            status, message = "stalled", _stalled(scheme, code, k, block[k % BLOCK])
            break
        theta, t_done, ups, comps, active = done
        g = measure(theta)
        hist.record(theta, g, t_done, ups, comps, active)
        if not (np.isfinite(g) and g <= limit):
            status, message = "diverged", _diverged(scheme, k, objective, g, limit, lr)
            break
        if g <= target:
            status = "converged"
            break
    message = _stop_message(scheme, status, message, hist.cols["gap"], target, max_iter, objective)
    info = {**scheme.describe(), "warmup": warmup if server.trig else None, "problem": model_name(problem), "lr": lr,
            "objective": objective, "model": model.describe() if hasattr(model, "describe") else str(model),
            "computation": computation, "duplicates": duplicates}
    return TrainResult(scheme.name, status, message, float(target), *hist.arrays(), theta, hist.stacked(), info)


def _iteration(server: _Server, theta: np.ndarray, finish: np.ndarray, lr: float, computation: str,
               duplicates: str):
    """One iteration of :func:`train` at ``theta``, the compute times ``finish`` ``(n, load)`` (steps 1 to 5 of
    the module docstring): ``(theta^{k+1}, its time, uploads, computations, units used)``, or ``None`` when the
    iteration can never decode."""
    lazy_on = server.trig is not None and len(server.diffs) >= server.D
    rhs = lazy.threshold(np.array(server.diffs), lr, server.M_thr, server.xi) if lazy_on else 0.0
    asked, computing = server.ask(theta, lazy_on, rhs)
    fresh, upload = server.fresh(theta, asked, lazy_on, rhs)
    t_done, received = server.arrivals(finish, asked, upload)
    if not np.isfinite(t_done):
        return None
    used_fresh = server.receive(theta, fresh, upload, received)
    new = server.step(theta, received, lr)
    ups, comps = server.work(used_fresh, received, computing, finish, t_done, computation, duplicates)
    return new, t_done, ups, comps, int(used_fresh.sum())


class _History:
    """What :func:`train` keeps per iterate: the gap (or loss), the cumulative time, uploads and computations, the
    units used (``cols``, lists from index 0, the start) and, with ``keep``, the iterates."""

    def __init__(self, gap0: float, theta: np.ndarray, keep: bool):
        self.cols = {"gap": [gap0], "time": [0.0], "uploads": [0], "computations": [0], "active": [0]}
        self.thetas = [theta.copy()] if keep else None

    def record(self, theta, gap, t_done, uploads, computations, active) -> None:
        c = self.cols
        for key, v in (("gap", gap), ("time", c["time"][-1] + t_done), ("uploads", c["uploads"][-1] + uploads),
                       ("computations", c["computations"][-1] + computations), ("active", active)):
            c[key].append(v)
        if self.thetas is not None:
            self.thetas.append(theta.copy())

    def arrays(self) -> tuple:
        """``(gap, time, uploads, computations, active)`` as arrays."""
        return tuple(np.array(v) for v in self.cols.values())

    def stacked(self):
        """The iterates ``(iterations + 1, d)``, or ``None`` when they were not kept."""
        return None if self.thetas is None else np.array(self.thetas)


def _diverged(scheme: LazyScheme, k: int, objective: str, g: float, limit: float, lr: float) -> str:
    return (f"{scheme.name}: diverged at iteration {k + 1} ({objective} {g:.3g} > {limit:.3g}); try a smaller lr "
            f"(now {lr:.3g})")


def _stalled(scheme: LazyScheme, code: GradientCode, k: int, finish: np.ndarray) -> str:
    mute = np.flatnonzero(~np.isfinite(finish).all(axis=1)).tolist()
    return (f"{scheme.name}: iteration {k} never decodes (workers {mute} never answer; code '{code.name}' "
            f"tolerates {code.stragglers} stragglers); stopped with the {k} iterations done")


def _stop_message(scheme: LazyScheme, status: str, message: str, gaps: list, target: float, max_iter: int,
                  objective: str = "gap") -> str:
    if status == "converged":
        return f"{scheme.name}: reached {objective} {gaps[-1]:.3g} <= {target:g} in {len(gaps) - 1} iterations"
    if status == "max_iter":
        return (f"{scheme.name}: did not reach {objective} {target:g} in max_iter = {max_iter} iterations "
                f"({objective} {gaps[-1]:.3g}); raise max_iter or the target")
    return message


def compare(problem: Model, schemes, model: ComputeModel, *, seeds=(0,), target: float = 1e-6,
            progress: bool = False, curves: bool = False, **kw):
    """Run every scheme for every seed (common random numbers across schemes).

    Args:
        schemes: ``{label: LazyScheme}``. seeds: seeds of the compute times. kw: passed to :func:`train`.
    Returns:
        ``(totals, curves)``: a DataFrame with one row per (scheme, seed) (``status, iterations, time, uploads,
        computations, final_gap``) and, when ``curves``, a DataFrame of every iterate (else ``None``).
    """
    import pandas as pd  # here: every MPI rank imports this module, and pandas would lengthen each rank's start

    rows, frames = [], []
    items = [(lab, s) for s in seeds for lab in schemes]
    it = _progress(items, "train", progress)
    for lab, s in it:
        res = train(problem, schemes[lab], model, target=target, seed=s, **kw)
        tot = res.totals()
        rows.append({"scheme": lab, "seed": s, "status": res.status, "final_gap": float(res.gap[-1]),
                     **{key: (math.nan if v is None else v) for key, v in tot.items()}})
        if curves:
            f = res.frame()
            f["scheme"], f["seed"] = lab, s
            frames.append(f)
    return pd.DataFrame(rows), (pd.concat(frames, ignore_index=True) if curves else None)
