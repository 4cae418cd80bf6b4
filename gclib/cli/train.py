"""``gclib train``: one training run on the simulated clock (:func:`gclib.learning.train`), printing the totals to
reach the target.

The problems of ``--problem`` are :func:`gclib.cli.options.problem_for`'s (as ``gclib run``'s).
"""
from __future__ import annotations

import argparse
import json
import sys

from gclib import checks
from gclib.cli import options, registries
from gclib.schemes import PARAMS


#: The command, and its line in ``gclib --help``.
NAME = "train"
HELP = "one training run (GD, LAG, LAGC, G-LAG, coded) on the simulated clock"


#: The training algorithms whose trigger the name fixes (``--trigger`` may only repeat it), and the trigger.
OWN_TRIGGER = {"gd": "none", "gc": "none", "lag-wk": "wk", "lag-ps": "ps"}
#: The options' old names (kept for a release, hidden): ``{old: new}``; ``--scheme ALGORITHM`` (the old name of
#: ``--algorithm``) is told apart from ``--scheme CODE`` by the name given (:func:`renamed`).
OLD_FLAGS = {"--code": "--scheme", "--D": "--lazy-window", "--max-iter": "--iterations"}


#: The examples of ``gclib train --help`` (the tests run each).
EXAMPLES = (
    ("gclib train --algorithm g-lag --problem linreg --workers 12 --groups 4 --model pareto --shape 1.5",
     "G-LAG on the LAG paper's regression, heavy-tailed compute times: time, uploads and computations to the "
     "target gap"),
    ("gclib train --algorithm gc --scheme frc --workers 12 --stragglers 2 --problem linreg",
     "coded gradient descent with fractional repetition"),
    ("gclib train --algorithm lagc --trigger ps --problem linreg --lazy-window 5 --json",
     "LAGC with the server-side trigger and a shorter lazy window, as one JSON object"))


def add_parser(sub):
    from gclib.learning.optim import SCHEME_NAMES, code_names

    p = sub.add_parser(NAME, help=HELP,
                       description="Train on the simulated clock until the loss gap reaches --target; print the "
                                   "totals.",
                       epilog=options.examples(EXAMPLES) + "\n\n" + registries.epilog(schemes=code_names()))
    p.add_argument("--algorithm", default=None, choices=SCHEME_NAMES,
                   help="the training algorithm (required; `gclib list` says what each does)")
    p.add_argument("--scheme", default=None, type=_code_or_algorithm(code_names(), SCHEME_NAMES), metavar="NAME",
                   help="--algorithm gc: the gradient code, built from --workers, --stragglers and --seed (names "
                        "below; default crc)")
    p.add_argument("--problem", default="logistic", choices=options.problem_names(),
                   help="logistic = Tandon's synthetic logistic regression, linreg = the LAG paper's synthetic "
                        "linear regression (one block per worker), or a data set")
    count = checks.option(checks.integer, low=1)
    p.add_argument("--workers", type=count, default=12, metavar=options.METAVARS["workers"], help="number of workers")
    p.add_argument("--groups", type=count, default=None, help="g-lag: groups (divides workers; default 4)")
    p.add_argument("--stragglers", type=checks.option(checks.integer, low=0), default=None,
                   metavar=options.METAVARS["stragglers"], help="gc / lagc: s (default workers/groups - 1)")
    p.add_argument("--trigger", default=None, choices=("none", "wk", "ps"),
                   help="lagc, g-lag: the lazy rule, worker side (wk), server side (ps) or none (default: lagc wk, "
                        "g-lag ps); the other algorithms' names say theirs")
    p.add_argument("--units", default=None, help="M of the lazy threshold: a number, count, decoding-max or "
                                                 "decoding-mean")
    p.add_argument("--lazy-window", dest="D", type=count, default=None, metavar="D",
                   help="the lazy rule's window: past steps the threshold sums (default 10, Chen et al.'s)")
    real_xi = checks.option(checks.real, low=0)
    p.add_argument("--xi", type=lambda v: "chen" if v == "chen" else real_xi(v), default=None,
                   help="weight per past difference: a number, or chen (Chen et al.'s code: 1/D wk, 10/D ps); "
                        "default 1/D for both triggers")
    p.add_argument("--warmup", default=None, choices=("silent", "upload"),
                   help="first D iterations of a lazy scheme: silent (the default) = nobody uploads, the server "
                        "steps with its initial all-ones copies (Chen et al.'s code); upload = every unit uploads")
    positive = checks.option(checks.real, above=0)
    p.add_argument("--lr", type=positive, default=None, metavar=options.METAVARS["lr"],
                   help="step size (default 1/L)")
    p.add_argument("--target", type=positive, default=1e-6, help="loss gap to reach")
    p.add_argument("--iterations", type=count, default=20_000, metavar=options.METAVARS["iterations"],
                   help="iterations at most (the run stops at --target)")
    p.add_argument("--computation", default="assigned", choices=("assigned", "finished"),
                   help="computations counted: every partial gradient assigned, or those done when the server moved on")
    p.add_argument("--duplicates", default="cancel", choices=("cancel", "count"),
                   help="uploads counted: one per fresh unit (the server cancels the copies), or every message that "
                        "arrived")
    seed = PARAMS["seed"]
    p.add_argument("--seed", type=checks.option(seed.check, **seed.limits), default=seed.default,
                   metavar=options.METAVARS["seed"], help="seed of the data, the code and the compute times")
    options.add_model_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    for old, new in OLD_FLAGS.items():
        options.add_renamed(p, old, new, dest="old_code" if old == "--code" else None)
    p.set_defaults(fn=run)


