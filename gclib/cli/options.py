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


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Description and epilog as written; every option's help ends with its default (unless the help already
    speaks of one, or the option has none: ``None``, a flag)."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if (d is None or d is False or d is argparse.SUPPRESS or "default" in text or not action.option_strings
                or isinstance(action, argparse._HelpAction)):
            return text
        return f"{text} (default {d})" if text else f"(default {d})"


#: The attribute of a parsed namespace that holds the options given on its command line (:func:`given`).
GIVEN = "_given_options"


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit 2, whose description and epilog are
    printed as written, and whose options show their defaults; it records which options the command line gave
    (:func:`given`), so that a command can refuse one it does not read even when its value is the default."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kw):
        super().__init__(*args, formatter_class=formatter_class, **kw)
        self._given = []

    def error(self, message):
        error(message)
        raise SystemExit(EXIT_USAGE)

    def _get_values(self, action, arg_strings):  # called for every option the command line gives, and only them
        if action.option_strings:
            self._given.append(action.dest)
        return super()._get_values(action, arg_strings)

    def parse_known_args(self, args=None, namespace=None):
        self._given = []
        ns, rest = super().parse_known_args(args, namespace)
        setattr(ns, GIVEN, frozenset(getattr(ns, GIVEN, ())) | frozenset(self._given))
        return ns, rest


def given(a) -> frozenset:
    """The destinations of the options given on the command line of the namespace ``a`` (``{"max_delay", ...}``),
    whatever their values (an option given at its default is given)."""
    return getattr(a, GIVEN, frozenset())


def flag(name: str) -> str:
    """The option of a parameter: ``per_task`` -> ``--per-task``."""
    return "--" + name.replace("_", "-")


# ------------------------------------------------------------------------------------------------ schemes
#: Scheme parameters every scheme takes on the command line: the seed also seeds the simulation (and a run).
ANY_SCHEME = ("seed",)


def add_scheme_args(p, required: bool = True):
    """``--scheme`` and an option for every parameter of :data:`gclib.schemes.PARAMS`, typed by its check. An
    option not given is ``None`` (``--seed``: its default, it seeds the simulation too), so that
    :func:`reject_unused` knows what was given and the scheme's own default comes from the table."""
    from gclib import checks
    from gclib.schemes import PARAMS, SCHEMES

    p = p.add_argument_group("scheme options (each scheme takes only its own: `gclib list`)")
    p.add_argument("--scheme", required=required, choices=sorted(SCHEMES), metavar="NAME",
                   help="the gradient code (names below)")
    for name, param in PARAMS.items():
        if param.type is bool:
            p.add_argument(flag(name), action="store_true", default=None, help=param.help)
            continue
        typ = param.type if param.check is None else checks.option(param.check, **param.limits)
        hlp = param.help if param.default is None else f"{param.help} (default {param.default})"
        p.add_argument(flag(name), type=typ, default=param.default if name in ANY_SCHEME else None, help=hlp,
                       metavar=param.type.__name__.upper())


def given_scheme_options(a) -> list:
    """The scheme parameters given on the command line of ``a`` (not ``None``; ``--seed`` never counts)."""
    from gclib.schemes import PARAMS

    return [k for k in PARAMS if k not in ANY_SCHEME and getattr(a, k, None) is not None]


def given_model_options(a) -> list:
    """The model fields given on the command line of ``a`` (options that are not ``None``)."""
    from gclib.stragglers import MODELS

    fields = dict.fromkeys(f for cls in MODELS.values() for f, _ in model_fields(cls))
    return [f for f in fields if getattr(a, f, None) is not None]


def _refuse(what: str, name: str, takes: list, given: list):
    bad = ", ".join(flag(k) for k in given)
    them = "it" if len(given) == 1 else "them"
    takes = ", ".join(flag(k) for k in takes) or "no options of its own"
    raise ValueError(f"argument {bad}: {what} {name!r} does not take {them} ({name} takes {takes}; `gclib list` "
                     f"shows every {what}'s options)")


def reject_unused(a, scheme: bool = True, model: bool = True):
    """Refuse an option given on the command line that the chosen ``--scheme`` or ``--model`` does not read
    (``--scheme crc --load 5``): one ``ValueError`` naming the options, the scheme or model, and what it takes."""
    if scheme and getattr(a, "scheme", None) is not None:
        from gclib.schemes import SCHEMES

        s = SCHEMES.get(a.scheme)
        if s is not None:
            extra = [k for k in given_scheme_options(a) if k not in s.params]
            if extra:
                _refuse("scheme", a.scheme, [k for k in s.params], extra)
    if model and getattr(a, "model", None) is not None:
        from gclib.stragglers import MODELS

        cls = MODELS.get(a.model)
        if cls is not None:
            takes = [f for f, _ in model_fields(cls)]
            extra = [f for f in given_model_options(a) if f not in takes]
            if extra:
                _refuse("model", a.model, takes, extra)


