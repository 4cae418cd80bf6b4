"""When things finish: compute-time models for workers.

Every model samples, for each trial and worker, the time at which the worker finishes its ``j``-th partial
gradient (``j = 1 .. n_tasks``), as a ``(trials, workers, n_tasks)`` array that is non-decreasing along the last
axis. Two conventions are available for each distribution:

* ``per_task=False`` (default, the convention of the GC-MMC paper's eq. 5): one draw ``X`` per worker and
  iteration, and the ``j``-th result is ready at ``j * X``; all of a worker's tasks run at the same speed;
* ``per_task=True``: the task durations are independent draws and the ``j``-th result is ready at their sum.

Models:

* :class:`ShiftedExponential` ``(mu, alpha)``: task time ``alpha + Exp(rate mu)``;
* :class:`Exponential` ``(rate)``: task time ``Exp(rate)``;
* :class:`Pareto` ``(scale, shape)``: task time with ``P(T > t) = (scale / t) ** shape`` for ``t >= scale``;
* :class:`Persistent` ``(base, ...)``: wraps a model; some workers never answer (time ``inf``);
* :class:`Replay` ``(times, by)``: recorded per-task times replayed (e.g. from a real run): (iteration, worker)
  rows drawn independently for any number of workers and tasks (the empirical model of a timing trace,
  :mod:`gclib.timings`), whole iterations drawn (the workers themselves, and the slowness an iteration's workers
  share, kept), or the iterations in turn;
* :class:`gclib.correlated_paces.WorkerEffects` keeps what independent rows lose for any number of workers
  (:mod:`gclib.correlated_paces`).

All randomness comes from the ``numpy.random.Generator`` passed in.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from gclib import checks


def _positive(name, value):
    return checks.real(name, value, above=0)


def _nonneg(name, value):
    return checks.real(name, value, low=0)


def _rate(name, value):
    """A positive rate whose inverse (the mean time) is a finite float too."""
    v = _positive(name, value)
    if math.isinf(1.0 / v):
        raise ValueError(f"{checks.must_be(name)} at least {1 / sys.float_info.max:.3g} (its inverse, the mean time, "
                         f"overflows float64 below that), got {value!r}; use a larger time unit")
    return v


class ComputeModel:
    """Base class: subclasses implement :meth:`task_draws` (one draw per worker, or one per task)."""

    per_task: bool = False

    def task_draws(self, rng: np.random.Generator, shape) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, trials: int, workers: int, n_tasks: int) -> np.ndarray:
        """Finish time of every worker's ``j``-th task.

        Returns:
            ``(trials, workers, n_tasks)`` float array, non-decreasing along the last axis.
        """
        with np.errstate(over="ignore"):  # an overflow is refused below, in one line
            if self.per_task:
                out = np.cumsum(self.task_draws(rng, (trials, workers, n_tasks)), axis=2)
            else:
                out = self.task_draws(rng, (trials, workers, 1)) * np.arange(1, n_tasks + 1)
        if not np.isfinite(out).all():  # only Persistent and Replay may say "never" (inf)
            raise ValueError(f"compute-time model {self.describe()} gives finish times beyond the float64 range "
                             f"(inf) for {n_tasks} tasks per worker; measure time in a larger unit")
        return out

    def per_worker(self, rng: np.random.Generator, trials: int, workers: int, n_tasks: int) -> np.ndarray:
        """The one draw per worker and trial of an eq. 5 model (``per_task=False``): worker ``w`` finishes its
        ``j``-th task at ``j * X[t, w]``. The same random stream as :meth:`sample`, without the
        ``(trials, workers, n_tasks)`` array: ``sample(...) == per_worker(...)[:, :, None] * arange(1, n_tasks + 1)``.

        Returns:
            ``(trials, workers)`` float array (``inf`` for a worker that never answers).
        Raises:
            ValueError: the model draws per task (``per_task=True``), or ``n_tasks`` tasks overflow float64.
        """
        if self.per_task:
            raise ValueError(f"per_worker needs a model with one draw per worker (per_task=False), got "
                             f"{self.describe()}")
        x = self.task_draws(rng, (trials, workers, 1))[:, :, 0]
        with np.errstate(over="ignore"):
            last = x.max() * n_tasks if x.size else 0.0  # times are non-negative: the largest is the last
        if not np.isfinite(last):
            raise ValueError(f"compute-time model {self.describe()} gives finish times beyond the float64 range "
                             f"(inf) for {n_tasks} tasks per worker; measure time in a larger unit")
        return x

    def describe(self) -> dict:
        return {"model": self.name, **self.__dict__}


@dataclass
class ShiftedExponential(ComputeModel):
    """Task time ``alpha + E`` with ``E ~ Exp(rate mu)`` (GC-MMC eq. 5 when ``per_task`` is False)."""

    mu: float = 10.0
    alpha: float = 0.01
    per_task: bool = False
    name = "shifted-exp"

    def __post_init__(self):
        self.mu = _rate("mu", self.mu)
        self.alpha = _nonneg("alpha", self.alpha)

    def task_draws(self, rng, shape):
        e = rng.exponential(1.0 / self.mu, size=shape)
        e += self.alpha  # alpha + E, in place: the same numbers without a second array
        return e


@dataclass
class Exponential(ComputeModel):
    """Task time ``Exp(rate)`` (light tail)."""

    rate: float = 1.0
    per_task: bool = False
    name = "exp"

    def __post_init__(self):
        self.rate = _rate("rate", self.rate)

    def task_draws(self, rng, shape):
        return rng.exponential(1.0 / self.rate, size=shape)


@dataclass
class Pareto(ComputeModel):
    """Task time with ``P(T > t) = (scale / t) ** shape``, ``t >= scale`` (heavy tail; mean finite iff shape > 1)."""

    scale: float = 1.0
    shape: float = 2.0
    per_task: bool = False
    name = "pareto"

    def __post_init__(self):
        self.scale = _positive("scale", self.scale)
        self.shape = _positive("shape", self.shape)

    def task_draws(self, rng, shape):
        e = rng.pareto(self.shape, size=shape)
        e += 1.0
        e *= self.scale  # scale * (1 + P), in place: the same numbers without more arrays
        return e


@dataclass
class Persistent(ComputeModel):
    """Wrap ``base`` so that some workers never answer.

    Either ``workers`` (a fixed list of worker ids) or ``count`` (that many workers drawn uniformly at random in
    every trial) is given.
    """

    base: ComputeModel
    count: int = 0
    workers: Optional[Sequence[int]] = None
    name = "persistent"

    def __post_init__(self):
        if not isinstance(self.base, ComputeModel):
            raise ValueError("base must be a compute-time model")
        if self.workers is not None:
            self.workers = list(checks.int_list("workers", self.workers, low=0, min_len=0))
        self.count = checks.integer("count", self.count, low=0)
        if self.workers is not None and self.count:
            raise ValueError(f"give either workers (fixed ids, got {self.workers}) or count (random per trial, got "
                             f"{self.count}), not both: the random ones could fall on the fixed ones")

    @property
    def per_task(self):
        return self.base.per_task

    def sample(self, rng, trials, workers, n_tasks):
        t = self.base.sample(rng, trials, workers, n_tasks)
        if self.workers is not None:
            bad = [w for w in self.workers if not 0 <= w < workers]
            if bad:
                raise ValueError(f"persistent straggler ids {bad} outside [0, {workers})")
            t[:, self.workers, :] = np.inf
        if self.count:
            if self.count > workers:
                raise ValueError(f"count = {self.count} persistent stragglers exceeds {workers} workers")
            keys = rng.random((trials, workers))
            dead = np.argsort(keys, axis=1)[:, : self.count]
            np.put_along_axis(t, dead[:, :, None].repeat(n_tasks, axis=2), np.inf, axis=1)
        return t

    def per_worker(self, rng, trials, workers, n_tasks):
        """:meth:`ComputeModel.per_worker` of ``base``, with ``inf`` for the workers that never answer (the same
        draws as :meth:`sample`)."""
        x = self.base.per_worker(rng, trials, workers, n_tasks)
        self._check_workers(workers)
        if self.workers is not None:
            x[:, self.workers] = np.inf
        if self.count:
            keys = rng.random((trials, workers))
            dead = np.argsort(keys, axis=1)[:, : self.count]
            np.put_along_axis(x, dead, np.inf, axis=1)
        return x

    def _check_workers(self, workers):
        if self.workers is not None:
            bad = [w for w in self.workers if not 0 <= w < workers]
            if bad:
                raise ValueError(f"persistent straggler ids {bad} outside [0, {workers})")
        if self.count > workers:
            raise ValueError(f"count = {self.count} persistent stragglers exceeds {workers} workers")

    def describe(self):
        return {"model": "persistent", "count": self.count, "workers": self.workers, "base": self.base.describe()}


#: The ways :class:`Replay` draws a trial's durations from a record, and the model's name for each.
REPLAY_NAMES = {"row": "replay", "iteration": "replay by iteration", "cycle": "trace", "order": "recorded"}


@dataclass(eq=False)
class Replay(ComputeModel):
    """A timing trace replayed: the task durations of recorded ``(iteration, worker)`` rows, drawn in one of four
    ways (``by``):

    * ``"row"`` (the model ``"replay"``, the empirical model of a timing trace): every (trial, worker) gets the
      tasks of one recorded row, drawn uniformly with replacement with the ``rng``, so that a worker's tasks keep
      the pace they had together, and any number of workers can be drawn; workers that never answered come back at
      their recorded rate, each worker independently (unlike :class:`Persistent`, whose ``count`` is fixed);
    * ``"iteration"`` (``"replay by iteration"``): every trial takes one recorded iteration, drawn uniformly with
      replacement, and worker ``w`` gets its own row of it: the workers themselves (one slow in every iteration
      stays slow) and the slowness an iteration's workers share are kept; the trace's own workers only
      (:class:`gclib.correlated_paces.WorkerEffects` draws any number);
    * ``"cycle"`` (``"trace"``): trial ``t`` of every draw takes iteration ``t mod iterations``, no randomness;
    * ``"order"`` (``"recorded"``): the iterations in their order, one per trial, continuing from one draw to the
      next (each recorded iteration once, for the observed times of a back-test).

    ``times``: ``(iterations, workers, tasks)`` recorded durations (``nan`` = not observed, ``inf`` = never
    finished). By row, a row with no observed task is left out; by iteration, every worker must be observed in
    every iteration; by cycle or order, every duration must be observed, and a draw takes the trace's workers and
    at most its tasks. By row or iteration, a task not observed, and every task beyond the recorded ones (when more
    tasks are asked than recorded), takes the mean of the row's finite durations (the worker's own pace in that
    iteration, :func:`filled`); after a task that never finished, every task is ``inf``.
    """

    times: np.ndarray = None
    by: str = "row"
    per_task = True

    def __post_init__(self):
        self.by = checks.choice("by", self.by, tuple(REPLAY_NAMES))
        self.name = REPLAY_NAMES[self.by]
        self._next = 0
        if self.by == "iteration":
            self.times = whole_rows(self.times, "replay by iteration")
            self._rows = filled(self.times)
            return
        t = np.asarray(self.times, dtype=float)
        if self.by != "row":
            if t.ndim != 3 or t.size == 0 or not np.all(t >= 0):  # NaN fails >= 0 too
                raise ValueError(f"times must be a non-empty (iterations, workers, n_tasks) array of non-negative "
                                 f"durations (inf for a task that never finishes), got shape {t.shape}"
                                 + (" with NaN or negative entries" if t.size else ""))
            self.times = self._rows = t
            return
        _recorded(t)
        rows = filled(t, t.shape[2] + 1).reshape(-1, t.shape[2] + 1)  # the last column: the pace beyond the record
        rows = rows[~np.isnan(rows).all(axis=1)]
        if not len(rows):
            raise ValueError("times must hold at least one observed duration, got only nan")
        self._rows, self._pace = rows[:, :-1], rows[:, -1]
        self.times = t

    def sample(self, rng, trials, workers, n_tasks):
        if self.by == "row":
            return self._by_row(rng, trials, workers, n_tasks)
        it, w, k = self._rows.shape
        if self.by == "iteration":
            if workers != w:
                raise ValueError(f"replay by iteration keeps the trace's {w} workers, got {workers} workers; the "
                                 f"worker effects model draws any number")
            rows = self._rows if n_tasks <= k else filled(self.times, n_tasks)
            idx = rng.integers(0, it, size=trials)
        else:
            if w != workers or k < n_tasks:
                raise ValueError(f"trace has {w} workers x {k} tasks, need {workers} x {n_tasks}")
            rows = self._rows
            idx = (self._next + np.arange(trials)) % it
            self._next += trials if self.by == "order" else 0
        return np.cumsum(rows[idx][:, :, :n_tasks], axis=2)

    def _by_row(self, rng, trials, workers, n_tasks):
        idx = rng.integers(0, len(self._rows), size=(trials, workers))
        k = self._rows.shape[1]
        d = self._rows[idx][:, :, :n_tasks]
        if n_tasks > k:
            d = np.concatenate([d, np.repeat(self._pace[idx][:, :, None], n_tasks - k, axis=2)], axis=2)
        return np.cumsum(d, axis=2)

    def workers(self) -> int | None:
        """How many workers this replay draws: any (``None``) by row, the trace's otherwise."""
        return None if self.by == "row" else int(self.times.shape[1])

    def describe(self):
        out = {"model": self.name, "shape": list(self.times.shape)}
        return {**out, "rows": int(len(self._rows))} if self.by == "row" else out


