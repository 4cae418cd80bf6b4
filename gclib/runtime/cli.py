"""``gclib run``: a real distributed run from the command line (registered in :data:`gclib.cli.COMMANDS`).

Exit codes: 0 the run finished (dead workers within the code's tolerance included), 1 it stopped early (the
state is saved; ``gclib run --resume STATE`` continues it), 2 a bad argument (nothing was started), 130 it was
interrupted (Ctrl-C; the state is saved).
"""
from __future__ import annotations

import argparse
import json
import math
import sys

#: ``--problem`` names: the data sets of :mod:`gclib.learning.problems` plus short aliases.
PROBLEM_ALIASES = {"logistic": "tandon-logistic"}
#: Options that say where and how to run, not what: the only ones ``--resume`` accepts beside it.
EXECUTION_OPTIONS = ("json", "job_timeout", "hosts", "run_dir", "state")
#: Exit code of an interrupted run (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def add_run_args(p):
    from ..cli import _add_scheme_args, add_model_args

    p.description = ("Train over MPI: one master and --workers workers (mpiexec -n workers+1), injected "
                     "stragglers, each iteration checked against the simulator's time for the same delays. "
                     "A stopped run continues with --resume STATE.")
    _add_scheme_args(p)
    # --resume takes the scheme (and every other parameter) from the state file
    p._option_string_actions["--scheme"].required = False
    add_model_args(p)
    p.add_argument("--problem", default="logistic",
                   help="logistic (Tandon's synthetic data), tandon-logistic, breast-cancer, diabetes, lag-synthetic")
    p.add_argument("--samples", type=int, default=None, help="tandon-logistic: training samples (default 5000)")
    p.add_argument("--dim", type=int, default=None, help="tandon-logistic: features (default 100)")
    p.add_argument("--data-seed", type=int, default=0, help="seed of the data set and its split")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--step", default="agd", choices=["agd", "gd"], help="Tandon's accelerated GD, or plain GD")
    p.add_argument("--lr", type=float, default=None, help="learning rate (default 1 / smoothness)")
    p.add_argument("--time-scale", type=float, default=0.05, help="seconds per model time unit of injected delay")
    p.add_argument("--persistent-workers", default="",
                   help="comma-separated worker ids that never answer (persistent stragglers)")
    p.add_argument("--kill", default="",
                   help="fault injection: WORKER:ITERATION[,...], that worker's process exits at that iteration")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds an iteration may wait for a decodable set before the run stops with an error")
    p.add_argument("--job-timeout", type=float, default=None, help="seconds after which the whole job is killed")
    p.add_argument("--hosts", default=None, help="MPICH hostfile passed to mpiexec -f (runs across machines)")
    p.add_argument("--run-dir", default=None,
                   help="directory for the spec and logs (on a shared file system when using --hosts; default: a "
                        "temporary one, removed after a successful run)")
    p.add_argument("--state", default=None,
                   help="write the state (parameters, log, what --resume needs) here (always written on failure)")
    p.add_argument("--resume", default=None, metavar="STATE",
                   help="continue the run saved in this state file from its last completed iteration (same "
                        "parameters, same injected delays); only --json, --job-timeout, --hosts, --run-dir and "
                        "--state may be given with it")
    p.add_argument("--json", action="store_true", help="print one JSON object (per-iteration records + summary)")


# ---------------------------------------------------------------------------------------------- checks
def _int_list(text, name, *, low, high):
    """Comma-separated integers in ``[low, high)``: no empty entry, no repeat."""
    items = [x.strip() for x in text.split(",")] if text.strip() else []
    out = []
    for x in items:
        try:
            v = int(x)
        except ValueError:
            raise ValueError(f"{name} must be comma-separated worker ids, got {text!r}") from None
        if not low <= v < high:
            raise ValueError(f"{name}: worker {v} is outside [{low}, {high}) (the code's workers), in {text!r}")
        if v in out:
            raise ValueError(f"{name}: worker {v} is given twice in {text!r}")
        out.append(v)
    return out


