"""What several subcommands share: the parser that reports in one line, the exit codes, the options of a scheme
(``--scheme`` and the parameters of :data:`gclib.schemes.PARAMS`) and of a compute-time model (``--model`` and
the fields of :data:`gclib.stragglers.MODELS`), and the objects built from them.

Importing this module is light (the standard library only); the registries are read where they are used.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import textwrap

from gclib import checks
from gclib.schemes import PARAMS, SCHEMES, build, param_help, simulable
from gclib.stragglers import MODELS, Persistent, _rate, make_model

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


def warn(message) -> None:
    """Print ``gclib: warning: message`` on one line on stderr."""
    print(f"gclib: warning: {one_line(message)}", file=sys.stderr)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Description and epilog as written; every option's help ends with its default (unless the help already
    speaks of one, or the option has none: ``None``, a flag), wrapped between words only (never inside a word
    such as ``latency=SECONDS`` or a name with hyphens)."""

    def _split_lines(self, text, width):
        text = self._whitespace_matcher.sub(" ", text).strip()
        return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)

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


def examples(pairs, note: str = "") -> str:
    """The examples section of a command's help: each ``(command line, what it does)`` of ``pairs`` (every one run
    by the tests, in a folder with the repository's ``data/`` and ``figures/`` and the files ``note`` describes),
    then ``note``."""
    lines = ["examples:"]
    for command, what in pairs:
        lines.append(f"  {command}")
        lines += textwrap.wrap(what, 110, initial_indent="      ", subsequent_indent="      ",
                               break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) + (f"\n{note}" if note else "")


def flag(name: str) -> str:
    """The option of a parameter: ``per_task`` -> ``--per-task``."""
    return "--" + name.replace("_", "-")


#: The placeholder of an option that several commands take, the same in every command's help (an option not
#: named here shows its type's or its own).
METAVARS = {"seed": "SEED", "workers": "K", "trials": "N", "iterations": "N", "stragglers": "S", "load": "R",
            "samples": "ROWS", "dim": "FEATURES", "lr": "STEP", "figures_dir": "DIR", "out": "CSV",
            "network": "SPEC", "kill": "WORKER:ITERATION[,...]", "data_seed": "SEED", "jobs": "N",
            "scheme": "NAME"}


def same_metavars(parser) -> None:
    """Give every option of ``parser`` whose destination :data:`METAVARS` names that placeholder (so that one option
    reads the same in every command's help, whatever the command's module wrote)."""
    for action in parser._actions:
        if action.option_strings and action.dest in METAVARS and action.nargs != 0 and not isinstance(
                action, Renamed):
            action.metavar = METAVARS[action.dest]


class Renamed(argparse.Action):
    """An option's old name, kept for a release and hidden from the help: it sets the new option's value and warns
    on stderr that the name changed (``gclib: warning: --max-iter is now --iterations; ...``)."""

    def __init__(self, option_strings, dest, new: str = "", **kw):
        self.new = new
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        warn(f"{option_string} is now {self.new} (the old name still works in this release and goes in the next)")
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


def add_renamed(p, old: str, new: str, dest: str | None = None, **kw):
    """The hidden old name ``old`` of the option ``new`` of parser (or group) ``p`` (:class:`Renamed`): the same
    type and choices as ``new`` unless given; ``dest``: where the value goes (default ``new``'s)."""
    action = next((a for a in p._actions if new in a.option_strings), None)  # a group's are its parser's
    if action is None:
        raise ValueError(f"add_renamed: {new} is not an option of this parser")
    kw.setdefault("type", action.type)
    kw.setdefault("choices", action.choices)
    p.add_argument(old, dest=dest or action.dest, action=Renamed, new=new, default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS, **kw)


# ------------------------------------------------------------------------------------------------ schemes
#: Scheme parameters every scheme takes on the command line: the seed also seeds the simulation (and a run).
ANY_SCHEME = ("seed",)


def add_scheme_args(p, required: bool = True, seed_help: str = "", any_scheme: tuple = ANY_SCHEME):
    """``--scheme`` and an option for every parameter of :data:`gclib.schemes.PARAMS`, typed by its check, its help
    naming the schemes that read it (:func:`gclib.schemes.param_help`). An option not given is ``None``, so that
    :func:`reject_unused` knows what was given and the scheme's own default comes from the table; but for those of
    ``any_scheme``, which every scheme reads (``--seed`` seeds the simulation too; ``seed_help`` says what else it
    seeds): their default."""
    p = p.add_argument_group("scheme options (each scheme takes only its own: `gclib list`)")
    p.add_argument("--scheme", required=required, choices=sorted(SCHEMES), metavar="NAME",
                   help="the gradient code (names below)")
    for name, param in PARAMS.items():
        text = param_help(name) + (seed_help if name == "seed" else "")
        if param.type is bool:
            p.add_argument(flag(name), action="store_true", default=None, help=text)
            continue
        typ = param.type if param.check is None else checks.option(param.check, **param.limits)
        hlp = text if param.default is None else f"{text} (default {param.default})"
        p.add_argument(flag(name), type=typ, default=param.default if name in any_scheme else None, help=hlp,
                       metavar=METAVARS.get(name, param.type.__name__.upper()))


