"""``gclib profile``: measure the time of every partial gradient on the user's hosts, in uncoded iterations, and
write the timing trace (:mod:`gclib.runtime.measure`).

Exit codes: 0 the trace is written (a dead worker's tasks are ``inf`` in it), 1 the run stopped early (what was
measured is written all the same; when no iteration was, ``--out`` is left as it was), 2 a bad argument (nothing
was started), 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import sys

from gclib import checks, message_cost
from gclib.cli import options, registries
from gclib.cli.run import checked_kill, kill_map


#: The command, and its line in ``gclib --help``.
NAME = "profile"
HELP = "measure per-task times on your hosts and write a timing trace (CSV)"


#: The examples of ``gclib profile --help`` (the tests run each).
EXAMPLES = (
    ("gclib profile --workers 4 --tasks 2 --iterations 5 --out times.csv",
     "every task's time on this machine, no delay injected, and what a message costs (times.network.json)"),
    ("gclib profile --workers 4 --iterations 5 --model pareto --shape 2 --time-scale 0.01 --out times.csv "
     "--no-network",
     "with injected Pareto delays (a fit of times.csv should recover them: gclib advise --trace times.csv)"))


def add_parser(sub):
    samples, dim = _task_size()
    p = sub.add_parser(
        NAME, help=HELP,
        description="Run uncoded iterations over MPI (one master and --workers workers, mpiexec -n workers+1) in "
                    "which every worker computes --tasks disjoint partial gradients (workers x tasks data parts) "
                    "and sends each one as soon as it is done; the master waits for all of them. The duration of "
                    "every task goes to --out, one row per iteration, worker and task (columns in "
                    "docs/runtime.md, 'Timing traces'). No delay is injected unless --model is given.\n\n"
                    "Task size: a task is the logistic-regression gradient of samples / (workers x tasks) rows of "
                    f"dim features (default {samples} x {dim}). To profile tasks as heavy as your "
                    "real ones, set --samples to the rows of your data set (each task then gets one part of "
                    "them, as in a run with the same workers and load) and --dim to its features.",
        epilog=options.examples(EXAMPLES) + "\n\n" + registries.epilog(schemes=False))  # uncoded: no --scheme
    add_arguments(p)
    p.set_defaults(fn=run)


def _task_size() -> tuple[int, int]:
    """The default rows and features of the synthetic data set (:data:`gclib.runtime.measure.PROFILE_SAMPLES`,
    :data:`~gclib.runtime.measure.PROFILE_DIM`), imported on first use: the runtime loads SciPy, which ``gclib
    --help`` does without."""
    from gclib.runtime.measure import PROFILE_DIM, PROFILE_SAMPLES

    return PROFILE_SAMPLES, PROFILE_DIM


def add_arguments(p):
    samples, dim = _task_size()
    count = checks.option(checks.integer, low=1)
    seconds = checks.option(checks.seconds)
    p.add_argument("--workers", type=count, required=True, help="worker ranks (K)")
    p.add_argument("--tasks", type=count, default=1, help="partial gradients per worker and iteration (R)")
    p.add_argument("--iterations", type=count, default=20, help="iterations measured")
    p.add_argument("--out", type=checks.option(checks.output_file), required=True, metavar="CSV",
                   help="where to write the timing trace")
    p.add_argument("--samples", type=count, default=samples,
                   help="rows of the synthetic data set, split over workers x tasks parts")
    p.add_argument("--dim", type=count, default=dim, help="features of the synthetic data set")
    p.add_argument("--data-seed", type=checks.option(checks.integer, low=0), default=0, help="seed of the data set")
    p.add_argument("--seed", type=checks.option(checks.integer, low=0), default=None,
                   help="with --model: seed of the injected delays (default 0)")
    options.add_model_args(p)
    p.set_defaults(model=None)  # no injected delay unless asked
    p.add_argument("--time-scale", type=seconds, default=None,
                   help="with --model: seconds per model time unit of injected delay (default 0.05)")
    p.add_argument("--kill", type=checks.option(kill_map), default=None,
                   help="fault injection: WORKER:ITERATION[,...], that worker's process exits at that iteration")
    p.add_argument("--timeout", type=seconds, default=30.0,
                   help="seconds an iteration may wait for the workers before the profile stops")
    options.add_launch_args(
        p, hosts_help="MPICH hostfile passed to mpiexec -f (profile the machines of your cluster)",
        run_dir_help="directory for the logs, on this host (default: a temporary one, removed after success)")
    p.add_argument("--quiet", action="store_true", help="no progress line per iteration")
    p.add_argument("--no-network", action="store_true",
                   help="skip measuring what a message costs (after the iterations; written beside --out as "
                        "OUT.network.json)")


def spec_from_args(a):
    from gclib.runtime.measure import profile_spec

    if a.model is None:
        given = options.given_model_options(a)
        # (--seed and --time-scale are None when not given: 0 is a value)
        given += [f for f in ("per_task", "persistent") if getattr(a, f)]
        given += [f for f in ("seed", "time_scale") if getattr(a, f) is not None]
        if given:
            raise ValueError(f"argument {', '.join(options.flag(f) for f in given)}: read only with --model NAME "
                             f"(no delay is injected without one)")
        model = None
    else:
        options.reject_unused(a, scheme=False)
        model = options.model_from_args(a, workers=a.workers)
    kill = checked_kill(a.kill, a.workers, a.iterations, workers_of="the profile", iterations_of="the profile")
    if a.hosts is None:
        from gclib.runtime.preflight import check_ranks_memory

        check_ranks_memory(a.workers)  # before the code and the data are built
    if a.samples < a.workers * a.tasks:
        raise ValueError(f"argument --samples: must be at least workers x tasks = {a.workers * a.tasks} (one row per "
                         f"data part), got {a.samples}")
    return profile_spec(a.workers, a.tasks, a.iterations, samples=a.samples, dim=a.dim, model=model,
                        time_scale=0.05 if a.time_scale is None else a.time_scale,
                        seed=0 if a.seed is None else a.seed, timeout=a.timeout, kill=kill, data_seed=a.data_seed,
                        network=() if getattr(a, "no_network", False) else message_cost.sizes_for(a.dim))


def _line(r):
    dead = r.get("dead") or []
    return (f"iter {r['iteration']:4d}  time {1e3 * r['time']:8.2f} ms  messages {r['messages']:4d}"
            + (f"  dead workers {dead}" if dead else ""))


def run(a) -> int:
    from gclib.runtime.launcher import launch
    from gclib.runtime.measure import summary, write_trace
    from gclib.runtime.result import RuntimeFailure

    spec = spec_from_args(a)
    progress = None if a.quiet else (lambda r: print(_line(r), flush=True))
    if not a.quiet:
        print(f"profile: {a.workers} workers x {a.tasks} tasks, {a.iterations} iterations, "
              f"{spec.problem.n_samples} samples x {spec.problem.dim} features "
              f"({'no injected delay' if spec.model is None else 'injected delays'})", flush=True)
    failed = None
    try:
        res = launch(spec, hosts=a.hosts, job_timeout=a.job_timeout, startup_timeout=a.startup_timeout,
                     run_dir=a.run_dir, progress=progress,
                     mpiexec=a.mpiexec, launcher=a.launcher, mpiexec_args=a.mpiexec_args)
    except RuntimeFailure as e:
        res, failed = e.result, e
    if res is None:
        print(f"gclib: error: {failed}", file=sys.stderr)
        return options.EXIT_FAIL
    d = res.task_durations()
    if failed is not None and not len(res.records):  # nothing measured: --out keeps what it held
        print(f"gclib: error: {failed}; nothing measured, {a.out} not written", file=sys.stderr)
        return options.EXIT_INTERRUPTED if res.status == "interrupted" else options.EXIT_FAIL
    rows = write_trace(a.out, d, res.hosts)
    s = summary(d)
    print(f"timing trace: {rows} tasks of {d.shape[0]} iterations ({s['never']} never finished; median "
          f"{1e3 * s['median_seconds']:.3f} ms) written to {a.out}", flush=True)
    if res.network:
        _write_network(res, a)
    if res.dead_workers and failed is None:
        print(f"note: {res.error}")
    if failed is not None:
        print(f"gclib: error: {failed}", file=sys.stderr)
        return options.EXIT_INTERRUPTED if res.status == "interrupted" else options.EXIT_FAIL
    return 0


def _write_network(res, a) -> None:
    """The fitted cost of a message (gclib.message_cost), beside the trace."""
    from gclib.runtime.measure import host_names

    try:
        prof = message_cost.fit(res.network, 8 * a.dim, hosts=host_names(res.hosts, a.workers))
    except ValueError as e:
        print(f"note: network not measured: {e}", flush=True)
        return
    path = message_cost.write(message_cost.beside(a.out), prof)
    print(f"network: {prof.text()}; written to {path}", flush=True)
