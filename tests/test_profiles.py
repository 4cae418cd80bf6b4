"""Notebooks honour ``profile`` by themselves (``gclib.studies.params.notebook`` applies ``profiles.toml``), papermill's
injected values win over the profile, and no profile but ``full`` writes into the committed ``figures/``."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from gclib.studies import params as params
from gclib import reproduce as rp

from notebook_fixtures import write_notebook

QUICK = rp.load_profiles()["quick"]
NOTEBOOKS = sorted(rp.NOTEBOOKS.glob("[0-9]*.ipynb"))


def _cells(path: Path):
    nb = nbformat.read(path, as_version=4)
    i = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    return nb.cells[i].source, nb.cells[i + 1].source


def _defaults(path: Path) -> dict:
    ns: dict = {}
    exec(compile(_cells(path)[0], str(path), "exec"), {}, ns)
    return ns


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_parameters_cell_holds_the_full_profile(path):
    """``profile = "full"`` changes nothing: the full table only repeats values of the parameters cell."""
    defaults = _defaults(path)
    full = rp.load_profiles()["full"].get(path.stem, {})
    assert defaults["profile"] == "full" and defaults["figures_dir"] == "../figures"
    differ = {k: (defaults.get(k), v) for k, v in full.items() if defaults.get(k) != v}
    assert not differ, f"{path.name}: the parameters cell and [full] differ (cell, profile): {differ}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_profile_quick_by_hand_takes_the_quick_values_and_leaves_figures_alone(path, monkeypatch):
    monkeypatch.chdir(rp.NOTEBOOKS)  # where Jupyter runs the notebook
    ns = {**_defaults(path), "profile": "quick"}
    params.notebook(path.stem, ns)
    for k, v in QUICK.get(path.stem, {}).items():
        assert ns[k] == v, k
    assert ns["figures_dir"] == str(Path("..", "build", "figures", "quick"))


def test_from_another_folder_the_figures_stay_in_the_repository(monkeypatch, tmp_path):
    """papermill from the repository's root (or anywhere): ``../figures`` is the notebook folder's, not the
    working directory's, so nothing is written beside the checkout."""
    for cwd in (rp.ROOT, tmp_path):
        monkeypatch.chdir(cwd)
        ns = {**_defaults(rp.NOTEBOOKS / "04_gc_mmc.ipynb"), "profile": "quick"}
        params.notebook("04_gc_mmc", ns)
        assert ns["figures_dir"] == str(rp.ROOT / "build" / "figures" / "quick")
        full = _defaults(rp.NOTEBOOKS / "04_gc_mmc.ipynb")
        params.notebook("04_gc_mmc", full)
        assert full["figures_dir"] == str(rp.FIGURES)


