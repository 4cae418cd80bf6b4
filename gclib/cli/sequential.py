"""``gclib sequential``: a sequential gradient-coding scheme (:mod:`gclib.sequential`) replayed on a delay matrix
from a file, with given parameters or the best of a sweep."""
from __future__ import annotations

import json
import sys

from gclib import checks
from gclib.cli import options
from gclib.cli.options import EXIT_FAIL, EXIT_INTERRUPTED, given as given_options
from gclib.cli.run import kill_map
from gclib.schemes import SEQUENTIAL
from gclib.sequential_replay import CONVENTIONS, MU

#: The options of the schemes' parameters: ``{option name: (parameter of gclib.sequential, placeholder, help)}``.
FLAGS = {"stragglers": ("s", "S", "gc: stragglers tolerated in every round, s"),
         "burst": ("B", "B", "sr-sgc, m-sgc: the longest burst of rounds a worker straggles in, B"),
         "window": ("W", "W", "sr-sgc, m-sgc: the window of rounds, W"),
         "window_stragglers": ("lambd", "LAMBDA", "sr-sgc, m-sgc: the workers that may straggle within a window, "
                                                  "lambda")}
#: The options' old names (kept for a release, hidden): ``{old: new}``.
OLD_FLAGS = {"--s": "--stragglers", "--B": "--burst", "--W": "--window", "--lambd": "--window-stragglers",
             "--mu": "--deadline-factor"}
#: The option of each parameter of a sequential scheme (:attr:`gclib.schemes.SequentialScheme.params`).
OPTION = {param: options.flag(name) for name, (param, _, _) in FLAGS.items()}

#: The examples of ``gclib sequential --help`` (the tests run each, with the file of EXAMPLE_FILES).
EXAMPLES = (
    ("gclib sequential --delays delays.csv --scheme gc --stragglers 2",
     "GC(2) in every round on its own: the run time of the rounds and those that waited for every worker"),
    ("gclib sequential --delays delays.csv --scheme m-sgc --burst 1 --window 2 --window-stragglers 3",
     "M-SGC (Krishnan et al.): a gradient may finish a round after it starts"),
    ("gclib sequential --delays delays.csv --scheme sr-sgc --sweep --max-delay 3",
     "SR-SGC with the parameters of the fastest replay on this matrix"),
    ("gclib sequential --delays delays.csv --scheme gc --stragglers 2 --convention simulator",
     "the authors' simulator's definitions"),
    ("gclib sequential --delays delays.csv --scheme m-sgc --burst 1 --window 2 --window-stragglers 2 --mpi",
     "also run over MPI, the matrix as the injected delays, and replay the delays the run measured"))
EXAMPLE_FILES = "(delays.csv: seconds, a row per worker and a column per round, no header)"

