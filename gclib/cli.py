"""Command line: ``gclib list | simulate | verify | reproduce | trace`` and the extra subcommands of
:data:`COMMANDS` (``train``, ``gallery``, ``run``); also ``python -m gclib ...``.

Exit codes: 0 done; 1 failed (a verification, a training that did not converge, a run that stopped); 2 a bad
argument, one line ``gclib: error: ...`` on stderr naming the option (the option types come from
:mod:`gclib.checks`, the checks the library runs too); 130 interrupted (Ctrl-C), one line.

The help lists the schemes, the compute-time models and their parameters, generated from the registries
(:data:`gclib.schemes.SCHEMES` / :data:`~gclib.schemes.PARAMS`, :data:`gclib.stragglers.MODELS`), so that what
others register appears by itself; every field of a registered model gets an option.

Importing this module is light (the standard library only): the package's own modules, and NumPy and SciPy with
them, are imported where they are used, so that a Ctrl-C in the first second of ``gclib`` (while they load) is
already :func:`main`'s to report in one line.
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import os
import re
import sys

EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130

SCHEMES_HEADING = "schemes (--scheme NAME)"
MODELS_HEADING = "compute-time models (--model NAME)"
#: model fields that are not numbers given on the command line (composition, trace replay, --persistent)
_NO_OPTION_FIELDS = {"base", "times", "workers", "count"}


def one_line(text) -> str:
    """``text`` on one line: line breaks become spaces, other characters that do not print (a ``\\r`` typed in an
    argument) their escapes."""
    text = " ".join(str(text).split("\n"))
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        print(f"gclib: error: {one_line(message)}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


# ------------------------------------------------------------------------------------------------------------
# Options shared by several commands, and the objects built from them
def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def model_fields(cls) -> list[tuple[str, object]]:
    """``[(field, default)]`` of a model class, without ``per_task`` (an option of its own)."""
    return [(f.name, f.default) for f in dataclasses.fields(cls) if f.name != "per_task"]


def _param_type(name: str, typ):
    """The ``type=`` of a scheme parameter's option: its check in :data:`gclib.schemes.LIMITS`, else ``typ``."""
    from . import checks
    from . import schemes as sch

    if name in sch.LIMITS:
        check, kw = sch.LIMITS[name]
        return checks.option(check, **kw)
    return typ


def _add_scheme_args(p):
    """``--scheme`` and an option for every scheme parameter of :data:`gclib.schemes.PARAMS` (typed by the
    checks of :data:`gclib.schemes.LIMITS`)."""
    from . import schemes as sch

    p.add_argument("--scheme", required=True, choices=sorted(sch.SCHEMES), help="the gradient code")
    for name, (typ, default, hlp) in sch.PARAMS.items():
        if typ is bool:
            p.add_argument(_flag(name), action="store_true", help=hlp)
        else:
            p.add_argument(_flag(name), type=_param_type(name, typ), default=None,
                           help=f"{hlp} (default {default})" if default is not None else hlp)


def add_model_args(p):
    """Compute-time model options, shared by every command that samples worker times (options for fields of
    models registered later are added by :func:`_add_model_field_options` when the parser is built)."""
    from . import checks
    from .stragglers import MODELS, _rate

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


