"""What the notebooks say is computed: no measured number in hand-written prose, and thin code cells.

Markdown cells explain the setting and the method. A number in them is allowed only where it is marked as
something other than a measurement:

* a setting or formula: inside a code span (`` `n = 40` ``) or LaTeX math (``$s = n/4$``);
* the paper's own number: in a parenthesis or a blockquote that starts with ``Paper:`` (``(Paper: -23% on
  EC2)``, ``> Paper: "32% less running time than uncoded"``);
* a reference: a heading's section number, ``Fig. 1``, ``eq. 5``, ``Table I``, ``Example 1``, ``Algorithm 2``,
  ``section III-D``, a year, an arXiv id, ``notebook 04``, a link target.

Every conclusion that cites a measured number is rendered from the data in a code cell. The code cells of
the study notebooks (every one but 00_index; the parameters cell excepted) hold at most ``CODE_LINES_PER_NOTEBOOK`` non-blank lines each on average.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
STUDIES = [p for p in NOTEBOOKS if not p.stem.startswith("00")]
#: Budget of non-blank, non-parameter code lines per study notebook, on average over them all.
CODE_LINES_PER_NOTEBOOK = 45
CODE_LINES = CODE_LINES_PER_NOTEBOOK * len(STUDIES)

_REFERENCE = re.compile(
    r"\b(?:Figs?\.|Figures?|eqs?\.|Eqs?\.|equations?|Tables?|Algorithms?|Alg\.|Examples?|Theorems?|Lemmas?|"
    r"Corollary|Remark|Definition|Proposition|Sections?|section|Sec\.|notebooks?|Step)\s*"
    r"(?:\(?[0-9IVX]+(?:[.-][0-9A-Z]+)*\)?)(?:\s*(?:,|and|to|-)\s*\(?[0-9IVX]+(?:[.-][0-9A-Z]+)*\)?)*")
_MARKED = [
    re.compile(r"`[^`]*`"),                                  # code span: settings, identifiers
    re.compile(r"\$\$.*?\$\$", re.S),                        # display math
    re.compile(r"\$[^$]*\$"),                                # inline math
    re.compile(r"\((?:Paper|paper):[^)]*\)"),                # the paper's own number, inline
    re.compile(r"^>\s*(?:\*\*)?Paper:.*$", re.M),            # ... or as a blockquote line
    re.compile(r"\]\([^)]*\)"),                              # link targets
    re.compile(r"<[^>]+>"),                                  # HTML tags
    re.compile(r"^#{1,6}\s+[0-9]+(?:\.[0-9]+)*\.?", re.M),   # a heading's section number
    re.compile(r"\b(?:19|20)[0-9]{2}[a-z]?\b"),              # years of citations
    re.compile(r"\b(?:arXiv:?\s*)?[0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?\b"),  # arXiv ids
    _REFERENCE,
]
_NUMBER = re.compile(r"(?<![\w.-])[-+]?[0-9]+(?:[.,][0-9]+)*(?:[eE][-+]?[0-9]+)?%?(?![\w])")


def prose_numbers(text: str) -> list[str]:
    """The numbers of a markdown cell that are not marked as settings, the paper's numbers or references."""
    for pattern in _MARKED:
        text = pattern.sub(" ", text)
    return _NUMBER.findall(text)


def test_the_lint_catches_measured_numbers_and_passes_marked_ones():
    assert prose_numbers("CRC takes 0.676 at s = 1, 25% more than uncoded") == ["0.676", "1", "25%"]
    assert prose_numbers("14 of the 20 triples decode") == ["14", "20"]
    assert prose_numbers("GC-MMC-1 and GC-MMC-2 against -25% and a 3-fold gain") == ["-25%", "3"]
    assert prose_numbers("with `n = 40`, $s = n/4$ and $$\\kappa = 10^8$$") == []
    assert prose_numbers("Fig. 1 and eq. 5 of Ozfatura et al. (2019, arXiv 1903.01974); notebook 04") == []
    assert prose_numbers("Figs. 2 and 3, Table I, section III-D, Example 1, Algorithm 2") == []
    assert prose_numbers("(Paper: 23% less time than Tandon et al.) and\n> Paper: \"32% less\"") == []
    assert prose_numbers("## 3. Conditioning\nSee [the figure](../figures/01_x.png); float64 and l1 norms") == []


def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_cells_state_no_measured_number(path):
    found = [(i, prose_numbers(c.source)) for i, c in enumerate(_cells(path)) if c.cell_type == "markdown"]
    found = [(i, nums) for i, nums in found if nums]
    assert not found, (f"{path.name}: numbers in markdown cells {found}; render measured numbers from the data in "
                       f"a code cell, put settings in `code` or $math$, mark the paper's own as (Paper: ...)")


def code_lines(path: Path) -> int:
    """Non-blank lines of the code cells of a notebook, the parameters cell excepted."""
    return sum(1 for c in _cells(path) if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
               for line in c.source.splitlines() if line.strip())


def test_notebooks_call_and_gclib_computes():
    lines = {p.stem: code_lines(p) for p in STUDIES}
    assert sum(lines.values()) <= CODE_LINES, (f"the study notebooks hold {sum(lines.values())} non-parameter code "
                                               f"lines (at most {CODE_LINES}): {lines}; move loops and functions "
                                               f"into gclib")


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_no_function_or_loop_in_a_notebook(path):
    src = [c.source for c in _cells(path) if c.cell_type == "code"]
    bad = [line.strip() for s in src for line in s.splitlines()
           if re.match(r"\s*(def |class |for |while |lambda\b)", line) or re.search(r"\blambda\b", line)]
    assert not bad, f"{path.name}: a loop or inline function belongs in gclib, with a test: {bad}"
