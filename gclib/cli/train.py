"""``gclib train``: one training run on the simulated clock (:func:`gclib.learning.train`), printing the totals to
reach the target.

``--problem linreg`` is the LAG paper's heterogeneous synthetic linear regression with one block per worker
(:func:`gclib.learning.problems.lag_synthetic` with ``workers = --workers``, ``dim = max(50, workers)``);
``--problem logistic`` is Tandon et al.'s synthetic logistic regression split into ``--workers`` parts; any name of
:data:`gclib.learning.problems.DATASETS` is accepted too.
"""
from __future__ import annotations

import json
import sys

from gclib.cli import options, registries


def problem_names() -> tuple:
    """The names ``--problem`` takes."""
    from gclib.learning.problems import DATASETS

    return ("linreg", "logistic", *sorted(DATASETS))


def problem_for(name: str, workers: int, seed=0):
    """The problem behind ``--problem`` (see the module docstring), split into ``workers`` parts."""
    from gclib import checks
    from gclib.learning.problems import DATASETS, lag_synthetic, lag_synthetic_bytes, make_problem, tandon_logistic

    if name == "linreg":
        dim = max(50, workers)
        checks.need_memory("the linreg problem", lag_synthetic_bytes(workers, dim),
                           sizes=f"workers = {workers} (dim = {dim})", lower="workers")
        return lag_synthetic(workers=workers, dim=dim, seed=seed)
    if name == "logistic":
        return tandon_logistic(parts=workers, seed=seed)
    if name in DATASETS:
        return make_problem(name, parts=workers, seed=seed)
    raise ValueError(f"problem must be one of {list(problem_names())}, got {name!r}")


#: The command, and its line in ``gclib --help``.
NAME = "train"
HELP = "one training run (GD, LAG, LAGC, G-LAG, coded) on the simulated clock"


def add_parser(sub):
    from gclib import checks
    from gclib.learning.optim import SCHEME_NAMES, code_names
    from gclib.schemes import PARAMS

    p = sub.add_parser(NAME, help=HELP,
                       description="Train on the simulated clock until the loss gap reaches --target; print the "
                                   "totals.",
                       epilog=registries.epilog(schemes=False))
    p.add_argument("--scheme", required=True, choices=SCHEME_NAMES, help="the training scheme")
    p.add_argument("--problem", default="linreg", choices=problem_names(),
                   help="linreg = the LAG synthetic regression, logistic = Tandon's synthetic data")
    count = checks.option(checks.integer, low=1)
    p.add_argument("--workers", type=count, default=12, help="number of workers")
    p.add_argument("--groups", type=count, default=None, help="g-lag: groups (divides workers; default 4)")
    p.add_argument("--stragglers", type=checks.option(checks.integer, low=0), default=None,
                   help="gc / lagc: s (default workers/groups - 1)")
    p.add_argument("--code", default=None, choices=code_names(),
                   help="gc: the code, a scheme built from --workers, --stragglers and --seed (default crc)")
    p.add_argument("--trigger", default=None, choices=("none", "wk", "ps"),
                   help="lazy rule: worker side (wk), server side (ps) or none (default: the scheme's own: wk for "
                        "lag-wk and lagc, ps for lag-ps and g-lag, none for gd and gc)")
    p.add_argument("--units", default=None, help="M of the lazy threshold: a number, count, decoding-max or "
                                                 "decoding-mean")
    p.add_argument("--D", type=count, default=None, help="lazy window (default 10, Chen et al.'s)")
    real_xi = checks.option(checks.real, low=0)
    p.add_argument("--xi", type=lambda v: "chen" if v == "chen" else real_xi(v), default=None,
                   help="weight per past difference: a number, or chen (Chen et al.'s code: 1/D wk, 10/D ps); "
                        "default 1/D for both triggers")
    p.add_argument("--warmup", default=None, choices=("silent", "upload"),
                   help="first D iterations of a lazy scheme: silent (the default) = nobody uploads, the server "
                        "steps with its initial all-ones copies (Chen et al.'s code); upload = every unit uploads")
    positive = checks.option(checks.real, above=0)
    p.add_argument("--lr", type=positive, default=None, help="step size (default 1/L)")
    p.add_argument("--target", type=positive, default=1e-6, help="loss gap to reach")
    p.add_argument("--max-iter", type=count, default=20_000, help="iterations at most")
    p.add_argument("--computation", default="assigned", choices=("assigned", "finished"),
                   help="computations counted: every partial gradient assigned, or those done when the server moved on")
    p.add_argument("--duplicates", default="cancel", choices=("cancel", "count"),
                   help="uploads counted: one per fresh unit (the server cancels the copies), or every message that "
                        "arrived")
    seed = PARAMS["seed"]
    p.add_argument("--seed", type=checks.option(seed.check, **seed.limits), default=seed.default,
                   help="seed of the data, the CRC and the compute times")
    options.add_model_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


