"""The import graph of gclib, read from the source (every import statement, those inside functions too).

A module leans on what is below it: the graph has no cycle, and nothing below the command line (the codes, the
compute-time models, the MPI runtime) reaches :mod:`gclib.cli`, directly or through another module.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package ``root/gclib`` (a package is named by its
    ``__init__.py``)."""
    out = {}
    for path in sorted((root / "gclib").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported(name: str, path: Path, known) -> set[str]:
    """The modules of gclib that module ``name`` (file ``path``) imports anywhere in its body.

    ``from X import y`` imports ``X.y`` when that is a module, else ``X`` (``y`` is a name defined in ``X``).
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for a in node.names:
                if f"{source}.{a.name}" in known:
                    out.add(f"{source}.{a.name}")
                elif source in known:
                    out.add(source)
    out.discard(name)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: the modules of gclib it imports}``."""
    known = module_names(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def find_cycle(graph) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``None``."""
    state = {}  # name -> 1 on the current path, 2 done

    def visit(node, path):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [])
            if found:
                return found
    return None


def reached(graph, start: str) -> dict[str, str]:
    """``{module: the module that imports it}`` for every module importing ``start`` brings in (importing a
    submodule runs its packages' ``__init__`` too)."""
    seen = {start: ""}
    todo = [start]
    while todo:
        node = todo.pop()
        parents = [node.rsplit(".", i)[0] for i in range(1, node.count(".") + 1)]
        for nxt in sorted(graph[node] | {p for p in parents if p in graph}):
            if nxt not in seen:
                seen[nxt] = node
                todo.append(nxt)
    return seen


def chain(seen, end: str) -> str:
    out = [end]
    while seen[out[-1]]:
        out.append(seen[out[-1]])
    return " <- ".join(out)


# ------------------------------------------------------------------------------------------------ the tests
def test_the_reader_sees_imports_inside_functions_and_relative_ones(tmp_path):
    pkg = tmp_path / "gclib"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "top.py").write_text("def f():\n    from .sub import low\n    from . import sub\n")
    (pkg / "sub" / "__init__.py").write_text("from .low import g\n")
    (pkg / "sub" / "low.py").write_text("import gclib.top\nfrom .. import top as t\nfrom ..sub import NAME\n")
    graph = import_graph(tmp_path)
    assert graph == {"gclib": set(), "gclib.top": {"gclib.sub.low", "gclib.sub"}, "gclib.sub": {"gclib.sub.low"},
                     "gclib.sub.low": {"gclib.top", "gclib.sub"}}
    assert find_cycle(graph) == ["gclib.sub", "gclib.sub.low", "gclib.sub"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert chain(reached(graph, "gclib.sub.low"), "gclib.top") == "gclib.top <- gclib.sub.low"
    assert set(reached({"gclib": set(), "gclib.a": set(), "gclib.a.b": set()}, "gclib.a.b")) == {
        "gclib.a.b", "gclib.a", "gclib"}  # a submodule brings its packages


def test_every_module_of_gclib_is_read():
    graph = import_graph()
    assert {"gclib", "gclib.cli", "gclib.codes.base", "gclib.runtime.master", "gclib.stragglers"} <= set(graph)
    assert "gclib.codes.base" in graph["gclib.codes.repetition"]  # the reader sees the graph's real edges


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("below", ["gclib.codes", "gclib.stragglers", "gclib.runtime"])
def test_nothing_below_the_command_line_imports_it(below):
    graph = import_graph()
    starts = [n for n in graph if n == below or n.startswith(below + ".")]
    assert starts
    for start in starts:
        seen = reached(graph, start)
        bad = sorted(n for n in seen if n == "gclib.cli" or n.startswith("gclib.cli."))
        assert not bad, f"{start} imports the command line: {chain(seen, bad[0])}"