def filled(times, n_tasks: int | None = None) -> np.ndarray:
    """Recorded durations ``(iterations, workers, tasks)`` made whole as :class:`Replay` reads them: a task not
    observed (``nan``) takes the mean of its row's finite durations (the worker's pace in that iteration), every
    task after one that never finished is ``inf``, and tasks beyond the record (up to ``n_tasks``) take the row's
    pace (``inf`` when the row's last task never finished). A row with no observed task is ``nan`` throughout.

    Returns:
        ``(iterations, workers, max(tasks, n_tasks))`` float array.
    """
    t = np.asarray(times, dtype=float)
    fin = np.isfinite(t)
    with np.errstate(invalid="ignore", divide="ignore"):
        pace = np.where(fin, t, 0.0).sum(axis=2) / fin.sum(axis=2)  # nan for a row without a finite time
    empty = np.isnan(t).all(axis=2)
    dead = np.cumsum(np.isinf(t), axis=2) > 0
    pace = np.where(np.isnan(pace) & ~empty, np.inf, pace)
    out = np.where(dead, np.inf, np.where(np.isnan(t), pace[:, :, None], t))
    k = t.shape[2]
    if n_tasks is not None and n_tasks > k:
        beyond = np.where(dead[:, :, -1], np.inf, pace)
        out = np.concatenate([out, np.repeat(beyond[:, :, None], n_tasks - k, axis=2)], axis=2)
    out[empty] = np.nan
    return out


