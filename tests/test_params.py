"""gclib.studies.params: a bad notebook parameter fails at once with a message naming it."""
from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gclib import reproduce as rp
from gclib.studies.params import Parameters

from notebook_fixtures import good_notebook, validation_cell

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------------ Parameters
@pytest.mark.parametrize("method, value, kw", [
    ("integer", 5, dict(low=1)),
    ("integer", np.int64(5), dict(low=1, high=5)),
    ("real", 0.5, dict(above=0, below=1)),
    ("real", 2, dict(low=2)),  # an int is a number
    ("choice", "quick", dict(choices=["full", "quick"])),
    ("text", "../figures", {}),
    ("integers", [6, 8, 10], dict(low=2)),
    ("integers", (1, 2), dict(max_len=2)),
    ("reals", [0.5, 2], dict(above=0)),
    ("choices", ["exp"], dict(choices=["exp", "pareto"])),
])
def test_parameters_accept_allowed_values(method, value, kw):
    got = getattr(Parameters({"p": value}), method)("p", **kw)
    assert got == (tuple(value) if isinstance(value, list) else value)


@pytest.mark.parametrize("method, value, kw, message", [
    ("integer", 0, dict(low=1), "parameter trials must be a positive integer, got 0"),
    ("integer", 1e5, dict(low=1), "parameter trials must be a positive integer, got 100000.0"),
    ("integer", True, {}, "parameter trials must be an integer, got True"),
    ("integer", "10", {}, "parameter trials must be an integer, got '10'"),
    ("integer", None, {}, "parameter trials must be an integer, got None"),
    ("integer", 7, dict(low=1, high=5), "parameter trials must be an integer in [1, 5], got 7"),
    ("real", 0.0, dict(above=0), "parameter trials must be a positive finite number, got 0.0"),
    ("real", float("nan"), dict(low=0), "parameter trials must be a non-negative finite number, got nan"),
    ("real", 1.0, dict(below=1), "parameter trials must be a finite number < 1, got 1.0"),
    ("choice", "fast", dict(choices=["full", "quick"]), "parameter trials must be one of 'full', 'quick', got 'fast'"),
    ("choice", {"a": 1}, dict(choices=(1, 2)), "parameter trials must be one of 1, 2, got {'a': 1}"),
    ("text", 5, {}, "parameter trials must be a string, got 5"),
    ("text", "", {}, "parameter trials must be a non-empty string, got ''"),
    ("integers", [], {}, "parameter trials must be a list of at least 1 item, got []"),
    ("integers", 5, {}, "parameter trials must be a list, got 5"),
    ("integers", "6,8", {}, "parameter trials must be a list, got '6,8'"),
    ("integers", [6, 8, 1], dict(low=2), "parameter trials[2] must be an integer >= 2, got 1"),
    ("integers", [6, 8, 6], dict(distinct=True), "parameter trials must be a list of distinct items (6 is given twice), "
                                                 "got [6, 8, 6]"),
    ("choices", ("x",), dict(choices=["exp"]), "parameter trials[0] must be one of 'exp', got 'x'"),
])
def test_parameters_name_the_parameter_the_value_and_what_is_allowed(method, value, kw, message):
    with pytest.raises(ValueError) as e:
        getattr(Parameters({"trials": value}), method)("trials", **kw)
    assert str(e.value) == message


def test_parameters_refuse_an_undefined_name():
    with pytest.raises(ValueError, match="parameter seed is not defined"):
        Parameters({}).integer("seed", low=0)


@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_integer_range_agrees_with_comparison(v, lo, hi):
    ok = lo <= v <= hi
    try:
        Parameters({"x": v}).integer("x", low=lo, high=hi)
        assert ok
    except ValueError as e:
        assert not ok and "parameter x" in str(e) and repr(v) in str(e)


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(-10, 10))
def test_real_bounds_never_let_nan_or_infinity_through(v, lo):
    try:
        Parameters({"x": v}).real("x", above=lo)
        assert math.isfinite(v) and v > lo
    except ValueError:
        assert not (math.isfinite(v) and v > lo)


# ------------------------------------------------------------------------------------- through papermill
def _run_bad(path: Path, out: Path, params: dict):
    """Execute ``path`` with ``params`` and return the PapermillExecutionError it must raise."""
    import nbformat
    import papermill as pm

    with pytest.raises(pm.PapermillExecutionError) as e:
        pm.execute_notebook(str(path), str(out), parameters=params, cwd=str(path.parent), progress_bar=False,
                            kernel_name="python3", log_output=False)
    return e.value, nbformat.read(out, as_version=4)


