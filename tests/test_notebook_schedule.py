"""Which notebooks ``gclib reproduce --jobs N`` runs side by side, which alone and in what order; a run two at a
time; and the repository's ``[alone]`` table against the notebooks that start MPI jobs."""
import ast
import json
import time
import tomllib
from pathlib import Path

import pytest

from gclib import notebook_schedule as ns
from gclib import reproduce

from test_reproduce import _nb

P = [Path(f"{s}.ipynb") for s in ("01_a", "02_b", "03_mpi", "04_c", "05_mpi", "00_index")]


def test_the_plan_runs_the_shared_ones_longest_first_then_each_alone_one_then_the_index():
    stages = ns.plan(P, {"03_mpi", "05_mpi"}, previous={"01_a": 5.0, "02_b": 30.0})
    assert [[p.stem for p in s.paths] for s in stages] == [["04_c", "02_b", "01_a"], ["03_mpi"], ["05_mpi"],
                                                           ["00_index"]]
    assert [s.side_by_side for s in stages] == [True, False, False, False]
    # without a previous run, by name; without notebooks to share, no shared stage
    assert [p.stem for p in ns.plan(P, set())[0].paths] == ["01_a", "02_b", "03_mpi", "04_c", "05_mpi"]
    assert [s.paths for s in ns.plan(P[2:3], {"03_mpi"})] == [(P[2],)]


def test_durations_come_from_a_manifest_of_the_same_profile_only():
    man = {"profile": "quick", "notebooks": {"01_a": {"duration_s": 2.5}, "02_b": {}, "bad": 3}}
    assert ns.durations(man, "quick") == {"01_a": 2.5, "02_b": 0.0}
    assert ns.durations(man, "full") == {} and ns.durations({}, "quick") == {}


@pytest.mark.parametrize("table, match", [
    ({"alone": 3}, r"\[alone\] must be a table"),
    ({"alone": {"quick": "01_a"}}, "alone.quick must be a list of notebook names"),
    ({"alone": {"qiuck": ["01_a"]}}, "alone.qiuck names a profile that does not exist"),
    ({"alone": {"quick": ["01_a", "09_x"]}}, r"names notebooks that do not exist: \['09_x'\]"),
])
def test_a_bad_alone_table_is_refused_naming_the_file_and_what_is_wrong(table, match):
    with pytest.raises(ValueError, match=match) as e:
        ns.alone_table(table, "nb/profiles.toml", {"quick": {}}, {"01_a"})
    assert "nb/profiles.toml" in str(e.value)
    assert ns.alone_table({"alone": {"quick": ["01_a"]}}, "p", {"quick": {}}, {"01_a"}) == {"quick": {"01_a"}}


def test_two_at_a_time_the_shared_notebooks_overlap_the_alone_one_does_not_and_each_keeps_its_own_files(
        tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    body = ("import time, json\nfrom pathlib import Path\nt0 = time.time()\ntime.sleep(1.5)\n"
            "Path(figures_dir, f'{NAME}_span.json').write_text(json.dumps([t0, time.time()]))")
    for name in ("01", "02", "03"):
        _nb(nbdir / f"{name}_nb.ipynb", f"NAME = '{name}'\n" + body)
    (nbdir / "profiles.toml").write_text('[alone]\nquick = ["03_nb"]\n[quick."01_nb"]\n')
    figs = tmp_path / "figs"
    assert reproduce.main("quick", notebooks_dir=nbdir, figures_dir=figs, out_dir=tmp_path / "out", jobs=2) == 0
    out = capsys.readouterr().out
    assert "2 at a time (03_nb alone, the index last)" in out and "3 passed, 0 failed" in out
    span = {n: json.loads((figs / f"{n}_span.json").read_text()) for n in ("01", "02", "03")}
    assert span["01"][0] < span["02"][1] and span["02"][0] < span["01"][1]  # side by side
    assert span["03"][0] >= max(span["01"][1], span["02"][1])  # alone, after both
    man = json.loads((tmp_path / "out" / "manifest.json").read_text())
    for n in ("01", "02", "03"):  # each notebook's record names its own file, not its neighbour's
        assert list(man["notebooks"][f"{n}_nb"]["figures"]) == [f"{n}_span.json"]


def test_jobs_below_one_is_refused_before_anything_runs(tmp_path, capsys):
    assert reproduce.main("quick", only=["00_index"], out_dir=tmp_path / "out", jobs=0) == 2
    assert "jobs must be" in capsys.readouterr().err and not (tmp_path / "out").exists()


def _starts_mpi(stem: str) -> bool:
    """Whether the study a notebook imports reaches gclib.runtime (the notebooks that can start MPI jobs)."""
    nb = json.loads((reproduce.NOTEBOOKS / f"{stem}.ipynb").read_text())
    src = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    studies = set()
    code = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gclib.studies."):
            studies.add(node.module.split(".")[2])
    root = reproduce.ROOT / "gclib" / "studies"
    texts = [src] + [f.read_text() for s in studies for f in (root / s).glob("*.py")]
    return any("gclib.runtime" in t or "from gclib import runtime" in t for t in texts)


def test_the_notebooks_that_start_mpi_jobs_run_alone():
    data = tomllib.loads(reproduce.PROFILES.read_text())
    stems = [p.stem for p in reproduce.notebook_paths()]
    mpi = {s for s in stems if _starts_mpi(s)}
    assert {"07_mpi_runs", "15_your_model"} <= mpi  # the scan finds what it must
    assert mpi <= set(data["alone"]["full"])
    for stem in mpi - set(data["alone"]["quick"]):  # left to share the machine in the quick profile: no MPI job
        quick = data["quick"][stem]
        assert quick.get("mpi_iterations", 0) == 0 and quick.get("live_workers", 0) == 0, stem


def test_the_wall_time_is_the_runs_span_plus_what_ran_later_on_its_own():
    run = {"started": "2026-01-01T00:00:00Z", "jobs": 2}
    entries = {"01_a": {"started": "2026-01-01T00:00:01Z", "duration_s": 100.0, "run": run},
               "02_b": {"started": "2026-01-01T00:00:01Z", "duration_s": 60.0, "run": run},
               "03_c": {"started": "2026-01-01T00:01:01Z", "duration_s": 50.0, "run": run},
               "04_d": {"started": "2026-01-02T00:00:00Z", "duration_s": 7.0,
                        "run": {"started": "2026-01-02T00:00:00Z", "jobs": 1}},
               "05_old": {"started": "2025-01-01T00:00:00Z", "duration_s": 3.0}}
    assert ns.wall_seconds(entries) == (111.0 + 7.0 + 3.0, 2)  # 02 and 03 one after the other beside 01
    assert ns.wall_seconds({"05_old": entries["05_old"]}) == (3.0, 1)