def _recorded(t: np.ndarray) -> np.ndarray:
    """``t`` (float) when it is a non-empty ``(iterations, workers, tasks)`` array of durations >= 0 (``nan`` and
    ``inf`` allowed); ValueError otherwise."""
    if t.ndim != 3 or t.size == 0 or (t < 0).any():
        raise ValueError(f"times must be a non-empty (iterations, workers, tasks) array of durations >= 0 (nan = not "
                         f"observed, inf = never), got shape {t.shape}"
                         + (" with negative entries" if t.size and (t < 0).any() else ""))
    return t


def whole_rows(t, who: str) -> np.ndarray:
    """``t`` as a float ``(iterations, workers, tasks)`` array of durations >= 0 in which every worker has a task
    observed (finite or ``inf``) in every iteration; ValueError naming ``who`` and the first worker and iteration
    missing otherwise."""
    t = _recorded(checks.real_array("times", t, what="durations (real numbers)"))
    empty = np.isnan(t).all(axis=2)
    if empty.any():
        i, w = (int(v) for v in np.argwhere(empty)[0])
        raise ValueError(f"{who} needs every worker's time in every iteration: worker {w} has none in iteration {i}")
    return t


MODELS = {"shifted-exp": ShiftedExponential, "exp": Exponential, "pareto": Pareto}


