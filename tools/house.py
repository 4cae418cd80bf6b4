"""Developer tool: the size and shape of the house, as JSON (lines per floor, and of what kind; the longest modules
and functions; imports inside functions), to read a refactor's before and after.

    python tools/house.py [--top N] [--package DIR]

``--package`` surveys another copy of the package, e.g. an older commit's: ``git archive REV gclib | tar -x -C D``,
then ``--package D/gclib``. A line's kind is ``docstring`` (within a module's, class's or function's docstring),
``comment`` (only a comment), ``blank``, or else ``code`` (the claims tables and other data written in Python
included).
"""
from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gclib"
FLOORS = {"runtime": "runtime", "studies": "studies", "cli": "command line"}


def floor(path: Path, package: Path = PACKAGE) -> str:
    """The floor a module of ``package`` stands on."""
    return FLOORS.get(path.relative_to(package).parts[0], "core")


def functions(tree: ast.AST):
    """Every function of a module with its length in lines (its decorators and docstring included)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def inner_imports(tree: ast.AST) -> int:
    """Import statements inside function bodies."""
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n += sum(isinstance(x, (ast.Import, ast.ImportFrom)) for x in ast.walk(node) if x is not node)
    return n


def kinds(text: str, tree: ast.AST) -> Counter:
    """How many of a module's lines are code, docstrings, comments and blank."""
    rows = text.splitlines()
    kind = ["blank" if not r.strip() else "comment" if r.lstrip().startswith("#") else "code" for r in rows]
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                kind[first.lineno - 1:first.end_lineno] = ["docstring"] * (first.end_lineno - first.lineno + 1)
    return Counter(kind)


def survey(top: int = 10, package: Path = PACKAGE) -> dict:
    """The survey of ``package`` (see the module docstring); ``top``: how many modules and functions to list."""
    lines, by_kind, mods, funcs, inner, long_lines = {}, {}, [], [], 0, 0
    for f in sorted(package.rglob("*.py")):
        text = f.read_text()
        n = len(text.splitlines())
        rel = str(f.relative_to(package.parent))
        where = floor(f, package)
        lines[where] = lines.get(where, 0) + n
        mods.append((n, rel))
        tree = ast.parse(text)
        by_kind.setdefault(where, Counter()).update(kinds(text, tree))
        funcs += [(length, f"{rel}:{line} {name}") for name, line, length in functions(tree)]
        inner += inner_imports(tree)
        long_lines += sum(len(x) > 120 for x in text.splitlines())
    mods.sort(reverse=True)
    funcs.sort(reverse=True)
    by_kind["total"] = sum(by_kind.values(), Counter())
    return {"lines": {**lines, "total": sum(lines.values())},
            "lines_by_kind": {k: dict(sorted(c.items())) for k, c in by_kind.items()}, "modules": len(mods),
            "modules_over_600": [m for n, m in mods if n > 600], "longest_modules": mods[:top],
            "functions_over_60": len([1 for n, _ in funcs if n > 60]), "longest_functions": funcs[:top],
            "function_level_imports": inner, "lines_over_120": long_lines}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=10, help="how many of the longest modules and functions to list")
    p.add_argument("--package", type=Path, default=PACKAGE, help="the package folder to survey (default: this one's)")
    args = p.parse_args()
    print(json.dumps(survey(args.top, args.package.resolve()), indent=1))


if __name__ == "__main__":
    main()
