"""Monte Carlo of one iteration: completion time, communication and computation for any code and any model.

For each trial the compute-time model gives the time every worker finishes each of its partial gradients;
message ``j`` arrives at the master when its sender has finished ``ready[j]`` of them, plus the communication
delay of its size. The iteration completes at the earliest time at which the received messages decode (the
code's fast rule, checked against the exact span test in the tests). Reported per trial:

* ``time``: completion time (``inf`` when the received messages never decode, e.g. too many persistent
  stragglers);
* ``messages``: messages received by then (duplicates included);
* ``cluster_messages``: messages counted per cluster until that cluster decodes (the other accounting of the
  GC-MMC paper);
* ``computations``: partial gradients computed by all workers by then;
* ``volume``: communication volume received by then, in gradient-length units.

Tables of the simulator over a range of parameters are in :mod:`gclib.sweeps`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gclib import checks, reduce_on_draws
from gclib.reduce_on_draws import tasks_done  # noqa: F401  (part of this module's interface)
from gclib.codes.base import GradientCode
from gclib.jsonable import jsonable
from gclib.progress import progress as _progress
from gclib.stats import mean_ci
from gclib.stragglers import ComputeModel, Pareto, Persistent


@dataclass(frozen=True)
class Communication:
    """What a message costs between its sending and its use by the master (times in the models' unit, sizes in
    gradient-length units, ``bandwidth`` in gradients per unit of time).

    * ``queue=False`` (independent delays): every message arrives ``latency + overhead + size / bandwidth`` after it
      is sent, whatever the other messages do.
    * ``queue=True`` (the master's queue): every message reaches the master ``latency`` after it is sent; the
      master takes messages in one at a time, in the order they reached it (a tie by message index), each for
      ``overhead + size / bandwidth``; a message counts as received once it is taken in. Messages that reach the
      master together wait for one another, so an iteration of many messages pays for each of them.

    With the defaults (``overhead = 0``, ``queue = False``) it is the latency + size / bandwidth model of the
    communication-efficient codes' papers.
    """

    latency: float = 0.0
    bandwidth: float = math.inf
    overhead: float = 0.0
    queue: bool = False

    def __post_init__(self):
        object.__setattr__(self, "latency", checks.real("latency", self.latency, low=0))
        object.__setattr__(self, "bandwidth", checks.real("bandwidth", self.bandwidth, above=0, finite=False))
        object.__setattr__(self, "overhead", checks.real("overhead", self.overhead, low=0))
        if not isinstance(self.queue, (bool, np.bool_)):
            raise checks.ParameterTypeError(f"queue must be True or False, got {self.queue!r}")
        object.__setattr__(self, "queue", bool(self.queue))

    def delay(self, size: np.ndarray) -> np.ndarray:
        """The delay of a message that waits for no other: ``latency + overhead + size / bandwidth``."""
        return self.latency + self.service(size)

    def service(self, size: np.ndarray) -> np.ndarray:
        """The time the master spends taking a message in: ``overhead + size / bandwidth``."""
        return self.overhead + np.asarray(size, dtype=float) / self.bandwidth

    @property
    def free(self) -> bool:
        """Every message costs nothing (the simulation without this model gives the same numbers)."""
        return self.latency == 0 and self.overhead == 0 and math.isinf(self.bandwidth)

    def describe(self) -> dict:
        return {"latency": self.latency, "bandwidth": self.bandwidth, "overhead": self.overhead,
                "queue": self.queue}


def queued(arrival: np.ndarray, service: np.ndarray) -> np.ndarray:
    """When the master has taken in every message, one at a time in the order they reached it.

    ``d = max(a, d_prev) + s`` along the order of arrival (a tie by message index), computed for all messages at
    once as ``S_i + max_{j <= i} (a_j - S_{j-1})`` (``S`` the running sum of the service times in that order).

    Args:
        arrival: ``(trials, n_messages)`` times the messages reach the master (``inf``: never).
        service: ``(n_messages,)`` the master's time for each message.
    Returns:
        ``(trials, n_messages)`` float64 times at which each message is taken in (``inf`` for one that never
        arrives).
    """
    a = np.asarray(arrival, dtype=float)
    s = np.broadcast_to(np.asarray(service, dtype=float), a.shape[-1:])
    order = np.argsort(a, axis=1, kind="stable")
    a_sorted = np.take_along_axis(a, order, axis=1)
    s_sorted = s[order]
    S = np.cumsum(s_sorted, axis=1)
    with np.errstate(invalid="ignore"):
        lead = np.maximum.accumulate(a_sorted - (S - s_sorted), axis=1)
    d_sorted = S + lead
    d_sorted[~np.isfinite(a_sorted)] = np.inf
    out = np.empty_like(d_sorted)
    np.put_along_axis(out, order, d_sorted, axis=1)
    return out


def tail_index(model) -> float:
    """The tail index of one worker's compute time under ``model``: ``a`` with ``P(T > t) ~ t ** -a`` (a Pareto's
    ``shape``; ``inf`` for the light tails of the exponential models, a recorded trace, and a constant), through
    the wrapper of persistent stragglers."""
    if isinstance(model, Persistent):
        return tail_index(model.base)
    if isinstance(model, Pareto):
        return float(model.shape)
    return math.inf


def completion_tail_index(code, model) -> float:
    """The tail index of the completion time of ``code`` under ``model`` (over the trials that decode): an
    iteration waits at worst for the ``s + 1``-th slowest worker alive (``s = code.stragglers``, less the
    persistent stragglers, which are out of every decodable trial already), and the ``k``-th largest of independent
    draws of tail index ``a`` has tail index ``k a`` (``a`` = :func:`tail_index`). Its mean is finite iff the index
    exceeds 1 (never for uncoded under a Pareto of ``shape <= 1``), its variance iff it exceeds 2."""
    a = tail_index(model)
    if math.isinf(a):
        return math.inf
    dead = 0
    if isinstance(model, Persistent):
        dead = model.count or len(model.workers or ())
    s = int(getattr(code, "stragglers", 0) or 0)
    return max(s + 1 - dead, 1) * a


@dataclass
class SimResult:
    """Per-trial results of :func:`simulate` (each array ``(trials,)``)."""

    scheme: str
    time: np.ndarray
    messages: np.ndarray
    cluster_messages: np.ndarray
    computations: np.ndarray
    volume: np.ndarray
    seed: int | None
    code: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)

    @property
    def trials(self) -> int:
        return int(self.time.size)

    def summary(self) -> dict:
        """Means with 95% confidence half-widths; JSON-ready (non-finite values become ``None``)."""
        done = np.isfinite(self.time)
        out = {"scheme": self.scheme, "trials": self.trials, "seed": self.seed,
               "failed": int((~done).sum())}
        for key in ("time", "messages", "cluster_messages", "computations", "volume"):
            m, c = mean_ci(getattr(self, key)[done])
            out[f"mean_{key}"] = m
            out[f"ci95_{key}"] = c
        out["code"] = self.code
        out["model"] = self.model
        return jsonable(out)


@dataclass(frozen=True, eq=False)
class Schedule:
    """What the simulator reads of a code: who sends each message, after how many partial gradients, how large
    it is, and the code's fast rule - without the encoding matrix. :meth:`of` takes it from a
    :class:`GradientCode`; :mod:`gclib.code_schedules` builds it directly for codes too large to hold their matrix.

    Attributes:
        name: scheme name. n_workers: workers. sender, ready, size: ``(n_messages,)`` as in
        :class:`GradientCode`. rule: the fast rule (``cluster_times``, ``msg_cluster``). lengths:
        ``(n_workers,)`` partial gradients each worker computes. info: the code's summary (for tables and JSON).
    """

    name: str
    n_workers: int
    sender: np.ndarray
    ready: np.ndarray
    size: np.ndarray
    rule: object
    lengths: np.ndarray
    info: dict = field(default_factory=dict)

    @classmethod
    def of(cls, code) -> "Schedule":
        """The schedule of ``code`` (a :class:`GradientCode`, or a schedule, returned as it is)."""
        if isinstance(code, Schedule):
            return code
        if not isinstance(code, GradientCode):
            raise checks.ParameterTypeError(f"code must be a GradientCode, got {type(code).__name__}")
        return cls(code.name, code.n_workers, code.sender, code.ready, code.size, code.rule,
                   np.array([len(o) for o in code.order], dtype=np.int64), code.summary())

    @property
    def n_messages(self) -> int:
        return int(self.sender.size)

    @property
    def load(self) -> int:
        return int(self.lengths.max())

    @property
    def stragglers(self) -> int:
        """Worst-case stragglers tolerated, as the code's (``info["stragglers"]``; 0 where not stated)."""
        return int(self.info.get("stragglers", 0))

    def summary(self) -> dict:
        return dict(self.info)


