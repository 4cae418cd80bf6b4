"""``gclib run``: a real distributed run from the command line (registered in :data:`gclib.cli.COMMANDS`)."""
from __future__ import annotations

import json
import sys

#: ``--problem`` names: the data sets of :mod:`gclib.learning.problems` plus short aliases.
PROBLEM_ALIASES = {"logistic": "tandon-logistic"}


def add_run_args(p):
    from ..cli import _add_scheme_args, add_model_args

    p.description = ("Train over MPI: one master and --workers workers (mpiexec -n workers+1), injected "
                     "stragglers, each iteration checked against the simulator's time for the same delays.")
    _add_scheme_args(p)
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
                   help="fault injection: WORKER:ITERATION[,...], that worker's process dies at that iteration")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds an iteration may wait for a decodable set before the run stops with an error")
    p.add_argument("--job-timeout", type=float, default=None, help="seconds after which the whole job is killed")
    p.add_argument("--hosts", default=None, help="MPICH hostfile passed to mpiexec -f (runs across machines)")
    p.add_argument("--run-dir", default=None,
                   help="directory for the spec and logs (on a shared file system when using --hosts)")
    p.add_argument("--state", default=None, help="write parameters and log here (always written on failure)")
    p.add_argument("--json", action="store_true", help="print one JSON object (per-iteration records + summary)")


def _int_list(text, name):
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{name} must be comma-separated worker ids, got {text!r}") from None


def spec_from_args(a):
    """Build the :class:`~gclib.runtime.spec.RunSpec` of a ``gclib run`` command line."""
    from ..cli import code_from_args, model_from_args
    from ..learning import GD, TandonAGD, make_problem
    from ..stragglers import Persistent
    from .spec import RunSpec

    if a.seed is None:
        a.seed = 0
    code = code_from_args(a)
    model = model_from_args(a)
    dead = _int_list(a.persistent_workers, "persistent-workers")
    if dead:
        model = Persistent(model, workers=dead)
    kill = {}
    for item in filter(None, (x.strip() for x in a.kill.split(","))):
        try:
            w, it = item.split(":")
            kill[int(w)] = int(it)
        except ValueError:
            raise ValueError(f"kill must look like WORKER:ITERATION[,...], got {a.kill!r}") from None
    name = PROBLEM_ALIASES.get(a.problem, a.problem)
    kw = {}
    if name == "tandon-logistic":
        kw = {k: v for k, v in (("n_samples", a.samples), ("dim", a.dim)) if v is not None}
    problem = make_problem(name, parts=code.n_parts, seed=a.data_seed, **kw)
    if a.lr is not None and not a.lr > 0:
        raise ValueError(f"lr must be positive, got {a.lr}")
    lr = a.lr or 1.0 / problem.smoothness
    step = TandonAGD(lr) if a.step == "agd" else GD(lr)
    return RunSpec(code, problem, step, model, iterations=a.iterations, time_scale=a.time_scale, seed=a.seed,
                   timeout=a.timeout, kill=kill)


def _line(r):
    auc = r.get("auc")
    return (f"iter {r['iteration']:4d}  time {1e3 * r['time']:8.2f} ms  predicted {1e3 * r['predicted']:8.2f} ms  "
            f"messages {r['messages']:3d}  stale {r['stale']:2d}  loss {r['loss']:.6f}"
            + (f"  auc {auc:.4f}" if auc is not None and auc == auc else ""))


def cmd_run(a):
    from .launcher import launch
    from .spec import RuntimeFailure

    spec = spec_from_args(a)
    progress = None if a.json else (lambda r: print(_line(r), flush=True))
    try:
        res = launch(spec, hosts=a.hosts, job_timeout=a.job_timeout, state_file=a.state, run_dir=a.run_dir,
                     progress=progress)
    except RuntimeFailure as e:
        if a.json and e.result is not None:
            print(json.dumps(e.result.to_dict()))
        print(f"gclib: error: {e}", file=sys.stderr)
        return 1
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
        if s["dead_workers"]:
            print(f"note: {res.error}")
    return 0
