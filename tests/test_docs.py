"""The documentation site: its sources (docs/stage.py: every module, guide page and notebook, executed copies
preferred, papermill's injected cell left out, links rewritten to what the site has, notebooks numbered alike), the
site built once as make docs builds it (tests/docs_site.py) and checked by docs/check_site.py (no broken link or
image, nothing from another host, every formula MathML), the checker's own failures, and the math renderer."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import docs_site

ROOT = Path(__file__).resolve().parent.parent


def _stage_module():
    return docs_site.stage_module()


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
    assert rule.index("-m sphinx -W") < rule.index("docs/check_site.py build/docs")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci.index("make docs") > ci.index("make test")
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert 'nb_execution_mode = "off"' in conf



# ---------------------------------------------------------------------------------------------- links at staging
@pytest.fixture
def repo(tmp_path):
    """A repository of a few files: two notebooks, a guide page, committed figures, a run's figures, a README."""
    root = tmp_path / "repo"
    for rel in ("notebooks/00_index.ipynb", "notebooks/01_a.ipynb", "docs/install.md", "figures/a.png",
                "figures/a.csv", "build/figures/quick/b.png", "build/figures/quick/b.csv", "README.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    return root


def _linker(root):
    return _stage_module().Linker(root, {"00_index", "01_a"}, {"install"})


def test_links_are_rewritten_to_the_pages_and_files_the_site_has(repo):
    linker = _linker(repo)
    page = "notebooks/00_index.ipynb"
    text = (f"[one](./01_a.ipynb) [guide](../docs/install.md#the-site) <a href=\"./01_a.ipynb#sec\">a</a> "
            f"<img src=\"{repo}/figures/a.png\" alt=\"a\"> [data]({repo}/build/figures/quick/b.csv) "
            f"<img src='../build/figures/quick/b.png'> [readme](../README.md \"title\") "
            f"[paper](https://arxiv.org/abs/1612.03301) [top](#top)\n\n[ref]: ../figures/a.csv\n")
    out = linker.rewrite(text, page, written_by_hand=False)
    assert out == ("[one](01_a.ipynb) [guide](../docs/install.md#the-site) <a href=\"01_a.html#sec\">a</a> "
                   "<img src=\"../figures/a.png\" alt=\"a\"> [data](../_repository/build/figures/quick/b.csv) "
                   "<img src='../_repository/build/figures/quick/b.png'> [readme](../_repository/README.md \"title\") "
                   "[paper](https://arxiv.org/abs/1612.03301) [top](#top)\n\n[ref]: ../figures/a.csv\n")
    assert linker.carried == {Path("build/figures/quick/b.csv"), Path("build/figures/quick/b.png"), Path("README.md")}
    assert linker.dropped == []
    # from a guide page, the same targets are reached from docs/
    assert linker.rewrite("[nb](../notebooks/01_a.ipynb) ![f](../figures/a.png)", "docs/install.md", True) == \
        "[nb](../notebooks/01_a.ipynb) ![f](../figures/a.png)"


def test_code_is_never_rewritten(repo):
    text = "`[x](nowhere.md)` and\n\n```html\n<img src=\"nowhere.png\">\n[y](nowhere.ipynb)\n```\n"
    assert _linker(repo).rewrite(text, "docs/install.md", written_by_hand=True) == text


def test_an_outputs_link_to_nothing_becomes_its_text_and_is_reported(repo):
    linker = _linker(repo)
    missing = f"{repo}/build/figures/quick/missing.png"
    text = (f"<a href=\"{missing}\"><img src=\"{missing}\" width=\"320\" alt=\"missing\"></a><br>`missing` "
            f"([data]({repo}/build/figures/quick/missing.csv)) [gone](./09_gone.ipynb) "
            f"<a href=\"/elsewhere/figures/c.png\">c</a>")
    out = linker.rewrite(text, "notebooks/00_index.ipynb", written_by_hand=False)
    assert out == "missing<br>`missing` (data) gone c"
    assert sorted({link for _, link in linker.dropped}) == sorted(
        [missing, f"{repo}/build/figures/quick/missing.csv", "./09_gone.ipynb", "/elsewhere/figures/c.png"])
    assert {page for page, _ in linker.dropped} == {"notebooks/00_index.ipynb"} and not linker.carried


@pytest.mark.parametrize("link", ["missing.md", "../notebooks/09_gone.ipynb", "../figures", "/elsewhere/x.png",
                                  "../../outside.md"])
def test_a_link_written_by_hand_to_nothing_is_an_error_naming_page_and_link(repo, link):
    stage = _stage_module()
    with pytest.raises(stage.StageError, match=re.escape(f"docs/install.md: the link {link!r}")):
        _linker(repo).rewrite(f"see [this]({link})", "docs/install.md", written_by_hand=True)


def test_every_notebook_title_is_numbered_alike():
    stage = _stage_module()
    for title, stem, want in (("06 Lazy aggregation", "06_lazy", "06 · Lazy aggregation"),
                              ("Reed-Solomon codes", "02_reed_solomon", "02 · Reed-Solomon codes"),
                              ("00 · Index: what each notebook reproduces", "00_index",
                               "00 · Index: what each notebook reproduces"),
                              ("07: Real runs", "07_mpi", "07 · Real runs")):
        nb = _notebook([{"cell_type": "markdown", "metadata": {}, "source": f"# {title}\n\nText; not # a title."}])
        assert stage.numbered_title(nb, stem)["cells"][0]["source"] == f"# {want}\n\nText; not # a title."


def test_staging_carries_linked_files_and_reports_outputs_links_to_nothing(tmp_path):
    """The real checkout staged with an executed index whose gallery links the committed figures by their absolute
    folder (as a run writes them) and a figure that does not exist."""
    from gclib.studies import gallery as gallery

    stage = _stage_module()
    quick = tmp_path / "executed" / "quick"
    quick.mkdir(parents=True)
    nb = json.loads((ROOT / "notebooks" / "00_index.ipynb").read_text())
    text = gallery.markdown(str(ROOT / "figures"), data_dir=tmp_path / "no-claims", notebooks_dir=".")
    text += f'\n\n<img src="{ROOT}/figures/not_a_figure.png" alt="not_a_figure">\n'
    [c for c in nb["cells"] if c["cell_type"] == "code"][-1]["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": text}}]
    (quick / "00_index.ipynb").write_text(json.dumps(nb))
    notes = []
    stage.stage(tmp_path / "src", executed=tmp_path / "executed", notes=notes)
    staged = json.loads((tmp_path / "src" / "notebooks" / "00_index.ipynb").read_text())
    out = "".join(o["data"]["text/markdown"] for c in staged["cells"] for o in c.get("outputs", [])
                  if "text/markdown" in o.get("data", {}))
    assert str(ROOT) not in out and "](./" not in out
    targets = re.findall(r'(?:src|href)="([^"]+)"|\]\(([^)\s]+)\)', out)
    assert targets
    for target in (a or b for a, b in targets):
        if target.endswith(".ipynb"):
            assert (tmp_path / "src" / "notebooks" / target).is_file(), target
        else:
            assert target.startswith("../figures/") and (tmp_path / "src" / "notebooks" / target).is_file(), target
    # the planted image and the gallery's figures this checkout has not committed are shown as text, and counted
    absent = [f.stem for f in gallery.FIGURES if not (ROOT / "figures" / f"{f.stem}.png").exists()]
    assert "not_a_figure" in out and "not_a_figure.png" not in out
    assert all(f"{stem}.png" not in out for stem in absent)
    assert len(notes) == 1 and notes[0].startswith(
        f"notebooks/00_index.ipynb: {1 + 2 * len(absent)} link(s) of its outputs lead to no file of the repository")


