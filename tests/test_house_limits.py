"""The house's limits on size: no module of gclib over 600 lines, no function over 60, at most 80 imports inside
functions, no more lines over 120 characters than today; measured by ``tools/house.py``, which prints the same
survey as JSON."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def _tool(name: str):
    """The developer tool ``tools/NAME.py`` as a module (``tools`` is not a package)."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def survey() -> dict:
    return _tool("house").survey(top=5)


def test_no_module_is_over_600_lines(survey):
    assert survey["modules_over_600"] == []


def test_no_function_is_over_60_lines(survey):
    assert survey["functions_over_60"] == 0, survey["longest_functions"]


def test_at_most_80_imports_sit_inside_functions(survey):
    assert survey["function_level_imports"] <= 80


def test_lines_over_120_characters_do_not_grow(survey):
    assert survey["lines_over_120"] <= 17


def test_the_survey_sees_a_long_function():
    house = _tool("house")
    body = "\n".join(f"    x{i} = {i}" for i in range(70))
    tree = ast.parse(f"def f():\n    import os\n{body}\n")
    assert [n for _, _, n in house.functions(tree)] == [72]
    assert house.inner_imports(tree) == 1


def test_the_survey_tells_code_from_docstrings_comments_and_blank_lines():
    text = '"""A module."""\n\n# a comment\ndef f():\n    """Two\n    lines."""\n    return 1  # not a comment line\n'
    assert _tool("house").kinds(text, ast.parse(text)) == {"docstring": 3, "blank": 1, "comment": 1, "code": 2}


def test_the_call_path_counts_the_functions_a_command_runs(capsys):
    out = _tool("call_path").follow(["list", "--json"])
    assert out["exit_code"] == 0 and out["functions"] == sum(out["functions_by_module"].values())
    assert {"gclib.cli", "gclib.cli.registries"} <= set(out["functions_by_module"])
    assert out["modules"] == len(out["functions_by_module"]) and out["lines_of_functions"] > 0
    assert '"schemes"' in capsys.readouterr().err  # the command's own output, kept off stdout