def make_model(name: str, **kw) -> ComputeModel:
    """Build a model by name (``shifted-exp``, ``exp``, ``pareto``) from keyword parameters; unused keys are
    ignored, so a CLI namespace can be passed through."""
    if name not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {name!r}")
    cls = MODELS[name]
    fields = {f for f in cls.__dataclass_fields__}
    return cls(**{k: v for k, v in kw.items() if k in fields and v is not None})


# ---------------------------------------------------------------------------------------------- model sets
#: The parameters of :func:`model_set` and their defaults: the shifted exponential's ``mu`` and ``alpha``, the
#: Pareto's ``pareto_scale`` and ``pareto_shape``.
SET_PARAMETERS = {"mu": 10.0, "alpha": 0.01, "pareto_scale": 0.05, "pareto_shape": 2.0}


def _shifted_exp(p, per_task=False):
    return ShiftedExponential(p["mu"], p["alpha"], per_task=per_task)


def _pareto(p):
    return Pareto(p["pareto_scale"], p["pareto_shape"])


#: The sets of compute-time models the studies compare, by name: ``(models, defaults)``, ``models`` mapping the
#: template of each model's name (:meth:`str.format` of the parameters, e.g. ``"Pareto (scale {pareto_scale:g},
#: shape {pareto_shape:g})"``) to its maker, ``defaults`` the set's own defaults over :data:`SET_PARAMETERS`.
#:
#: * ``"mmc-design"``: notebook 05's designs (:mod:`gclib.studies.mmc_design.study`), the paper's eq. 5 and a
#:   heavy-tailed Pareto;
#: * ``"scale"``: notebook 08's schemes as ``K`` grows (:mod:`gclib.studies.scale.study`), the same two named by
#:   their parameters;
#: * ``"mpi-runs"``: notebook 07's real runs (:mod:`gclib.studies.mpi_runs.study`), by their ``--model``
#:   names, the Pareto of shape 1.5;
#: * ``"timing"``: notebook 04's two conventions of the shifted exponential (:mod:`gclib.studies.gc_mmc.study`),
#:   one draw per worker (eq. 5) and independent task times.
MODEL_SETS = {
    "mmc-design": ({"shifted-exp (eq. 5)": _shifted_exp,
                    "Pareto (scale {pareto_scale}, shape {pareto_shape})": _pareto}, {}),
    "scale": ({"shifted-exp (mu {mu:g}, alpha {alpha:g})": _shifted_exp,
               "Pareto (scale {pareto_scale:g}, shape {pareto_shape:g})": _pareto}, {}),
    "mpi-runs": ({"shifted-exp": _shifted_exp, "pareto": _pareto}, {"pareto_shape": 1.5}),
    "timing": ({"eq. 5 (one draw per worker)": _shifted_exp,
                "independent per-task times": lambda p: _shifted_exp(p, per_task=True)}, {}),
}


