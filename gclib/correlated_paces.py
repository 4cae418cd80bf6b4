"""What real clusters have and independent draws lose: worker identity, whole slow iterations, and the rest.

A worker's *pace* in an iteration is its mean task duration there (the per-worker sample of :func:`gclib.fit.samples`).
On a real cluster the paces of one iteration are not independent draws: the same one or two machines are slow in
almost every iteration (a *worker effect*), and some iterations are slow for every worker (an *iteration effect*).
This module measures both and builds the models that keep them:

* :func:`split`: the variance of the log paces ``y[i, w] = mu + a[i] + b[w] + e[i, w]`` split into its iteration,
  worker and residual parts by the two-way random-effects analysis of variance (method of moments, one observation
  per cell: :func:`decompose`), with 95% intervals from a pigeonhole bootstrap (iterations and workers resampled
  independently with replacement; Owen, "The pigeonhole bootstrap", Annals of Applied Statistics 2007), and which
  worker is the slowest how often (:func:`slowest_worker`);
* :func:`models`: :class:`gclib.stragglers.Replay` by iteration (recorded iterations replayed whole, every worker
  itself; the trace's workers only) and :class:`WorkerEffects` (the three parts drawn, any number of workers), or
  why a trace cannot have them;
* :func:`support`: the goodness of fit of any model on what the advice needs, the paces of a whole iteration: the
  mean over iterations of the ``k``-th fastest worker's pace, ``k = 1 .. W`` (every design completes at one of
  them), against the model's, by a parametric bootstrap (which of them the advice ranks under, and why, is
  :func:`gclib.advise.model_choice.choose`'s).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gclib import checks
from gclib.stats import percentile_interval
from gclib.stragglers import ComputeModel, Replay, filled, whole_rows
from gclib.timings import Timings

#: The parts of the variance of the log paces, in display order.
PARTS = ("worker", "iteration", "residual")
#: Bootstrap replicates of :func:`split` and :func:`support` by default.
BOOTSTRAP = 200
#: Iterations each model simulates in :func:`support` to know its own mean and spread of the order statistics.
REFERENCE_TRIALS = 4000
#: The level below which :func:`support` calls a model not supported.
LEVEL = 0.05


def decompose(y) -> dict:
    """The two-way decomposition of a complete ``(iterations, workers)`` table ``y`` (one value per cell) and the
    method-of-moments variance components of the random-effects model ``y = mu + a + b + e``.

    Returns:
        ``mu`` (grand mean), ``a`` (``(I,)`` row means - mu), ``b`` (``(W,)`` column means - mu), ``e`` (``(I, W)``
        the rest), and ``var_iteration = max(0, (MS_rows - MS_res) / W)``, ``var_worker = max(0, (MS_cols - MS_res) /
        I)``, ``var_residual = MS_res`` with ``MS_rows = W sum a^2 / (I - 1)``, ``MS_cols = I sum b^2 / (W - 1)``,
        ``MS_res = sum e^2 / ((I - 1)(W - 1))``.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 2 or min(y.shape) < 2 or not np.isfinite(y).all():
        raise ValueError(f"y must be a finite (iterations, workers) table with at least 2 of each, got shape "
                         f"{y.shape}" + ("" if np.isfinite(y).all() else " with non-finite values"))
    I, W = y.shape
    mu = float(y.mean())
    a = y.mean(axis=1) - mu
    b = y.mean(axis=0) - mu
    e = y - mu - a[:, None] - b[None, :]
    ms_res = float((e ** 2).sum() / ((I - 1) * (W - 1)))
    ms_rows = float(W * (a ** 2).sum() / (I - 1))
    ms_cols = float(I * (b ** 2).sum() / (W - 1))
    return {"mu": mu, "a": a, "b": b, "e": e, "var_iteration": max(0.0, (ms_rows - ms_res) / W),
            "var_worker": max(0.0, (ms_cols - ms_res) / I), "var_residual": ms_res}


