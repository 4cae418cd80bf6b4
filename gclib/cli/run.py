"""``gclib run``: a real distributed run over MPI from the command line (:func:`gclib.runtime.launch` of the
:class:`~gclib.runtime.RunSpec` its options describe).

Exit codes: 0 the run finished (dead workers within the code's tolerance included), 1 it stopped early (the
state is saved; ``gclib run --resume STATE`` continues it), 2 a bad argument (nothing was started), 130 it was
interrupted (Ctrl-C; the state is saved).
"""
from __future__ import annotations

import argparse
import json
import sys

from gclib import checks
from gclib.cli import options, registries
from gclib.stragglers import MODELS, Persistent

#: ``--problem`` names: the data sets of :mod:`gclib.learning.problems` plus short aliases.
PROBLEM_ALIASES = {"logistic": "tandon-logistic"}
#: Options that say where and how to run, not what: the only ones ``--resume`` accepts beside it.
EXECUTION_OPTIONS = ("json", "job_timeout", "startup_timeout", "hosts", "launcher", "mpiexec", "mpiexec_args",
                     "run_dir", "state", "measure")


#: The command, and its line in ``gclib --help``.
NAME = "run"
HELP = "a real distributed run over MPI (resumable with --resume STATE)"


#: The examples of ``gclib run --help`` (the tests run each).
EXAMPLES = (
    ("gclib run --scheme crc --workers 4 --stragglers 1 --iterations 5 --time-scale 0.01",
     "a real run over MPI (5 processes): each iteration's measured time beside the simulator's for the same delays"),
    ("gclib run --scheme frc --workers 4 --stragglers 1 --iterations 5 --time-scale 0.01 --kill 3:2 "
     "--measure times.csv",
     "worker 3 dies at iteration 2 and the code goes on; every task's time written as a timing trace"),
    ("gclib run --scheme crc --workers 4 --stragglers 1 --iterations 5 --time-scale 0.01 --lr 1 "
     "--model gclib.studies.your_model.perceptron:digits_mlp --model-args framework=numpy,hidden=16",
     "your own model, named by its import path and built on every rank: notebook 15's network on the digits "
     "(docs/your_model.md)"))


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       description="Train over MPI: one master and --workers workers (mpiexec -n workers+1), "
                                   "injected stragglers, each iteration checked against the simulator's time for "
                                   "the same delays. A stopped run continues with --resume STATE (the path it "
                                   "prints).",
                       epilog=options.examples(EXAMPLES) + "\n\n" + registries.epilog())
    add_arguments(p)
    p.set_defaults(fn=run)


