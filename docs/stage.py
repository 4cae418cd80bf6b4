"""Assemble the sources of the documentation site in one folder, for Sphinx (``make docs``).

The site is built from copies, so that nothing is written into the repository:

- ``index.md`` and ``api/*.md`` (one page per package of gclib, its modules' docstrings through autodoc), written
  here;
- ``docs/*.md``, the guide pages, with their links rewritten (below);
- ``notebooks/*.ipynb``: the executed copy of each notebook when a run left one (``build/executed/full``, else
  ``build/executed/quick``), else the notebook as committed, rendered without outputs. The site never executes a
  notebook: the MPI notebook, like every other, is only rendered;
- the cell papermill adds to an executed copy (the values of that run, its folders among them) is left out;
- each notebook's title (its first ``#`` heading) numbered the same way, ``NN · Title`` from the file name, so that
  the sidebar numbers every notebook alike;
- ``figures/``, which the notebooks and their outputs link to; ``docs/conf.py`` copies it into the site as it is.

Links are rewritten so that every link into the repository resolves on the site. In the guide pages, in the
notebooks' Markdown cells and in their Markdown and HTML outputs (such as the index's gallery), each link or image
(Markdown ``[text](target)``, ``![alt](target)``, ``[name]: target``, and HTML ``href``/``src``; code is left
alone) whose target is a path, relative to the page's folder in the repository or absolute, is pointed to:

- the page of a notebook or guide page, for a ``.ipynb`` in ``notebooks/`` or a ``.md`` in ``docs/`` (``#anchor``
  kept);
- the site's copy of ``figures/``, for a file in the committed figures;
- for any other file of the repository (a run's figures in ``build/figures/<profile>/``, ``README.md``,
  ``notebooks/profiles.toml``, ...), a copy that the site carries at ``_repository/<its path in the repository>``
  (``docs/conf.py`` copies that folder into the site), so that the site works wherever it is opened or served.

A link into the repository that resolves to nothing (a missing file, a folder, a path outside the repository) is an
error in a guide page or a Markdown cell (``StageError``, naming the page and the link); in an output, which a run
wrote, it is shown as its text (an image as its alt text) and reported. URLs (``https:``, ``mailto:``, ``data:``,
...) and ``#anchor`` links are left as they are.

Usage: ``python docs/stage.py OUT`` (OUT is emptied first). Standard library only.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
EXECUTED = ROOT / "build" / "executed"
PROFILES = ("full", "quick")  # the executed copies preferred, in this order
#: the folder of the site's sources (and of the site) that holds the copies of the repository's linked files
CARRIED = "_repository"

INDEX = """\
# gclib

gclib is a Python library and a suite of notebooks for *gradient coding*: codes that let synchronous distributed
gradient descent finish an iteration from the fastest workers' messages. Every code is plain data, checked exactly
in rational arithmetic, simulated under the compute-time models of the papers, and runnable for real over MPI.

The guide explains the codes, the runtime and the notebooks; the notebooks reproduce and check the papers'
claims; the API reference is generated from the docstrings.

{notebook_note}

```{{toctree}}
:maxdepth: 1
:caption: Guide

{guide}
```

```{{toctree}}
:maxdepth: 1
:caption: Notebooks

{notebooks}
```

```{{toctree}}
:maxdepth: 1
:caption: API reference

{api}
```
"""

GUIDE_ORDER = ("install", "papers", "codes", "gc_mmc", "lazy", "recent", "notebooks", "runtime", "cluster")


class StageError(ValueError):
    """A link of a guide page or of a notebook's Markdown cell that resolves to nothing on the site."""


# A Markdown link or image: [text](target "title") / ![alt](<target>); the text may hold one level of brackets.
_MD_LINK = re.compile(r"(?P<lead>!?\[(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*)(?P<open><?)"
                      r"(?P<target>[^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*)(?P<close>>?)"
                      r"(?P<tail>(?:\s+\"[^\"]*\")?\s*\))")
