"""A second run with the same profile gives byte-identical CSVs.

Each notebook checked here runs twice in the quick profile, into two temporary figure directories (the first run is
the session's, shared with tests/test_notebooks.py), and every CSV it writes is compared byte for byte. The check is generic (whatever CSVs a notebook writes), but to keep the suite
fast only the notebooks in ``GCLIB_REPRO_NOTEBOOKS`` (comma-separated stems, default: notebook 01; ``all`` for
every notebook) are run; a fixture notebook is always checked, so the test means something on any checkout.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gclib import reproduce as rp

from notebook_fixtures import good_notebook

CHEAP = ["01_gradient_coding"]


def selected() -> list[str]:
    names = [p.stem for p in rp.notebook_paths()]
    wanted = os.environ.get("GCLIB_REPRO_NOTEBOOKS", ",".join(CHEAP))
    if wanted.strip() == "all":
        return names
    return [n for n in (w.strip() for w in wanted.split(",")) if n in names]


def twice(path: Path, tmp: Path, profiles=None) -> tuple[dict, dict]:
    """Run notebook ``path`` twice (quick profile) into ``tmp/a`` and ``tmp/b``; ``{csv name: bytes}`` of each."""
    out = []
    for run in ("a", "b"):
        r = rp.run_notebook(path, "quick", out_dir=tmp / f"exec_{run}", figures_dir=tmp / run, profiles=profiles)
        assert r.ok, f"{path.stem} failed on run {run}: {r.error}"
        out.append({f.name: f.read_bytes() for f in sorted((tmp / run).glob("*.csv"))})
    return out[0], out[1]


def assert_identical(a: dict, b: dict, stem: str):
    assert a, f"{stem} wrote no CSV"
    assert sorted(a) == sorted(b), f"{stem}: the two runs wrote different CSV files"
    differ = [name for name in a if a[name] != b[name]]
    assert not differ, f"{stem}: CSVs differ between two runs with the same profile: {differ}"


@pytest.mark.notebooks
def test_fixture_notebook_csvs_are_byte_identical(tmp_path):
    nb = good_notebook(tmp_path / "nb" / "01_fixture.ipynb")
    a, b = twice(nb, tmp_path, profiles={"quick": {"01_fixture": {"n": 25}}})
    assert_identical(a, b, nb.stem)
    assert a["01_fixture_fixture.csv"].count(b"\n") == 26  # header + n rows: the profile's n was used


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