# ------------------------------------------------------------------------------------------------ the built site
def test_the_built_site_has_no_broken_link_no_host_but_its_own_and_every_formula_as_mathml(docs_site):
    problems = docs_site_check().problems(docs_site)
    assert not problems, "the site has problems:\n" + "\n".join(problems)
    pages = {p.relative_to(docs_site).as_posix(): p.read_text() for p in docs_site.rglob("*.html")}
    mathjax = re.compile(r"<script[^>]*mathjax|MathJax\s*=", re.I)
    assert not [name for name, html in pages.items() if mathjax.search(html)], "a page still loads MathJax"
    # formulas of Markdown cells (inline) and of outputs (display matrices) are MathML
    assert pages["notebooks/02_reed_solomon.html"].count('<math xmlns="http://www.w3.org/1998/Math/MathML"') >= 10
    derivations = pages["notebooks/01_gradient_coding.html"]
    assert derivations.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') >= 2
    assert derivations.count("<mtable") >= 6 and "<mfrac>" in derivations  # matrices with fractions
    # the index's gallery shows every committed gallery figure from the site's own copy
    from gclib.studies import gallery as gallery

    shown = [f.stem for f in gallery.FIGURES if (ROOT / "figures" / f"{f.stem}.png").exists()]
    index = pages["notebooks/00_index.html"]
    assert shown and all(f'src="../figures/{stem}.png"' in index for stem in shown)
    copy, committed = docs_site / "figures" / f"{shown[0]}.png", ROOT / "figures" / f"{shown[0]}.png"
    assert copy.read_bytes() == committed.read_bytes()
    # the sidebar numbers every notebook alike
    sidebar = re.findall(r'<a class="reference internal" href="notebooks/(\d\d)_\w+\.html">(.*?)</a>',
                         pages["index.html"])
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted({n for n, _ in sidebar}) == [s[:2] for s in stems]
    assert all(title.startswith(f"{n} · ") for n, title in sidebar), sidebar


