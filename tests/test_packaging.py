"""Packaging: the version in one place, LICENSE, CITATION.cff, CHANGELOG, version ranges and the lock file."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

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
    assert _pyproject()["project"]["license"] == {"text": "MIT"}


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