def model_set(name: str, **params) -> dict:
    """The set of compute-time models ``name`` of :data:`MODEL_SETS`: ``{model name: model}``, from the parameters
    of :data:`SET_PARAMETERS` (``None`` or absent: the set's default)."""
    if name not in MODEL_SETS:
        raise ValueError(f"model set must be one of {sorted(MODEL_SETS)}, got {name!r}")
    unknown = sorted(set(params) - set(SET_PARAMETERS))
    if unknown:
        raise ValueError(f"model set parameters must be among {sorted(SET_PARAMETERS)}, got {unknown}")
    makers, defaults = MODEL_SETS[name]
    p = {**SET_PARAMETERS, **defaults, **{k: v for k, v in params.items() if v is not None}}
    return {template.format(**p): make(p) for template, make in makers.items()}


# ---------------------------------------------------------------------------------------------- closed forms
def harmonic(n: int) -> float:
    return float(np.sum(1.0 / np.arange(1, n + 1))) if n > 0 else 0.0


def expected_order_statistic(model: ComputeModel, n: int, k: int, load: float = 1.0) -> float:
    """``E`` of the ``k``-th smallest of ``n`` i.i.d. per-worker times ``load * X`` (``per_task=False`` models).

    * shifted exponential: ``load * (alpha + (H_n - H_{n-k}) / mu)``;
    * exponential: ``load * (H_n - H_{n-k}) / rate``;
    * Pareto: ``load * scale * Gamma(n+1) Gamma(n-k+1-1/a) / (Gamma(n-k+1) Gamma(n+1-1/a))`` (``inf`` when
      ``n - k + 1 <= 1/a``).
    """
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, {n}], got {k}")
    if isinstance(model, ShiftedExponential):
        return load * (model.alpha + (harmonic(n) - harmonic(n - k)) / model.mu)
    if isinstance(model, Exponential):
        return load * (harmonic(n) - harmonic(n - k)) / model.rate
    if isinstance(model, Pareto):
        a = model.shape
        if n - k + 1 <= 1.0 / a:
            return np.inf
        from scipy.special import gammaln  # SciPy loads here, not with the package: it doubles gclib's start-up

        lg = gammaln(n + 1) + gammaln(n - k + 1 - 1 / a) - gammaln(n - k + 1) - gammaln(n + 1 - 1 / a)
        return load * model.scale * float(np.exp(lg))
    raise ValueError(f"no closed form for model {type(model).__name__}")


