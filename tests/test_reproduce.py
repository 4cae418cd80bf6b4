"""The papermill driver: profiles, failure reporting, the others still run."""
import json
from pathlib import Path

import nbformat
import pytest

from gclib import reproduce


def _nb(path: Path, body: str):
    nb = nbformat.v4.new_notebook()
    p = nbformat.v4.new_code_cell('profile = "full"\nfigures_dir = "."\nx = 1')
    p.metadata["tags"] = ["parameters"]
    nb.cells = [p, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_malformed_profiles_file(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text("[quick\nx = 1")
    with pytest.raises(ValueError, match="malformed"):
        reproduce.load_profiles(bad)
    bad.write_text("[quick]\nx = 1\n")
    with pytest.raises(ValueError, match="one table per notebook"):
        reproduce.load_profiles(bad)
    with pytest.raises(ValueError, match="not found"):
        reproduce.load_profiles(tmp_path / "missing.toml")


def test_failing_notebook_is_named_with_its_cell_and_others_still_run(tmp_path, monkeypatch, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _nb(nbdir / "01_fails.ipynb", "raise RuntimeError('boom ' + str(x) + '\\n  on two lines')")
    _nb(nbdir / "02_works.ipynb", "from pathlib import Path\nPath(figures_dir, 'ok.txt').write_text(str(x))")
    (nbdir / "profiles.toml").write_text('[quick."02_works"]\nx = 7\n[quick."01_fails"]\nx = 3\n')
    monkeypatch.setattr(reproduce, "NOTEBOOKS", nbdir)
    monkeypatch.setattr(reproduce, "PROFILES", nbdir / "profiles.toml")
    rc = reproduce.main("quick", figures_dir=tmp_path / "figs", out_dir=tmp_path / "out")
    out = capsys.readouterr().out
    assert rc == 1
    assert "01_fails" in out and "FAILED" in out and "cell 1" in out and "RuntimeError: boom 3" in out
    assert "1 passed, 1 failed" in out
    failed = [ln for ln in out.splitlines() if "FAILED" in ln]
    assert len(failed) == 1 and failed[0].endswith("RuntimeError: boom 3 on two lines")  # one line per notebook
    assert (tmp_path / "figs" / "ok.txt").read_text() == "7"  # the profile's parameter reached the notebook


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gclib: error: "), err
    return err[0]


def test_unknown_profile_and_notebook(capsys):
    assert reproduce.main("nope") == 2
    assert "profile must be one of" in capsys.readouterr().err
    assert reproduce.main("quick", only=["99_missing"]) == 2
    assert "unknown notebooks ['99_missing']" in _one_error_line(capsys)


def test_bad_profiles_file_is_one_error_line_before_anything_runs(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _nb(nbdir / "01_works.ipynb", "raise RuntimeError('must not run')")
    (nbdir / "profiles.toml").write_text("[quick\nx = 1")
    assert reproduce.main("quick", notebooks_dir=nbdir, out_dir=tmp_path / "out") == 2
    assert "is malformed" in _one_error_line(capsys)
    (nbdir / "profiles.toml").write_text('[quick."01_wroks"]\nx = 2\n')  # a misspelt notebook
    assert reproduce.main("quick", notebooks_dir=nbdir, out_dir=tmp_path / "out") == 2
    assert "names notebooks that do not exist: ['01_wroks']" in _one_error_line(capsys)
    assert not (tmp_path / "out").exists()  # nothing ran


def test_relative_folders_are_the_callers_not_the_notebooks(tmp_path, monkeypatch):
    """Notebooks run in their own folder; a relative --figures-dir must still land where the caller means."""
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _nb(nbdir / "01_works.ipynb", "from pathlib import Path\nPath(figures_dir, 'ok.txt').write_text(str(x))")
    (nbdir / "profiles.toml").write_text('[quick."01_works"]\nx = 5\n')
    monkeypatch.chdir(tmp_path)
    rc = reproduce.main("quick", figures_dir="figs", out_dir="out", notebooks_dir=nbdir)
    assert rc == 0
    assert (tmp_path / "figs" / "ok.txt").read_text() == "5"
    assert not (nbdir / "figs").exists()
    assert (tmp_path / "out" / "01_works.ipynb").exists()


def test_the_index_runs_after_the_notebooks_it_summarizes(tmp_path):
    for stem in ("02_b", "00_index", "01_a", "10_c"):
        (tmp_path / f"{stem}.ipynb").write_text("{}")
    assert [p.stem for p in reproduce.notebook_paths(None, tmp_path)] == ["01_a", "02_b", "10_c", "00_index"]
    assert [p.stem for p in reproduce.notebook_paths(["00_index", "02_b"], tmp_path)] == ["02_b", "00_index"]


def test_reproduce_without_a_checkout_says_how_to_get_one(monkeypatch, tmp_path, capsys):
    """An installed gclib (no notebooks beside it): one line saying that reproduce needs a clone."""
    from gclib import reproduce

    monkeypatch.setattr(reproduce, "NOTEBOOKS", tmp_path / "site-packages" / "notebooks")
    assert reproduce.main("quick") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gclib: error: gclib reproduce runs the notebooks of a checkout")
    assert "clone the repository and run `make reproduce`" in err
