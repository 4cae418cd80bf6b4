"""Command line: ``gclib list | simulate | verify | reproduce | train | gallery | run | profile | advise |
trace``; also ``python -m gclib ...``; ``gclib --version`` prints ``gclib`` and the version.

One module per command: its options, its help and what it runs (:mod:`~gclib.cli.registries` is ``gclib list``);
the options several commands share (a scheme, a compute-time model) and the objects built from them are in
:mod:`gclib.cli.options`. Nothing below the command line imports it.

Exit codes: 0 done; 1 failed (a verification, a training that did not converge, a run that stopped); 2 a bad
argument, one line ``gclib: error: ...`` on stderr naming the option (the option types come from
:mod:`gclib.checks`, the checks the library runs too); 130 interrupted (Ctrl-C), one line.

Start-up: ``import gclib`` loads the core (NumPy, the codes, the simulator, the models); this package adds
``importlib``, ``os``, ``signal`` and ``sys``. :func:`main` imports the command modules, and builds the options of the
command its arguments name only (:func:`build_parser`), so that ``gclib --help`` and a bad option start without SciPy,
pandas, SymPy or MPI (``python -m benchmarks.bench_startup`` measures them), and a Ctrl-C while the command loads
is already :func:`main`'s to report in one line.
"""
from __future__ import annotations

import importlib
import os
import signal
import sys

import gclib
from gclib import __version__
from gclib.checks import MEMORY_ENV

#: Exit codes (as :mod:`gclib.cli.options` has them): failed, a bad argument, interrupted (128 + SIGINT).
EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
#: The command modules, in the order of ``gclib --help``.
COMMANDS = ("registries", "simulate", "verify", "reproduce", "train", "gallery", "run", "profile", "advise", "trace",
            "sequential")


def build_parser(only: str | None = None):
    """The parser of every command (a :class:`gclib.cli.options.Parser`).

    With ``only`` (a command's name, or ``""`` for none), only that command's options are built and every other
    command is listed by its line of help (its module's ``NAME`` and ``HELP``): building a command's options imports
    what they list (the schemes, the compute-time models, the trace formats, ...), so that ``gclib --help``, and
    a bad option of one command, start without the packages the other commands need. :func:`main` passes the
    command its arguments name.
    """
    from gclib.cli import registries
    from gclib.cli.options import Parser, same_metavars

    listed = None  # the registry, shown by gclib --help only: a command's parse does without it
    if not only:
        listed = (f"{registries.registry_text()}\n\nscheme parameters:\n{registries.params_text()}\n\n`gclib "
                  "list` prints the schemes with their papers; `gclib COMMAND --help` the options of a command.")
    p = Parser(prog="gclib", description="Gradient coding: build, verify, simulate and run codes.", epilog=listed)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    for name in COMMANDS:
        module = importlib.import_module(f"{__name__}.{name}")
        if only is None or only == module.NAME:
            module.add_parser(sub)
            same_metavars(sub.choices[module.NAME])
        else:
            sub.add_parser(module.NAME, help=module.HELP)
    return p


def named_command(argv) -> str:
    """The command ``argv`` names (its first argument that is not an option, when it is a command's name), or
    ``""``: the top-level options (``--help``, ``--version``) take no value, so the command comes first."""
    names = {importlib.import_module(f"{__name__}.{name}").NAME for name in COMMANDS}
    first = next((a for a in argv if not a.startswith("-")), "")
    return first if first in names else ""


#: The optional packages gclib imports only when a command needs them, and the extra of pyproject.toml that
#: installs each (a missing one is one line naming the extra, not a traceback).
EXTRAS = {"sklearn": "data", "pyarrow": "traces", "mpi4py": "mpi", "papermill": "notebooks", "nbformat": "notebooks",
          "nbclient": "notebooks", "ipykernel": "notebooks", "jupyterlab": "notebooks", "playwright": "browser",
          "sphinx": "docs", "myst_nb": "docs", "latex2mathml": "docs", "hypothesis": "test", "pytest": "test"}


#: The name to install of a module whose package is named otherwise.
PACKAGES = {"sklearn": "scikit-learn"}


def error(message) -> None:
    """Print ``gclib: error: message`` on one line on stderr (:func:`gclib.cli.options.error`)."""
    from gclib.cli.options import error as say

    say(message)


def _own_ctrl_c() -> None:
    """Take Ctrl-C back from the handler of the command line's start (``gclib._interrupted_while_starting``): from
    here a Ctrl-C is a ``KeyboardInterrupt`` that :func:`main` reports (and a run's launcher can catch)."""
    if signal.getsignal(signal.SIGINT) is getattr(gclib, "_interrupted_while_starting", None):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv=None) -> int:
    """Run one command; return its exit code: 0 done, 1 failed (a verification, a run), 2 bad arguments or a
    missing optional package (one line on stderr naming the extra to install), 130 interrupted (Ctrl-C, one
    line)."""
    try:
        _own_ctrl_c()
        argv = sys.argv[1:] if argv is None else list(argv)
        a = build_parser(named_command(argv)).parse_args(argv)
        return a.fn(a)
    except ValueError as e:  # bad arguments, of the library's checks too (ParameterTypeError is one)
        error(e)
        return EXIT_USAGE
    except RecursionError:  # a structure nested too deeply for any check (a JSON file, say)
        error("the input is nested too deeply to be read")
        return EXIT_USAGE
    except MemoryError:  # an allocation the estimates of gclib.checks did not foresee
        error(f"out of memory; lower the sizes of the request (the budget of gclib's own estimates is set by "
              f"{MEMORY_ENV})")
        return EXIT_USAGE
    except ModuleNotFoundError as e:  # an optional package that is not installed: name the extra that brings it
        extra = EXTRAS.get((e.name or "").split(".")[0])
        if extra is None:
            raise
        package = PACKAGES.get(e.name.split(".")[0], e.name.split(".")[0])
        error(f"this needs the optional package {package}, which is not installed: pip install "
              f"'gclib[{extra}]' (or `make setup` in a clone, which installs every extra)")
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
        error(f"{e.strerror or e}{where}")
        return EXIT_FAIL
