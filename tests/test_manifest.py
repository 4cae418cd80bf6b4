"""Every `gclib reproduce` run writes manifest.json next to the executed notebooks."""
from __future__ import annotations

import json
import os
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from gclib import reproduce as rp

from notebook_fixtures import failing_notebook, good_notebook, profiles

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    """One `reproduce.main` over two fixture notebooks (one good, one failing) in the quick profile."""
    tmp = tmp_path_factory.mktemp("manifest")
    nb_dir = tmp / "notebooks"
    good_notebook(nb_dir / "01_good.ipynb")
    failing_notebook(nb_dir / "02_bad.ipynb")
    profiles(nb_dir / "profiles.toml", '[quick."01_good"]\nn = 12\n[full."01_good"]\nn = 40\n')
    saved = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "Agg"  # as the Makefile sets it: the driver must still get inline figures
    try:
        code = rp.main("quick", figures_dir=tmp / "figures", out_dir=tmp / "executed", notebooks_dir=nb_dir)
        assert os.environ["MPLBACKEND"] == "Agg"  # restored for the caller
    finally:
        if saved is None:
            del os.environ["MPLBACKEND"]
        else:
            os.environ["MPLBACKEND"] = saved
    manifest = json.loads((tmp / "executed" / rp.MANIFEST).read_text())
    return code, manifest, tmp


@pytest.mark.notebooks
def test_manifest_records_each_notebook(suite_run):
    code, man, tmp = suite_run
    assert code == 1  # one notebook failed
    assert man["manifest"] == 1 and man["profile"] == "quick"
    assert set(man["notebooks"]) == {"01_good", "02_bad"}
    good = man["notebooks"]["01_good"]
    assert good["ok"] is True and good["status"] == "ok" and good["error"] == ""
    assert good["profile"] == "quick" and good["duration_s"] > 0 and good["started"].endswith("Z")
    # effective parameters: the parameters cell's defaults overridden by the profile and the driver
    assert good["parameters"] == {"profile": "quick", "figures_dir": str(tmp / "figures"), "seed": 3, "n": 12,
                                  "scale": 2.5}
    assert good["injected"] == {"n": 12, "profile": "quick", "figures_dir": str(tmp / "figures")}
    assert good["seed"] == 3
    assert Path(good["executed"]) == tmp / "executed" / "01_good.ipynb" and Path(good["executed"]).exists()


@pytest.mark.notebooks
def test_manifest_traces_figures_by_hash(suite_run):
    _, man, tmp = suite_run
    figs = man["notebooks"]["01_good"]["figures"]
    assert set(figs) == {"01_good_fixture.csv", "01_good_fixture.png"}
    for name, digest in figs.items():
        assert digest == rp.sha256(tmp / "figures" / name)
    assert man["notebooks"]["02_bad"]["figures"] == {}


@pytest.mark.notebooks
def test_executed_notebook_holds_the_inline_figure(suite_run):
    import nbformat

    _, man, _ = suite_run
    nb = nbformat.read(man["notebooks"]["01_good"]["executed"], as_version=4)
    assert any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.notebooks
def test_manifest_records_failure(suite_run):
    _, man, _ = suite_run
    bad = man["notebooks"]["02_bad"]
    assert bad["ok"] is False and bad["status"] == "failed"
    assert "RuntimeError" in bad["error"] and "boom in fixture" in bad["error"]


@pytest.mark.notebooks
def test_manifest_records_environment(suite_run):
    _, man, _ = suite_run
    e = man["notebooks"]["01_good"]
    assert e["packages"]["numpy"] == metadata.version("numpy")
    assert e["packages"]["papermill"] == metadata.version("papermill")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert e["git_commit"] == head.stdout.strip() and isinstance(e["git_dirty"], bool)
    else:
        assert e["git_commit"] is None
    assert e["python"].count(".") == 2


def _result(name, ok=True, seconds=1.0, **kw):
    return rp.NotebookRun(name, ok, seconds, {"seed": 1}, **kw)


ENV = {"git": {"commit": "abc", "dirty": False}, "python": "3.11.0", "platform": "x", "packages": {"numpy": "2"}}


def test_write_manifest_keeps_entries_of_notebooks_not_rerun(tmp_path):
    rp.write_manifest(tmp_path, "quick", [_result("01_a"), _result("02_b")], ENV)
    rp.write_manifest(tmp_path, "quick", [_result("02_b", ok=False, error="x")], ENV)
    man = rp.read_manifest(tmp_path)
    assert list(man["notebooks"]) == ["01_a", "02_b"]
    assert man["notebooks"]["01_a"]["ok"] is True and man["notebooks"]["02_b"]["status"] == "failed"
    assert not list(tmp_path.glob("*.tmp"))  # written atomically, nothing left over


def test_write_manifest_starts_afresh_for_another_profile(tmp_path):
    rp.write_manifest(tmp_path, "quick", [_result("01_a")], ENV)
    rp.write_manifest(tmp_path, "full", [_result("02_b")], ENV)
    man = rp.read_manifest(tmp_path)
    assert man["profile"] == "full" and list(man["notebooks"]) == ["02_b"]
    assert man["notebooks"]["02_b"]["seed"] == 1 and man["notebooks"]["02_b"]["git_commit"] == "abc"


def test_read_manifest_of_missing_or_broken_file_is_empty(tmp_path):
    assert rp.read_manifest(tmp_path) == {}
    (tmp_path / rp.MANIFEST).write_text("{not json")
    assert rp.read_manifest(tmp_path) == {}


def test_effective_parameters_merge_defaults_and_injected(tmp_path):
    nb = good_notebook(tmp_path / "01_x.ipynb")
    eff = rp.effective_parameters(nb, {"n": 7})
    assert eff == {"profile": "full", "figures_dir": "../figures", "seed": 3, "n": 7, "scale": 2.5}


def test_written_lists_new_and_changed_files_only(tmp_path):
    (tmp_path / "old.csv").write_text("a\n")
    (tmp_path / "same.csv").write_text("b\n")
    before = rp._snapshot(tmp_path)
    (tmp_path / "old.csv").write_text("a,changed\n")
    (tmp_path / "new.png").write_bytes(b"\x89PNG")
    assert sorted(rp._written(tmp_path, before)) == ["new.png", "old.csv"]


def test_package_versions_cover_pyproject_dependencies():
    v = rp.package_versions()
    for name in ("numpy", "scipy", "sympy", "pandas", "matplotlib", "papermill"):
        assert v[name] == metadata.version(name)
    assert "gclib" in v


def test_written_keeps_the_files_of_the_notebooks_number_only(tmp_path):
    """Two notebooks run side by side write into one folder: each records only the files named by its number."""
    before = rp._snapshot(tmp_path)
    for name in ("01_mine.png", "01_mine.csv", "02_neighbour.png"):
        (tmp_path / name).write_text(name)
    assert sorted(rp._written(tmp_path, before, prefix="01_")) == ["01_mine.csv", "01_mine.png"]
