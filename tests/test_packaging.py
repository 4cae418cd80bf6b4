"""Packaging: the version in one place, LICENSE, CITATION.cff, CHANGELOG, version ranges and the lock file, and the
metadata of the wheel built from the checkout (authors, project URLs, classifiers, the PEP 561 marker)."""
from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

import gclib

ROOT = Path(__file__).resolve().parent.parent
ARXIV = re.compile(r"\b(?:arXiv:?\s*)?([0-9]{4}\.[0-9]{4,5})\b")


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_gclib_version_prints_the_package_version():
    p = subprocess.run([sys.executable, "-m", "gclib", "--version"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"gclib {gclib.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", gclib.__version__)


def test_the_version_has_one_source():
    proj = _pyproject()
    assert "version" not in proj["project"] and "version" in proj["project"]["dynamic"]
    assert proj["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gclib.__version__"}


def test_license_is_mit_as_pyproject_says():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the gclib developers" in text
    project = _pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]


def test_citation_cff_names_the_software_and_the_papers():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert str(cff["version"]) == gclib.__version__ and cff["license"] == "MIT"
    for key in ("message", "title", "authors", "date-released"):
        assert cff[key], key
    refs = cff["references"]
    assert len(refs) >= 6
    for r in refs:
        assert r["title"] and r["authors"] and r["year"] and r["type"]
        assert all(a.get("family-names") for a in r["authors"])
    families = {r["authors"][0]["family-names"] for r in refs}
    assert {"Tandon", "Halbawi", "Ye", "Kadhe", "Ozfatura", "Zhang"} <= families
    # the repository is the one the package metadata names, and the authors are the package's
    assert cff["repository-code"] == _pyproject()["project"]["urls"]["Source"]
    assert [a["name"] for a in cff["authors"]] == [a["name"] for a in _pyproject()["project"]["authors"]]


def test_citation_ids_are_the_ids_the_project_cites():
    """Every arXiv id of CITATION.cff is cited by the docs or the code for the same paper (by its first author)."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    texts = "\n".join(p.read_text() for d in ("docs", "gclib", "notebooks") for p in (ROOT / d).rglob("*")
                      if p.suffix in (".md", ".py", ".ipynb"))
    for r in cff["references"]:
        ids = {m for i in r.get("identifiers", []) for m in ARXIV.findall(str(i["value"]))}
        for i in ids:
            near = [texts[max(0, m.start() - 300): m.end() + 300] for m in re.finditer(re.escape(i), texts)]
            assert near, f"{i} ({r['title']}) is cited nowhere in docs/, gclib/ or notebooks/"
            assert any(r["authors"][0]["family-names"] in n or "GC-MMC" in n for n in near), i


def test_changelog_has_the_current_release():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "Keep a Changelog" in text and "## [Unreleased]" in text
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, flags=re.M)
    assert releases and releases[0][0] == gclib.__version__
    assert not re.search(r"#\d|\bissue\b", text, flags=re.I), "the changelog names no issue"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel of this checkout, built by pip as ``pip install .`` builds it (in an isolated environment with
    the setuptools of pyproject.toml's build-system, from the registry) from a copy of the package's sources, so
    that nothing is written into the checkout."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "gclib", src / "gclib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"),
                        str(src)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"pip wheel failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    [built] = (work / "dist").glob("gclib-*.whl")
    return built


def test_the_wheel_has_authors_urls_classifiers_and_the_typed_marker(wheel):
    project = _pyproject()["project"]
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = f"gclib-{gclib.__version__}.dist-info"
        meta = email.parser.Parser().parsestr(z.read(f"{info}/METADATA").decode())
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    assert meta["Name"] == "gclib" and meta["Version"] == gclib.__version__
    assert meta["Author"] == "the gclib developers" == project["authors"][0]["name"]
    assert meta["License-Expression"] == "MIT" and f"{info}/licenses/LICENSE" in names
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls == project["urls"] and set(urls) >= {"Source", "Documentation", "Changelog", "Issues"}
    assert all(u.startswith("https://github.com/gclib/gclib") for u in urls.values())
    classifiers = meta.get_all("Classifier")
    assert classifiers == project["classifiers"]
    assert "Typing :: Typed" in classifiers and "Development Status :: 3 - Alpha" in classifiers
    # one Python version classifier per supported minor version, the oldest being requires-python's
    minors = sorted(int(c.rsplit(".", 1)[1]) for c in classifiers if re.fullmatch(r"Programming Language :: "
                                                                                 r"Python :: 3\.\d+", c))
    assert meta["Requires-Python"] == project["requires-python"] == f">=3.{minors[0]}"
    assert meta["Keywords"].split(",") == project["keywords"]
    # PEP 561: the marker is package data of gclib, next to every module
    assert "gclib/py.typed" in names and (ROOT / "gclib" / "py.typed").is_file()
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "gclib").rglob("*.py")}
    assert modules <= names, f"modules missing from the wheel: {sorted(modules - names)}"
    assert "gclib = gclib.cli:main" in entry_points


def test_the_readme_opens_with_an_install_and_a_quick_start_that_runs():
    """Right after the two make commands (which the README opens with), it shows `pip install .` and a few lines of
    Python; the lines run as written and print the mean completion time they compute."""
    text = (ROOT / "README.md").read_text()
    head = text[text.index("make test"): text.index("## ")]
    blocks = dict(re.findall(r"```(bash|python)\n(.*?)```", head, flags=re.S))
    assert blocks.get("bash", "").strip() == "pip install ."
    code = blocks["python"]
    assert code.startswith("import gclib\n") and len(code.strip().splitlines()) <= 4
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr
    assert float(p.stdout) > 0
