"""The documentation site's sources (docs/stage.py): every module, guide page and notebook is in it, executed
copies are preferred and papermill's injected cell is left out; make docs and CI build it with warnings as errors.
The Sphinx build itself runs in `make docs` (CI), not here."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _stage_module():
    spec = importlib.util.spec_from_file_location("docs_stage", ROOT / "docs" / "stage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _notebook(cells):
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_stage_covers_every_module_page_and_notebook(tmp_path):
    stage = _stage_module()
    used = stage.stage(tmp_path / "src", executed=tmp_path / "none")
    src = tmp_path / "src"
    documented = re.findall(r"^\.\. automodule:: (\S+)$", "\n".join(p.read_text() for p in (src / "api").glob("*.md")),
                            flags=re.M)
    modules = set()
    for p in (ROOT / "gclib").rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert sorted(documented) == sorted(modules), "each module of gclib on one API page, once"
    index = (src / "index.md").read_text()
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(used) == notebooks and set(used.values()) == {""}
    for stem in notebooks:
        assert f"notebooks/{stem}\n" in index and (src / "notebooks" / f"{stem}.ipynb").is_file()
    for page in (ROOT / "docs").glob("*.md"):
        assert f"docs/{page.stem}\n" in index and (src / "docs" / page.name).read_text() == page.read_text()
    assert "shown without their outputs" in index
    assert sorted(p.name for p in (src / "figures").iterdir()) == sorted(p.name for p in (ROOT / "figures").iterdir())


def test_stage_prefers_executed_copies_and_drops_the_injected_cell(tmp_path):
    stage = _stage_module()
    stem = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))[1]
    quick = tmp_path / "executed" / "quick"
    quick.mkdir(parents=True)
    cells = [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "seed = 0", "outputs": [],
              "execution_count": 1},
             {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "figures_dir = '/x'",
              "outputs": [], "execution_count": 2}]
    (quick / f"{stem}.ipynb").write_text(json.dumps(_notebook(cells)))
    used = stage.stage(tmp_path / "src", executed=tmp_path / "executed")
    assert used[stem] == "quick" and sum(v == "quick" for v in used.values()) == 1
    staged = json.loads((tmp_path / "src" / "notebooks" / f"{stem}.ipynb").read_text())
    assert staged["cells"][0]["metadata"]["tags"] == ["parameters"]
    assert staged["cells"][1]["metadata"]["tags"] == ["injected-parameters", "remove-cell"]
    assert f"quick profile: {stem}" in (tmp_path / "src" / "index.md").read_text()


def test_make_docs_and_ci_build_with_warnings_as_errors():
    make = (ROOT / "Makefile").read_text()
    rule = make[make.index("\ndocs: "):]
    rule = rule[: rule.index("\n\n")]
    assert "docs/stage.py build/docs-src" in rule and "-m sphinx -W" in rule and "build/docs" in rule
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci.index("make docs") > ci.index("make test")
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert 'nb_execution_mode = "off"' in conf
