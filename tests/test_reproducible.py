"""A second run with the same profile gives byte-identical CSVs.

Each notebook checked here runs twice in the quick profile, into two temporary figure directories (the first run is
the session's, shared with tests/test_notebooks.py), and every CSV it writes is compared byte for byte. The check is
generic (whatever CSVs a notebook writes), but to keep the suite fast only the notebooks in
``GCLIB_REPRO_NOTEBOOKS`` (comma-separated stems, default: notebook 01; ``all`` for every notebook) are run. (That a
profile's parameters reach the notebook is tests/test_manifest.py's.)
"""
from __future__ import annotations

import os

import pytest

from gclib import reproduce as rp

CHEAP = ["01_gradient_coding"]


def selected() -> list[str]:
    names = [p.stem for p in rp.notebook_paths()]
    wanted = os.environ.get("GCLIB_REPRO_NOTEBOOKS", ",".join(CHEAP))
    if wanted.strip() == "all":
        return names
    return [n for n in (w.strip() for w in wanted.split(",")) if n in names]


def assert_identical(a: dict, b: dict, stem: str):
    assert a, f"{stem} wrote no CSV"
    assert sorted(a) == sorted(b), f"{stem}: the two runs wrote different CSV files"
    differ = [name for name in a if a[name] != b[name]]
    assert not differ, f"{stem}: CSVs differ between two runs with the same profile: {differ}"


@pytest.mark.notebooks
@pytest.mark.parametrize("stem", selected() or [pytest.param(None, marks=pytest.mark.skip(
    reason=f"none of {os.environ.get('GCLIB_REPRO_NOTEBOOKS', ','.join(CHEAP))} is in notebooks/ yet"))])
def test_notebook_csvs_are_byte_identical(stem, tmp_path, quick_runs):
    """The session's run of the notebook (conftest.py's ``quick_runs``, which tests/test_notebooks.py checks too)
    against a second one."""
    path = rp.NOTEBOOKS / f"{stem}.ipynb"
    first, figs = quick_runs(path)
    assert first.ok, f"{stem} failed on its first run: {first.error}"
    r = rp.run_notebook(path, "quick", out_dir=tmp_path / "exec_b", figures_dir=tmp_path / "b")
    assert r.ok, f"{stem} failed on its second run: {r.error}"
    a, b = ({f.name: f.read_bytes() for f in sorted(d.glob("*.csv"))} for d in (figs, tmp_path / "b"))
    assert_identical(a, b, stem)
