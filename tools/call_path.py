"""Developer tool: which gclib modules and functions a command runs, as JSON, to follow a command from the command
line to its output (how many modules a reader meets on the way).

    python tools/call_path.py advise --trace se.csv --workers 16

Counted: every gclib function or method (by its qualified name; a lambda counts, a comprehension does not) that
starts while the command runs (the command line's parsing included), grouped by module; code that a decorator
generates (a dataclass's ``__init__``) is not counted, nor what runs while a module is being imported (under
Python's import machinery: module and class bodies, decorators), which is not the command's path. A function's
lines are its whole definition (docstring included); a function nested in another counts once, within its parent.
The command's own output goes to stderr, so that stdout holds the JSON alone.
"""
from __future__ import annotations

import ast
import contextlib
import json
import sys
from collections import Counter
from pathlib import Path


#: Code objects that are not functions of their own (their lines are their function's).
COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _importing(frame) -> bool:
    """Whether ``frame`` runs under Python's import machinery (a module being imported)."""
    f = frame.f_back
    while f is not None:
        if f.f_code.co_filename.startswith("<frozen importlib"):
            return True
        f = f.f_back
    return False


def _lines(started: set) -> int:
    """Lines of the outermost functions among ``started`` ``(file, first line)``."""
    by_file: dict[str, set] = {}
    for path, first in started:
        by_file.setdefault(path, set()).add(first)
    total = 0
    for path, firsts in by_file.items():
        covered: set = set()
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                starts = {node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))}
                if starts & firsts:
                    covered.update(range(node.lineno, node.end_lineno + 1))
        total += len(covered)
    return total


def follow(argv: list) -> dict:
    """Run ``gclib argv`` in this process and return the modules and functions it ran."""
    calls: Counter = Counter()
    started: set = set()

    def hook(frame, event, arg):
        if event != "call" or frame.f_code.co_name in ("<module>", *COMPREHENSIONS):
            return
        module = frame.f_globals.get("__name__", "")
        written = frame.f_code.co_filename.endswith(".py")  # not code a decorator generates (a dataclass's __init__)
        if (module == "gclib" or module.startswith("gclib.")) and written and not _importing(frame):
            calls[module, frame.f_code.co_qualname] += 1
            started.add((frame.f_code.co_filename, frame.f_code.co_firstlineno))

    from gclib.cli import main

    sys.setprofile(hook)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            code = main(argv)
    finally:
        sys.setprofile(None)
    modules = Counter(m for m, _ in calls)
    return {"command": ["gclib", *argv], "exit_code": code, "modules": len(modules),
            "functions": len(calls), "lines_of_functions": _lines(started),
            "functions_by_module": dict(sorted(modules.items()))}


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    print(json.dumps(follow(sys.argv[1:]), indent=1))