def _kill_map(text):
    kill = {}
    for item in (x.strip() for x in text.split(",")) if text.strip() else []:
        try:
            w, it = item.split(":")
            w, it = int(w), int(it)
        except ValueError:
            raise ValueError(f"kill must look like WORKER:ITERATION[,...], got {text!r}") from None
        if w in kill:
            raise ValueError(f"kill: worker {w} is given twice in {text!r}")
        kill[w] = it
    return kill


def _positive(name, v, *, integer=False):
    if v is None:
        return
    ok = v >= 1 if integer else (math.isfinite(v) and v > 0)
    if not ok:
        raise ValueError(f"{name} must be a positive {'integer' if integer else 'number'}, got {v!r}")


def check_paths(a):
    """The paths of a command line, checked before anything is built or started (nothing is created)."""
    from .launcher import _check_new_path, check_hostfile, check_job_timeout

    check_job_timeout(a.job_timeout)
    if a.hosts is not None:
        check_hostfile(a.hosts)
    if a.run_dir is not None:
        _check_new_path("run-dir", a.run_dir, directory=True)
    if a.state is not None:
        _check_new_path("state", a.state, directory=False)


def spec_from_args(a):
    """Build the :class:`~gclib.runtime.spec.RunSpec` of a ``gclib run`` command line."""
    from ..cli import code_from_args, model_from_args
    from ..learning import GD, TandonAGD, make_problem
    from ..stragglers import Persistent
    from .spec import RunSpec

    if a.scheme is None:
        raise ValueError("scheme: --scheme is required (or --resume STATE to continue a saved run)")
    if a.seed is None:
        a.seed = 0
    _positive("samples", a.samples, integer=True)
    _positive("dim", a.dim, integer=True)
    _positive("iterations", a.iterations, integer=True)
    _positive("time-scale", a.time_scale)
    _positive("timeout", a.timeout)
    _positive("lr", a.lr)
    if a.data_seed < 0:
        raise ValueError(f"data-seed must be a non-negative integer, got {a.data_seed}")
    name = PROBLEM_ALIASES.get(a.problem, a.problem)
    if name != "tandon-logistic" and (a.samples is not None or a.dim is not None):
        raise ValueError(f"{'samples' if a.samples is not None else 'dim'}: --samples and --dim size "
                         f"Tandon's synthetic data (--problem logistic); problem {a.problem!r} has its own sizes")
    code = code_from_args(a)
    model = model_from_args(a)
    dead = _int_list(a.persistent_workers, "persistent-workers", low=0, high=code.n_workers)
    if dead:
        model = Persistent(model, workers=dead)
    kill = _kill_map(a.kill)
    kw = {}
    if name == "tandon-logistic":
        kw = {k: v for k, v in (("n_samples", a.samples), ("dim", a.dim)) if v is not None}
    problem = make_problem(name, parts=code.n_parts, seed=a.data_seed, **kw)
    lr = a.lr or 1.0 / problem.smoothness
    step = TandonAGD(lr) if a.step == "agd" else GD(lr)
    return RunSpec(code, problem, step, model, iterations=a.iterations, time_scale=a.time_scale, seed=a.seed,
                   timeout=a.timeout, kill=kill)


# ---------------------------------------------------------------------------------------------- resume
def _defaults(state_path):
    """The namespace of ``gclib run --resume STATE`` with nothing else given (every option at its default)."""
    from ..cli import build_parser

    return build_parser().parse_args(["run", "--resume", str(state_path)])


def run_args(a) -> dict:
    """The parameters of a command line that a resume must reuse (JSON-ready)."""
    skip = set(EXECUTION_OPTIONS) | {"fn", "resume", "cmd"}
    out = {}
    for k, v in vars(a).items():
        if k in skip or callable(v):
            continue
        out[k] = list(v) if isinstance(v, tuple) else v
    return json.loads(json.dumps(out))