def add_arguments(p):
    """The options of ``gclib run``."""
    # --resume takes the scheme (and every other parameter) from the state file
    options.add_scheme_args(p, required=False, seed_help=", and of the injected compute times")
    options.add_model_args(p)
    add_trained_model_args(p)
    count = checks.option(checks.integer, low=1)
    seconds = checks.option(checks.seconds)
    p.add_argument("--problem", default="logistic", choices=options.problem_names(),
                   help="logistic = tandon-logistic, Tandon's synthetic logistic regression; linreg = the LAG "
                        "paper's synthetic linear regression (one block per part); or a data set")
    p.add_argument("--samples", type=count, default=None,
                   help="logistic (the default problem): training samples (default 5000)")
    p.add_argument("--dim", type=count, default=None, help="logistic (the default problem): features (default 100)")
    p.add_argument("--data-seed", type=checks.option(checks.integer, low=0), default=0,
                   help="seed of the data set and its split")
    p.add_argument("--iterations", type=count, default=50, help="iterations of the run")
    p.add_argument("--step", default="agd", choices=["agd", "gd"], help="Tandon's accelerated GD, or plain GD")
    p.add_argument("--lr", type=checks.option(checks.real, above=0), default=None,
                   help="learning rate (default 1 / smoothness)")
    p.add_argument("--time-scale", type=seconds, default=0.05, help="seconds per model time unit of injected delay")
    p.add_argument("--persistent-workers", type=checks.option(checks.int_list, low=0, distinct=True), default=None,
                   metavar="IDS", help="comma-separated ids of workers that never answer (--persistent N: random)")
    p.add_argument("--kill", type=checks.option(kill_map), default=None,
                   help="fault injection: WORKER:ITERATION[,...], that worker's process exits at that iteration")
    p.add_argument("--timeout", type=seconds, default=10.0,
                   help="seconds an iteration may wait for a decodable set before the run stops with an error")
    p.add_argument("--exchange", default="messages", choices=["messages", "two-phase"],
                   help="two-phase (rmg only): progress reports, then one summed vector per picked worker")
    options.add_launch_args(
        p, hosts_help="MPICH hostfile passed to mpiexec -f (runs across machines; no shared file system needed)",
        run_dir_help="directory for the logs and the state on this host (default: a temporary one, removed after "
                     "success)")
    p.add_argument("--state", type=checks.option(checks.output_file), default=None,
                   help="write the state (parameters, log, what --resume needs) here (always written on failure)")
    p.add_argument("--resume", type=checks.option(checks.input_path, kind="file", must_exist=True), default=None,
                   metavar="STATE",
                   help="continue the run saved in this state file from its last completed iteration (same "
                        "parameters and delays; only where and how it runs may change)")
    p.add_argument("--measure", type=checks.option(checks.output_file), default=None, metavar="CSV",
                   help="write the per-task times here (docs/runtime.md, 'Timing traces')")
    p.add_argument("--json", action="store_true", help="print one JSON object (per-iteration records + summary)")


def add_trained_model_args(p):
    """``--model`` names your model too (``MODULE:FUNCTION``), ``--model-args`` its function's arguments, and
    ``--compute-model`` the compute-time model of the injected delays beside it."""
    act = p._option_string_actions["--model"]  # (the compute-time model's option, made by options.add_model_args)
    act.choices, act.type = None, checks.option(model_option)
    act.help = "compute-time model (names below), or your model: its import path MODULE:FUNCTION"
    p.add_argument("--model-args", type=checks.option(_model_args), default=None,
                   metavar="K=V,...", help="your model's keyword arguments (literals)")
    p.add_argument("--compute-model", default=None, choices=sorted(MODELS), metavar="NAME",
                   help="beside your model: the compute-time model")


def _model_args(name, value) -> str:
    """``--model-args``: the text as given (a resumed run parses it again), once it parses
    (:func:`gclib.learning.model.parse_kwargs`)."""
    from gclib.learning.model import parse_kwargs

    parse_kwargs(value)
    return value


def model_option(name, value) -> str:
    """``--model``: a compute-time model's name, or an import path ``MODULE:FUNCTION`` (checked for its form
    here; whether it imports and builds, when the run is made)."""
    from gclib.learning.model import ModelRef

    if isinstance(value, str) and ":" in value:
        return ModelRef(value).target
    if value in MODELS:
        return value
    raise ValueError(f"{checks.must_be(name)} a compute-time model ({', '.join(sorted(MODELS))}) or your model as "
                     f"MODULE:FUNCTION, got {value!r}")


def delays_args(a):
    """``a`` as the compute-time model's options read it: ``--model`` the compute-time model (``--compute-model``
    when ``--model`` names your model). Raises ``ValueError`` for ``--compute-model`` or ``--model-args`` without a
    model of yours."""
    trained = ":" in (a.model or "")
    if not trained:
        for flag, v in (("--compute-model", getattr(a, "compute_model", None)),
                        ("--model-args", getattr(a, "model_args", None))):
            if v:
                raise ValueError(f"argument {flag}: goes with your model (--model MODULE:FUNCTION); without one, "
                                 f"--model names the compute-time model")
        return a
    return argparse.Namespace(**{**vars(a), "model": getattr(a, "compute_model", None) or "shifted-exp"})


