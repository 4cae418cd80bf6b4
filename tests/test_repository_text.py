"""The repository speaks of itself alone: no tracked file names a folder outside it, an issue number or a
working branch."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Written in pieces so that this file does not match its own patterns.
OUTSIDE = re.compile("shared" + r"/|/work" + r"/|/tmp/" + "pkg-")
ISSUE = re.compile(r"\b(?:issue|pull request|PR)[ -]?#?\s?[0-9]+\b|(?<![\w/])#[0-9]{1,4}\b(?![0-9a-fA-F])",
                   re.IGNORECASE)
BRANCH = re.compile(r"\b(?:issue|review|work)-(?:[0-9]+|[a-z])\b")


def tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("git is not available here to list the tracked files")
    files = []
    for name in out.decode().split("\0"):
        p = ROOT / name
        if name and p.is_file():
            data = p.read_bytes()
            if b"\0" not in data[:8192]:  # text files only (figures are PNG)
                files.append(p)
    return files


def offending_lines(pattern: re.Pattern, files: list[Path]) -> list[str]:
    hits = []
    for p in files:
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:120]}")
    return hits


def test_patterns_catch_what_they_are_for():
    assert OUTSIDE.search("see " + "shared" + "/reference/tandon2017.md")
    number = "7"  # the samples are built so that this file does not name an issue itself
    assert ISSUE.search("fixed in issue " + number) and ISSUE.search("see #" + number)
    assert ISSUE.search("Issue #" + number)
    assert not ISSUE.search("color #1f77b4") and not ISSUE.search("cell [#]") and not ISSUE.search("a#1")
    assert BRANCH.search("merged from issue-" + number) and BRANCH.search("review" + "-a")
    assert not BRANCH.search("a work-stealing pool")


def test_no_tracked_file_names_a_folder_outside_the_repository():
    assert not offending_lines(OUTSIDE, tracked_text_files())


def test_no_tracked_file_names_an_issue_number_or_a_working_branch():
    files = tracked_text_files()
    assert not offending_lines(ISSUE, files)
    assert not offending_lines(BRANCH, files)
