"""Assemble the sources of the documentation site in one folder, for Sphinx (``make docs``).

The site is built from copies, so that nothing is written into the repository:

- ``index.md`` and ``api/*.md`` (one page per package of gclib, its modules' docstrings through autodoc), written
  here;
- ``docs/*.md``, the guide pages, as they are;
- ``notebooks/*.ipynb``: the executed copy of each notebook when a run left one (``build/executed/full``, else
  ``build/executed/quick``), else the notebook as committed, rendered without outputs. The site never executes a
  notebook: the MPI notebook, like every other, is only rendered;
- the cell papermill adds to an executed copy (the values of that run, its folders among them) is left out;
- ``figures/``, which the notebooks and their outputs link to.

Usage: ``python docs/stage.py OUT`` (OUT is emptied first). Standard library only.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXECUTED = ROOT / "build" / "executed"
PROFILES = ("full", "quick")  # the executed copies preferred, in this order

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

GUIDE_ORDER = ("install", "papers", "codes", "gc_mmc", "lazy", "notebooks", "runtime", "cluster")


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


def stage(out: Path, executed: Path = EXECUTED) -> dict[str, str]:
    """Write the site's sources into ``out``; return, per notebook, the profile of the executed copy used (``""``
    for the committed notebook without outputs)."""
    if out.exists():
        shutil.rmtree(out)
    (out / "docs").mkdir(parents=True)
    guide = sorted((p.stem for p in (ROOT / "docs").glob("*.md")),
                   key=lambda s: (GUIDE_ORDER.index(s) if s in GUIDE_ORDER else len(GUIDE_ORDER), s))
    for stem in guide:
        shutil.copy2(ROOT / "docs" / f"{stem}.md", out / "docs" / f"{stem}.md")
    (out / "notebooks").mkdir()
    used = {}
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        src, used[nb.stem] = notebook_source(nb.stem, executed)
        (out / "notebooks" / nb.name).write_text(json.dumps(without_injected_parameters(json.loads(src.read_text()))))
    if (ROOT / "figures").is_dir():
        shutil.copytree(ROOT / "figures", out / "figures")
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
    for stem, profile in stage(Path(sys.argv[1])).items():
        print(f"{stem}: {'executed, ' + profile + ' profile' if profile else 'not executed'}")