# ---------------------------------------------------------------------------------------------- checks
def kill_map(name, value) -> dict:
    """``{worker: iteration}`` of ``--kill``: from ``WORKER:ITERATION[,...]`` (spaces allowed), or from pairs or a
    dict (a saved command line); non-negative integers, every worker once, no empty item. Whether the workers and
    iterations exist is for the run to say (:func:`spec_from_args`).

    Raises:
        ValueError naming ``name`` (``None`` for the option's own check), the value and the item at fault.
    """
    allowed = "WORKER:ITERATION[,...] with non-negative integers"
    if value is None:
        return {}
    if isinstance(value, str):
        pairs = []
        for i, item in enumerate(value.split(",")):
            if not item.strip():
                raise ValueError(f"{checks.must_be(name)} {allowed} without empty items, got {value!r} (item {i} is "
                                 f"empty)")
            w, sep, it = item.partition(":")
            try:
                pairs.append((item.strip(), int(w), int(it)) if sep else (item.strip(), None, None))
            except ValueError:
                pairs.append((item.strip(), None, None))
    else:
        try:
            pairs = [(x, *x) if len(x) == 2 else (x, None, None)
                     for x in (value.items() if isinstance(value, dict) else map(tuple, value))]
        except TypeError:
            raise checks.ParameterTypeError(f"{checks.must_be(name)} {allowed}, got {value!r}") from None
    out = {}
    for i, (shown, w, it) in enumerate(pairs):
        try:
            w, it = checks.integer(None, w, low=0), checks.integer(None, it, low=0)
        except ValueError:
            raise ValueError(f"{checks.must_be(name)} {allowed}, got {value!r} (item {i} is {shown!r})") from None
        if w in out:
            raise ValueError(f"{checks.must_be(name)} {allowed}, each worker once, got {value!r} (worker {w} is "
                             f"given twice)")
        out[w] = it
    return out


def checked_kill(value, workers: int, iterations: int, *, workers_of: str, iterations_of: str) -> dict:
    """``--kill`` (:func:`kill_map`; ``None`` or ``""``, as an older state file has it: no kill) checked against the
    job: every worker below ``workers``, every iteration below ``iterations``; the messages say what has them
    (``workers_of``: "the code", ``iterations_of``: "the run")."""
    kill = checks.option_check("--kill", kill_map, value or None)
    for w, it in kill.items():
        checks.option_check("--kill", checks.integer, w, subject="a worker", low=0, high=workers - 1,
                            why=f" ({workers_of} has {workers} workers)")
        checks.option_check("--kill", checks.integer, it, subject=f"the iteration of worker {w}", low=0,
                            high=iterations - 1, why=f" ({iterations_of} has {iterations} iterations)")
    return kill