def _code_or_algorithm(codes, algorithms):
    """The type of ``--scheme``: a code of ``codes``, or (the option's old meaning, :func:`renamed`) an algorithm."""
    def convert(text):
        if text in codes or text in algorithms:
            return text
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(codes)} (the code of --algorithm gc), got "
                                         f"{text!r}")
    return convert


def renamed(a) -> None:
    """The options given by their old names, read as the new ones: ``--scheme ALGORITHM`` (then ``--code CODE``)
    is ``--algorithm ALGORITHM --scheme CODE``; a warning says so. Refuses an algorithm missing or given twice."""
    old_code = getattr(a, "old_code", None)
    if a.scheme in registries.training_names():
        if a.algorithm is not None:
            raise ValueError(f"argument --scheme: with --algorithm, --scheme names the code of --algorithm gc, not "
                             f"an algorithm ({a.scheme!r})")
        options.warn(f"--scheme {a.scheme} is now --algorithm {a.scheme} (--scheme names the code of --algorithm gc, "
                     f"as in every other command; the old form still works in this release and goes in the next)")
        a.algorithm, a.scheme = a.scheme, None
        _given_as(a, "scheme", "algorithm")
    if old_code is not None:
        if a.scheme is not None:
            raise ValueError("argument --code: cannot be given with --scheme (its new name)")
        a.scheme = old_code
        _given_as(a, "old_code", "scheme")
    if a.algorithm is None:
        raise ValueError("the following arguments are required: --algorithm")


def _given_as(a, old: str, new: str) -> None:
    """Record an option read under its new destination as given there (:func:`gclib.cli.options.given`)."""
    was = options.given(a)
    if old in was:
        setattr(a, options.GIVEN, (was - {old}) | {new})


#: The training algorithms that are lazy unless ``--trigger none`` (gd and gc never are).
LAZY = ("lag-wk", "lag-ps", "lagc", "g-lag")


