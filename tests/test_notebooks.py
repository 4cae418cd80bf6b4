"""Every notebook runs through papermill in the quick profile and writes its figures with their data (once per
session: the ``quick_runs`` fixture of conftest.py, which other modules read too)."""
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from gclib import claims, reproduce

from notebook_fixtures import validation_cell

NOTEBOOKS = sorted(p for p in reproduce.NOTEBOOKS.glob("[0-9]*.ipynb"))

pytestmark = pytest.mark.notebooks


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_and_writes_figures(path, quick_runs, record_property):
    r, figs = quick_runs(path)
    assert r.ok, f"{path.stem} failed: {r.error}"
    record_property("notebook_seconds", r.seconds)  # the session's summary lists each quick profile's time
    pngs = sorted(figs.glob("*.png"))
    if path.stem == "00_index":  # the index shows the figures of the others and writes none
        assert not pngs
        return
    assert pngs, f"{path.stem} wrote no figure"
    from gclib.studies import gallery as gallery

    known = {f.stem: f.notebook for f in gallery.FIGURES}
    for png in pngs:
        assert known.get(png.stem) == path.stem, f"{png.name}: describe it in gclib/studies/gallery.py"
        assert png.stat().st_size > 5000, f"{png.name} looks empty"
        csv = png.with_suffix(".csv")
        assert csv.exists(), f"{png.name} has no CSV beside it"
        assert len(pd.read_csv(csv)) > 0
        assert png.stem.startswith(path.stem[:2]), f"{png.name}: figure names start with the notebook number"
    table = claims.read(claims.path(path.stem, figs))  # every study writes its claims table, checked
    assert len(table) > 0, f"{path.stem} wrote an empty claims table"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_committed_without_outputs(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert sum("parameters" in t for t in tags) == 1, "one cell tagged 'parameters'"
    src = "\n".join(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "figures_dir" in src and "profile" in src
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "clear outputs before committing"


def test_01_monte_carlo_agrees_with_closed_forms(quick_runs):
    path = reproduce.NOTEBOOKS / "01_gradient_coding.ipynb"
    r, figs = quick_runs(path)
    assert r.ok, r.error
    df = pd.read_csv(figs / "01_completion_time.csv")
    shifted = df[df.model.str.startswith("shifted")]
    # within 4 confidence half-widths (z = 1.96 per half-width)
    z = (shifted.mean_time - shifted.closed_form_time).abs() / (shifted.ci95_time / 1.96)
    assert (z < 4).all(), shifted[z >= 4]
    prof = tomllib.loads((reproduce.NOTEBOOKS / "profiles.toml").read_text())["quick"]["01_gradient_coding"]
    assert set(df.scheme) == {"uncoded", "ignore", "frc", "crc"}
    assert df.value.max() == prof["n"] // 2
    cond = pd.read_csv(figs / "01_crc_conditioning.csv")
    assert (cond.worst_cond >= cond.median_cond).all() and (cond.worst_error < 1e-6).all()
    verdicts = claims.read(claims.path(path.stem, figs)).set_index("id")["verdict"]
    # the exact rows hold, and the claims table's own z-check agrees with the one above
    assert verdicts["T1"] == verdicts["T2"] == claims.HOLDS
    assert (verdicts[[i for i in verdicts.index if i.startswith("T7")]] == claims.HOLDS).all()


def test_bad_parameter_fails_at_once_naming_it(tmp_path):
    path = reproduce.NOTEBOOKS / "01_gradient_coding.ipynb"
    r = reproduce.run_notebook(path, "quick", out_dir=tmp_path, figures_dir=tmp_path / "f",
                               extra={"trials": -5})
    import nbformat

    validation = validation_cell(nbformat.read(path, as_version=4))
    assert not r.ok
    assert "trials" in r.error and "ValueError" in r.error and f"cell {validation} " in r.error
    assert not list((tmp_path / "f").glob("*.png"))
