"""``gclib list``: the schemes with their papers and parameters, the compute-time models, the training schemes and
the sequential schemes (:mod:`gclib.sequential`); the help of a
command that takes ``--scheme`` or ``--model`` names them and points here (``gclib --help`` lists them in full).

The listings are read from the registries (:data:`gclib.schemes.SCHEMES` and :data:`~gclib.schemes.PARAMS`,
:data:`gclib.stragglers.MODELS`), so that a scheme or a model added there appears here by itself.
"""
from __future__ import annotations

import json
import textwrap

from gclib.cli.options import METAVARS, examples, flag, model_fields
from gclib.schemes import PARAMS, SCHEMES, SEQUENTIAL, param_help
from gclib.stragglers import MODELS

SCHEMES_HEADING = "schemes (--scheme NAME)"
MODELS_HEADING = "compute-time models (--model NAME)"


#: The command, and its line in ``gclib --help``.
NAME = "list"
HELP = "list the schemes and the paper each comes from, and the compute-time models"


#: The examples of ``gclib list --help`` (the tests run each).
EXAMPLES = (("gclib list", "every scheme with its paper and options, every compute-time model, the training "
                           "algorithms and the sequential schemes"),
            ("gclib list --json", "the same, as JSON"))


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP, epilog=examples(EXAMPLES))
    p.add_argument("--json", action="store_true", help="print the registries as JSON")
    p.set_defaults(fn=run)


def run(a) -> int:
    if a.json:
        print(json.dumps(registry_json(), indent=1))
    else:
        print(registry_text("schemes (gclib simulate|verify|run --scheme NAME ...)",
                            "compute-time models (gclib simulate --model NAME ...)"))
        print(f"\n{TRAINING_HEADING}:\n{training_text()}")
        print(f"\n{SEQUENTIAL_HEADING}:\n{sequential_text()}")
    return 0


TRAINING_HEADING = "training algorithms (gclib train --algorithm NAME ...: lazy aggregation on a simulated clock)"
#: What each training scheme of :data:`gclib.learning.optim.SCHEME_NAMES` is, in a few words.
TRAINING = {"gd": "gradient descent: every worker computes and uploads, the server waits for all",
            "gc": "gradient coding: --scheme (default crc), the server waits for a decodable set",
            "lag-wk": "LAG, worker-side trigger (Chen et al., NeurIPS 2018): a worker uploads when its gradient "
                      "changed enough",
            "lag-ps": "LAG, server-side trigger: the server asks the workers whose gradient may have changed enough",
            "lagc": "LAGC (Zhang and Simeone, TNNLS 2021): the LAG rule on CRC's coded messages (worker side)",
            "g-lag": "G-LAG (Zhang and Simeone): groups of FRC plus the LAG rule per group (server side)"}


def training_text(indent: int = 2) -> str:
    """Every training scheme of ``gclib train`` with a few words each (the lazy ones take --trigger wk|ps|none)."""
    names = training_names()
    pad = " " * indent
    w = max(map(len, names)) + 1
    return "\n".join(f"{pad}{n:<{w}} {TRAINING[n]}" for n in names)


# ------------------------------------------------------------------------------------------------ listings
def _doc_line(obj) -> str:
    doc = (obj.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "") if doc else ""


def scheme_flags(scheme) -> str:
    """The options a scheme reads, e.g. ``--workers, --stragglers, --seed (default 0)``."""
    out = []
    for p in scheme.params:
        param = PARAMS[p]
        out.append(flag(p) + (f" (default {param.default})" if param.default is not None and param.type is not bool
                              else ""))
    return ", ".join(out)


def schemes_text(indent: int = 2, width: int | None = None) -> str:
    """Every scheme: its name and help, its paper, its options (``width``: of the name column; default the
    longest name's)."""
    pad = " " * indent
    width = width or max(map(len, SCHEMES)) + 1
    lines = []
    for name, s in sorted(SCHEMES.items()):
        lines.append(f"{pad}{name:<{width}} {s.help}")
        lines.append(f"{pad}{'':<{width}} paper: {s.paper}")
        lines.append(f"{pad}{'':<{width}} parameters: {scheme_flags(s)}")
    return "\n".join(lines)