def _add_model_field_options(p):
    """Options for fields of registered models that :func:`add_model_args` does not know (default: the
    model's own, so an unset option leaves the model's default)."""
    from .stragglers import MODELS

    have = set(p._option_string_actions)
    for name, cls in sorted(MODELS.items()):
        for f, d in model_fields(cls):
            flag = _flag(f)
            if flag in have or f in _NO_OPTION_FIELDS:
                continue
            typ = type(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else float
            p.add_argument(flag, dest=f, type=typ, default=None, help=f"{name}: {f} (default {d})")
            have.add(flag)


def model_from_args(a, workers: int | None = None):
    """The compute-time model of ``--model`` and its options; ``workers`` (the code's) bounds ``--persistent``."""
    from . import checks
    from .stragglers import MODELS, Persistent, make_model

    # every field of every registered model that has an option (models added to MODELS get options)
    kw = {f: getattr(a, f) for cls in MODELS.values() for f, _ in model_fields(cls) if hasattr(a, f)}
    model = make_model(a.model, per_task=a.per_task, **kw)
    if a.persistent and workers is not None:
        checks.option_check("--persistent", checks.integer, a.persistent, low=0, high=workers,
                            why=f" (at most the code's {workers} workers)")
    if a.persistent:
        model = Persistent(model, count=a.persistent)
    return model


def code_from_args(a):
    """The code of ``--scheme`` and its parameters; an option not given is ``None`` (0 is a value: ``--stragglers
    0`` means s = 0)."""
    from . import schemes as sch

    kw = {k: v for k in sch.PARAMS if (v := getattr(a, k, None)) is not None and v is not False}
    return sch.build(a.scheme, **kw)


# ------------------------------------------------------------------------------------------------------------
# Listings of the registries: `gclib list`, `gclib list --json` and the epilogs of the help
def _doc_line(obj) -> str:
    doc = (obj.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "") if doc else ""


def scheme_flags(scheme) -> str:
    """The options a scheme reads, e.g. ``--workers, --stragglers, --seed (default 0)``."""
    from . import schemes as sch

    out = []
    for p in scheme.params:
        typ, default, _ = sch.PARAMS.get(p, (str, None, ""))
        out.append(_flag(p) + (f" (default {default})" if default is not None and typ is not bool else ""))
    return ", ".join(out)


def schemes_text(indent: int = 2, width: int = 12, only=None) -> str:
    from . import schemes as sch

    pad = " " * indent
    lines = []
    for name, s in sorted(sch.SCHEMES.items()):
        if only is not None and name not in only:
            continue
        lines.append(f"{pad}{name:<{width}} {s.help}")
        lines.append(f"{pad}{'':<{width}} paper: {s.paper}")
        lines.append(f"{pad}{'':<{width}} parameters: {scheme_flags(s)}")
    return "\n".join(lines)


def params_text(indent: int = 2) -> str:
    from . import schemes as sch

    pad = " " * indent
    rows = [(_flag(n) + ("" if t is bool else f" {t.__name__.upper()}"), h, d) for n, (t, d, h) in sch.PARAMS.items()]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{pad}{a:<{w}}  {h}" + (f" (default {d})" if d is not None and not isinstance(d, bool) else "")
                     for a, h, d in rows)


def models_text(indent: int = 2, width: int = 12) -> str:
    from .stragglers import MODELS

    pad = " " * indent
    lines = []
    for name, cls in sorted(MODELS.items()):
        lines.append(f"{pad}{name:<{width}} {_doc_line(cls)}")
        opts = ", ".join(f"{_flag(f)} (default {d})" for f, d in model_fields(cls))
        lines.append(f"{pad}{'':<{width}} parameters: {opts}")
    lines.append(f"{pad}{'(any)':<{width}} --per-task: one draw per partial gradient; --persistent N: N workers "
                 "never answer")
    return "\n".join(lines)


def registry_text(schemes_heading: str = SCHEMES_HEADING, models_heading: str = MODELS_HEADING) -> str:
    """Every scheme and every model, each list under its heading."""
    return f"{schemes_heading}:\n{schemes_text()}\n\n{models_heading}:\n{models_text()}"


def registry_json() -> dict:
    """The schemes and models as JSON-ready data (``gclib list --json``)."""
    from . import schemes as sch
    from .stragglers import MODELS

    return {
        "schemes": [{"name": n, "paper": s.paper, "help": s.help,
                     "parameters": {p: {"type": sch.PARAMS[p][0].__name__, "default": sch.PARAMS[p][1],
                                        "help": sch.PARAMS[p][2]} for p in s.params}}
                    for n, s in sorted(sch.SCHEMES.items())],
        "models": [{"name": n, "help": _doc_line(c), "parameters": {f: d for f, d in model_fields(c)}}
                   for n, c in sorted(MODELS.items())],
    }