def spec_from_args(a):
    """Build the :class:`~gclib.runtime.spec.RunSpec` of a ``gclib run`` command line (its options are parsed and
    checked one by one by the parser; what depends on several of them is checked here, naming the option)."""
    from gclib.learning import GD, TandonAGD, make_problem
    from gclib.learning.model import step_size
    from gclib.runtime.spec import RunSpec

    if a.scheme is None:
        raise ValueError("the following arguments are required: --scheme (or --resume STATE to continue a saved "
                         "run)")
    d = delays_args(a)
    trained = d is not a  # --model names a model of the user's
    if trained:
        given = [f for f, v, default in (("--problem", a.problem, "logistic"), ("--samples", a.samples, None),
                                         ("--dim", a.dim, None), ("--data-seed", a.data_seed, 0)) if v != default]
        if given:
            raise ValueError(f"argument {given[0]}: describes a built-in problem; your model (--model {a.model}) is "
                             f"the problem, its data and sizes its own (--model-args)")
    name = PROBLEM_ALIASES.get(a.problem, a.problem)
    for flag, v in (("--samples", a.samples), ("--dim", a.dim)):
        if v is not None and name != "tandon-logistic":
            raise ValueError(f"argument {flag}: sizes Tandon's synthetic data only (--problem logistic); problem "
                             f"{a.problem!r} has its own sizes")
    if getattr(a, "hosts", None) is None and isinstance(a.workers, int):
        from gclib.runtime.preflight import check_ranks_memory

        check_ranks_memory(a.workers)  # before the code is built (thousands of workers take long to build)
    code = options.code_from_args(a)
    K = code.n_workers
    model = options.model_from_args(d, workers=K)
    dead = checks.option_check("--persistent-workers", checks.int_list, a.persistent_workers or (), min_len=0,
                               distinct=True)
    for w in dead:
        checks.option_check("--persistent-workers", checks.integer, w, subject="a worker id", low=0, high=K - 1,
                            why=f" (the code has {K} workers)")
    if dead:
        model = Persistent(model, workers=list(dead))
    kill = checked_kill(a.kill, K, a.iterations, workers_of="the code", iterations_of="the run")
    kw = {}
    if name == "tandon-logistic":
        kw = {k: v for k, v in (("n_samples", a.samples), ("dim", a.dim)) if v is not None}
    problem = (trained_model(a.model, a.model_args, code) if trained else
               options.problem_for(name, code.n_parts, a.data_seed) if name == "linreg" else
               make_problem(name, parts=code.n_parts, seed=a.data_seed, **kw))
    from gclib.runtime.two_phase import check_exchange

    exchange = getattr(a, "exchange", None) or "messages"  # (an older state file has none)
    checks.option_check("--exchange", lambda _, v: check_exchange(v, code, problem.dim), exchange)
    lr = checks.option_check("--lr", lambda _, v: step_size(problem, v), a.lr)
    step = TandonAGD(lr) if a.step == "agd" else GD(lr)
    return RunSpec(code, problem, step, model, iterations=a.iterations, time_scale=a.time_scale, seed=a.seed,
                   timeout=a.timeout, kill=kill, exchange=exchange)


def trained_model(target: str, kwargs, code):
    """The model of ``--model MODULE:FUNCTION`` and ``--model-args``, built and checked here (before any rank
    starts); a function with a parameter ``parts`` not given gets the code's data parts. Raises ``ValueError``
    naming ``--model`` (it cannot be imported or built, its gradient has the wrong shape or is not finite, ...)."""
    from gclib.learning.model import accepts, load, parse_kwargs

    kw = checks.option_check("--model-args", lambda _, v: parse_kwargs(v), kwargs)

    def build(_, target):
        if "parts" not in kw and accepts(target, "parts"):
            kw["parts"] = code.n_parts
        model = load(target, **kw)
        if model.n_parts != code.n_parts:
            raise ValueError(f"model {target} has {model.n_parts} data parts, the code '{code.name}' "
                             f"{code.n_parts}")
        return model

    return checks.option_check("--model", build, target)


# ---------------------------------------------------------------------------------------------- resume
def _defaults(state_path):
    """The namespace of ``gclib run --resume STATE`` with nothing else given (every option at its default)."""
    p = options.Parser(prog="gclib run")
    add_arguments(p)
    return p.parse_args(["--resume", str(state_path)])


def run_args(a) -> dict:
    """The parameters of a command line that a resume must reuse (JSON-ready)."""
    skip = set(EXECUTION_OPTIONS) | {"fn", "resume", "cmd"}
    out = {}
    for k, v in vars(a).items():
        if k in skip or callable(v) or k.startswith("_"):
            continue
        if isinstance(v, dict):  # --kill: pairs, since JSON keys are text
            v = sorted([list(x) for x in v.items()])
        out[k] = list(v) if isinstance(v, tuple) else v
    return json.loads(json.dumps(out))