def params_text(indent: int = 2) -> str:
    """Every scheme parameter: its option, type, help and default."""
    pad = " " * indent
    rows = [(flag(n) + ("" if p.type is bool else f" {METAVARS.get(n, p.type.__name__.upper())}"), param_help(n),
             p.default) for n, p in PARAMS.items()]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{pad}{a:<{w}}  {h}" + (f" (default {d})" if d is not None and not isinstance(d, bool) else "")
                     for a, h, d in rows)


def models_text(indent: int = 2, width: int | None = None) -> str:
    """Every compute-time model: its name, the first line of its docstring, its options (``width``: of the name
    column; default the longest name's)."""
    pad = " " * indent
    width = width or max(len("(any)"), *map(len, MODELS)) + 1
    lines = []
    for name, cls in sorted(MODELS.items()):
        lines.append(f"{pad}{name:<{width}} {_doc_line(cls)}")
        opts = ", ".join(f"{flag(f)} (default {d})" for f, d in model_fields(cls))
        lines.append(f"{pad}{'':<{width}} parameters: {opts}")
    lines.append(f"{pad}{'(any)':<{width}} --per-task: one draw per partial gradient; --persistent N: N workers "
                 "never answer")
    return "\n".join(lines)


def _names(heading: str, names, indent: int = 2, width: int = 78) -> str:
    """``heading:`` and the names, wrapped."""
    return f"{heading}:\n" + textwrap.fill(", ".join(sorted(names)), width=width, initial_indent=" " * indent,
                                           subsequent_indent=" " * indent, break_on_hyphens=False)


LIST_POINTER = "`gclib list` shows every scheme with its paper and its options, and every model."


def epilog(schemes=True, models: bool = True) -> str:
    """The end of the help of a command that takes ``--scheme`` (``schemes``: every scheme, or the names it takes)
    and/or ``--model`` (``models``)."""
    names = SCHEMES if schemes is True else schemes or ()
    parts = ([_names(SCHEMES_HEADING, names)] if names else []) + ([_names(MODELS_HEADING, MODELS)] if models
                                                                   else [])
    return "\n".join(parts) + f"\n\n{LIST_POINTER}"


def registry_text(schemes_heading: str = SCHEMES_HEADING, models_heading: str = MODELS_HEADING) -> str:
    """Every scheme and every model, each list under its heading."""
    return f"{schemes_heading}:\n{schemes_text()}\n\n{models_heading}:\n{models_text()}"


def registry_json() -> dict:
    """The schemes and models as JSON-ready data (``gclib list --json``); a scheme names its constructor and, for
    every parameter, the constructor's argument it becomes."""
    return {
        "schemes": [{"name": n, "paper": s.paper, "help": s.help, "constructor": s.constructor_name,
                     "parameters": {p: {"type": PARAMS[p].type.__name__, "default": PARAMS[p].default,
                                        "help": PARAMS[p].help, "argument": arg} for p, arg in s.args.items()}}
                    for n, s in sorted(SCHEMES.items())],
        "models": [{"name": n, "help": _doc_line(c), "parameters": {f: d for f, d in model_fields(c)}}
                   for n, c in sorted(MODELS.items())],
        "training": [{"name": n, "help": TRAINING[n]} for n in training_names()],
        "sequential": _sequential_json(),
    }


def _sequential_json():
    return [{"name": n, "help": s.help, "parameters": list(s.params)} for n, s in SEQUENTIAL.items()]


SEQUENTIAL_HEADING = ("sequential schemes (gclib sequential --scheme NAME ...: coded across rounds, replayed on a delay "
                      "matrix of workers x rounds, or run over MPI with --mpi)")


def sequential_text(indent: int = 2) -> str:
    """Every sequential scheme (:data:`gclib.schemes.SEQUENTIAL`) with its parameters and a few words each."""
    pad = " " * indent
    w = max(map(len, SEQUENTIAL)) + 1
    lines = []
    for n, s in SEQUENTIAL.items():
        lines.append(f"{pad}{n:<{w}} {s.help}")
        if s.params:
            lines.append(f"{pad}{'':<{w}} parameters: {', '.join(s.params)}")
    return "\n".join(lines)


def training_names() -> tuple:
    """The training schemes of ``gclib train`` (:data:`gclib.learning.optim.SCHEME_NAMES`, imported on first use:
    the learning package loads SciPy, which ``gclib --help`` does without)."""
    from gclib.learning.optim import SCHEME_NAMES

    return SCHEME_NAMES