@pytest.mark.notebooks
def test_papermill_cli_bad_value_fails_at_once_naming_the_parameter(tmp_path):
    nb = good_notebook(tmp_path / "01_fixture.ipynb")
    out = tmp_path / "out.ipynb"
    proc = subprocess.run([sys.executable, "-m", "papermill", str(nb), str(out), "-p", "n", "1e5", "-k", "python3",
                           "--cwd", str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert proc.returncode != 0
    assert "parameter n must be an integer in [2, 10000], got 100000.0" in proc.stderr
    import nbformat

    done = nbformat.read(out, as_version=4)
    errors = [i for i, c in enumerate(done.cells) for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == [validation_cell(done)]  # the validation cell, before any computation


NOTEBOOK_01 = rp.NOTEBOOKS / "01_gradient_coding.ipynb"


@pytest.mark.notebooks
@pytest.mark.parametrize("name, bad", [("trials", 1e5)])
def test_notebook_01_bad_parameter_fails_in_its_first_code_cell(name, bad, tmp_path):
    err, done = _run_bad(NOTEBOOK_01, tmp_path / "out.ipynb",
                         {"figures_dir": str(tmp_path / "figures"), "profile": "quick", name: bad})
    assert name in err.evalue and repr(bad) in err.evalue, err.evalue
    # the error came from the first code cell after the parameters (papermill adds cells to ``done``)
    assert err.source == done.cells[validation_cell(done)].source


# ------------------------------------------------------------------------ every notebook follows the rule
def _parameters_and_first_code_cell(path: Path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    idx = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    if not idx:
        return None, None
    first = next((c for c in nb.cells[idx[0] + 1:] if c.cell_type == "code"), None)
    return nb.cells[idx[0]], first


def _assigned(src: str) -> set[str]:
    names = set()
    for node in ast.parse(src).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _parameters(src: str) -> dict:
    """The parameters cell's assignments, evaluated (they are literals)."""
    ns: dict = {}
    exec(compile(src, "parameters", "exec"), {}, ns)
    return ns


NOTEBOOKS = sorted(rp.NOTEBOOKS.glob("[0-9]*.ipynb"))
#: set by the driver for every run, and checked by ``gclib.studies.params.notebook`` for every notebook
DRIVER_SET = {"profile", "figures_dir"}


class _Bad:
    """A value no check accepts."""

    def __repr__(self):
        return "<bad value>"


def test_the_parameters_helpers_read_a_cell():
    assert _assigned('profile = "full"\nn: int = 3\nx, y = 1, 2') == {"profile", "n"}
    assert _parameters('profile = "full"\nn = 3  # workers\nxs = [1, 2]') == {"profile": "full", "n": 3, "xs": [1, 2]}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_validates_every_parameter_in_its_first_code_cell(path):
    """The first code cell is ``notebook(stem, globals())``; it accepts the cell's defaults and both profiles,
    and refuses a bad value of every parameter, naming it."""
    from gclib.studies.params import notebook

    params, first = _parameters_and_first_code_cell(path)
    assert params is not None, f"{path.name} has no cell tagged 'parameters'"
    assert first is not None, f"{path.name} has no code cell after its parameters cell"
    call = [n for n in ast.walk(ast.parse(first.source)) if isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", "")) == "notebook"]
    assert call and isinstance(call[0].args[0], ast.Constant) and call[0].args[0].value == path.stem, (
        f"{path.name}: the first code cell after the parameters must be notebook({path.stem!r}, globals())")
    defaults = _parameters(params.source)
    assert DRIVER_SET <= set(defaults), f"{path.name}: the parameters cell sets profile and figures_dir"
    profiles = rp.load_profiles()
    for name in ("full", "quick"):
        notebook(path.stem, {**defaults, **profiles[name].get(path.stem, {}), "profile": name})
    for name in sorted(defaults):
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            notebook(path.stem, {**defaults, name: _Bad()})


def test_notebook_checks_refuse_an_unknown_notebook_and_a_missing_parameter():
    from gclib.studies.params import notebook

    with pytest.raises(ValueError, match="no parameter checks for notebook '99_x'"):
        notebook("99_x", {})
    with pytest.raises(ValueError, match="parameter seed is not defined"):
        notebook("01_gradient_coding", {"profile": "quick", "figures_dir": "f"})


def test_a_figures_folder_that_cannot_be_made_names_itself(tmp_path):
    """``papermill -p figures_dir /proc/nope``: refused in the validation cell, naming the parameter, like every
    other bad parameter (not a FileNotFoundError where the first figure is saved)."""
    import tempfile

    from gclib.studies.params import notebook

    with tempfile.TemporaryDirectory(prefix="g") as short:  # a path short enough to be quoted whole
        a_file = Path(short) / "a_file"
        a_file.write_text("x")
        bad = [str(a_file / "plots")] + (["/proc/nope"] if Path("/proc/self").exists() else [])
        for folder in bad:
            with pytest.raises(ValueError, match=f"parameter figures_dir {re.escape(repr(folder))} cannot be"):
                notebook("01_gradient_coding", {"profile": "quick", "figures_dir": folder, "seed": 0})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_refuses_a_bad_seed_at_once(path, tmp_path):
    """``papermill -p seed abc`` fails in the validation cell with a message naming ``seed``: the parameters cell,
    the cell papermill injects (its own translation of the parameters) and the first code cell after them, run in
    this process as the kernel runs them (that papermill reports the error of that cell through a real kernel is
    checked on notebook 01 above and in tests/test_notebooks.py)."""
    from papermill.translators import translate_parameters

    params, first = _parameters_and_first_code_cell(path)
    # every notebook but the index has a seed; the index's only parameters are the driver's
    name, bad = ("seed", "abc") if "seed" in _assigned(params.source) else ("profile", 12345)
    injected = {"figures_dir": str(tmp_path / "figures"), "profile": "quick", name: bad}
    ns: dict = {"__name__": "__main__"}
    for src in (params.source, translate_parameters("python3", "python", injected, "Injected Parameters")):
        exec(compile(src, "cell", "exec"), ns)
    with pytest.raises(ValueError) as err:
        exec(compile(first.source, "validation cell", "exec"), ns)
    assert name in str(err.value) and repr(bad) in str(err.value), str(err.value)
    assert not (tmp_path / "figures").exists() or not any((tmp_path / "figures").iterdir())