def given_scheme_options(a, any_scheme: tuple = ANY_SCHEME) -> list:
    """The scheme parameters given on the command line of ``a`` (not ``None``; those of ``any_scheme``, which every
    scheme reads, never count)."""
    return [k for k in PARAMS if k not in any_scheme and getattr(a, k, None) is not None]


def given_model_options(a) -> list:
    """The model fields given on the command line of ``a`` (options that are not ``None``)."""
    fields = dict.fromkeys(f for cls in MODELS.values() for f, _ in model_fields(cls))
    return [f for f in fields if getattr(a, f, None) is not None]


def _refuse(what: str, name: str, takes: list, given: list):
    bad = ", ".join(flag(k) for k in given)
    them = "it" if len(given) == 1 else "them"
    takes = ", ".join(flag(k) for k in takes) or "no options of its own"
    raise ValueError(f"argument {bad}: {what} {name!r} does not take {them} ({name} takes {takes}; `gclib list` "
                     f"shows every {what}'s options)")


def reject_unused(a, scheme: bool = True, model: bool = True, any_scheme: tuple = ANY_SCHEME):
    """Refuse an option given on the command line that the chosen ``--scheme`` or ``--model`` does not read
    (``--scheme crc --load 5``): one ``ValueError`` naming the options, the scheme or model, and what it takes
    (``any_scheme``: as :func:`add_scheme_args` was given it)."""
    if scheme and getattr(a, "scheme", None) is not None:
        s = SCHEMES.get(a.scheme)
        if s is not None:
            extra = [k for k in given_scheme_options(a, any_scheme) if k not in s.params]
            if extra:
                _refuse("scheme", a.scheme, [k for k in s.params], extra)
    if model and getattr(a, "model", None) is not None:
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
    kw = {k: v for k in PARAMS if (v := getattr(a, k, None)) is not None and v is not False}
    return (simulable if schedule else build)(a.scheme, **kw)


# ------------------------------------------------------------------------------------------------ problems
def problem_names() -> tuple:
    """The names ``--problem`` takes (``gclib train`` and ``gclib run``)."""
    from gclib.learning.problems import DATASETS

    return ("linreg", "logistic", *sorted(DATASETS))


def problem_for(name: str, workers: int, seed=0):
    """The problem behind ``--problem``, split into ``workers`` parts: ``linreg``, the LAG paper's heterogeneous
    synthetic linear regression with one block per worker (:func:`gclib.learning.problems.lag_synthetic` with
    ``workers``, ``dim = max(50, workers)``); ``logistic``, Tandon et al.'s synthetic logistic regression; or a data
    set of :data:`gclib.learning.problems.DATASETS`."""
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


# ------------------------------------------------------------------------------------------------ models
def add_launch_args(p, *, hosts_help: str, run_dir_help: str):
    """The options that say where and how the ranks start (``gclib run``, ``gclib profile``): ``--job-timeout``,
    ``--startup-timeout``, ``--hosts``, ``--launcher``, ``--mpiexec``, ``--mpiexec-args`` and ``--run-dir`` (its
    help per command)."""
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
    d = dict(model_fields(MODELS[model])).get(field)
    return f"{model}: {text}" + ("" if d is None else f" (default {d})")


def add_model_args(p):
    """``--model``, the options of the models' fields, ``--per-task`` and ``--persistent``; a field of a model
    registered in :data:`gclib.stragglers.MODELS` that none of these names gets an option of its own. A field's
    option not given is ``None``: the model's own default, and :func:`reject_unused` knows it was not given."""
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
    # every field of every registered model that has an option
    kw = {f: getattr(a, f) for cls in MODELS.values() for f, _ in model_fields(cls) if hasattr(a, f)}
    model = make_model(a.model, per_task=a.per_task, **kw)
    if a.persistent and workers is not None:
        checks.option_check("--persistent", checks.integer, a.persistent, low=0, high=workers,
                            why=f" (at most the code's {workers} workers)")
    if a.persistent:
        model = Persistent(model, count=a.persistent)
    return model