@dataclass(eq=False)
class WorkerEffects(ComputeModel):
    """A worker's pace in an iteration (its mean task duration) as ``exp(mu + a + b + e)``: ``a`` the iteration's
    effect, shared by all its workers; ``b`` the worker's own effect, the same in every iteration; ``e`` the rest.
    Fitted to a trace by the two-way decomposition of the log paces (:func:`decompose`): the
    estimated effects, each set scaled to the variance its component has in the random-effects analysis of
    variance (the estimates themselves also carry part of the residual), are the pools the model draws from. A
    task takes the pace times the relative duration that task had in a recorded (iteration, worker) (its shape:
    the microbatches of an iteration need not take equal times).

    Every trial draws its iteration effect and, for each worker, a residual and a shape. With ``keep_workers`` and
    as many workers as the trace, worker ``w`` keeps its own estimated effect and shapes from its own iterations;
    otherwise each trial draws every worker's effect from the pool (a cluster of workers drawn anew in every
    iteration: the expected time over clusters like the trace's).

    ``times``: ``(iterations, workers, tasks)``, every worker's pace finite and positive in every iteration, at
    least 2 iterations and 2 workers.
    """

    times: np.ndarray = None
    keep_workers: bool = True
    name = "worker effects"
    per_task = True

    def __post_init__(self):
        self.times = whole_rows(self.times, "worker effects")
        rows = filled(self.times)
        if not np.isfinite(rows).all():
            raise ValueError("worker effects needs finite task times (a worker that never answered has no pace)")
        pace = rows.mean(axis=2)
        if not (pace > 0).all():
            raise ValueError("worker effects needs positive paces (its effects are on the log scale)")
        if not isinstance(self.keep_workers, (bool, np.bool_)):
            raise checks.ParameterTypeError(f"keep_workers must be True or False, got {self.keep_workers!r}")
        d = decompose(np.log(pace))
        self.mu = d["mu"]
        self._a = _scaled(d["a"], d["var_iteration"])
        self._b = _scaled(d["b"], d["var_worker"])
        self._b_own = d["b"]
        self._e = _scaled(d["e"].ravel(), d["var_residual"])
        self._shape = rows / pace[:, :, None]

    def sample(self, rng, trials, workers, n_tasks):
        I, W, k = self._shape.shape
        own = bool(self.keep_workers) and workers == W
        a = self._a[rng.integers(0, I, size=trials)][:, None]
        b = self._b_own[None, :] if own else self._b[rng.integers(0, W, size=(trials, workers))]
        e = self._e[rng.integers(0, self._e.size, size=(trials, workers))]
        pace = np.exp(self.mu + a + b + e)
        cell_i = rng.integers(0, I, size=(trials, workers))
        cell_w = np.broadcast_to(np.arange(W), (trials, W)) if own else rng.integers(0, W, size=(trials, workers))
        shape = self._shape[cell_i, cell_w][:, :, :n_tasks]
        if n_tasks > k:
            shape = np.concatenate([shape, np.ones((trials, workers, n_tasks - k))], axis=2)
        return np.cumsum(pace[:, :, None] * shape, axis=2)

    def describe(self):
        return {"model": "worker effects", "shape": list(self.times.shape), "keep_workers": bool(self.keep_workers),
                "mu": float(self.mu), "sd_iteration": float(np.sqrt(np.mean(self._a ** 2))),
                "sd_worker": float(np.sqrt(np.mean(self._b ** 2))), "sd_residual": float(np.sqrt(np.mean(self._e ** 2)))}


def _scaled(x: np.ndarray, var: float) -> np.ndarray:
    """``x`` (centred effects) scaled so that their mean square is ``var`` (zeros when either is 0)."""
    ms = float(np.mean(np.square(x)))
    return x * math.sqrt(var / ms) if ms > 0 and var > 0 else np.zeros_like(x)


def paces(t) -> np.ndarray:
    """``(iterations, workers)``: each worker's mean task duration in each iteration, over its tasks made whole
    as :func:`gclib.stragglers.filled` says (``inf`` for a worker that never answered, ``nan`` for one absent)."""
    d = t.durations if isinstance(t, Timings) else np.asarray(t, dtype=float)
    return filled(d).mean(axis=2)


def _fractions(y) -> np.ndarray:
    d = decompose(y)
    v = np.array([d["var_worker"], d["var_iteration"], d["var_residual"]])
    total = v.sum()
    return v / total if total > 0 else np.full(3, np.nan)


@dataclass(frozen=True)
class VarianceSplit:
    """The split of the variance of a trace's log paces (:func:`split`).

    Attributes:
        variance: part -> its variance component (log scale). fraction: part -> its share of their sum.
        ci: part -> ``(lo, hi)``, the 95% percentile interval of the share over the bootstrap. iterations, workers:
            the table's size. bootstrap: replicates. slowest: :func:`slowest_worker` of the trace.
    """

    variance: dict
    fraction: dict
    ci: dict
    iterations: int
    workers: int
    bootstrap: int
    slowest: dict = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """One row per part: ``part, variance, fraction, lo, hi``."""
        return pd.DataFrame([{"part": p, "variance": self.variance[p], "fraction": self.fraction[p],
                              "lo": self.ci[p][0], "hi": self.ci[p][1]} for p in PARTS])

    def text(self) -> str:
        """``worker 99.6% [97.1, 99.9], iteration 0.3% [...], residual 0.1% [...]``."""
        return ", ".join(f"{p} {100 * self.fraction[p]:.1f}% [{100 * self.ci[p][0]:.1f}, {100 * self.ci[p][1]:.1f}]"
                         for p in PARTS)


