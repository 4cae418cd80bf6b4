"""`gclib trace` finds the run that made a file by its content's hash; the committed manifest records the committed
figures; only the full profile writes into figures/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gclib import cli
from gclib import reproduce as rp

ENV = {"git": {"commit": "deadbeef", "dirty": False}, "python": "3.11.7", "platform": "x",
       "packages": {"gclib": "9.9"}}


def _record(tmp_path, profile, content, name="07_demo.png", started="2030-01-02T03:04:05Z", seed=4):
    """A manifest under ``tmp_path/executed/PROFILE`` saying a run wrote ``content`` as ``name``."""
    figs = tmp_path / f"figures-{profile}"
    figs.mkdir(exist_ok=True)
    (figs / name).write_bytes(content)
    r = rp.NotebookRun("07_demo", True, 2.5, {"seed": seed, "profile": profile}, effective={"seed": seed, "n": 9},
                     started=started, figures={name: rp.sha256(figs / name)})
    rp.write_manifest(tmp_path / "executed" / profile, profile, [r], ENV, figs)
    return figs / name


def _trace(capsys, *argv):
    rc = cli.main(["trace", *map(str, argv)])
    return rc, capsys.readouterr().out


def test_trace_matches_by_content_not_by_name(tmp_path, capsys):
    full = _record(tmp_path, "full", b"full bytes", started="2030-01-01T00:00:00Z", seed=1)
    _record(tmp_path, "quick", b"quick bytes", started="2030-02-01T00:00:00Z", seed=2)  # same name, newer
    exe = tmp_path / "executed"
    rc, out = _trace(capsys, full, "--executed", exe, "--figures-dir", tmp_path / "none")
    assert rc == 0
    assert "profile full" in out and "profile quick" not in out and "seed 1" in out and "gclib 9.9" in out
    assert "git commit deadbeef" in out and '"n": 9' in out
    renamed = tmp_path / "elsewhere.png"
    renamed.write_bytes(b"full bytes")
    rc, out = _trace(capsys, renamed, "--executed", exe, "--figures-dir", tmp_path / "none")
    assert rc == 0 and "(written as 07_demo.png)" in out and "profile full" in out


@pytest.mark.parametrize("json_mode", [False, True])
def test_a_file_of_no_recorded_run_exits_1_in_text_and_json(tmp_path, capsys, json_mode):
    _record(tmp_path, "quick", b"recorded")
    other = tmp_path / "07_demo.png"  # the recorded name, other bytes
    other.write_bytes(b"changed since")
    rc, out = _trace(capsys, other, "--executed", tmp_path / "executed", "--figures-dir", tmp_path / "none",
                     *(["--json"] if json_mode else []))
    assert rc == 1
    if json_mode:
        assert json.loads(out) == []
    else:
        assert "matches no recorded run" in out and "sha256:" in out


def test_trace_json_lists_the_runs(tmp_path, capsys):
    f = _record(tmp_path, "quick", b"bytes")
    rc, out = _trace(capsys, f, "--executed", tmp_path / "executed", "--figures-dir", tmp_path / "none", "--json")
    recs = json.loads(out)
    assert rc == 0 and len(recs) == 1
    assert recs[0]["sha256"] == rp.sha256(f) and recs[0]["profile"] == "quick" and recs[0]["seed"] == 4


def test_a_manifest_nested_too_deeply_is_one_line_not_a_recursion_error(tmp_path, capsys):
    f = _record(tmp_path, "quick", b"bytes")
    (tmp_path / "executed" / "quick" / rp.MANIFEST).write_text("[" * 100_000 + "]" * 100_000)
    rc = cli.main(["trace", f.stem, "--executed", str(tmp_path / "executed"), "--figures-dir", str(f.parent)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "is nested too deeply to be a manifest" in err, err


def test_a_missing_figure_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["trace", str(tmp_path / "nope.png"), "--executed", str(tmp_path)]) == 2
    assert "is not a file" in capsys.readouterr().err


def test_a_name_is_looked_up_in_the_figures_folder(tmp_path, capsys):
    f = _record(tmp_path, "quick", b"bytes")
    rc, out = _trace(capsys, "07_demo", "--executed", tmp_path / "executed", "--figures-dir", f.parent)
    assert rc == 0 and "notebook 07_demo" in out


def test_the_committed_figures_are_traced_to_the_full_profile(capsys, tmp_path):
    """On a fresh clone (no build/): every committed figure and CSV is in figures/manifest.json, full profile."""
    man = rp.checked_manifest(rp.FIGURES / rp.MANIFEST)
    assert man["profile"] == "full"
    text = (rp.FIGURES / rp.MANIFEST).read_text()
    assert str(rp.ROOT) not in text  # paths relative to the repository
    committed = sorted(p.name for p in rp.FIGURES.iterdir() if p.suffix in (".png", ".csv"))
    recorded = {name: e["sha256"] for name, e in man["files"].items()}
    assert sorted(recorded) == committed
    stale = [n for n in committed if rp.sha256(rp.FIGURES / n) != recorded[n]]
    assert not stale, f"figures changed since figures/manifest.json was written (run make reproduce): {stale}"
    rc, out = _trace(capsys, rp.FIGURES / "04_fig1.png", "--executed", tmp_path)  # no local runs
    assert rc == 0 and "notebook 04_gc_mmc, profile full" in out


def test_committed_manifest_is_relative_and_kept_for_notebooks_not_rerun(tmp_path):
    figs = tmp_path / "figures"
    figs.mkdir()
    (figs / "01_a.png").write_bytes(b"a")
    r = rp.NotebookRun("01_a", True, 1.0, {"figures_dir": str(figs)}, source=str(tmp_path / "notebooks" / "01_a.ipynb"),
                     figures={"01_a.png": rp.sha256(figs / "01_a.png")})
    rp.write_manifest(figs, "full", [r], ENV, figs, relative_to=tmp_path)
    rp.write_manifest(figs, "full", [rp.NotebookRun("02_b", True, 1.0, {})], ENV, figs, relative_to=tmp_path)
    man = rp.read_manifest(figs)
    assert man["figures_dir"] == "figures" and set(man["notebooks"]) == {"01_a", "02_b"}
    e = man["notebooks"]["01_a"]
    assert e["source"] == str(Path("notebooks", "01_a.ipynb")) and e["injected"]["figures_dir"] == "figures"
    assert man["files"] == {"01_a.png": {"sha256": rp.sha256(figs / "01_a.png"), "notebook": "01_a"}}
    assert e["gclib_version"] == "9.9"


def test_only_the_full_profile_writes_into_figures(capsys):
    assert rp.default_figures_dir("full") == rp.FIGURES
    assert rp.default_figures_dir("quick") == rp.ROOT / "build" / "figures" / "quick"
    with pytest.raises(ValueError, match="must not be the committed figures folder for profile 'quick'"):
        rp.check_figures_dir("quick", rp.FIGURES)
    assert rp.main("quick", figures_dir=rp.FIGURES) == 2
    assert "must not be the committed figures folder" in capsys.readouterr().err