def test_without_a_notebook_folder_a_path_out_of_the_working_directory_is_refused(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(params, "notebook_folder", lambda: None)
    with pytest.raises(ValueError, match="figures_dir = '../figures' is relative to the notebook's folder"):
        params.notebook("00_index", {"profile": "quick", "figures_dir": "../figures"})
    ns = {"profile": "quick", "figures_dir": "out/figures"}  # inside the working directory: kept
    params.notebook("00_index", ns)
    assert ns["figures_dir"] == str(Path("out", "build", "figures", "quick"))


def test_a_knob_edited_by_hand_wins_over_the_profile_and_is_said(monkeypatch, capsys):
    monkeypatch.chdir(rp.NOTEBOOKS)
    ns = {**_defaults(rp.NOTEBOOKS / "04_gc_mmc.ipynb"), "profile": "quick", "trials": 300}
    params.notebook("04_gc_mmc", ns)
    assert ns["trials"] == 300 and ns["sweep_trials"] == QUICK["04_gc_mmc"]["sweep_trials"]
    out = capsys.readouterr().out
    assert "KEPT YOUR VALUES" in out and f"trials = 300 (the profile has {QUICK['04_gc_mmc']['trials']})" in out
    assert params.committed_defaults("04_gc_mmc")["trials"] == _defaults(rp.NOTEBOOKS / "04_gc_mmc.ipynb")["trials"]
    assert params.committed_defaults("no_such_notebook") is None


def test_papermills_injected_values_win_over_the_profile():
    ns = {**_defaults(rp.NOTEBOOKS / "04_gc_mmc.ipynb"), "profile": "quick", "trials": 7, "figures_dir": "/x/f",
          "In": ["", "profile = 'full'", "# Parameters\nprofile = 'quick'\ntrials = 7\nfigures_dir = '/x/f'\n",
                 "notebook('04_gc_mmc', globals())"]}
    params.notebook("04_gc_mmc", ns)
    assert ns["trials"] == 7 and ns["figures_dir"] == "/x/f"  # injected: kept
    assert ns["sweep_trials"] == QUICK["04_gc_mmc"]["sweep_trials"]  # not injected: the profile's


def test_full_profile_changes_nothing_and_an_unknown_profile_is_refused(monkeypatch):
    monkeypatch.chdir(rp.NOTEBOOKS)
    defaults = _defaults(rp.NOTEBOOKS / "04_gc_mmc.ipynb")
    ns = dict(defaults)
    params.notebook("04_gc_mmc", ns)
    assert ns == defaults
    with pytest.raises(ValueError, match=r"parameter profile must be one of 'full', 'quick', got 'quik'"):
        params.notebook("04_gc_mmc", {**defaults, "profile": "quik"})


def test_an_injected_committed_figures_folder_is_refused_for_other_profiles():
    ns = {**_defaults(rp.NOTEBOOKS / "00_index.ipynb"), "profile": "quick", "figures_dir": str(rp.FIGURES),
          "In": ["", "# Parameters\nprofile = 'quick'\nfigures_dir = 'x'\n", "notebook()"]}
    with pytest.raises(ValueError, match="figures_dir must not be the committed figures folder"):
        params.notebook("00_index", ns)
    ns["profile"] = "full"
    params.notebook("00_index", ns)  # the full profile writes there


def test_a_figures_folder_of_another_name_is_kept(monkeypatch, tmp_path):
    monkeypatch.chdir(rp.NOTEBOOKS)
    ns = {"profile": "quick", "figures_dir": str(tmp_path / "mine")}
    params.notebook("00_index", ns)
    assert ns["figures_dir"] == str(tmp_path / "mine")


def test_the_profiles_file_beside_the_notebook_is_read(monkeypatch, tmp_path):
    (tmp_path / "profiles.toml").write_text('[full]\n[tiny."00_index"]\n')
    monkeypatch.chdir(tmp_path)
    ns = {"profile": "tiny", "figures_dir": "../figures"}
    params.notebook("00_index", ns)
    assert ns["figures_dir"] == str(Path("..", "build", "figures", "tiny"))


@pytest.mark.notebooks
def test_a_notebook_run_by_papermill_with_only_the_profile_takes_the_rest_from_profiles_toml(tmp_path):
    """``papermill -p profile quick``: the profile fills in what was not injected; ``-p trials 9`` wins."""
    import papermill as pm

    src, check_cell = _cells(rp.NOTEBOOKS / "04_gc_mmc.ipynb")
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    (nb_dir / "profiles.toml").write_text((rp.NOTEBOOKS / "profiles.toml").read_text())
    dump = "import json\nopen('seen.json', 'w').write(json.dumps(dict(trials=trials, " \
           "sweep_trials=sweep_trials, figures_dir=figures_dir)))"
    nb = write_notebook(nb_dir / "04_gc_mmc.ipynb", [("parameters", src), ("code", check_cell), ("code", dump)])
    pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), parameters={"profile": "quick", "trials": 9},
                        cwd=str(nb_dir), progress_bar=False, kernel_name="python3", log_output=False)
    seen = json.loads((nb_dir / "seen.json").read_text())
    assert seen == {"trials": 9, "sweep_trials": QUICK["04_gc_mmc"]["sweep_trials"],
                    "figures_dir": str(Path("..", "build", "figures", "quick"))}


@pytest.mark.notebooks
def test_papermill_from_the_repository_root_writes_nothing_outside_it(tmp_path):
    """The repository's own notebook, run by papermill from the repository's root (the cwd a user types
    ``papermill notebooks/...`` in), writes its figures into ``build/figures/quick`` of the repository."""
    import papermill as pm

    src, check_cell = _cells(rp.NOTEBOOKS / "00_index.ipynb")
    write = ("from pathlib import Path\nPath(figures_dir).mkdir(parents=True, exist_ok=True)\n"
             "(Path(figures_dir) / 'papermill_root_probe.txt').write_text(str(Path(figures_dir).resolve()))")
    nb = write_notebook(tmp_path / "probe.ipynb", [("parameters", src), ("code", check_cell), ("code", write)])
    outside = rp.ROOT.parent / "build"
    existed = outside.exists()
    pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), parameters={"profile": "quick"}, cwd=str(rp.ROOT),
                        progress_bar=False, kernel_name="python3", log_output=False)
    probe = rp.ROOT / "build" / "figures" / "quick" / "papermill_root_probe.txt"
    try:
        assert probe.read_text() == str(probe.parent.resolve())
        assert outside.exists() == existed  # nothing beside the checkout
    finally:
        probe.unlink(missing_ok=True)
