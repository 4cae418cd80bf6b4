"""Command line: ``gclib list | simulate | verify | reproduce | train | gallery | run | profile | advise |
trace``; also ``python -m gclib ...``; ``gclib --version`` prints ``gclib`` and the version.

One module per command: its options, its help and what it runs (:mod:`~gclib.cli.registries` is ``gclib list``);
the options several commands share (a scheme, a compute-time model) and the objects built from them are in
:mod:`gclib.cli.options`. Nothing below the command line imports it.

Exit codes: 0 done; 1 failed (a verification, a training that did not converge, a run that stopped); 2 a bad
argument, one line ``gclib: error: ...`` on stderr naming the option (the option types come from
:mod:`gclib.checks`, the checks the library runs too); 130 interrupted (Ctrl-C), one line.

Importing this package costs nearly nothing (``os`` and ``sys``): the command modules, the standard library
modules they use, and NumPy and SciPy with them, are imported inside :func:`main`, so that a Ctrl-C in the first
second of ``gclib`` (while they load) is already :func:`main`'s to report in one line. Only a Ctrl-C in the
interpreter's own first milliseconds, before the console script runs a line of gclib, is Python's.
"""
from __future__ import annotations

import os
import sys

#: Exit codes (as :mod:`gclib.cli.options` has them): failed, a bad argument, interrupted (128 + SIGINT).
EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
#: The command modules, in the order of ``gclib --help``.
COMMANDS = ("registries", "simulate", "verify", "reproduce", "train", "gallery", "run", "profile", "advise", "trace")


def build_parser():
    """The parser of every command (a :class:`gclib.cli.options.Parser`)."""
    import importlib

    from gclib import __version__
    from gclib.cli.options import Parser
    from gclib.cli import registries

    p = Parser(prog="gclib", description="Gradient coding: build, verify, simulate and run codes.",
               epilog=f"{registries.registry_text()}\n\nscheme parameters:\n{registries.params_text()}\n\n"
                      "`gclib list` prints the schemes with their papers; `gclib COMMAND --help` the options of a "
                      "command.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return p


#: The optional packages gclib imports only when a command needs them, and the extra of pyproject.toml that
#: installs each (a missing one is one line naming the extra, not a traceback).
EXTRAS = {"sklearn": "data", "pyarrow": "traces", "mpi4py": "mpi", "papermill": "notebooks", "nbformat": "notebooks",
          "nbclient": "notebooks", "ipykernel": "notebooks", "jupyterlab": "notebooks", "playwright": "browser",
          "sphinx": "docs", "myst_nb": "docs", "latex2mathml": "docs", "hypothesis": "test", "pytest": "test"}


def error(message) -> None:
    """Print ``gclib: error: message`` on one line on stderr (:func:`gclib.cli.options.error`)."""
    from gclib.cli.options import error as say

    say(message)


def main(argv=None) -> int:
    """Run one command; return its exit code: 0 done, 1 failed (a verification, a run), 2 bad arguments or a
    missing optional package (one line on stderr naming the extra to install), 130 interrupted (Ctrl-C, one
    line)."""
    try:
        a = build_parser().parse_args(argv)
        return a.fn(a)
    except ValueError as e:  # bad arguments, of the library's checks too (ParameterTypeError is one)
        error(e)
        return EXIT_USAGE
    except RecursionError:  # a structure nested too deeply for any check (a JSON file, say)
        error("the input is nested too deeply to be read")
        return EXIT_USAGE
    except MemoryError:  # an allocation the estimates of gclib.checks did not foresee
        from gclib.checks import MEMORY_ENV

        error(f"out of memory; lower the sizes of the request (the budget of gclib's own estimates is set by "
              f"{MEMORY_ENV})")
        return EXIT_USAGE
    except ModuleNotFoundError as e:  # an optional package that is not installed: name the extra that brings it
        extra = EXTRAS.get((e.name or "").split(".")[0])
        if extra is None:
            raise
        error(f"this needs the optional package {e.name.split('.')[0]}, which is not installed: pip install "
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