def docs_site_check():
    return docs_site.check_module()


# ----------------------------------------------------------------------------------------------- the checker
def test_the_site_checker_finds_each_kind_of_problem(tmp_path):
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "_static").mkdir()
    (site / "_static" / "ok.css").write_text("body { color: red }")
    (site / "_static" / "bad.css").write_text("@import url('https://fonts.example.org/x.css');")
    (site / "index.html").write_text('<html><body><a id="top" href="docs/page.html#here">p</a>'
                                     '<a href="https://arxiv.org/abs/1612.03301">paper</a></body></html>')
    (site / "docs" / "page.html").write_text(
        '<html><head><script src="https://cdn.example.org/mathjax.js"></script></head><body>'
        '<p id="here">see <a href="../index.html#top">top</a>, <a href="../index.html#nowhere">x</a>, '
        '<a href="missing.html">y</a>, <a href="/abs/page.html">z</a>, <a href="../../outside.html">o</a></p>'
        '<img src="../_images/gone.png"><span class="math">\\(l = r - m + 1\\)</span>'
        '<span class="math"><math><mi>x</mi></math></span><p>$$ \\frac{1}{2} $$</p>'
        '<pre>\\(code is fine\\)</pre><code>$$ also fine $$</code></body></html>')
    found = docs_site_check().problems(site)
    text = "\n".join(found)
    for expected in ("docs/page.html: <script> loads 'https://cdn.example.org/mathjax.js' from another host",
                     "docs/page.html: <a> points to '../index.html#nowhere', whose page has no element #nowhere",
                     "docs/page.html: <a> points to 'missing.html', which the site does not have",
                     "docs/page.html: <a> points to the absolute path '/abs/page.html'",
                     "docs/page.html: <a> points to '../../outside.html', outside the site",
                     "docs/page.html: <img> points to '../_images/gone.png', which the site does not have",
                     "docs/page.html: 1 formula(s) not rendered as MathML",
                     "docs/page.html: LaTeX left in the text: $$, \\(, \\), \\frac",
                     "_static/bad.css: the stylesheet loads a file from another host"):
        assert expected in text, f"{expected!r} not in:\n{text}"
    assert len(found) == 9, text
    assert "index.html" not in {line.split(":")[0] for line in found}


def test_the_site_checker_command_exits_1_on_problems_and_2_without_a_site(tmp_path, capsys):
    check = docs_site_check()
    (tmp_path / "index.html").write_text('<a href="gone.html">x</a>')
    assert check.main([str(tmp_path)]) == 1
    assert "index.html: <a> points to 'gone.html'" in capsys.readouterr().out
    assert check.main([str(tmp_path / "nothing")]) == 2
    assert "holds no built site" in capsys.readouterr().err
    (tmp_path / "index.html").write_text('<a href="index.html">x</a>')
    assert check.main([str(tmp_path)]) == 0


# ------------------------------------------------------------------------------------------- the math renderer
def _mathml():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import mathml
    finally:
        sys.path.remove(str(ROOT / "docs"))
    return mathml


def test_formulas_become_mathml_and_what_cannot_be_converted_is_an_error():
    mathml = _mathml()
    inline = mathml.to_mathml(r"f(\alpha_i) = \sum_j p_j(\alpha_i)\, g_j", display=False)
    assert inline.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">')
    assert "<msub>" in inline and "\\" not in inline
    matrix = mathml.to_mathml(r"B = \left[\begin{matrix}\frac{1}{2} & 1\\0 & -1\end{matrix}\right]", display=True)
    assert 'display="block"' in matrix and matrix.count("<mtr>") == 2 and "<mfrac>" in matrix
    lines = mathml.to_mathml(r"a &= b \\ c &= d", display=True)  # several lines, aligned as Sphinx does
    assert lines.count("<mtr>") == 2
    with pytest.raises(ValueError, match=r"does not know: \\notacommand"):
        mathml.to_mathml(r"x = \notacommand{y}", display=False)
    with pytest.raises(ValueError, match="cannot convert"):
        mathml.to_mathml(r"\frac{1}{", display=False)
    with pytest.raises(ValueError, match="alignment"):
        mathml.to_mathml(r"a & b", display=False)
