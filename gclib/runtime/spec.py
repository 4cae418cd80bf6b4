"""The description of one distributed run (everything the ranks need), and its result."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np

from gclib import checks
from gclib.codes import conditioning
from gclib.codes.base import DecodingError, GradientCode
from gclib.jsonable import jsonable
from gclib.learning.model import ModelRef, check_model, model_name
from gclib.runtime.protocol import without as mechanisms_without
from gclib.runtime.state import state_document, write_json


@dataclass
class RunSpec:
    """One run: a code, a model to train, an update rule, injected delays and fault handling.

    Attributes:
        code: any :class:`~gclib.codes.base.GradientCode`; worker ``w`` is MPI rank ``w + 1``.
        problem: the model to train, with ``code.n_parts`` parts: any :class:`gclib.learning.model.Model` (a
            :class:`~gclib.learning.problems.Problem`, a PyTorch, NumPy or JAX model of
            :mod:`gclib.learning.adapters`, or an object with the model's attributes), checked once here
            (:func:`gclib.learning.model.check_model`). A model built by name (:func:`gclib.learning.model.load`,
            ``gclib run --model package.module:function``) reaches the ranks as its name, and every rank builds it
            (:meth:`build_model`); any other model is pickled with the spec.
        step: an update (``TandonAGD`` / ``GD``): ``init``, ``query``, ``step``.
        model: a compute-time model of :mod:`gclib.stragglers` (``Persistent`` for workers that never answer), or
            ``None``: no injected delay (every task takes the time the machine takes to compute it).
        iterations: number of iterations.
        time_scale: seconds per model time unit (the injected sleep of a task is ``time_scale`` times its draw).
        seed: seed of the injected delays (the same seed replays the same delays).
        timeout: seconds the master waits in one iteration for a decodable set before it stops with an error.
        poll: seconds between two polls of the master; a worker sleeps in slices of ``5 * poll`` (four times longer
            where the master's bell reaches it, see :mod:`gclib.runtime.bell`).
        stop_timeout: seconds the master waits for every worker's goodbye at the end (longer: a dead worker).
        kill: ``{worker: iteration}``: fault injection, the worker's process exits abruptly when it receives
            that iteration's parameters.
        theta0: initial parameters ``(dim,)`` (by default the model's ``initial()``: zeros for a ``Problem``).
        label: free-form name of the run (scheme name by default).
        wait_all: the master waits in every iteration for every message of every worker still alive (a
            profile, :mod:`gclib.runtime.measure`), not for the first decodable set; a dead worker does not stop
            the run then, and the code's decoder gets what came.
        network: message sizes (float64 numbers per message) whose cost the master measures after the last
            iteration, with every worker (:mod:`gclib.runtime.network`; ``gclib profile``); empty: none.
        without: the runtime's mechanisms this run leaves out, to measure what each buys (names of
            :data:`gclib.runtime.protocol.MECHANISMS`, a list or a comma-separated string; ``None``, the default,
            reads the environment variable ``GCLIB_RUNTIME_WITHOUT`` when the spec is made, and an unknown name is
            refused). Stored as a sorted tuple; the ranks get it with the spec. For A/B measurements only: every
            mechanism is on in a normal run.
        sequential: a :class:`gclib.runtime.rounds.Sequential` (sequential gradient coding: a plan per worker and
            round, the deadline rule, a job decoded ``T`` rounds after it starts; :mod:`gclib.runtime.rounds`), or
            ``None`` (the default: one gradient per iteration, decoded as soon as the received messages decode).
            With it, ``iterations`` is the scheme's rounds, the injected delays are its matrix (``model`` is
            ``None``), ``kill`` names rounds, and the problem has the scheme's parts.
        exchange: ``"messages"`` (the default: every message a worker readies is sent whole as it is ready) or
            ``"two-phase"`` (the partial-straggler protocol: small progress reports, then one summed vector per
            worker the master picks; :mod:`gclib.runtime.two_phase`), only for a code whose decoder names the chunk
            of every message (``rmg``'s :class:`~gclib.codes.rmg.CoverDecoder`).
        start, state0, wall0: where a resumed run continues (set by ``launch(..., resume=STATE)``): the first
            iteration to run, the update's state after the one before (as :func:`gclib.runtime.state.
            pack_step_state` stores it) and the wall time so far. A fresh run starts at 0.
    """

    code: GradientCode
    problem: Any
    step: Any
    model: Any
    iterations: int = 20
    time_scale: float = 0.05
    seed: int = 0
    timeout: float = 10.0
    poll: float = 1e-4
    stop_timeout: float = 5.0
    kill: dict = field(default_factory=dict)
    theta0: Optional[np.ndarray] = None
    label: str = ""
    start: int = 0
    state0: Optional[dict] = None
    wall0: float = 0.0
    wait_all: bool = False
    network: tuple = ()
    without: Any = None
    sequential: Any = None
    exchange: str = "messages"

    def __post_init__(self):
        if not isinstance(self.code, GradientCode):
            raise TypeError(f"code must be a GradientCode, got {type(self.code).__name__}")
        self.iterations = checks.integer("iterations", self.iterations, low=1)
        for name in ("time_scale", "timeout", "poll", "stop_timeout"):
            setattr(self, name, checks.seconds(name, getattr(self, name)))
        self.seed = checks.integer("seed", self.seed, low=0)
        self._check_model()
        if self.sequential is not None:  # its own parts, rounds and delays
            self.sequential.check_spec(self)
        elif self.problem.n_parts != self.code.n_parts:
            raise ValueError(f"problem has {self.problem.n_parts} parts but code '{self.code.name}' needs "
                             f"{self.code.n_parts}")
        if not isinstance(self.kill, dict):
            raise checks.ParameterTypeError(f"kill must be a dict {{worker: iteration}}, got "
                                            f"{type(self.kill).__name__}")
        K = self.code.n_workers
        self.kill = {checks.integer("kill's worker", w, low=0, high=K - 1, why=f" (the code's {K} workers)"):
                     checks.integer(f"kill[{w!r}]", it, low=0, high=self.iterations - 1,
                                    why=f" (an iteration of the run's {self.iterations})")
                     for w, it in self.kill.items()}
        self.network = tuple(checks.int_list("network", list(self.network), low=1, min_len=0))
        self.without = tuple(sorted(mechanisms_without(self.without)))
        self.start = checks.integer("start", self.start, low=0, high=self.iterations)
        from gclib.runtime.two_phase import check_exchange

        self.exchange = check_exchange(self.exchange, self.code, self.problem.dim, self.wait_all)
        if (self.start > 0) != (self.state0 is not None):
            raise ValueError("start and state0 go together: a resumed run needs the update's state")
        # the injected delays of every iteration, drawn up front: rank 0 holds them, the predictions and a copy
        # per worker
        load = self.code.load
        checks.need_memory("the table of injected delays", 3 * 8 * self.iterations * K * load,
                           sizes=f"iterations = {self.iterations}, {K} workers and load {load}",
                           lower="iterations (--iterations)")
        self._check_decodes()
        # Draw one throw-away trial (its own generator: the run's delays are untouched) so that a model that does
        # not fit the code (say, a persistent straggler id beyond the workers) fails here, not inside the job.
        if self.model is not None:
            self.model.sample(np.random.default_rng(0), 1, self.code.n_workers, self.code.load)
        if not self.label:
            self.label = self.code.name

    def _check_model(self):
        """The model checked at the run's start (:func:`gclib.learning.model.check_model`: sizes, shapes, finite
        gradients that add up), and ``theta0`` (the model's initial parameters when not given)."""
        if isinstance(self.problem, ModelRef):
            raise checks.ParameterTypeError("problem must be a model; a ModelRef is built with "
                                            "gclib.learning.model.load(target, **kwargs)")
        if self.theta0 is not None:
            self.theta0 = checks.finite_array("theta0", self.theta0, ndim=1, complex_ok=False)
            dim = getattr(self.problem, "dim", None)
            if dim is not None and self.theta0.shape != (dim,):
                raise ValueError(f"theta0 must be {dim} finite numbers (the problem's dimension), got shape "
                                 f"{self.theta0.shape}")
        self.problem = check_model(self.problem, self.theta0)
        if self.theta0 is None:
            self.theta0 = np.array(self.problem.initial(), dtype=float)

    def __getstate__(self):
        """What pickles: everything, but a model built by name (it has a :class:`~gclib.learning.model.ModelRef`
        as its ``ref``) as that name; each rank builds it again (:meth:`build_model`)."""
        state = dict(self.__dict__)
        ref = getattr(self.problem, "ref", None)
        if isinstance(ref, ModelRef):
            state["problem"] = ref
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    @property
    def named(self) -> bool:
        """The model reaches the ranks by name (see :meth:`__getstate__`)."""
        return isinstance(self.problem, ModelRef) or isinstance(getattr(self.problem, "ref", None), ModelRef)

    def build_model(self) -> "RunSpec":
        """On a rank: build the model of an unpickled spec that arrived as its name (its sizes checked against the
        code's); nothing to do for a model that was pickled. Raises :class:`gclib.learning.model.ModelError` (a
        ``ValueError``) naming the model."""
        if isinstance(self.problem, ModelRef):
            from gclib.learning.model import ModelError, as_model

            model = as_model(self.problem.build())
            if model.dim != len(self.theta0):
                raise ModelError(f"model {model_name(model)} has {model.dim} parameters on this rank, "
                                 f"{len(self.theta0)} where the run was launched")
            self.problem = model
        return self

    def _check_decodes(self):
        """Decode once as the master would when every worker is equally fast (messages in order of readiness)
        and a code that cannot decode real messages (say, LCC's simulator code) is refused here, before MPI."""
        code = self.code
        mask = np.zeros(code.n_messages, dtype=bool)
        for m in np.lexsort((code.sender, code.ready)):
            mask[m] = True
            if code.rule.decodable(mask):
                try:
                    code.decode(np.flatnonzero(mask), warn=False)
                except DecodingError as e:
                    raise ValueError(f"scheme '{code.name}' cannot run over MPI: {e}") from None
                return
        raise ValueError(f"scheme '{code.name}' cannot run over MPI: its rule never decodes, even from every "
                         f"message")

    @property
    def workers(self) -> int:
        return self.code.n_workers

    @property
    def ranks(self) -> int:
        """MPI ranks of the job: one master plus one per worker."""
        return self.code.n_workers + 1

    def describe(self) -> dict:
        """JSON-ready description (for the state file and the result)."""
        model = (self.model.describe() if hasattr(self.model, "describe") else
                 "none" if self.model is None else str(self.model))
        ref = getattr(self.problem, "ref", None)
        return jsonable({"label": self.label, "code": self.code.summary(), "problem": model_name(self.problem),
                          **({"model_import": ref.describe()} if isinstance(ref, ModelRef) else {}),
                          "dim": self.problem.dim, "samples": self.problem.n_samples,
                          "step": {"name": type(self.step).__name__, **asdict(self.step)},
                          "model": model, "iterations": self.iterations, "time_scale": self.time_scale,
                          "seed": self.seed, "timeout": self.timeout, "poll": self.poll, "kill": self.kill,
                          "without": list(self.without), "exchange": self.exchange,
                          **({"sequential": self.sequential.describe()} if self.sequential is not None else {})})


class RuntimeFailure(RuntimeError):
    """A distributed run stopped before its last iteration; ``result`` holds the state saved so far."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


@dataclass
class RunResult:
    """What a run measured.

    Attributes:
        records: one dict per finished iteration: ``iteration``, ``time`` (measured seconds), ``predicted``
            (the simulator's time for the same delays), ``messages`` (of this iteration received when it
            decoded), ``stale`` (late messages of earlier iterations drained during it), ``bcast``, ``wait``,
            ``decode``, ``step``, ``drain`` (seconds spent in each part on the critical path: ``decode`` runs from
            the arrival of the message that made the set decodable to the combined gradient; ``checks`` is the
            total time of the decodability checks, most of it overlapped with waiting), ``loss``, the model's test
            metrics under their names (``spec["metrics"]``: a ``Problem``'s are ``test_loss`` and ``auc``),
            ``grad_error`` (relative error of the decoded gradient against the full gradient), ``wall``
            (seconds since the first iteration started, metrics excluded), ``workers`` (whose messages decoded),
            ``amplification`` (the decode's error amplification, :func:`gclib.codes.conditioning.decoding_amplification`;
            ``None`` for an infinite one), ``dead`` (workers known dead when the iteration ended) and ``silent``
            (workers the master sent nothing to when the iteration ended: stopped by a signal, or owing it
            :data:`gclib.runtime.master.SILENT_AFTER` answers; sent to again once they answer).
        theta: ``(dim,)`` final parameters.
        status: ``"ok"``, ``"error"``, ``"interrupted"`` or ``"diverged"`` (the loss was not finite after an
            iteration: the master stopped there); ``error`` says why.
        predicted: ``(iterations,)`` predicted times of every planned iteration.
        dead_workers: workers whose process died, or that never said goodbye at the end (a stopped or frozen
            process).
        messages_sent: gradient messages the workers that said goodbye sent; ``messages_received``: gradient
            messages the master received (used or drained); equal when nothing was lost.
        abandoned: ``{worker: iterations it abandoned because the master decoded them or newer parameters
            arrived}``.
        drained: late messages drained in total (during the iterations, between them and at the stop).
        spec: :meth:`RunSpec.describe`, and ``metrics``: the names of the model's test metrics in the records.
        deaths: ``{worker: {"signal": 9, "name": "SIGKILL", "code": None, "pid": ..., "host": ...,
            "iteration": ...}}``: how each dead worker's process ended, as its guard reported it (``signal`` for
            a death by signal, ``code`` for an exit; ``iteration``: iterations finished when the launcher heard); a
            worker that never said goodbye has ``signal`` and ``code`` ``None``, ``stopped`` (``"SIGSTOP"``, ...)
            when its guard saw it stopped, and a ``cause`` in words.
        pids: ``{worker: process id}`` of the worker ranks (as they told the master at start-up).
        start: first iteration this job ran (greater than 0 for a resumed run; ``records`` holds every
            iteration from 0 all the same).
        step_state: the update's state after the last finished iteration (what a resume needs), packed by
            :func:`gclib.runtime.state.pack_step_state`.
        run_dir: the run directory (kept on failure, removed after a success in a temporary one).
        restarts: one ``{worker: what}`` per start-up that did not get through ``MPI_Init`` (the job was
            started again; nothing had run): the workers killed by a signal, or stopped (``stopped``), before every
            rank was through it; ``{}`` for a start-up past ``startup_timeout`` that no rank explained.
        hosts: ``{worker: host name}`` (as the workers told the master at start-up).
        bells: the workers that shared the master's bell (:mod:`gclib.runtime.bell`: those of its host), as
            they told it at start-up; the others were polled.
        tasks: the workers' task reports, ``[worker, iteration, [t_1, ..., t_n]]``: the finish times (seconds on
            the worker's clock, from receiving the iteration's parameters) of the ``n`` partial gradients it
            computed in that iteration before it finished them all, the master decoded it, or newer parameters
            arrived (``inf``, or ``None`` in JSON, for a task that never finishes); :meth:`task_durations` makes
            the table of them.
        network: what the master measured of the messages' cost after the last iteration
            (:func:`gclib.runtime.network.probe`; ``None`` when the spec asked for none or the run stopped early).
    """

    records: list
    theta: np.ndarray
    status: str = "ok"
    error: str = ""
    predicted: Optional[np.ndarray] = None
    dead_workers: list = field(default_factory=list)
    messages_sent: int = 0
    messages_received: int = 0
    abandoned: dict = field(default_factory=dict)
    drained: int = 0
    spec: dict = field(default_factory=dict)
    returncode: int = 0
    seconds: float = math.nan
    deaths: dict = field(default_factory=dict)
    pids: dict = field(default_factory=dict)
    start: int = 0
    step_state: Optional[dict] = None
    run_dir: Optional[str] = None
    restarts: list = field(default_factory=list)
    hosts: dict = field(default_factory=dict)
    tasks: list = field(default_factory=list)
    bells: list = field(default_factory=list)
    network: Optional[dict] = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def task_durations(self) -> np.ndarray:
        """``(iterations, workers, load)`` seconds each partial gradient took, iterations of :attr:`records`:
        task ``j``'s finish time minus task ``j - 1``'s on the worker's clock (the first from the arrival of the
        parameters). ``nan``: not observed (the worker abandoned the iteration before that task, or skipped the
        iteration); ``inf``: never (an injected "never", or a dead worker from the iteration it died in, which
        is the injected kill's iteration or the one the launcher heard of the death in)."""
        code = self.spec.get("code") or {}
        K = int(code.get("workers") or 1 + max([t[0] for t in self.tasks], default=0))
        load = int(code.get("load") or max([len(t[2]) for t in self.tasks], default=1))
        n = len(self.records)
        out = np.full((n, K, load), np.nan)
        seen = np.zeros((n, K), dtype=bool)
        for w, it, times in self.tasks:
            if 0 <= it < n and 0 <= w < K:
                t = np.array([math.inf if x is None else x for x in times], dtype=float)
                d = np.diff(np.concatenate([[0.0], t]))
                d[np.isinf(t)] = math.inf  # (inf - inf: still never)
                out[it, w, :t.size] = d
                seen[it, w] = True
        kill = {int(w): int(it) for w, it in (self.spec.get("kill") or {}).items()}
        for w in self.dead_workers:
            died = [kill.get(w), (self.deaths.get(w) or {}).get("iteration")]
            died = min([d for d in died if d is not None], default=None)
            if died is None:  # no word of when: after its last report
                died = 1 + max([it for v, it, _ in self.tasks if v == w], default=-1)
            if 0 <= w < K:
                for it in range(max(died, 0), n):
                    if not seen[it, w]:
                        out[it, w] = math.inf
        return out

    def frame(self):
        """The per-iteration records as a ``pandas.DataFrame``."""
        import pandas as pd  # here: every rank unpickles its spec, and pandas would lengthen each rank's start

        return pd.DataFrame(self.records)

    def summary(self) -> dict:
        """Totals and means over the finished iterations (JSON-ready): ``final_loss``, ``final_auc`` (``None`` for
        a model without one) and ``final_metrics`` (every test metric of the last iteration) among them."""
        r = self.records
        out = {"label": self.spec.get("label"), "status": self.status, "error": self.error,
               "iterations": len(r), "dead_workers": self.dead_workers, "messages_sent": self.messages_sent,
               "messages_received": self.messages_received,
               "abandoned": int(sum(self.abandoned.values())), "drained": self.drained}
        if r:
            t = np.array([x["time"] for x in r])
            p = np.array([x["predicted"] for x in r])
            out.update({"total_time": float(t.sum()), "total_predicted": float(p.sum()),
                        "mean_time": float(t.mean()), "mean_predicted": float(p.mean()),
                        "relative_error": float(t.mean() / p.mean() - 1) if p.mean() > 0 else math.nan,
                        "mean_overhead": float((t - p).mean()),
                        "overhead_fraction": float((t - p).mean() / t.mean()),
                        "mean_messages": float(np.mean([x["messages"] for x in r])),
                        "stale_messages": int(sum(x["stale"] for x in r))})
            if any("vectors" in x for x in r):  # the two-phase exchange: full-size vectors uploaded
                out["mean_vectors"] = float(np.mean([x.get("vectors", x["messages"]) for x in r]))
            for part in ("bcast", "decode", "step", "drain"):
                out[f"mean_{part}"] = float(np.mean([x[part] for x in r]))
            # what the four timed parts do not account for (the messages' way, the wake-ups); it can be below 0
            # when a part overlaps the workers' computing (decoding ahead while the master waits)
            out["mean_rest"] = out["mean_overhead"] - sum(out[f"mean_{k}"] for k in
                                                          ("bcast", "decode", "step", "drain"))
            last = r[-1]
            errors = [x["grad_error"] for x in r if x["grad_error"] is not None and not math.isnan(x["grad_error"])]
            out.update({"final_loss": last["loss"], "final_auc": last.get("auc"),  # (nan: a round decoded nothing)
                        "final_metrics": {k: last.get(k) for k in self.spec.get("metrics") or []},
                        "max_grad_error": float(max(errors)) if errors else math.nan})
            amp = np.array([math.inf if x.get("amplification") is None else x["amplification"] for x in r])
            limit = trust_limit()
            out.update({"max_amplification": float(amp.max()), "amplification_limit": limit,
                        "untrusted_iterations": [x["iteration"] for x, a in zip(r, amp) if not a <= limit]})
        out["deaths"] = self.deaths
        out["warnings"] = self.warnings()
        return jsonable(out)

    def warnings(self) -> list:
        """One line per thing the user should know although the run finished: decodes that could not be trusted
        (error amplification above :func:`gclib.codes.conditioning.amplification_threshold` for float64, the runtime's
        working precision; a missing amplification is an infinite one)."""
        limit = trust_limit()
        bad = [(x["iteration"], math.inf if x.get("amplification") is None else x["amplification"])
               for x in self.records]
        bad = [(i, a) for i, a in bad if not a <= limit]
        if not bad:
            return []
        its = [i for i, _ in bad]
        shown = ", ".join(map(str, its[:10])) + (", ..." if len(its) > 10 else "")
        return [f"{len(bad)} of {len(self.records)} decodes could not be trusted: their error amplification (up to "
                f"{max(a for _, a in bad):.3g}) exceeds {limit:.3g}, so the decoded gradient may be inaccurate in "
                f"float64 (iterations {shown})"]

    def to_dict(self) -> dict:
        return jsonable({"summary": self.summary(), "records": self.records, "theta": self.theta,
                          "predicted": self.predicted, "spec": self.spec, "returncode": self.returncode,
                          "seconds": self.seconds, "deaths": self.deaths, "pids": self.pids, "start": self.start,
                          "run_dir": self.run_dir, "restarts": self.restarts, "hosts": self.hosts,
                          "bells": self.bells, "tasks": self.tasks})

    def save(self, path, args=None) -> None:
        """Write the state file: the parameters, the log so far, the summary, and what ``--resume`` needs (the
        update's state, the command line's parameters ``args`` if any); see :mod:`gclib.runtime.state`."""
        write_json(path, state_document(self, args))


def trust_limit() -> float:
    """Error amplification above which the runtime does not trust a decode: the decoder's own threshold for
    float64 (:func:`gclib.codes.conditioning.amplification_threshold`)."""
    return float(conditioning.amplification_threshold(np.float64))


