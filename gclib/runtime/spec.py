"""The description of one distributed run: everything the ranks need (its result is :mod:`gclib.runtime.result`'s)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np

from gclib import checks
from gclib.codes.base import DecodingError, GradientCode
from gclib.jsonable import jsonable
from gclib.learning.model import ModelError, ModelRef, as_model, check_model, model_name
from gclib.runtime.master import Master
from gclib.runtime.two_phase import TwoPhaseMaster, check_exchange
from gclib.runtime.worker import Worker


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
            where the master's bell reaches it, see :mod:`gclib.runtime.wakeup`).
        stop_timeout: seconds the master waits for every worker's goodbye at the end (longer: a dead worker).
        kill: ``{worker: iteration}``: fault injection, the worker's process exits abruptly when it receives
            that iteration's parameters, or those of a later one (a late worker may skip the iteration).
        theta0: initial parameters ``(dim,)`` (by default the model's ``initial()``: zeros for a ``Problem``).
        label: free-form name of the run (scheme name by default).
        wait_all: the master waits in every iteration for every message of every worker still alive (a
            profile, :mod:`gclib.runtime.measure`), not for the first decodable set; a dead worker does not stop
            the run then, and the code's decoder gets what came.
        network: message sizes (float64 numbers per message) whose cost the master measures after the last
            iteration, with every worker (:mod:`gclib.runtime.message_probe`; ``gclib profile``); empty: none.
        sequential: a :class:`gclib.runtime.rounds.SequentialRun` (sequential gradient coding: a plan per worker and
            round, the deadline rule, a job decoded ``T`` rounds after it starts; :mod:`gclib.runtime.rounds`), or
            ``None`` (the default: one gradient per iteration, decoded as soon as the received messages decode).
            With it, ``iterations`` is the scheme's rounds, the injected delays are its matrix (``model`` is
            ``None``), ``kill`` names rounds, and the problem has the scheme's parts.
        exchange: ``"messages"`` (the default: every message a worker readies is sent whole as it is ready) or
            ``"two-phase"`` (the partial-straggler protocol: small progress reports, then one summed vector per
            worker the master picks; :mod:`gclib.runtime.two_phase`), only for a code whose decoder names the chunk
            of every message (``rmg``'s :class:`~gclib.codes.partial_work.CoverDecoder`).
        start, state0, wall0: where a resumed run continues (set by ``launch(..., resume=STATE)``): the first
            iteration to run, the update's state after the one before (as :func:`gclib.runtime.protocol.
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
        self.start = checks.integer("start", self.start, low=0, high=self.iterations)
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
        code's; a model that was pickled is used as it is), then let it prepare for the run's iterations
        (:meth:`gclib.learning.model.Model.prepare`). Raises :class:`gclib.learning.model.ModelError` (a
        ``ValueError``) naming the model."""
        if isinstance(self.problem, ModelRef):
            model = as_model(self.problem.build())
            if model.dim != len(self.theta0):
                raise ModelError(f"model {model_name(model)} has {model.dim} parameters on this rank, "
                                 f"{len(self.theta0)} where the run was launched")
            self.problem = model
        self.problem.prepare(self.iterations)
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

    def roles(self) -> tuple:
        """``(master class, worker class)``: what rank 0 and the other ranks run (:mod:`gclib.runtime.rank`).
        :class:`~gclib.runtime.master.Master` and :class:`~gclib.runtime.worker.Worker`; the two-phase exchange's
        master (:class:`~gclib.runtime.two_phase.TwoPhaseMaster`); a sequential run's rounds
        (:meth:`gclib.runtime.rounds.SequentialRun.roles`). A subclass of RunSpec may run subclasses of its own (the
        arms of ``benchmarks/bench_runtime_ab.py``)."""
        if self.sequential is not None:
            return self.sequential.roles()
        return (TwoPhaseMaster if self.exchange == "two-phase" else Master), Worker

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
                          "exchange": self.exchange,
                          **({"sequential": self.sequential.describe()} if self.sequential is not None else {})})