def resumed_args(a):
    """The namespace of the run saved in ``a.resume``, with ``a``'s execution options; refuses a parameter given
    beside ``--resume`` and a state file without the command line's parameters."""
    from gclib.runtime.resume import load_state, saved_args

    doc = load_state(a.resume)
    base = _defaults(a.resume)
    given = {k for k, v in vars(a).items()
             if k not in EXECUTION_OPTIONS and k not in ("fn", "resume", "cmd") and not callable(v)
             and not k.startswith("_") and getattr(base, k, v) != v}
    # an option given at its default value is given all the same (--exchange messages beside a two-phase state)
    given |= {k for k in options.given(a) if k not in EXECUTION_OPTIONS and k != "resume"}
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in sorted(given))
        raise ValueError(f"resume: {flags} cannot be given with --resume (a resumed run keeps the parameters in "
                         f"its state file; only --json, --job-timeout, --startup-timeout, --hosts, --launcher, "
                         f"--mpiexec, --mpiexec-args, --run-dir, --state and --measure may change)")
    known = {k for k in vars(base) if not k.startswith("_")} - set(EXECUTION_OPTIONS) - {"fn", "resume", "cmd"}
    saved = saved_args(doc, a.resume, known)
    ns = argparse.Namespace(**{k: v for k, v in vars(base).items() if not k.startswith("_")})
    for k, v in saved.items():
        if v is not None:  # None: not given (an older state file): the option's default
            setattr(ns, k, v)
    for k in EXECUTION_OPTIONS:
        setattr(ns, k, getattr(a, k))
    ns.resume = a.resume
    return ns, doc


# ---------------------------------------------------------------------------------------------- the command
def _line(r, metrics=()):
    auc = r.get("auc")
    dead, silent = r.get("dead") or [], r.get("silent") or []
    return (f"iter {r['iteration']:4d}  time {1e3 * r['time']:8.2f} ms  predicted {1e3 * r['predicted']:8.2f} ms  "
            f"messages {r['messages']:3d}  stale {r['stale']:2d}  loss {r['loss']:.6f}"
            + (f"  reports {r['reports']:3d}" if "reports" in r else "")  # the two-phase exchange
            + (f"  auc {auc:.4f}" if auc is not None and auc == auc else "")
            + "".join(f"  {k} {r[k]:.4f}" for k in metrics if isinstance(r.get(k), float))  # a model's own
            + (f"  dead workers {dead}" if dead else "") + (f"  silent workers {silent}" if silent else ""))


def _own_metrics(spec) -> list:
    """The test metrics of a model of the user's (``--model MODULE:FUNCTION``) that the lines show, besides the
    loss: those it names, but ``test_loss`` and ``auc``."""
    if not spec.named:
        return []
    return [k for k in sorted(spec.problem.test_metrics(spec.theta0.copy())) if k not in ("test_loss", "auc")]


def _number(v, fmt: str) -> str:
    """``v`` formatted, or ``n/a`` for a value the run does not have (``None``, NaN)."""
    return "n/a" if v is None or v != v else format(v, fmt)


def write_measured(path, res, quiet=False) -> str | None:
    """Write the timing trace of ``res`` to ``path`` and say so in one line (unless ``quiet``). Returns ``None``, or
    why the file could not be written (a full disk, say), naming it: the run's results are printed all the same."""
    from gclib.runtime.measure import summary, write_trace

    d = res.task_durations()
    try:
        rows = write_trace(path, d, res.hosts)
    except OSError as e:
        return f"could not write the timing trace to {str(path)!r}: {e.strerror or e}"
    if not quiet:
        s = summary(d)
        print(f"timing trace: {rows} tasks ({s['never']} never finished) written to {path}", flush=True)
    return None


def _spec_of(a):
    """The namespace, the spec and the saved state (``None`` for a new run) of command line ``a``."""
    if a.resume is None:
        options.reject_unused(delays_args(a))
        return a, spec_from_args(a), None
    a, doc = resumed_args(a)
    try:
        return a, spec_from_args(a), doc
    except ValueError:  # a check named the parameter
        raise
    except (TypeError, AttributeError, KeyError, IndexError) as e:  # values of the file no option would take
        raise ValueError(f"resume: {str(a.resume)!r} is not a usable state file: its parameters do not make a "
                         f"run ({type(e).__name__})") from None