def reject_unread(a) -> None:
    """Refuse an option that the chosen ``--algorithm`` (and ``--trigger``) does not read: ``--scheme`` but for gc;
    ``--stragglers`` but for gc and lagc; ``--groups`` but for g-lag, and lagc without ``--stragglers`` (whose
    default it sets; gc has no groups, its code is sized by ``--stragglers``); a ``--trigger`` other than the one gd,
    gc, lag-wk and lag-ps are named for; the lazy rule's ``--lazy-window``, ``--xi``, ``--units`` and ``--warmup``
    without a lazy rule."""
    alg = a.algorithm
    if a.scheme is not None and alg != "gc":
        raise ValueError(f"argument --scheme: only --algorithm gc takes a code (algorithm {alg!r} has its own), "
                         f"got {a.scheme!r}")
    if a.stragglers is not None and alg not in ("gc", "lagc"):
        raise ValueError(f"argument --stragglers: only --algorithm gc and lagc read it (algorithm {alg!r} has no "
                         f"code of its own to size)")
    if a.groups is not None:
        if alg == "gc":  # its code has no groups: --groups G only set s = workers/G - 1 in a roundabout way
            raise ValueError(f"argument --groups: --algorithm gc has no groups (its code is sized by --stragglers; "
                             f"--groups {a.groups} would mean --stragglers {a.workers // a.groups - 1} for "
                             f"{a.workers} workers)")
        if alg not in ("g-lag", "lagc"):
            raise ValueError(f"argument --groups: only --algorithm g-lag (and lagc without --stragglers) reads it, "
                             f"not {alg!r}")
        if alg != "g-lag" and a.stragglers is not None:
            raise ValueError(f"argument --groups: --algorithm {alg} reads it only for the default of --stragglers "
                             f"(workers/groups - 1), which is given")
    own = OWN_TRIGGER.get(alg)
    if a.trigger is not None and own is not None and a.trigger != own:
        lazy_one = {"wk": "lag-wk", "ps": "lag-ps"}.get(a.trigger) if alg in ("gd", "lag-wk", "lag-ps") else None
        hint = (f"--algorithm {lazy_one}" if lazy_one else "--algorithm gd" if a.trigger == "none" else
                "--algorithm lagc (the lazy rule on CRC's messages)")
        what = "never lazy" if own == "none" else f"lazy with the {own} trigger"
        raise ValueError(f"argument --trigger: algorithm {alg!r} is {what}, got --trigger {a.trigger} (for that: "
                         f"{hint})")
    lazy = a.trigger in ("wk", "ps") or (a.trigger is None and alg in LAZY)
    if not lazy:
        given = [name for f, name in (("D", "--lazy-window"), ("xi", "--xi"), ("units", "--units"),
                                      ("warmup", "--warmup")) if getattr(a, f) is not None]
        if given:
            why = "--trigger none" if a.trigger == "none" else f"algorithm {alg!r}"
            raise ValueError(f"argument {', '.join(given)}: read by a lazy rule only, and {why} has none")


def run(a) -> int:
    from gclib.learning import lazy
    from gclib.learning.optim import make_scheme, train

    renamed(a)
    options.reject_unused(a, scheme=False)
    reject_unread(a)
    units = a.units
    if units is not None and units not in ("count", "decoding-max", "decoding-mean"):
        try:
            units = checks.real("units", float(units), above=0)
        except ValueError:
            raise ValueError(f"argument --units: must be a positive number, count, decoding-max or decoding-mean, "
                             f"got {a.units!r}") from None
    scheme = make_scheme(a.algorithm, a.workers, groups=a.groups, stragglers=a.stragglers, code=a.scheme,
                         trigger="default" if a.trigger is None else None if a.trigger == "none" else a.trigger,
                         seed=a.seed,
                         D=lazy.D_DEFAULT if a.D is None else a.D, xi=a.xi, units=units, warmup=a.warmup or "silent")
    problem = options.problem_for(a.problem, scheme.code.n_parts, a.seed)
    model = options.model_from_args(a, workers=scheme.code.n_workers)
    res = train(problem, scheme, model, target=a.target, seed=a.seed, lr=a.lr, max_iter=a.iterations,
                computation=a.computation, duplicates=a.duplicates, progress=not a.json and a.iterations >= 100_000)
    out = res.summary()
    if out.get("problem") != a.problem:  # the name typed, with the data set behind an alias beside it
        out["problem"], out["dataset"] = a.problem, out.get("problem")
    if a.json:
        print(json.dumps(out))
    else:
        status = "stopped at --iterations" if out["status"] == "max_iter" else out["status"]
        print(f"{out['scheme']}: {status} after {out['iterations']} iterations: time {out['time']:.5g}, "
              f"uploads {out['uploads']}, computations {out['computations']}, final gap {out['final_gap']:.3g}")
    if not res.converged:
        message = res.message
        if res.status == "max_iter":  # in the options' words
            message = (f"{out['scheme']}: did not reach gap {a.target:g} in --iterations {a.iterations} (gap "
                       f"{out['final_gap']:.3g}); raise --iterations or --target")
        print(f"gclib: {message}", file=sys.stderr)
        return options.EXIT_FAIL
    return 0