def arrival_times(code, finish: np.ndarray, comm: Communication | None = None) -> np.ndarray:
    """Arrival time of every message.

    Args:
        code: a :class:`GradientCode` or :class:`Schedule`.
        finish: ``(trials, workers, n_tasks)`` task finish times.
    Returns:
        ``(trials, n_messages)``.
    """
    return _delayed(finish[:, code.sender, code.ready - 1], code, comm)


def _delayed(arr: np.ndarray, code, comm: Communication | None) -> np.ndarray:
    """Arrival times at the master: in the master's queue (``comm.queue``), the times it takes each message in."""
    if comm is not None:
        with np.errstate(over="ignore"):
            if comm.queue:  # (in float64, as the independent delays are)
                delayed = queued(arr.astype(np.float64) + comm.latency, comm.service(code.size))
            else:
                delayed = arr + comm.delay(code.size)
        if (np.isinf(delayed) & np.isfinite(arr)).any():  # a message that does arrive must not read as "never"
            raise ValueError(f"arrival times beyond the float64 range (inf) with latency = {comm.latency:g} and "
                             f"bandwidth = {comm.bandwidth:g}; measure time in a larger unit")
        arr = delayed
    return arr


def _counts(code, arr: np.ndarray, arrived) -> dict:
    """Completion time and the messages of one chunk of arrivals ``(trials, n_messages)``; ``arrived`` is the
    mask of finite arrivals, or ``None`` when every arrival is finite."""
    cluster_t = code.rule.cluster_times(arr)
    t = cluster_t.max(axis=1)
    # In a trial that never decodes (t = inf) a message that never arrives (inf) is not counted: inf <= inf.
    got = arr <= t[:, None]
    if arrived is not None:
        got &= arrived
    P = cluster_t.shape[1]
    if P == 1:  # one cluster: it decodes when the whole gradient does
        got_c = got
    else:
        mc = code.rule.msg_cluster
        if mc.size % P == 0 and np.array_equal(mc, np.repeat(np.arange(P), mc.size // P)):  # equal blocks
            got_c = (arr.reshape(arr.shape[0], P, -1) <= cluster_t[:, :, None]).reshape(arr.shape)
        else:
            got_c = arr <= np.take(cluster_t, mc, axis=1)
        if arrived is not None:
            got_c &= arrived
    messages = got.sum(axis=1)
    cluster_messages = messages if got_c is got else got_c.sum(axis=1)
    volume = reduce_on_draws.received_volume(got, messages, code.size)
    return {"time": t.astype(float), "messages": messages, "cluster_messages": cluster_messages,
            "volume": volume, "_t": t}


def simulate_chunk(code, finish: np.ndarray, comm: Communication | None = None) -> dict:
    """Evaluate one chunk of sampled finish times ``(trials, workers, n_tasks >= code's load)`` (see
    :func:`simulate`), which may be float32 (the rules keep its dtype; a communication delay makes the arrivals
    float64)."""
    code = Schedule.of(code)
    finish = finish[:, :, : code.load]
    arr = arrival_times(code, finish, comm)
    arrived = np.isfinite(arr)
    out = _counts(code, arr, None if arrived.all() else arrived)
    t = out.pop("_t")
    valid = np.arange(finish.shape[2])[None, :] < code.lengths[:, None]
    computed = (finish <= t[:, None, None]) & valid[None] & np.isfinite(finish)
    out["computations"] = computed.sum(axis=(1, 2))
    return out


def simulate_workers(code, x: np.ndarray, comm: Communication | None = None, dtype=np.float64) -> dict:
    """Evaluate one chunk of eq. 5 draws ``x`` ``(trials, workers)`` (worker ``w`` finishes its ``j``-th task at
    ``j * x[:, w]``): the same numbers as :func:`simulate_chunk` on the finish times ``x[:, :, None] * j``
    (rounded to ``dtype``), in memory that grows with the messages and workers only. A code whose messages are
    its workers' draws scaled (:func:`gclib.reduce_on_draws.plan`) is reduced on the draws themselves, without the
    arrivals (:func:`gclib.reduce_on_draws.evaluate`)."""
    code = Schedule.of(code)
    finite = bool(np.isfinite(x).all())
    if finite and comm is None and np.dtype(dtype) == np.float64 and x.dtype == np.float64:
        bl = reduce_on_draws.plan(code)
        out = reduce_on_draws.evaluate(bl, x, code.size) if bl is not None else None
        if out is not None:
            return out
    ready = code.ready[0] if np.all(code.ready == code.ready[0]) else code.ready
    if np.array_equal(code.sender, np.arange(x.shape[1])):
        arr = x * ready
    else:
        arr = np.take(x, code.sender, axis=1)
        arr *= ready
    if arr.dtype != dtype:
        arr = arr.astype(dtype)
    arr = _delayed(arr, code, comm)
    out = _counts(code, arr, None if finite else np.isfinite(arr))
    t = out.pop("_t")
    out["computations"] = tasks_done(x, t, code.lengths, dtype)
    return out


#: trials per chunk at most.
CHUNK = 10_000
#: working memory of one chunk: a chunk holds at most :data:`CHUNK` trials and as many fewer as keep it under
#: this many bytes. A constant, so that the chunking is a function of the problem's size alone: the numbers of
#: a seed do not depend on the machine (draws split across chunks equal one draw, except for the models that
#: draw per chunk - :class:`gclib.stragglers.Persistent` with a random ``count``, :class:`~gclib.stragglers.Replay`
#: by cycle).
CHUNK_BYTES = 512 * 2 ** 20
#: bytes kept per trial: five result arrays of 8 bytes, twice while the chunks are joined.
RESULT_BYTES = 2 * 5 * 8
#: bytes a search on shared draws (:func:`gclib.design.evaluate`, the advice) keeps per trial and candidate: four
#: per-trial results of 8 bytes (its time, messages and two more counts).
CANDIDATE_TRIAL_BYTES = 4 * 8


def chunk_bytes(n_workers: int, load: int, n_messages: int, trials: int = CHUNK, *, per_worker: bool = False) -> int:
    """Bytes a chunk of ``trials`` holds at once: the ``(trials, messages)`` arrivals (with class times, the
    partition and the masks: about 48 bytes a message) and either the ``(trials, workers, load)`` finish times
    of a per-task model (with the comparisons and their masks: about 24 bytes an entry) or, under eq. 5
    (``per_worker``), the ``(trials, workers)`` draws and task counts (about 40 bytes a worker)."""
    n_workers, load, n_messages, trials = (int(v) for v in (n_workers, load, n_messages, trials))
    tasks = 40 * n_workers if per_worker else 24 * n_workers * load
    return trials * (tasks + 48 * n_messages)


def chunk_trials(n_workers: int, load: int, n_messages: int, *, per_worker: bool = False) -> int:
    """Trials per chunk: :data:`CHUNK`, or fewer so that a chunk stays under :data:`CHUNK_BYTES` (at least one)."""
    per_trial = chunk_bytes(n_workers, load, n_messages, 1, per_worker=per_worker)
    return int(max(1, min(CHUNK, CHUNK_BYTES // per_trial)))


def chunks_of(trials: int, size: int) -> list:
    """``trials`` cut into chunks of ``size`` (the last one shorter)."""
    return [size] * (trials // size) + ([trials % size] if trials % size else [])


def draws_per_worker(model) -> bool:
    """Whether ``model`` is sampled by one draw per worker (:meth:`ComputeModel.per_worker`): an eq. 5 model
    whose :meth:`~ComputeModel.sample` is the default one, or that defines its own ``per_worker``."""
    cls = type(model)
    return not model.per_task and (cls.sample is ComputeModel.sample or cls.per_worker is not ComputeModel.per_worker)


#: What :func:`simulate_trials` keeps per trial: the per-trial results of the simulator.
TRIAL_KEYS = ("time", "messages", "cluster_messages", "computations", "volume")


def simulate_trials(codes: list, model: ComputeModel, K: int, trials: int = 10_000, seed=0, *,
                    progress: bool = False, dtype=np.float32, keys=TRIAL_KEYS[:4], comm=None) -> list:
    """The per-trial results of every schedule of ``codes`` on the same sampled compute times (common random
    numbers: the engine of :func:`gclib.design.evaluate` and of the advice; see the former for the rounding to
    ``dtype``, the chunks and eq. 5).

    Args:
        codes: :class:`gclib.simulator.Schedule` (or codes) with ``K`` workers each. keys: which of
            :data:`TRIAL_KEYS` to keep. comm: a :class:`gclib.simulator.Communication` (``None``: messages cost
            nothing).
    Returns:
        one dict per code: ``{key: (trials,) array}``.
    """
    if not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    codes = [Schedule.of(c) for c in codes]
    if any(c.n_workers != K for c in codes):
        raise ValueError(f"every candidate must have {K} workers")
    n_tasks = max(c.load for c in codes)
    pw = draws_per_worker(model)
    size = min(chunk_trials(K, n_tasks, c.n_messages, per_worker=pw) for c in codes)
    checks.need_memory("evaluate", 8 * len(keys) * int(trials) * len(codes) + chunk_bytes(
        K, n_tasks, max(c.n_messages for c in codes), min(size, int(trials)), per_worker=pw),
        sizes=f"{len(codes)} candidates, trials = {trials}, {K} workers", lower="trials or the candidates")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    acc = [{k: [] for k in keys} for _ in codes]
    chunks = _progress(chunks_of(int(trials), size), "evaluate", progress)
    for results in _chunk_results(codes, model, K, n_tasks, chunks, rng, comm, dtype):
        for a, res in zip(acc, results):
            for k in a:
                a[k].append(res[k])
    return [{k: np.concatenate(v) for k, v in a.items()} for a in acc]


def _chunk_results(codes: list, model: ComputeModel, K: int, n_tasks: int, chunks, rng, comm, dtype=None):
    """Per chunk of ``chunks`` trials, the results of every schedule of ``codes`` on one draw of ``model``
    (``n_tasks`` tasks of ``K`` workers): under eq. 5 by :func:`simulate_workers`, else by :func:`simulate_chunk`
    on the finish times rounded to ``dtype`` (``None``: as drawn, and eq. 5 in float64)."""
    pw = draws_per_worker(model)
    for n in chunks:
        if pw:
            x = model.per_worker(rng, n, K, n_tasks)
            yield [simulate_workers(c, x, comm, dtype=np.float64 if dtype is None else dtype) for c in codes]
        else:
            finish = model.sample(rng, n, K, n_tasks)
            finish = finish if dtype is None else finish.astype(dtype, copy=False)
            yield [simulate_chunk(c, finish, comm) for c in codes]


def simulate_bytes(code, trials: int, model: ComputeModel | None = None) -> int:
    """Memory :func:`simulate` needs for ``trials`` trials of ``code``: :data:`RESULT_BYTES` per trial and one
    chunk (:func:`chunk_bytes`, :func:`chunk_trials`); ``model`` (default: a per-task one) says which path."""
    pw = model is not None and draws_per_worker(model)
    c = chunk_trials(code.n_workers, code.load, code.n_messages, per_worker=pw)
    return RESULT_BYTES * trials + chunk_bytes(code.n_workers, code.load, code.n_messages, min(trials, c),
                                               per_worker=pw)


def _check_request(code, model, trials, comm) -> int:
    """Check the arguments of :func:`simulate` and refuse a request above the memory budget; returns trials."""
    if not isinstance(code, (GradientCode, Schedule)):
        raise checks.ParameterTypeError(f"code must be a GradientCode, got {type(code).__name__}")
    if not isinstance(model, ComputeModel):
        raise checks.ParameterTypeError(f"model must be a compute-time model (gclib.stragglers), got "
                                        f"{type(model).__name__}")
    if comm is not None and not isinstance(comm, Communication):
        raise checks.ParameterTypeError(f"comm must be a Communication or None, got {type(comm).__name__}")
    trials = checks.integer("trials", trials, low=1)
    need = simulate_bytes(code, trials, model)
    budget, _ = checks.memory_budget()
    if budget is not None and need > budget:
        pw = draws_per_worker(model)
        per_trial = chunk_bytes(code.n_workers, code.load, code.n_messages, 1, per_worker=pw)
        c = chunk_trials(code.n_workers, code.load, code.n_messages, per_worker=pw)
        full_chunk = c * per_trial
        # the most trials that fit: a full chunk and the results, or fewer than a chunk of both
        fit = ((budget - full_chunk) // RESULT_BYTES if budget >= RESULT_BYTES * c + full_chunk
               else budget // (RESULT_BYTES + per_trial))
        lower = (f"trials (about {fit:,} fit)" if fit >= 1 else
                 f"the code's size (one trial alone needs {checks.format_bytes(RESULT_BYTES + per_trial)})")
        checks.need_memory(f"simulate of '{code.name}'", need,
                           sizes=f"trials = {trials}, {code.n_workers} workers, load {code.load}, "
                                 f"{code.n_messages} messages", lower=lower)
    return trials


def simulate(code, model: ComputeModel, trials: int = 10_000, seed=0, *,
             comm: Communication | None = None, progress: bool = False) -> SimResult:
    """Monte Carlo of ``trials`` independent iterations of ``code`` under ``model``.

    Under eq. 5 (``per_task=False``) one draw per worker and trial determines every task, and the chunk holds
    the ``(trials, workers)`` draws and the ``(trials, messages)`` arrivals only (:func:`simulate_workers`);
    per-task models sample every task (:func:`simulate_chunk`). Trials run in chunks of
    :func:`chunk_trials`, fixed by the problem's size.

    Args:
        code: any gradient code (or its :class:`Schedule`).
        model: compute-time model.
        trials: number of iterations simulated.
        seed: seed or ``numpy.random.Generator``; the same seed gives the same numbers.
        comm: optional communication-time model.
        progress: show a progress bar over chunks of trials.
    """
    trials = _check_request(code, model, trials, comm)
    rng = checks.generator(seed, "seed")
    sch = Schedule.of(code)
    n_tasks = sch.load
    parts = {k: [] for k in TRIAL_KEYS}
    chunks = chunks_of(trials, chunk_trials(sch.n_workers, n_tasks, sch.n_messages, per_worker=draws_per_worker(model)))
    it = _progress(chunks, f"simulate {sch.name}", progress, unit="chunk")
    for (res,) in _chunk_results([sch], model, sch.n_workers, n_tasks, it, rng, comm):
        for k in parts:
            parts[k].append(res[k])
    desc = model.describe() if hasattr(model, "describe") else {"model": str(model)}
    return SimResult(scheme=sch.name, seed=seed if isinstance(seed, (int, np.integer)) else None,
                     code=sch.summary(), model=desc, **{k: np.concatenate(v) for k, v in parts.items()})