def _notebooks_text(indent: int = 2) -> str:
    """Notebooks and profiles for ``gclib reproduce --help`` (best effort: empty when unreadable)."""
    try:
        from .reproduce import load_profiles, notebook_paths

        names = [p.stem for p in notebook_paths()]
        profiles = sorted(load_profiles())
    except Exception:  # a broken profiles file must not break --help
        return ""
    pad = " " * indent
    return (f"profiles: {', '.join(profiles)}\nnotebooks (--only NAME ...):\n"
            + ("\n".join(pad + n for n in names) if names else pad + "(none yet)"))


# ------------------------------------------------------------------------------------------------------------
# The commands
def cmd_list(a):
    if a.json:
        print(json.dumps(registry_json(), indent=1))
    else:
        print(registry_text("schemes (gclib simulate|verify --scheme NAME ...)",
                            "compute-time models (gclib simulate --model NAME ...)"))
    return 0


def cmd_simulate(a):
    from .simulate import Communication, simulate

    code = code_from_args(a)
    model = model_from_args(a, workers=code.n_workers)
    comm = None
    if a.latency or a.bandwidth is not None:
        comm = Communication(latency=a.latency, bandwidth=math.inf if a.bandwidth is None else a.bandwidth)
    res = simulate(code, model, trials=a.trials, seed=a.seed if a.seed is not None else 0, comm=comm,
                   progress=not a.json and a.trials >= 100_000)
    out = res.summary()
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{out['scheme']}: mean time {_fmt(out['mean_time'], '.5g')} +/- {_fmt(out['ci95_time'], '.2g')}, "
              f"messages {_fmt(out['mean_messages'], '.4g')}, computations {_fmt(out['mean_computations'], '.4g')}, "
              f"volume {_fmt(out['mean_volume'], '.4g')} ({out['trials']} trials, {out['failed']} never decoded)")
    return 0


def _fmt(x, spec: str) -> str:
    """A number of a summary, ``n/a`` where it is undefined (``None``: every trial failed, or one trial)."""
    return "n/a" if x is None else format(x, spec)


def cmd_verify(a):
    from .symbolic import verify

    a.exact = True
    code = code_from_args(a)
    res = verify(code, messages=a.messages, stragglers=a.drop)
    print(res.message())
    return 0 if res.ok else EXIT_FAIL


def cmd_reproduce(a):
    from .reproduce import main as reproduce_main

    return reproduce_main(profile=a.profile, only=a.only, figures_dir=a.figures_dir, out_dir=a.out_dir)


def cmd_trace(a):
    from .reproduce import trace

    recs = trace(a.figure, executed=a.executed, figures_dir=a.figures_dir)
    if a.json:
        print(json.dumps(recs, indent=1, default=str))
    elif not recs:
        print(f"no run recorded for {a.figure!r} in {a.executed}/*/manifest.json (run gclib reproduce first)")
    for r in recs:
        match = {True: "matches the recorded run", False: "DIFFERS from the recorded run (rewritten since?)",
                 None: "not present"}[r["current_file_matches"]]
        print(f"{r['figure']}: notebook {r['notebook']}, profile {r['profile']}, started {r['started']}, "
              f"{r['duration_s']} s, {r['status']}")
        print(f"  git commit {r['git_commit']}{' (with uncommitted changes)' if r['git_dirty'] else ''}, "
              f"seed {r['seed']}")
        print(f"  parameters: {json.dumps(r['parameters'], default=str)}")
        print(f"  file in {r['figures_dir']}: {match}")
    return 0 if recs else EXIT_FAIL