def _say_resuming(a, spec, doc) -> None:
    """The line a resumed run opens with: where it continues, and the kills that are not injected again."""
    from gclib.runtime.resume import kills_left

    left = kills_left(spec.kill, doc["next_iteration"])
    dropped = ",".join(f"{w}:{it}" for w, it in sorted(spec.kill.items()) if w not in left)
    print(f"resuming {a.resume} at iteration {doc['next_iteration']} of {spec.iterations}"
          + (f" (the kills due by then are not injected again: --kill {dropped})" if dropped else ""),
          flush=True)


def _failed(a, e) -> int:
    """Report a run that stopped (``RuntimeFailure`` ``e``) with what it kept; the exit code."""
    res = e.result
    unwritten = write_measured(a.measure, res, quiet=a.json) if a.measure and res is not None else None
    if a.json and res is not None:
        print(json.dumps(res.to_dict()))
    state = res.spec.get("state_file") if res is not None else None
    diverged = res is not None and res.status == "diverged"  # nothing to continue: the parameters are not finite
    hint = f"; continue with: gclib run --resume {state}" if state and not diverged else ""
    interrupted = res is not None and res.status == "interrupted"
    # an interruption reads as every command's Ctrl-C ("gclib: interrupted"), with what was kept
    head = "gclib: " if interrupted else "gclib: error: "
    print(f"{head}{e}{hint}" + (f"; {unwritten}" if unwritten else ""), file=sys.stderr)
    return options.EXIT_INTERRUPTED if interrupted else options.EXIT_FAIL


def _summary_line(s: dict, shown) -> str:
    """The line that ends a finished run (``s``: its ``RunResult.summary()``): times, overheads, final loss and
    metrics."""
    return (f"{s['label']}: {s['iterations']} iterations, total {s['total_time']:.3f} s measured, "
            f"{s['total_predicted']:.3f} s predicted ({100 * s['relative_error']:+.1f}%); mean overhead "
            f"{1e3 * s['mean_overhead']:.2f} ms/iteration (broadcast {1e3 * s['mean_bcast']:.2f}, decode "
            f"{1e3 * s['mean_decode']:.2f}, drain {1e3 * s['mean_drain']:.3f}, rest "
            f"{1e3 * s['mean_rest']:.2f}, below 0 where a part overlaps the workers' computing); final loss "
            f"{_number(s['final_loss'], '.6f')}"
            + (f", test AUC {s['final_auc']:.4f}" if s.get("final_auc") is not None else "")
            + "".join(f", {k} {v:.4f}" for k, v in (s.get("final_metrics") or {}).items()
                      if k in shown and isinstance(v, float)))


def run(a) -> int:
    from gclib.runtime.launcher import launch
    from gclib.runtime.result import RuntimeFailure

    a, spec, doc = _spec_of(a)
    shown = _own_metrics(spec)
    progress = None if a.json else (lambda r: print(_line(r, shown), flush=True))
    if doc is not None and not a.json:
        _say_resuming(a, spec, doc)
    try:
        res = launch(spec, hosts=a.hosts, job_timeout=a.job_timeout, startup_timeout=a.startup_timeout,
                     state_file=a.state, run_dir=a.run_dir,
                     progress=progress, resume=doc, args=run_args(a), mpiexec=a.mpiexec, launcher=a.launcher,
                     mpiexec_args=a.mpiexec_args)
    except RuntimeFailure as e:
        return _failed(a, e)
    unwritten = write_measured(a.measure, res, quiet=a.json) if a.measure else None
    if a.json:
        print(json.dumps(res.to_dict()))
    else:
        s = res.summary()
        print(_summary_line(s, shown))
        if s["dead_workers"] or res.restarts:
            print(f"note: {res.error}")
    for w in res.warnings():
        print(f"gclib: warning: {w}", file=sys.stderr)
    if unwritten:  # the run finished and its results are printed; the trace is not written
        print(f"gclib: error: {unwritten}", file=sys.stderr)
        return options.EXIT_FAIL
    return 0
