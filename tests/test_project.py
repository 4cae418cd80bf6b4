"""Project set-up: environment.yml agrees with pyproject.toml; the README's commands exist; the profiles parse."""
import json
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirement(spec: str) -> tuple[str, str]:
    """``"numpy>=1.26,<3"`` or conda's ``"numpy >=1.26,<3"`` -> ``("numpy", ">=1.26,<3")``."""
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", spec.strip())
    return m.group(1).lower(), m.group(2).replace(" ", "")


def test_environment_yml_has_the_runtime_dependencies_of_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = dict(_requirement(d) for d in env["dependencies"] if isinstance(d, str))
    assert conda.pop("pip") == "" and "python" in conda
    python = conda.pop("python")
    runtime = dict(_requirement(d) for d in _pyproject()["project"]["dependencies"])
    assert conda == runtime, "environment.yml and pyproject.toml's dependencies differ"
    pip = [d for d in env["dependencies"] if isinstance(d, dict)][0]["pip"]
    assert pip == ["-e ."], "environment.yml installs gclib alone through pip: no extras for users"
    low = re.search(r">=\s*([\d.]+)", _pyproject()["project"]["requires-python"]).group(1)
    assert python == f">={low}"


def test_environment_dev_yml_installs_the_lock():
    env = yaml.safe_load((ROOT / "environment-dev.yml").read_text())
    names = [_requirement(d)[0] for d in env["dependencies"] if isinstance(d, str)]
    assert sorted(names) == ["pip", "python"]
    pip = [d for d in env["dependencies"] if isinstance(d, dict)][0]["pip"]
    assert pip == ["-r requirements.lock", "-e ."]
    py = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python")][0]
    conda_ver = tuple(int(x) for x in py.split("=")[1].split("."))
    low = re.search(r">=\s*([\d.]+)", _pyproject()["project"]["requires-python"]).group(1)
    assert conda_ver >= tuple(int(x) for x in low.split("."))


def test_all_extra_covers_every_extra():
    extras = _pyproject()["project"]["optional-dependencies"]
    all_ = extras["all"][0]
    listed = set(re.search(r"\[(.*)\]", all_).group(1).split(","))
    assert listed == set(extras) - {"all"}


def test_dependencies_are_ranges_and_the_lock_pins_them():
    """pyproject.toml gives compatible ranges (a lower bound, and an upper one but for the docs theme, which
    numbers releases by date); requirements.lock pins every one of them exactly, within its range."""
    from packaging.requirements import Requirement

    proj = _pyproject()["project"]
    deps = proj["dependencies"] + [d for k, v in proj["optional-dependencies"].items() if k != "all" for d in v]
    reqs = [Requirement(d) for d in deps]
    for r in reqs:
        ops = {s.operator for s in r.specifier}
        assert ">=" in ops and "==" not in ops, r
        assert "<" in ops or r.name == "furo", f"{r} has no upper bound"
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            name, version = line.split("==")
            lock[name.lower().replace("_", "-")] = version.strip()
    assert "gclib" not in lock and "pip" not in lock
    for r in reqs:
        name = r.name.lower().replace("_", "-")
        assert name in lock, f"{name} is not in requirements.lock (run `python tools/lock.py`)"
        assert r.specifier.contains(lock[name], prereleases=True), f"the lock's {name}=={lock[name]} is outside {r}"
    assert "/tmp" not in (ROOT / "requirements.lock").read_text()


def test_make_setup_installs_the_lock():
    make = (ROOT / "Makefile").read_text()
    assert "pip install --quiet -r requirements.lock" in make
    assert "pip install --quiet --no-deps -e ." in make


