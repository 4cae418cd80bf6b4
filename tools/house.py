"""Developer tool: the size and shape of the house, as JSON (lines per floor, the longest modules and functions,
imports inside functions), to read a refactor's before and after.

    python tools/house.py [--top N]
"""
from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gclib"
FLOORS = {"runtime": "runtime", "studies": "studies", "cli": "command line"}


def floor(path: Path) -> str:
    first = path.relative_to(PACKAGE).parts[0]
    return FLOORS.get(first, "core")


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


def survey(top: int = 10) -> dict:
    lines, mods, funcs, inner, long_lines = {}, [], [], 0, 0
    for f in sorted(PACKAGE.rglob("*.py")):
        text = f.read_text()
        n = len(text.splitlines())
        rel = str(f.relative_to(PACKAGE.parent))
        lines[floor(f)] = lines.get(floor(f), 0) + n
        mods.append((n, rel))
        tree = ast.parse(text)
        funcs += [(length, f"{rel}:{line} {name}") for name, line, length in functions(tree)]
        inner += inner_imports(tree)
        long_lines += sum(len(x) > 120 for x in text.splitlines())
    mods.sort(reverse=True)
    funcs.sort(reverse=True)
    return {"lines": {**lines, "total": sum(lines.values())}, "modules": len(mods),
            "modules_over_600": [m for n, m in mods if n > 600], "longest_modules": mods[:top],
            "functions_over_60": len([1 for n, _ in funcs if n > 60]), "longest_functions": funcs[:top],
            "function_level_imports": inner, "lines_over_120": long_lines}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=10, help="how many of the longest modules and functions to list")
    print(json.dumps(survey(p.parse_args().top), indent=1))


if __name__ == "__main__":
    main()