# ------------------------------------------------------------------------------------------------------------
# Extra subcommands: name -> (add_arguments(parser), run(args)[, one line of help]). Other modules may add to it;
# without the third element the summary line comes from docstrings (see _command_help).
def _train_add(p):
    from .learning.train_cli import add_train_args  # gclib.learning is imported only when it is used

    add_train_args(p)


def _train_run(a):
    from .learning.train_cli import cmd_train

    return cmd_train(a)


def _gallery_add(p):
    from . import checks

    p.add_argument("--figures-dir", type=checks.option(checks.input_path), default="figures",
                   help="figure folder the links point into")


def _gallery_run(a):
    from .gallery import markdown

    print(markdown(a.figures_dir), end="")
    return 0


def _run_add(p):
    from .runtime.cli import add_run_args  # gclib/runtime/cli.py

    add_run_args(p)


def _run_run(a):
    from .runtime.cli import cmd_run

    return cmd_run(a)


COMMANDS: dict = {
    "train": (_train_add, _train_run, "one training run (GD, LAG, LAGC, G-LAG, coded) on the simulated clock"),
    "gallery": (_gallery_add, _gallery_run, "print the figure gallery of the README (Markdown)"),
    "run": (_run_add, _run_run, "a real distributed run over MPI (resumable with --resume STATE)"),
}


def _command_help(add, run) -> str | None:
    """Summary line of an extra subcommand without one in :data:`COMMANDS`: the first sentence of the docstring
    of its run or add function, or of their module (``gclib X``: prefixes dropped)."""
    docs = [run.__doc__, add.__doc__]
    docs += [getattr(inspect.getmodule(f), "__doc__", None) for f in (run, add)
             if getattr(inspect.getmodule(f), "__name__", "") != __name__]
    for doc in docs:
        line = " ".join((doc or "").strip().split("\n\n")[0].split())
        line = re.sub(r"^``gclib [\w-]+``\s*:\s*", "", line).split(" (registered")[0].rstrip(".")
        if line:
            return line
    return None


# ------------------------------------------------------------------------------------------------------------
# The parser
def _registry_choices(c, option: str, registry) -> bool:
    """Whether subcommand ``c`` has ``option`` and it means ``registry``'s names (``gclib train`` has schemes
    of its own)."""
    act = c._option_string_actions.get(option)
    return act is not None and (act.choices is None or set(act.choices) <= set(registry))


def _add_listings(sub):
    """Give every subcommand that did not write its own epilog the listings of what its ``--scheme`` and
    ``--model`` accept (adding options for every registered model's fields), and ``reproduce`` its notebooks."""
    from . import schemes as sch
    from .stragglers import MODELS

    for name, c in sub.choices.items():
        if c.epilog:  # a subcommand that wrote its own
            continue
        c.formatter_class = argparse.RawDescriptionHelpFormatter
        parts = []
        if _registry_choices(c, "--scheme", sch.SCHEMES):
            only = c._option_string_actions["--scheme"].choices
            parts.append(f"{SCHEMES_HEADING}:\n{schemes_text(only=only)}")
        if _registry_choices(c, "--model", MODELS):
            _add_model_field_options(c)
            parts.append(f"{MODELS_HEADING}:\n{models_text()}")
        if name == "reproduce":
            parts.append(_notebooks_text())
        c.epilog = "\n\n".join(part for part in parts if part) or None