def expected_max_of_group_minima(model: ComputeModel, groups: int, size: int, load: float = 1.0) -> float:
    """``E max_g min_{w in g} load * X_w``: completion time of fractional repetition (``groups`` groups of
    ``size``). The minimum of ``size`` i.i.d. exponentials is exponential with ``size`` times the rate, and the
    minimum of ``size`` Paretos is Pareto with ``size`` times the shape."""
    if isinstance(model, ShiftedExponential):
        return load * (model.alpha + harmonic(groups) / (size * model.mu))
    if isinstance(model, Exponential):
        return load * harmonic(groups) / (size * model.rate)
    if isinstance(model, Pareto):
        return expected_order_statistic(Pareto(model.scale, model.shape * size), groups, groups, load)
    raise ValueError(f"no closed form for model {type(model).__name__}")


# ---------------------------------------------------------------------------------------------- more model sets
#: The exponential's rate, a parameter of the set ``"calibration"`` (beside :data:`SET_PARAMETERS`' others).
SET_PARAMETERS["rate"] = 10.0


def _exp_per_task(p):
    return Exponential(p["rate"], per_task=True)


#: ``"calibration"``: notebook 09's generating models (:func:`gclib.studies.advise.study.truths`), the
#: GC-MMC paper's shifted exponential drawn per worker (its eq. 5), an exponential drawn per task and a Pareto drawn
#: per worker (of shape 2.5).
MODEL_SETS["calibration"] = ({"shifted-exp per worker": _shifted_exp, "exp per task": _exp_per_task,
                              "pareto per worker": _pareto}, {"pareto_shape": 2.5})


def mean_one_label(shape: float | None = None) -> str:
    """The name in :func:`mean_one_models` of the Pareto of ``shape`` (``"pareto 1.5"``), or of the exponential
    (``"exp"``) for ``None``; the shifted exponential is ``"shifted-exp"``."""
    return "exp" if shape is None else f"pareto {shape:g}"


def mean_one_pareto(shape: float = 1.5) -> Pareto:
    """The Pareto of ``shape`` (above 1, where the mean is finite) and mean 1: scale ``(shape - 1) / shape``."""
    shape = checks.real("shape", shape, above=1)
    return Pareto((shape - 1) / shape, shape)


def mean_one_models(shapes=(1.5, 3.0), shift: float = 0.5) -> dict:
    """Notebook 06's set: compute-time models of mean 1 per unit of work, heavy and light tails at the same mean
    (a function rather than an entry of :data:`MODEL_SETS`: its Pareto members are one per shape of ``shapes``):

    * ``"pareto a"``: Pareto of shape ``a`` and scale ``(a - 1) / a`` (the mean ``a scale / (a - 1)`` is 1; every
      shape must exceed 1, where the mean is finite);
    * ``"exp"``: the exponential of rate 1;
    * ``"shifted-exp"``: ``shift + Exp(rate 1 / (1 - shift))``, a light tail with a deterministic share ``shift``
      of the mean (with ``shift = 0`` it is the exponential, whose minimum of ``r`` draws times ``r`` is again an
      exponential of mean 1, which makes waiting for the fastest of a group free).
    """
    out = {}
    for a in shapes:
        pareto = mean_one_pareto(a)
        out[mean_one_label(pareto.shape)] = pareto
    shift = checks.real("shift", shift, low=0)
    if not shift < 1:
        raise ValueError(f"shift must be below the mean 1, got {shift!r}")
    out["exp"] = Exponential(1.0)
    out["shifted-exp"] = ShiftedExponential(mu=1.0 / (1.0 - shift), alpha=shift)
    return out