def resumed_args(a):
    """The namespace of the run saved in ``a.resume``, with ``a``'s execution options; refuses a parameter given
    beside ``--resume`` and a state file without the command line's parameters."""
    from .state import load_state

    doc = load_state(a.resume)
    base = _defaults(a.resume)
    given = [k for k, v in vars(a).items()
             if k not in EXECUTION_OPTIONS and k not in ("fn", "resume", "cmd") and not callable(v)
             and getattr(base, k, v) != v]
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in sorted(given))
        raise ValueError(f"resume: {flags} cannot be given with --resume (a resumed run keeps the parameters in "
                         f"its state file; only --json, --job-timeout, --hosts, --run-dir and --state may change)")
    if doc["next_iteration"] >= doc["spec"]["iterations"]:
        raise ValueError(f"resume: the run in {a.resume!r} already finished its {doc['spec']['iterations']} "
                         f"iterations; nothing to resume")
    if doc.get("args") is None:
        raise ValueError(f"resume: {a.resume!r} was written by a library run (no command line in it); resume it "
                         f"with gclib.runtime.launch(spec, resume=...) and the same RunSpec")
    ns = argparse.Namespace(**vars(base))
    for k, v in doc["args"].items():
        setattr(ns, k, v)
    for k in EXECUTION_OPTIONS:
        setattr(ns, k, getattr(a, k))
    ns.resume = a.resume
    return ns, doc


# ---------------------------------------------------------------------------------------------- the command
def _line(r):
    auc = r.get("auc")
    dead = r.get("dead") or []
    return (f"iter {r['iteration']:4d}  time {1e3 * r['time']:8.2f} ms  predicted {1e3 * r['predicted']:8.2f} ms  "
            f"messages {r['messages']:3d}  stale {r['stale']:2d}  loss {r['loss']:.6f}"
            + (f"  auc {auc:.4f}" if auc is not None and auc == auc else "")
            + (f"  dead workers {dead}" if dead else ""))


def cmd_run(a):
    from .launcher import launch
    from .spec import RuntimeFailure

    doc = None
    if a.resume is not None:
        a, doc = resumed_args(a)
    check_paths(a)
    spec = spec_from_args(a)
    progress = None if a.json else (lambda r: print(_line(r), flush=True))
    if doc is not None and not a.json:
        print(f"resuming {a.resume} at iteration {doc['next_iteration']} of {spec.iterations}", flush=True)
    try:
        res = launch(spec, hosts=a.hosts, job_timeout=a.job_timeout, state_file=a.state, run_dir=a.run_dir,
                     progress=progress, resume=doc, args=run_args(a))
    except RuntimeFailure as e:
        res = e.result
        if a.json and res is not None:
            print(json.dumps(res.to_dict()))
        state = res.spec.get("state_file") if res is not None else None
        hint = f"; continue with: gclib run --resume {state}" if state else ""
        print(f"gclib: error: {e}{hint}", file=sys.stderr)
        return EXIT_INTERRUPTED if res is not None and res.status == "interrupted" else 1
    s = res.summary()
    if a.json:
        print(json.dumps(res.to_dict()))
    else:
        print(f"{s['label']}: {s['iterations']} iterations, total {s['total_time']:.3f} s measured, "
              f"{s['total_predicted']:.3f} s predicted ({100 * s['relative_error']:+.1f}%); mean overhead "
              f"{1e3 * s['mean_overhead']:.2f} ms/iteration (broadcast {1e3 * s['mean_bcast']:.2f}, decode "
              f"{1e3 * s['mean_decode']:.2f}, drain {1e3 * s['mean_drain']:.3f}, latency "
              f"{1e3 * s['mean_latency']:.2f}); final loss {s['final_loss']:.6f}"
              + (f", test AUC {s['final_auc']:.4f}" if s.get("final_auc") is not None else ""))
        if s["dead_workers"] or res.restarts:
            print(f"note: {res.error}")
    for w in res.warnings():
        print(f"gclib: warning: {w}", file=sys.stderr)
    return 0
