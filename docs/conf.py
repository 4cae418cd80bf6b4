"""Sphinx configuration of the documentation site. Build it with ``make docs``: ``docs/stage.py`` gathers the
sources in ``build/docs-src`` and Sphinx writes the HTML to ``build/docs``, with every warning an error.

The site needs no network: formulas are MathML written at build time (``docs/mathml.py``), no script comes from a
CDN (the widgets' scripts are not loaded: the progress bars saved in executed notebooks are left out), and the
files the pages link to (``figures/`` and the copies in ``_repository/``, see ``docs/stage.py``) are copied in."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout's gclib
sys.path.insert(0, str(ROOT / "docs"))  # the math renderer, mathml.py

import gclib  # noqa: E402

project = "gclib"
author = "the gclib developers"
copyright = "2026, the gclib developers"
release = version = gclib.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode", "mathml"]
root_doc = "index"
#: folders of the staged sources copied into the site as they are (their files are linked, never pages)
CARRIED = ("figures", "_repository")
exclude_patterns = ["_build", "_repository"]
html_math_renderer = "mathml"  # formulas as MathML in the page, drawn by the browser without a script

# Notebooks are rendered as they are (executed copies from `make reproduce`, or without outputs); never run here.
nb_execution_mode = "off"
nb_output_stderr = "remove"  # progress bars and warnings printed while the notebook ran
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type"]  # progress-bar widgets saved in executed notebooks
nb_ipywidgets_js = {}  # so no widget script is loaded (from a CDN) for them
# Markdown outputs (the index's gallery, formulas of notebooks 01-03) parsed as MyST like the Markdown cells: their
# formulas and their links to other pages and files are resolved like the cells'
nb_render_markdown_format = "myst"

# a package's page documents what its modules define, not the names a package re-exports (``__all__``)
autodoc_default_options = {"member-order": "bysource", "ignore-module-all": True}
# The contents of an API page list its modules, not each function and class: every page of the site (the source
# pages too) carries the navigation tree, and with an entry per object that tree was the largest part of the build.
toc_object_entries = False
napoleon_google_docstring = True  # the docstrings' "Args:", "Returns:" and "Attributes:" sections
napoleon_numpy_docstring = False
autodoc_mock_imports = ["mpi4py", "jax"]  # MPI: imported inside functions only, never for the docs; JAX: no extra

html_theme = "furo"
html_title = f"gclib {release}"
html_static_path = ["_static"]
html_css_files = ["gclib.css"]  # wide tables scroll within the text column


def copy_carried(app, exception):
    """Copy the staged folders of linked files (``CARRIED``) into the site once the build succeeded."""
    if exception is not None or app.builder.format != "html":
        return
    for name in CARRIED:
        src = Path(app.srcdir) / name
        if src.is_dir():
            shutil.copytree(src, Path(app.outdir) / name, dirs_exist_ok=True)


def data_stays_home(app, modname, fullname):
    """viewcode follows an imported member to the module that defines it; a constant is no member of another
    module, though its value's class may be (``gclib.claims.CLAIMS_BUDGET`` is a ``gclib.files.Budget``): it stays
    in its own module, else the first such constant renames every link back from the other module's source page."""
    import importlib
    import inspect

    if not modname or not fullname:
        return None
    try:
        obj = importlib.import_module(modname)
    except ImportError:
        return None
    for part in fullname.split("."):
        obj = getattr(obj, part, None)
    return None if inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj) else modname


def setup(app):
    app.connect("viewcode-follow-imported", data_stays_home)
    app.connect("build-finished", copy_carried)