# A link reference definition: [name]: target
_MD_DEF = re.compile(r"(?m)^(?P<lead> {0,3}\[[^\]\n]+\]:[ \t]*)(?P<target>\S+)")
# An HTML start tag and, inside it, an href/src attribute (quoted with " or ').
_HTML_TAG = re.compile(r"<(?P<name>[A-Za-z][A-Za-z0-9]*)\b[^<>]*>")
_HTML_ATTR = re.compile(r"""(?P<lead>\s(?:href|src)\s*=\s*)(?P<q>["'])(?P<target>.*?)(?P=q)""", re.I)
# Fenced code blocks and inline code spans: their text is code, never a link.
_CODE = re.compile(r"(?ms)^(?P<fence> {0,3}(?:`{3,}|~{3,})).*?^ {0,3}(?P=fence)[`~]*[ \t]*$"
                   r"|(?P<ticks>`+)(?:(?!\n[ \t]*\n).)+?(?P=ticks)")
_HEADING = re.compile(r"(?m)^#[ \t]+(?P<title>.+?)[ \t]*$")
_NUMBER = re.compile(r"^\d+\s*(?:[·.:\-–—]\s*)?")


class Linker:
    """Where the site has what a page links to: its notebooks' and guide pages' own pages, the committed figures,
    and copies of other files of the repository (collected in ``carried`` while links are rewritten)."""

    def __init__(self, root: Path, notebooks: set[str], guide: set[str]):
        self.root = Path(os.path.normpath(root))
        self.notebooks, self.guide = notebooks, guide
        self.carried: set[Path] = set()  # repository files to copy into the site, relative to the root
        self.dropped: list[tuple[str, str]] = []  # (page, link) shown as text: outputs' links to nothing

    def _site_path(self, path: Path) -> tuple[str, bool] | None:
        """The site path of a repository ``path`` (absolute, normalized) and whether it is a page; None when the
        site has nothing for it."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return None
        parts = rel.parts
        if len(parts) == 2 and parts[0] == "notebooks" and rel.suffix == ".ipynb" and rel.stem in self.notebooks:
            return rel.as_posix(), True
        if len(parts) == 2 and parts[0] == "docs" and rel.suffix == ".md" and rel.stem in self.guide:
            return rel.as_posix(), True
        if not path.is_file():
            return None
        if parts[0] == "figures":
            return rel.as_posix(), False
        self.carried.add(rel)
        return f"{CARRIED}/{rel.as_posix()}", False

    def target(self, link: str, page: str, html: bool) -> str | None:
        """``link`` as written in ``page`` (the page's path in the repository, e.g. ``notebooks/00_index.ipynb``)
        rewritten for the site: unchanged when it is a URL or an anchor, None when it leads nowhere on the site.
        ``html``: the link is an HTML attribute (a page is then linked by its ``.html`` file; Markdown links name
        the source, which MyST resolves)."""
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path:
            return link
        folder = (self.root / page).parent
        path = Path(os.path.normpath(Path(unquote(parts.path)) if parts.path.startswith("/")
                                     else folder / unquote(parts.path)))
        found = self._site_path(path)
        if found is None:
            return None
        site, is_page = found
        if is_page and html:
            site = str(Path(site).with_suffix(".html").as_posix())
        new = os.path.relpath(site, Path(page).parent.as_posix()).replace(os.sep, "/")
        return new + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")

    def rewrite(self, text: str, page: str, written_by_hand: bool) -> str:
        """``text`` (Markdown, possibly with HTML) with every link rewritten. A link leading nowhere raises
        StageError when ``written_by_hand``; otherwise it is replaced by its text (an image by its alt text)."""
        code: list[str] = []  # code is set aside while links are rewritten (a link's text may hold code)

        def hide(m: re.Match) -> str:
            code.append(m.group(0))
            return f"{_HIDDEN}{len(code) - 1}{_HIDDEN}"

        out = self._rewrite_prose(_CODE.sub(hide, text), page, written_by_hand)
        return re.sub(f"{_HIDDEN}(\\d+){_HIDDEN}", lambda m: code[int(m.group(1))], out)

    def _dead(self, page: str, link: str, written_by_hand: bool):
        if written_by_hand:
            raise StageError(f"{page}: the link {link!r} leads to nothing on the site (no page, no file of the "
                             "repository)")
        self.dropped.append((page, link))

    def _rewrite_prose(self, text: str, page: str, written_by_hand: bool) -> str:
        text = self._rewrite_html(text, page, written_by_hand)

        def md(m: re.Match) -> str:
            new = self.target(m["target"], page, html=False)
            if new is None:
                self._dead(page, m["target"], written_by_hand)
                return m["text"]
            return m["lead"] + m["open"] + new + m["close"] + m["tail"]

        def definition(m: re.Match) -> str:
            new = self.target(m["target"], page, html=False)
            if new is None:
                self._dead(page, m["target"], written_by_hand)
                return m.group(0)
            return m["lead"] + new

        return _MD_DEF.sub(definition, _MD_LINK.sub(md, text))

    def _rewrite_html(self, text: str, page: str, written_by_hand: bool) -> str:
        out, last = [], 0
        for tag in _HTML_TAG.finditer(text):
            body, dead = tag.group(0), None
            for attr in _HTML_ATTR.finditer(tag.group(0)):
                new = self.target(attr["target"], page, html=True)
                if new is None:
                    dead = attr["target"]
                    break
                body = body.replace(attr.group(0), attr["lead"] + attr["q"] + new + attr["q"], 1)
            out.append(text[last:tag.start()])
            last = tag.end()
            if dead is None:
                out.append(body)
                continue
            self._dead(page, dead, written_by_hand)
            name = tag["name"].lower()
            if name == "a":
                out.append(_UNWRAP)  # the anchor's text stays; its closing tag goes below
            elif name == "img":
                alt = re.search(r"""\salt\s*=\s*(["'])(.*?)\1""", body, flags=re.I)
                out.append(alt.group(2) if alt else "")
        out.append(text[last:])
        return re.sub(_UNWRAP + r"(.*?)</a\s*>", r"\1", "".join(out), flags=re.S | re.I)


_UNWRAP = "\x00"  # marks where an anchor was dropped, until its closing tag is
_HIDDEN = "\x01"  # around the number of a piece of code set aside


def modules() -> dict[str, list[str]]:
    """The modules of gclib, grouped by page: ``gclib`` (its top-level modules) and one page per
    subpackage. ``__main__`` modules and names starting with an underscore are left out."""
    pages: dict[str, list[str]] = {"gclib": ["gclib"]}
    pkg = ROOT / "gclib"
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__main__" or any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        if name == "gclib":
            continue
        page = "gclib" if len(parts) == 2 and path.name != "__init__.py" else ".".join(parts[:2])
        pages.setdefault(page, []).append(name)
    return pages


def api_page(page: str, names: list[str]) -> str:
    blocks = []
    for name in names:
        blocks.append(f"```{{eval-rst}}\n.. automodule:: {name}\n   :members:\n   :show-inheritance:\n```\n")
    title = "gclib (top-level modules)" if page == "gclib" else page
    return f"# {title}\n\n" + "\n".join(blocks)


def notebook_source(stem: str, executed: Path = EXECUTED) -> tuple[Path, str]:
    """The notebook to render: its executed copy of the first profile that has one, else the committed one."""
    for profile in PROFILES:
        p = executed / profile / f"{stem}.ipynb"
        if p.is_file():
            return p, profile
    return ROOT / "notebooks" / f"{stem}.ipynb", ""


def without_injected_parameters(nb: dict) -> dict:
    """The notebook with the cell papermill adds to an executed copy (the run's own values, such as the folders
    of that machine) marked for removal from the page; the notebook's parameters cell stays."""
    for cell in nb.get("cells", []):
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    return nb


def numbered_title(nb: dict, stem: str) -> dict:
    """The notebook with its title (the first ``#`` heading of its Markdown cells) numbered ``NN · Title`` from
    the file name's leading number, whatever numbering the title had."""
    number = re.match(r"\d+", stem)
    if not number:
        return nb
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        text = _source(cell)
        m = _HEADING.search(text)
        if m:
            title = f"{number.group(0)} · {_NUMBER.sub('', m['title'])}"
            cell["source"] = text[:m.start("title")] + title + text[m.end("title"):]
            break
    return nb


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def with_site_links(nb: dict, page: str, linker: Linker) -> dict:
    """The notebook with the links of its Markdown cells (written by hand: a link to nothing is an error) and of
    its Markdown and HTML outputs (written by a run: a link to nothing becomes its text) rewritten for the site."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            cell["source"] = linker.rewrite(_source(cell), page, written_by_hand=True)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for mime in ("text/markdown", "text/html"):
                if mime in data:
                    text = "".join(data[mime]) if isinstance(data[mime], list) else data[mime]
                    data[mime] = linker.rewrite(text, page, written_by_hand=False)
    return nb


def stage(out: Path, executed: Path = EXECUTED, notes: list[str] | None = None) -> dict[str, str]:
    """Write the site's sources into ``out``; return, per notebook, the profile of the executed copy used (``""``
    for the committed notebook without outputs). ``notes`` (if given) receives one line per page whose outputs
    link to files that do not exist (shown as text on the site). Raises StageError for a link of a guide page or
    a Markdown cell that leads to nothing on the site."""
    if out.exists():
        shutil.rmtree(out)
    (out / "docs").mkdir(parents=True)
    guide = sorted((p.stem for p in (ROOT / "docs").glob("*.md")),
                   key=lambda s: (GUIDE_ORDER.index(s) if s in GUIDE_ORDER else len(GUIDE_ORDER), s))
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    linker = Linker(ROOT, set(stems), set(guide))
    for stem in guide:
        page = f"docs/{stem}.md"
        (out / page).write_text(linker.rewrite((ROOT / page).read_text(), page, written_by_hand=True))
    (out / "notebooks").mkdir()
    used = {}
    for stem in stems:
        src, used[stem] = notebook_source(stem, executed)
        page = f"notebooks/{stem}.ipynb"
        nb = without_injected_parameters(json.loads(src.read_text()))
        (out / page).write_text(json.dumps(with_site_links(numbered_title(nb, stem), page, linker)))
    if (ROOT / "figures").is_dir():
        shutil.copytree(ROOT / "figures", out / "figures")
    for rel in sorted(linker.carried):
        (out / CARRIED / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, out / CARRIED / rel)
    if notes is not None:
        dropped: dict[str, list[str]] = {}
        for page, link in linker.dropped:
            if link not in dropped.setdefault(page, []):
                dropped[page].append(link)
        for page, links in dropped.items():
            notes.append(f"{page}: {len(links)} link(s) of its outputs lead to no file of the repository (a run "
                         f"that did not write them, or another checkout's), shown as text: {', '.join(links[:3])}"
                         + (", ..." if len(links) > 3 else ""))
    (out / "api").mkdir()
    pages = modules()
    for page, names in pages.items():
        (out / "api" / f"{page}.md").write_text(api_page(page, names))
    kinds = sorted(set(used.values()))
    if kinds == [""]:
        note = ("The notebooks below are shown without their outputs: run `make reproduce` (or "
                "`make reproduce PROFILE=quick`) and build the site again to see them executed.")
    else:
        note = "The notebooks below are shown as executed by `make reproduce` " + ", ".join(
            f"({k} profile: {', '.join(s for s, v in used.items() if v == k)})" if k else
            f"(not executed: {', '.join(s for s, v in used.items() if not v)})" for k in kinds) + "."
    (out / "index.md").write_text(INDEX.format(
        notebook_note=note,
        guide="\n".join(f"docs/{s}" for s in guide),
        notebooks="\n".join(f"notebooks/{s}" for s in sorted(used)),
        api="\n".join(f"api/{p}" for p in pages)))
    return used

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/stage.py OUT")
    notes: list[str] = []
    try:
        used = stage(Path(sys.argv[1]), notes=notes)
    except StageError as exc:
        sys.exit(f"stage: error: {exc}")
    for stem, profile in used.items():
        print(f"{stem}: {'executed, ' + profile + ' profile' if profile else 'not executed'}")
    for line in notes:
        print(f"note: {line}")