#: The training schemes that are lazy unless ``--trigger none`` (gd and gc are lazy only with ``--trigger wk|ps``).
LAZY = ("lag-wk", "lag-ps", "lagc", "g-lag")


def reject_unread(a) -> None:
    """Refuse an option that the chosen ``--scheme`` (and ``--trigger``) does not read: ``--stragglers`` but for
    gc and lagc; ``--groups`` but for g-lag, and lagc without ``--stragglers`` (whose default it sets; gc has no
    groups, its code is sized by ``--stragglers``); the
    lazy rule's ``--D``, ``--xi``, ``--units`` and ``--warmup`` for a scheme that is not lazy."""
    if a.code is not None and a.scheme != "gc":
        raise ValueError(f"argument --code: only --scheme gc takes a code (scheme {a.scheme!r} has its own), got "
                         f"{a.code!r}")
    if a.stragglers is not None and a.scheme not in ("gc", "lagc"):
        raise ValueError(f"argument --stragglers: only --scheme gc and lagc read it (scheme {a.scheme!r} has no "
                         f"code of its own to size)")
    if a.groups is not None:
        if a.scheme == "gc":  # its code has no groups: --groups G only set s = workers/G - 1 in a roundabout way
            raise ValueError(f"argument --groups: --scheme gc has no groups (its code is sized by --stragglers; "
                             f"--groups {a.groups} would mean --stragglers {a.workers // a.groups - 1} for "
                             f"{a.workers} workers)")
        if a.scheme not in ("g-lag", "lagc"):
            raise ValueError(f"argument --groups: only --scheme g-lag (and lagc without --stragglers) reads it, "
                             f"not {a.scheme!r}")
        if a.scheme != "g-lag" and a.stragglers is not None:
            raise ValueError(f"argument --groups: --scheme {a.scheme} reads it only for the default of --stragglers "
                             f"(workers/groups - 1), which is given")
    lazy = a.trigger in ("wk", "ps") or (a.trigger is None and a.scheme in LAZY)
    if not lazy:
        given = [f for f in ("D", "xi", "units", "warmup") if getattr(a, f) is not None]
        if given:
            why = "--trigger none" if a.trigger == "none" else f"scheme {a.scheme!r} without --trigger wk or ps"
            raise ValueError(f"argument {', '.join('--' + f for f in given)}: read by a lazy rule only, and "
                             f"{why} has none")


def run(a) -> int:
    from gclib import checks
    from gclib.learning import lazy
    from gclib.learning.optim import make_scheme, train

    options.reject_unused(a, scheme=False)
    reject_unread(a)
    units = a.units
    if units is not None and units not in ("count", "decoding-max", "decoding-mean"):
        try:
            units = checks.real("units", float(units), above=0)
        except ValueError:
            raise ValueError(f"units must be a positive number, count, decoding-max or decoding-mean, got "
                             f"{a.units!r}") from None
    scheme = make_scheme(a.scheme, a.workers, groups=a.groups, stragglers=a.stragglers, code=a.code,
                         trigger="default" if a.trigger is None else None if a.trigger == "none" else a.trigger,
                         seed=a.seed,
                         D=lazy.D_DEFAULT if a.D is None else a.D, xi=a.xi, units=units, warmup=a.warmup or "silent")
    problem = problem_for(a.problem, scheme.code.n_parts, a.seed)
    model = options.model_from_args(a, workers=scheme.code.n_workers)
    res = train(problem, scheme, model, target=a.target, seed=a.seed, lr=a.lr, max_iter=a.max_iter,
                computation=a.computation, duplicates=a.duplicates, progress=not a.json and a.max_iter >= 100_000)
    out = res.summary()
    if out.get("problem") != a.problem:  # the name typed, with the data set behind an alias beside it
        out["problem"], out["dataset"] = a.problem, out.get("problem")
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{out['scheme']}: {out['status']} after {out['iterations']} iterations: time {out['time']:.5g}, "
              f"uploads {out['uploads']}, computations {out['computations']}, final gap {out['final_gap']:.3g}")
    if not res.converged:
        print(f"gclib: {res.message}", file=sys.stderr)
        return options.EXIT_FAIL
    return 0