def build_parser():
    from . import checks
    from .reproduce import EXECUTED, FIGURES

    p = _Parser(prog="gclib", description="Gradient coding: build, verify, simulate and run codes.",
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog=f"{registry_text()}\n\nscheme parameters:\n{params_text()}\n\n"
                       "`gclib list` prints the schemes with their papers; `gclib COMMAND --help` the options of a "
                       "command.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    ls = sub.add_parser("list", help="list the schemes and the paper each comes from, and the compute-time models")
    ls.add_argument("--json", action="store_true", help="print the registries as JSON")
    ls.set_defaults(fn=cmd_list)

    s = sub.add_parser("simulate", help="Monte Carlo of completion time, communication and computation")
    _add_scheme_args(s)
    add_model_args(s)
    s.add_argument("--trials", type=checks.option(checks.integer, low=1), default=10_000,
                   help="iterations simulated (refused when their results would not fit the memory budget, "
                        f"half the available memory unless {checks.MEMORY_ENV} says otherwise)")
    s.add_argument("--latency", type=checks.option(checks.real, low=0), default=0.0,
                   help="communication: seconds per message")
    s.add_argument("--bandwidth", type=checks.option(checks.real, above=0, finite=False), default=None,
                   help="communication: gradients per second (inf: no limit)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(fn=cmd_simulate)

    v = sub.add_parser("verify", help="exact (SymPy) check that every admissible pattern decodes")
    _add_scheme_args(v)
    v.add_argument("--messages", type=checks.option(checks.integer, low=1), default=None,
                   help="check every set of this many messages instead of every straggler pattern")
    v.add_argument("--drop", type=checks.option(checks.integer, low=0), default=None,
                   help="check patterns of this many stragglers instead of the code's s (more than s must fail)")
    v.set_defaults(fn=cmd_verify)

    r = sub.add_parser("reproduce", help="run every notebook through papermill and write figures/")
    r.add_argument("--profile", default="full", help="parameter profile (full or quick)")
    r.add_argument("--only", nargs="*", default=None, help="notebook names (stems) to run")
    r.add_argument("--figures-dir", type=checks.option(checks.output_dir), default=None,
                   help="where figures go (default figures/)")
    r.add_argument("--out-dir", type=checks.option(checks.output_dir), default=None,
                   help="where executed notebooks and manifest.json go (default build/executed/PROFILE)")
    r.set_defaults(fn=cmd_reproduce)

    for name, (add, run, *summary) in COMMANDS.items():
        c = sub.add_parser(name, help=summary[0] if summary else _command_help(add, run))
        add(c)
        c.set_defaults(fn=run)

    t = sub.add_parser("trace", help="which run made a figure: notebook, parameters, seed, commit (from the manifests)")
    t.add_argument("figure", type=checks.option(checks.input_path, kind="file"),
                   help="a figure file or name, e.g. figures/01_completion_time.png or 01_completion_time")
    t.add_argument("--executed", type=checks.option(checks.input_path), default=str(EXECUTED),
                   help="where the per-profile manifests are")
    t.add_argument("--figures-dir", type=checks.option(checks.input_path), default=None,
                   help=f"where the figure files are (default: the figure's own directory, else the one the run "
                        f"wrote to, e.g. {FIGURES})")
    t.add_argument("--json", action="store_true", help="print the records as JSON")
    t.set_defaults(fn=cmd_trace)

    _add_listings(sub)
    return p


def _error(message) -> None:
    print(f"gclib: error: {one_line(message)}", file=sys.stderr)


def main(argv=None) -> int:
    """Run one command; return its exit code: 0 done, 1 failed (a verification, a run), 2 bad arguments (one line
    on stderr), 130 interrupted (Ctrl-C, one line)."""
    try:
        p = build_parser()
        a = p.parse_args(argv)
        return a.fn(a)
    except ValueError as e:  # bad arguments, of the library's checks too (ParameterTypeError is one)
        _error(e)
        return EXIT_USAGE
    except MemoryError:  # an allocation the estimates of gclib.checks did not foresee
        from .checks import MEMORY_ENV

        _error(f"out of memory; lower the sizes of the request (the budget of gclib's own estimates is set by "
               f"{MEMORY_ENV})")
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("gclib: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of stdout went away (gclib list | head -1): stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FAIL
    except OSError as e:  # the file system refused (disk full, permissions changed while running, ...)
        where = f": {e.filename}" if getattr(e, "filename", None) else ""
        _error(f"{e.strerror or e}{where}")
        return EXIT_FAIL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
