"""What the command line says to a pip user (gclib installed without a clone's notebooks and figures) and on the first
run of a clone: folders of the current directory, not of site-packages; `gclib gallery` and `gclib reproduce --help`
saying that the notebooks are in a clone; a missing papermill as one line of error before any line of progress."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gclib import reproduce as rp
from gclib.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """gclib as a pip install sees itself: no notebooks beside the package (and the working directory elsewhere)."""
    monkeypatch.setattr(rp, "NOTEBOOKS", tmp_path / "site-packages" / "notebooks")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def test_gallery_outside_a_clone_says_it_needs_one(installed, capsys):
    assert main(["gallery"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "installed package" in err[0] and "clone the repository" in err[0]


def test_reproduce_help_of_an_installed_gclib_says_where_the_notebooks_are(installed, capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    assert "they are in a clone of the repository" in out and "Run the notebooks of a clone" in out


def test_trace_of_an_installed_gclib_reads_the_current_folder(installed, capsys):
    (installed / "figures").mkdir()
    png = installed / "figures" / "a.png"
    png.write_bytes(b"\x89PNG not really")
    record = {"manifest": 1, "profile": "full", "notebooks": {"01_x": {"figures": {"a.png": rp.sha256(png)},
                                                                     "started": "2030-01-01T00:00:00Z"}}}
    (installed / "build" / "executed" / "full").mkdir(parents=True)
    (installed / "build" / "executed" / "full" / "manifest.json").write_text(json.dumps(record))
    assert main(["trace", "a", "--json"]) == 0  # by name, in ./figures; the manifest of ./build/executed
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["notebook"] == "01_x" and "site-packages" not in rec["manifest"]
    with pytest.raises(SystemExit):
        main(["trace", "--help"])
    assert str(rp.EXECUTED) not in capsys.readouterr().out


def test_a_missing_papermill_is_one_line_before_any_progress(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "papermill", None)  # import papermill fails as when it is not installed
    code = main(["reproduce", "--profile", "quick", "--only", "10_real_traces", "--figures-dir",
                 str(tmp_path / "f"), "--out-dir", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "papermill" in lines[0] and "pip install 'gclib[notebooks]'" in lines[0]


def test_one_notebook_is_one_notebook(monkeypatch, tmp_path, capsys):
    from gclib import reproduce

    def ran(path, profile, **kw):
        return reproduce.NotebookRun(path.stem, True, 0.1, {}, output=str(tmp_path / "x.ipynb"))

    monkeypatch.setattr(reproduce, "run_notebook", ran)
    monkeypatch.setattr(reproduce, "write_manifest", lambda *a, **k: None)
    assert reproduce.main("quick", only=["10_real_traces"], figures_dir=tmp_path / "f", out_dir=tmp_path / "o") == 0
    assert capsys.readouterr().out.startswith("reproduce: 1 notebook, profile 'quick'\n")