def test_readme_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    head = text[: text.index("##")] if "##" in text else text
    assert "make reproduce" in head and "make test" in head
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_profiles_have_quick_and_full_for_every_notebook():
    prof = tomllib.loads((ROOT / "notebooks" / "profiles.toml").read_text())
    stems = {p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb")}
    for name in ("quick", "full"):
        assert set(prof[name]) <= stems, f"[{name}] names notebooks that do not exist"
    assert set(prof["quick"]) == set(prof["full"])


def test_readme_gallery_is_in_step_with_gallery_and_figures():
    from gclib.studies import gallery as gallery

    text = (ROOT / "README.md").read_text()
    a = text.index("-->", text.index("<!-- gallery:start")) + 3
    b = text.index("<!-- gallery:end -->")
    expected = gallery.markdown("figures", ROOT / "figures").strip()
    assert text[a:b].strip() == expected, "run `gclib gallery` and paste it"
    not_listed, not_made = gallery.missing(ROOT / "figures")
    assert not not_listed, f"figures without a gallery entry: {not_listed}"
    assert not not_made, f"gallery entries whose figure is not in figures/ (run make reproduce): {not_made}"
    for f in gallery.FIGURES:
        assert (ROOT / "figures" / f"{f.stem}.csv").exists(), f"{f.stem} has no CSV"
        assert f.notebook in gallery.NOTEBOOKS and (ROOT / "notebooks" / f"{f.notebook}.ipynb").exists()


def test_papers_page_reproduction_tables_are_in_step_with_the_claims():
    from gclib.studies import gallery as gallery

    text = (ROOT / "docs" / "papers.md").read_text()
    a = text.index("<!-- reproduction:start -->") + len("<!-- reproduction:start -->")
    b = text.index("<!-- reproduction:end -->")
    assert text[a:b].strip() == gallery.reproduction_page(ROOT / "figures").strip(), \
        "run `gclib gallery --reproduction` and paste it into docs/papers.md"


def test_gallery_status_names_what_is_missing(tmp_path):
    from gclib.studies import gallery as gallery

    (tmp_path / f"{gallery.FIGURES[0].stem}.png").write_bytes(b"")
    (tmp_path / "99_stray.png").write_bytes(b"")
    text = gallery.status(tmp_path)
    assert text.startswith(f"{len(gallery.FIGURES)} figures in the gallery; 1 of them found in `{tmp_path}`.")
    assert f"Not produced yet (run `make reproduce`): {gallery.FIGURES[1].stem}, " in text
    assert gallery.FIGURES[0].stem not in text.split("Not produced yet")[1]
    assert text.rstrip().endswith("Figures without a gallery entry: 99_stray.")


def _what_is_where() -> list[str]:
    """The paths of the README's "What is where" block (nesting by indentation, two spaces a level)."""
    text = (ROOT / "README.md").read_text()
    block = text[text.index("## What is where"):]
    block = block[block.index("```") + 3:]
    block = block[block.index("\n") + 1: block.index("```")]
    paths, stack = [], []
    for line in block.splitlines():
        name = line.split()[0] if line.strip() else ""
        level = (len(line) - len(line.lstrip())) // 2
        if not name or level > len(stack) or not re.fullmatch(r"[\w./-]+", name):
            continue  # a continuation line of a description
        stack[level:] = [name]
        paths.append("".join(stack))
    return paths


def test_readme_what_is_where_matches_the_tree():
    paths = _what_is_where()
    assert "gclib/codes/base.py" in paths and "tools/nb.py" in paths  # the parser sees the nesting
    assert not [p for p in paths if not (ROOT / p).exists()], "README names paths that do not exist"
    modules = {str(p.relative_to(ROOT)) for d in ("gclib", "gclib/codes") for p in (ROOT / d).glob("*.py")
               if p.name not in ("__init__.py", "__main__.py")}
    packages = {str(p.parent.relative_to(ROOT)) + "/" for p in (ROOT / "gclib").glob("*/__init__.py")}
    assert not sorted((modules | packages) - set(paths)), "modules of gclib missing from the README's What is where"


def test_readme_states_the_duration_of_the_last_full_run():
    """The README's timing of `make reproduce` is rendered from figures/manifest.json, never typed by hand."""
    from gclib import reproduce

    text = (ROOT / "README.md").read_text()
    a = text.index("<!-- duration -->") + len("<!-- duration -->")
    b = text.index("<!-- /duration -->")
    expected = reproduce.duration_text(ROOT / "figures" / "manifest.json")
    assert text[a:b] == expected, f"paste into the README: {expected}"


def _between(text: str, mark: str) -> str:
    a = text.index(f"<!-- {mark} -->") + len(f"<!-- {mark} -->")
    return text[a:text.index(f"<!-- /{mark} -->")]


def test_readme_states_the_duration_of_the_last_full_test_run():
    """The README's timing of `make test` is rendered from tests/durations.json (kept by tools/durations.py from
    the session's record of a full run), never typed by hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("durations", ROOT / "tools" / "durations.py")
    durations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(durations)
    saved = ROOT / "tests" / "durations.json"
    expected = durations.text(json.loads(saved.read_text()) if saved.exists() else None)
    assert _between((ROOT / "README.md").read_text(), "test-duration") == expected, (
        "run: python tools/durations.py")
    record = {"wall_seconds": 301.4, "workers": 2, "tests": 1500, "load_average_1min": {"start": 2.0, "end": 3.0},
              "groups": {"notebooks": 100.0, "MPI runs": 150.0, "docs site": 0.0, "the rest": 200.4},
              "notebooks_quick": {"01_a": 6.0, "09_b": 12.4}}
    text = durations.text(record)
    assert text.startswith("The last full `make test` took 5 min 01 s for its 1,500 tests on 2 workers")
    assert "notebooks 100 s, MPI runs 150 s, the rest 200 s)" in text and "docs site" not in text
    assert "the 2 notebooks took 18 s in all, the longest `09_b` 12 s" in text


def test_readme_states_the_simulators_speed_from_the_saved_benchmark():
    """The README's performance paragraph is rendered from benchmarks/scale.json (python -m benchmarks.bench_scale
    --save), never typed by hand."""
    from benchmarks import bench_scale

    data = json.loads((ROOT / "benchmarks" / "scale.json").read_text())
    assert _between((ROOT / "README.md").read_text(), "performance") == bench_scale.performance_text(data), (
        "run: python -m benchmarks.bench_scale --render")
    assert set(bench_scale.CASES) <= set(data["targets"])