#: The largest delay of a sweep unless --max-delay says otherwise.
MAX_DELAY = 4
#: The command, and its line in ``gclib --help``.
NAME = "sequential"
HELP = "replay GC, SR-SGC or M-SGC (sequential gradient coding) on a delay matrix of workers x rounds"


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       description="Replay a scheme of gclib.sequential on a delay matrix (seconds, a row per worker "
                                   "and a column per round): a round's stragglers are slower than its deadline, (1 + "
                                   "MU) times its fastest worker's time (--deadline-factor MU); a round that fits the "
                                   "scheme's model lasts min(deadline, slowest), else the master waits for all.",
                       epilog=options.examples(EXAMPLES, note=EXAMPLE_FILES) + "\n\n`gclib list` shows the "
                              "sequential schemes and their parameters.")
    p.add_argument("--delays", required=True, metavar="FILE",
                   help="the delay matrix: .npy, or a CSV of numbers without a header")
    p.add_argument("--transpose", action="store_true", help="the file has a row per round (a column per worker)")
    p.add_argument("--scheme", required=True, choices=tuple(SEQUENTIAL), metavar=options.METAVARS["scheme"],
                   help=f"the scheme: {', '.join(SEQUENTIAL)}")
    count = checks.option(checks.integer, low=0)
    for name, (param, metavar, what) in FLAGS.items():
        p.add_argument(options.flag(name), dest=param, type=count, default=None, help=what, metavar=metavar)
    p.add_argument("--jobs", type=checks.option(checks.integer, low=1), default=None, metavar=options.METAVARS["jobs"],
                   help="gradients to compute (default: as many as the rounds allow)")
    p.add_argument("--deadline-factor", dest="mu", type=checks.option(checks.real, low=0), default=MU, metavar="MU",
                   help=f"a round's deadline is (1 + MU) times its fastest worker's time (default {MU:g})")
    for old, new in OLD_FLAGS.items():
        options.add_renamed(p, old, new)
    p.add_argument("--convention", choices=CONVENTIONS, default="paper",
                   help="the paper's definitions or the authors' simulator's (GC accepts fewer than s stragglers; "
                        "no-wait charges the deadline) (default paper)")
    p.add_argument("--sweep", action="store_true",
                   help="choose the parameters by a sweep on the matrix as given (the same delays at every load)")
    p.add_argument("--max-delay", type=checks.option(checks.integer, low=1), default=None, metavar="T",
                   help=f"sr-sgc, m-sgc with --sweep: the largest delay T of the sweep (default {MAX_DELAY})")
    p.add_argument("--mpi", action="store_true",
                   help="also run the scheme over MPI (master and workers as processes, the matrix as the injected "
                        "delays, real gradients of a small logistic regression; paper convention) and replay the "
                        "delays the run measured")
    p.add_argument("--kill", type=checks.option(kill_map), default=None, metavar=options.METAVARS["kill"],
                   help="with --mpi: these workers' processes exit when the plan of that round (an iteration here) "
                        "arrives")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib import sequential as sq

    if "max_delay" in given_options(a) and not (a.sweep and a.scheme in ("sr-sgc", "m-sgc")):
        raise ValueError(f"argument --max-delay: read by --sweep only, of sr-sgc and m-sgc (it bounds the delays the "
                         f"sweep tries; scheme {a.scheme}{'' if a.sweep else ' without --sweep'})")
    d = sq.read_delays(a.delays, transpose=a.transpose)
    names = SEQUENTIAL[a.scheme].params
    given = {k: getattr(a, k) for k in OPTION if getattr(a, k) is not None}
    if a.max_delay is not None and a.max_delay >= d.shape[1]:
        raise ValueError(f"argument --max-delay: must be below the matrix's {d.shape[1]} rounds (a delay T leaves "
                         f"rounds - T jobs), got {a.max_delay}")
    if a.sweep:
        if given:
            raise ValueError(f"argument --sweep: cannot be given with {', '.join(OPTION[k] for k in given)} (the "
                             f"sweep chooses them)")
        a.max_delay = MAX_DELAY if a.max_delay is None else a.max_delay
        T = a.max_delay if a.scheme in ("sr-sgc", "m-sgc") else 0
        jobs = a.jobs if a.jobs is not None else d.shape[1] - T
        bounds = {"max_delay": a.max_delay} if a.scheme in ("sr-sgc", "m-sgc") else {}
        if a.mpi and a.scheme == "m-sgc":  # over MPI its coded groups are a GC(lambd) code of the workers
            bounds["lambdas"] = range(1, d.shape[0])
        tab = sq.sweep(lambda load: d, a.scheme, jobs=jobs, mu=a.mu, convention=a.convention, **bounds)
        params = sq.best(tab)
    else:
        extra = [k for k in OPTION if k in given and k not in names]
        if extra:
            raise ValueError(f"argument {OPTION[extra[0]]}: scheme {a.scheme} takes "
                             f"{', '.join(OPTION[k] for k in names) or 'no parameters'}")
        try:
            params = sq.check_params(a.scheme, d.shape[0], **given)
        except ValueError as e:  # in the library's letters: say which option is which
            raise ValueError(f"argument {', '.join(OPTION[k] for k in names)}: {e} ("
                             f"{', '.join(f'{OPTION[k]} is {k}' for k in names)})") from None
    jobs = jobs if a.sweep else a.jobs
    if a.kill and not a.mpi:
        raise ValueError("argument --kill: only with --mpi (a killed worker of the replay is an inf in the matrix)")
    if a.mpi and a.convention != "paper":
        raise ValueError("argument --mpi: a run over MPI follows the paper's convention (--convention paper)")
    live = _live(a, d, jobs, params) if a.mpi else None  # checked before the replay's output
    r = sq.run(a.scheme, d, jobs=jobs, mu=a.mu, convention=a.convention, **params)
    if a.json:
        out = live() if live else None
        print(json.dumps({**r.to_dict(), "durations": [float(x) for x in r.durations],
                          **({"mpi": out} if live else {})}, indent=1))
        return _live_exit(out)
    print(f"{r.label()} on {d.shape[0]} workers x {d.shape[1]} rounds ({a.convention} convention, deadline factor "
          f"{r.mu:g}): run time {r.total:.6g} s for {r.jobs} jobs in {r.rounds} rounds, {r.waits} waited for all; load "
          f"{r.load:.4g}, delay T = {r.T}")
    if live:
        out = live()
        if out["status"] != "ok":
            return _live_exit(out)
        print(f"over MPI: the rounds took {out['rounds_total']:.6g} s by the deadline rule ({out['total']:.6g} s "
              f"with the decodes and steps; the replay of the injected delays: {out['predicted']:.6g} s); every job "
              f"decoded (largest gradient error {out['max_grad_error']:.2g}); the replay of the delays the run "
              f"measured {'gives its rounds back exactly' if out['replay_agrees'] else 'DISAGREES with its rounds'}"
              + (f"; dead workers {out['dead_workers']}" if out["dead_workers"] else ""))
    return 0


def _live_exit(out) -> int:
    """The exit code of the MPI run's outcome: 0 none asked or it finished, 130 interrupted (after one line
    ``gclib: interrupted``), 1 it stopped (its error line on stderr)."""
    if out is None or out["status"] == "ok":
        return 0
    if out["status"] == "interrupted":
        print("gclib: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"gclib: error: the run over MPI stopped after {out['rounds']} rounds: {out['error']}", file=sys.stderr)
    return EXIT_FAIL


def _live(a, d, jobs, params):
    """The MPI run of ``--mpi``, its spec checked now; returns a function that runs it and sums it up."""
    from gclib.runtime import launch
    from gclib.runtime import rounds as R

    spec = R.sequential_spec(a.scheme, d, mu=a.mu, jobs=jobs, kill=a.kill, **params)

    def go() -> dict:
        res = launch(spec, check=False, progress=_progress(spec.iterations))
        recs = res.records
        errors = [x["grad_error"] for x in recs if x.get("job") is not None and x["grad_error"] is not None]
        return {"status": res.status, "error": res.error, "rounds": len(recs), "dead_workers": res.dead_workers,
                "total": float(sum(x["time"] for x in recs)), "rounds_total": float(sum(x["round"] for x in recs)),
                "predicted": float(sum(x["predicted"] for x in recs)),
                "max_grad_error": float(max(errors)) if errors else None,
                "replay_agrees": R.check_replay(res)["agree"] if res.ok else None,
                "durations": [float(x["round"]) for x in recs]}
    return go


def _progress(total: int):
    def show(rec):
        print(f"  round {rec['iteration'] + 1}/{total}" + (" (skipped)" if rec.get("skipped") else ""),
              file=sys.stderr, flush=True)
    return show
