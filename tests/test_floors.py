"""The three floors of gclib and the command line on top: every import, at module level or inside a function, points
down or sideways, never up.

* the core (every module outside ``gclib.runtime``, ``gclib.studies`` and ``gclib.cli``) imports only the core;
* the runtime (``gclib.runtime``) imports the core and itself;
* the studies (``gclib.studies``, one package per notebook) import the core, the runtime and one another;
* the command line (``gclib.cli``, ``gclib.__main__``) may import anything, and nothing imports it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gclib"
#: Which floors each floor may import.
ALLOWED = {"core": {"core"}, "runtime": {"core", "runtime"}, "studies": {"core", "runtime", "studies"},
           "cli": {"core", "runtime", "studies", "cli"}}


def floor(module: str) -> str:
    parts = module.split(".")
    if parts[:2] == ["gclib", "cli"] or parts[:2] == ["gclib", "__main__"]:
        return "cli"
    if parts[:2] == ["gclib", "runtime"]:
        return "runtime"
    if parts[:2] == ["gclib", "studies"]:
        return "studies"
    return "core"


def modules() -> dict:
    out = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = f
    return out


def imports(module: str, source: str, is_package: bool) -> list:
    """Every gclib module that ``source`` (the text of ``module``) imports: ``[(line, imported)]``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "gclib"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gclib":
                continue
            # "from gclib import runtime" imports the module gclib.runtime: judge each name as a module when it is
            out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return out


def violations(mods: dict) -> list:
    bad = []
    for name, path in mods.items():
        for line, target in imports(name, path.read_text(), path.name == "__init__.py"):
            while target not in mods and "." in target:  # a name from a module: the module
                target = target.rsplit(".", 1)[0]
            if floor(target) not in ALLOWED[floor(name)]:
                bad.append(f"{path.name}:{line}: {floor(name)} {name} imports {floor(target)} {target}")
    return bad


def test_every_arrow_points_down():
    mods = modules()
    assert {floor(m) for m in mods} == set(ALLOWED), "a floor has no module: the test looks in the wrong place"
    assert sum(len(imports(n, p.read_text(), p.name == "__init__.py")) for n, p in mods.items()) > 200
    bad = violations(mods)
    assert not bad, "imports that point up a floor:\n" + "\n".join(bad)


@pytest.mark.parametrize("module, source, expected", [
    ("gclib.simulator", "def f():\n    from .studies.scale import claims\n", "core gclib.simulator imports studies"),
    ("gclib.codes.base", "from ..runtime import launch\n", "core gclib.codes.base imports runtime"),
    ("gclib.runtime.master", "import gclib.studies.mpi_runs.study\n", "runtime gclib.runtime.master imports "
                                                                             "studies"),
    ("gclib.studies.scale.claims", "from gclib.cli import main\n", "studies gclib.studies.scale.claims imports cli"),
])
def test_an_arrow_up_is_caught(tmp_path, module, source, expected):
    mods = modules()
    fake = tmp_path / "fake.py"
    fake.write_text(source)
    mods[module] = fake  # the module's text replaced by one import that points up
    bad = violations(mods)
    assert len(bad) == 1 and expected in bad[0], bad


def test_the_core_imports_without_the_other_floors():
    """A core module's import loads no module of the runtime or the studies (run in a fresh interpreter)."""
    import subprocess
    import sys

    code = ("import sys, gclib.advise, gclib.simulator, gclib.symbolic, gclib.design, gclib.fit, gclib.learning; "
            "print(sorted(m for m in sys.modules if m.startswith(('gclib.runtime', 'gclib.studies', 'gclib.cli'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout.strip()
    assert out == "[]", out
