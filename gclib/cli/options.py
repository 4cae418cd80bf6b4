"""What several subcommands share: the parser that reports in one line, the exit codes, the options of a scheme
(``--scheme`` and the parameters of :data:`gclib.schemes.PARAMS`) and of a compute-time model (``--model`` and
the fields of :data:`gclib.stragglers.MODELS`), and the objects built from them.

Importing this module is light (the standard library only); the registries are read where they are used.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

#: Exit codes: a command failed (a verification, a training that did not converge, a run that stopped); a bad
#: argument; interrupted (128 + SIGINT, as a shell reports it).
EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
#: model fields that are not numbers given on the command line (composition, trace replay, --persistent)
NO_OPTION_FIELDS = {"base", "times", "workers", "count"}


def one_line(text) -> str:
    """``text`` on one line: line breaks become spaces, other characters that do not print (a ``\\r`` typed in an
    argument) their escapes."""
    text = " ".join(str(text).split("\n"))
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def error(message) -> None:
    """Print ``gclib: error: message`` on one line on stderr."""
    print(f"gclib: error: {one_line(message)}", file=sys.stderr)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit 2, and whose description and epilog are
    printed as written."""

    def __init__(self, *args, formatter_class=argparse.RawDescriptionHelpFormatter, **kw):
        super().__init__(*args, formatter_class=formatter_class, **kw)

    def error(self, message):
        error(message)
        raise SystemExit(EXIT_USAGE)


def flag(name: str) -> str:
    """The option of a parameter: ``per_task`` -> ``--per-task``."""
    return "--" + name.replace("_", "-")


# ------------------------------------------------------------------------------------------------ schemes
def add_scheme_args(p, required: bool = True):
    """``--scheme`` and an option for every parameter of :data:`gclib.schemes.PARAMS`, typed by its check and
    defaulting to its default (``None`` where the table has none)."""
    from .. import checks
    from ..schemes import PARAMS, SCHEMES

    p.add_argument("--scheme", required=required, choices=sorted(SCHEMES), help="the gradient code")
    for name, param in PARAMS.items():
        if param.type is bool:
            p.add_argument(flag(name), action="store_true", help=param.help)
            continue
        typ = param.type if param.check is None else checks.option(param.check, **param.limits)
        hlp = param.help if param.default is None else f"{param.help} (default {param.default})"
        p.add_argument(flag(name), type=typ, default=param.default, help=hlp)


def code_from_args(a):
    """The code of ``--scheme`` and its parameters (an option not given is its default, or ``None``; 0 is a
    value: ``--stragglers 0`` means s = 0)."""
    from ..schemes import PARAMS, build

    kw = {k: v for k in PARAMS if (v := getattr(a, k, None)) is not None and v is not False}
    return build(a.scheme, **kw)


# ------------------------------------------------------------------------------------------------ models
def model_fields(cls) -> list[tuple[str, object]]:
    """``[(field, default)]`` of a model class, without ``per_task`` (an option of its own)."""
    return [(f.name, f.default) for f in dataclasses.fields(cls) if f.name != "per_task"]


def add_model_args(p):
    """``--model``, the options of the models' fields, ``--per-task`` and ``--persistent``; a field of a model
    registered in :data:`gclib.stragglers.MODELS` that none of these names gets an option of its own (default:
    the model's, so that an unset option leaves the model's default)."""
    from .. import checks
    from ..stragglers import MODELS, _rate

    rate = checks.option(_rate, parse=float)
    positive = checks.option(checks.real, above=0)
    p.add_argument("--model", default="shifted-exp", choices=sorted(MODELS), help="compute-time model")
    p.add_argument("--mu", type=rate, default=10.0, help="shifted-exp: rate of the exponential part")
    p.add_argument("--alpha", type=checks.option(checks.real, low=0), default=0.01,
                   help="shifted-exp: shift per partial gradient")
    p.add_argument("--rate", type=rate, default=1.0, help="exp: rate")
    p.add_argument("--scale", type=positive, default=1.0, help="pareto: scale (minimum time)")
    p.add_argument("--shape", type=positive, default=2.0, help="pareto: shape (tail index)")
    p.add_argument("--per-task", action="store_true",
                   help="independent time per partial gradient (default: one draw per worker, task j at j*X)")
    p.add_argument("--persistent", type=checks.option(checks.integer, low=0), default=0,
                   help="number of workers, drawn at random per trial, that never answer")
    have = set(p._option_string_actions)
    for name, cls in sorted(MODELS.items()):
        for f, d in model_fields(cls):
            if flag(f) in have or f in NO_OPTION_FIELDS:
                continue
            typ = type(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else float
            p.add_argument(flag(f), dest=f, type=typ, default=None, help=f"{name}: {f} (default {d})")
            have.add(flag(f))


def model_from_args(a, workers: int | None = None):
    """The compute-time model of ``--model`` and its options; ``workers`` (the code's) bounds ``--persistent``."""
    from .. import checks
    from ..stragglers import MODELS, Persistent, make_model

    # every field of every registered model that has an option
    kw = {f: getattr(a, f) for cls in MODELS.values() for f, _ in model_fields(cls) if hasattr(a, f)}
    model = make_model(a.model, per_task=a.per_task, **kw)
    if a.persistent and workers is not None:
        checks.option_check("--persistent", checks.integer, a.persistent, low=0, high=workers,
                            why=f" (at most the code's {workers} workers)")
    if a.persistent:
        model = Persistent(model, count=a.persistent)
    return model