def _complete_paces(t, who) -> np.ndarray:
    p = paces(t)
    if np.isnan(p).any():
        i, w = (int(v) for v in np.argwhere(np.isnan(p))[0])
        raise ValueError(f"{who} needs every worker's time in every iteration: worker {w} has none in iteration {i}")
    if not np.isfinite(p).all() or not (p > 0).all():
        raise ValueError(f"{who} needs finite positive paces (a worker that never answered, or took 0 s, has no "
                         f"log pace)")
    if min(p.shape) < 2:
        raise ValueError(f"{who} needs at least 2 iterations and 2 workers, got {p.shape[0]} x {p.shape[1]}")
    return p


def slowest_worker(t) -> dict:
    """The worker that is slowest on average: ``index`` (its position), ``worker`` (its id), ``share`` (the
    fraction of iterations in which it is the slowest), ``pace`` (its mean pace), ``ratio`` (its mean pace over the
    median of the workers' mean paces)."""
    p = _complete_paces(t, "slowest_worker")
    mean = p.mean(axis=0)
    w = int(np.argmax(mean))
    ids = t.worker_ids if isinstance(t, Timings) else np.arange(p.shape[1])
    return {"index": w, "worker": int(ids[w]), "share": float(np.mean(np.argmax(p, axis=1) == w)),
            "pace": float(mean[w]), "ratio": float(mean[w] / np.median(mean))}


def without_slowest(t) -> np.ndarray:
    """The durations of ``t`` with the slowest worker's (:func:`slowest_worker`) scaled to the median worker's mean
    pace: the trace as it would be had that worker kept the pace of the others."""
    d = np.array(t.durations if isinstance(t, Timings) else t, dtype=float)
    s = slowest_worker(d)
    p = paces(d).mean(axis=0)
    d[:, s["index"], :] *= float(np.median(p)) / s["pace"]
    return d


def split(t, *, bootstrap: int = BOOTSTRAP, seed=0) -> VarianceSplit:
    """The variance split of ``t``'s log paces (see the module docstring).

    Args:
        t: a :class:`gclib.timings.Timings` or an ``(iterations, workers, tasks)`` array, every worker's pace
            finite and positive in every iteration. bootstrap: pigeonhole replicates (0: no intervals). seed: an
            integer or a ``numpy.random.Generator``.
    """
    bootstrap = checks.integer("bootstrap", bootstrap, low=0)
    rng = checks.generator(seed)
    y = np.log(_complete_paces(t, "the variance split"))
    d = decompose(y)
    var = {"worker": d["var_worker"], "iteration": d["var_iteration"], "residual": d["var_residual"]}
    total = sum(var.values())
    frac = {p: (v / total if total > 0 else math.nan) for p, v in var.items()}
    ci = {p: (math.nan, math.nan) for p in PARTS}
    if bootstrap:
        I, W = y.shape
        reps = np.empty((bootstrap, 3))
        for b in range(bootstrap):
            reps[b] = _fractions(y[rng.integers(0, I, size=I)][:, rng.integers(0, W, size=W)])
        ci = {p: percentile_interval(frac[p], reps[:, j]) for j, p in enumerate(PARTS)}
    return VarianceSplit(var, frac, ci, int(y.shape[0]), int(y.shape[1]), bootstrap, slowest_worker(t))


def models(t) -> tuple[dict, dict]:
    """The models of :mod:`gclib.stragglers` that keep worker identity and whole iterations, fitted to ``t``.

    Returns:
        ``({name: model}, {name: why not})``: ``"replay by iteration"`` (:class:`gclib.stragglers.Replay`)
        and ``"worker effects"`` (:class:`WorkerEffects`), each with the reason when ``t`` cannot
        have it (a worker missing from an iteration, a worker that never answered, a single iteration).
    """
    d = t.durations if isinstance(t, Timings) else np.asarray(t, dtype=float)
    out, why = {}, {}
    for name, cls in TRACE_MODELS.items():
        try:
            if name == "worker effects":
                _complete_paces(d, name)
            out[name] = cls(d)
        except ValueError as e:
            why[name] = str(e)
    return out, why


def by_iteration(times) -> Replay:
    """The trace ``times`` replayed by whole iterations (:class:`gclib.stragglers.Replay`, ``by="iteration"``)."""
    return Replay(times, by="iteration")


