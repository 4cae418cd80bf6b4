"""Developer tool: which gclib modules and functions a command runs, as JSON, to follow a command from the command
line to its output (how many modules a reader meets on the way).

    python tools/call_path.py advise --trace se.csv --workers 16

Counted: every gclib function that starts while the command runs (the command line's parsing included), grouped by
module; what runs while a module is being imported (module and class bodies, decorators, dataclasses' generated
methods) is left out, as it is not the command's path. A function's lines are its whole definition (docstring
included); a function nested in another counts once, within its parent. The command's own output goes to stderr,
so that stdout holds the JSON alone.
"""
from __future__ import annotations

import ast
import contextlib
import json
import sys
from collections import Counter
from pathlib import Path


def _importing(frame) -> bool:
    """Whether a module (other than the script run) is being imported below ``frame``."""
    f = frame.f_back
    while f is not None:
        if f.f_code.co_name == "<module>" and f.f_globals.get("__name__") != "__main__":
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
        if event != "call" or frame.f_code.co_name == "<module>":
            return
        module = frame.f_globals.get("__name__", "")
        if (module == "gclib" or module.startswith("gclib.")) and not _importing(frame):
            calls[module, frame.f_code.co_name] += 1
            if frame.f_code.co_filename.endswith(".py"):
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