def code_from_args(a, schedule: bool = False):
    """The code of ``--scheme`` and its parameters (an option not given is ``None``: the table's default, or the
    constructor's; 0 is a value: ``--stragglers 0`` means s = 0). ``schedule``: what the simulator reads of it,
    without its encoding matrix where the scheme has one (:func:`gclib.schemes.simulable`)."""
    from gclib.schemes import PARAMS, build, simulable

    kw = {k: v for k in PARAMS if (v := getattr(a, k, None)) is not None and v is not False}
    return (simulable if schedule else build)(a.scheme, **kw)


# ------------------------------------------------------------------------------------------------ models
def add_launch_args(p, *, hosts_help: str, run_dir_help: str):
    """The options that say where and how the ranks start (``gclib run``, ``gclib profile``): ``--job-timeout``,
    ``--startup-timeout``, ``--hosts``, ``--launcher``, ``--mpiexec``, ``--mpiexec-args`` and ``--run-dir`` (its
    help per command)."""
    from gclib import checks
    from gclib.runtime.command import mpiexec_options
    from gclib.runtime.hosts import LAUNCHERS, check_hostfile
    from gclib.runtime.preflight import check_mpiexec

    p.add_argument("--job-timeout", type=checks.option(checks.seconds), default=None,
                   help="seconds after which the whole job is killed")
    p.add_argument("--startup-timeout", type=checks.option(checks.seconds), default=None,
                   help="seconds for every rank to get through MPI_Init (default 60), else a new start")
    p.add_argument("--hosts", type=checks.option(check_hostfile), default=None, help=hosts_help)
    p.add_argument("--launcher", default="auto", choices=LAUNCHERS,
                   help="what starts the ranks: mpiexec (--mpiexec, else the mpich wheel's, else the first on PATH; "
                        "inside a SLURM allocation on its hosts), srun (inside a SLURM allocation), or auto "
                        "(mpiexec if there is one, else srun inside an allocation); see docs/cluster.md")
    p.add_argument("--mpiexec", type=checks.option(check_mpiexec), default=None, metavar="PATH",
                   help="the site's Hydra mpiexec (MPICH, Intel MPI, MVAPICH), with mpi4py built against its MPI")
    p.add_argument("--mpiexec-args", type=checks.option(mpiexec_options), default=None, metavar="'OPTIONS'",
                   help="more options of mpiexec, one string split as a shell would, e.g. '-launcher ssh "
                        "-launcher-exec PROGRAM -iface eth1' (Hydra's launcher and network interface)")
    p.add_argument("--run-dir", type=checks.option(checks.output_dir), default=None, help=run_dir_help)


def model_fields(cls) -> list[tuple[str, object]]:
    """``[(field, default)]`` of a model class, without ``per_task`` (an option of its own)."""
    return [(f.name, f.default) for f in dataclasses.fields(cls) if f.name != "per_task"]


def _model_help(model: str, field: str, text: str) -> str:
    """``model: text (default D)``, D the model class's default of ``field``."""
    from gclib.stragglers import MODELS

    d = dict(model_fields(MODELS[model])).get(field)
    return f"{model}: {text}" + ("" if d is None else f" (default {d})")


def add_model_args(p):
    """``--model``, the options of the models' fields, ``--per-task`` and ``--persistent``; a field of a model
    registered in :data:`gclib.stragglers.MODELS` that none of these names gets an option of its own. A field's
    option not given is ``None``: the model's own default, and :func:`reject_unused` knows it was not given."""
    from gclib import checks
    from gclib.stragglers import MODELS, _rate

    rate = checks.option(_rate, parse=float)
    positive = checks.option(checks.real, above=0)
    p = p.add_argument_group("compute-time model options (a model takes those named after it, and the last two)")
    p.add_argument("--model", default="shifted-exp", choices=sorted(MODELS), metavar="NAME",
                   help="compute-time model (names below)")
    # an option not given is None: the model's own default (shown in the help), and reject_unused sees it
    p.add_argument("--mu", type=rate, default=None, help=_model_help("shifted-exp", "mu", "rate of the exponential "
                                                                                          "part"))
    p.add_argument("--alpha", type=checks.option(checks.real, low=0), default=None,
                   help=_model_help("shifted-exp", "alpha", "shift per partial gradient"))
    p.add_argument("--rate", type=rate, default=None, help=_model_help("exp", "rate", "rate"))
    p.add_argument("--scale", type=positive, default=None, help=_model_help("pareto", "scale", "scale (minimum time)"))
    p.add_argument("--shape", type=positive, default=None, help=_model_help("pareto", "shape", "shape (tail index)"))
    p.add_argument("--per-task", action="store_true",
                   help="independent time per partial gradient (default: one draw per worker, task j at j*X)")
    p.add_argument("--persistent", type=checks.option(checks.integer, low=0), default=0, metavar="N",
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
    from gclib import checks
    from gclib.stragglers import MODELS, Persistent, make_model

    # every field of every registered model that has an option
    kw = {f: getattr(a, f) for cls in MODELS.values() for f, _ in model_fields(cls) if hasattr(a, f)}
    model = make_model(a.model, per_task=a.per_task, **kw)
    if a.persistent and workers is not None:
        checks.option_check("--persistent", checks.integer, a.persistent, low=0, high=workers,
                            why=f" (at most the code's {workers} workers)")
    if a.persistent:
        model = Persistent(model, count=a.persistent)
    return model