#: The models of :func:`models` by name, each from a trace's durations ``(iterations, workers, tasks)``.
TRACE_MODELS = {"replay by iteration": by_iteration, "worker effects": WorkerEffects}


def can_simulate(model: ComputeModel, K: int) -> bool:
    """Whether ``model`` draws ``K`` workers (a replay by iteration only the trace's)."""
    return not isinstance(model, Replay) or model.workers() in (None, K)


def support(candidates: dict, t, *, bootstrap: int = BOOTSTRAP, trials: int = REFERENCE_TRIALS, seed=0,
            level: float = LEVEL) -> pd.DataFrame:
    """The goodness of fit of every model on a trace's whole iterations.

    The statistic: the mean over the trace's ``I`` iterations of its ``k``-th fastest pace, ``S_k``, ``k = 1 .. W``
    (uncoded completes with the slowest, ``k = W``; a code that waits for ``W - s`` workers at the ``W - s``-th).
    Each model simulates ``trials`` iterations of the trace's ``W`` workers and ``tasks`` tasks, for its mean
    ``m_k`` and standard deviation ``s_k`` of the ``k``-th fastest pace; the distance is ``D = max_k |S_k - m_k| /
    (s_k / sqrt(I))``. ``p_value = (1 + #{D_b >= D}) / (1 + bootstrap)`` over replicate traces of ``I`` iterations
    drawn from the model. The model is not refitted to the replicates, so the test is conservative for fitted
    models (their fit is closer to the trace than to a fresh draw); a model rejected by it misses the order
    statistics of whole iterations by more than the trace's own sampling error.

    Args:
        candidates: ``{name: ComputeModel}``. t: the trace (a :class:`~gclib.timings.Timings`), every worker's pace
            finite in every iteration. level: the p-value below which a model is not supported.
    Returns:
        one row per model: ``model, distance, p_value, supported, slowest_model, slowest_trace, slowest_error``
        (the mean slowest pace of the model against the trace's, and their relative difference), ``fastest_error``
        (the same for the fastest pace), ``note`` (why a model could not be judged: then the numbers are NaN).
    """
    bootstrap = checks.integer("bootstrap", bootstrap, low=1)
    trials = checks.integer("trials", trials, low=2)
    rng = checks.generator(seed)
    p = _complete_paces(t, "the goodness of fit on whole iterations")
    I, W = p.shape
    J = t.durations.shape[2] if isinstance(t, Timings) else np.asarray(t).shape[2]
    S = np.sort(p, axis=1).mean(axis=0)
    rows = []
    seeds = rng.integers(0, 2 ** 63, size=len(candidates))
    for (name, m), s in zip(candidates.items(), seeds):
        r = np.random.default_rng(s)
        try:
            ref = np.sort(m.sample(r, trials, W, J)[:, :, J - 1] / J, axis=1)
            rep = np.sort(m.sample(r, bootstrap * I, W, J)[:, :, J - 1] / J, axis=1).reshape(bootstrap, I, W)
        except ValueError as e:
            rows.append({"model": name, "distance": math.nan, "p_value": math.nan, "supported": False,
                         "slowest_model": math.nan, "slowest_trace": float(S[-1]), "slowest_error": math.nan,
                         "fastest_error": math.nan, "note": str(e)})
            continue
        if not np.isfinite(ref).all():
            rows.append({"model": name, "distance": math.nan, "p_value": math.nan, "supported": False,
                         "slowest_model": math.inf, "slowest_trace": float(S[-1]), "slowest_error": math.inf,
                         "fastest_error": math.nan, "note": "the model has workers that never answer"})
            continue
        mk = ref.mean(axis=0)
        se = np.maximum(ref.std(axis=0, ddof=1), 1e-12 * np.abs(mk)) / math.sqrt(I)
        se = np.where(se > 0, se, 1e-300)
        dist = float(np.max(np.abs(S - mk) / se))
        db = np.max(np.abs(rep.mean(axis=1) - mk) / se, axis=1)
        pv = float((1 + np.count_nonzero(db >= dist)) / (1 + bootstrap))
        rows.append({"model": name, "distance": dist, "p_value": pv, "supported": pv >= level,
                     "slowest_model": float(mk[-1]), "slowest_trace": float(S[-1]),
                     "slowest_error": float(mk[-1] / S[-1] - 1), "fastest_error": float(mk[0] / S[0] - 1),
                     "note": ""})
    return pd.DataFrame(rows, columns=["model", "distance", "p_value", "supported", "slowest_model",
                                       "slowest_trace", "slowest_error", "fastest_error", "note"])
