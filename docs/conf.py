"""Sphinx configuration of the documentation site. Build it with ``make docs``: ``docs/stage.py`` gathers the
sources in ``build/docs-src`` and Sphinx writes the HTML to ``build/docs``, with every warning an error."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout's gclib

import gclib  # noqa: E402

project = "gclib"
author = "the gclib developers"
copyright = "2026, the gclib developers"
release = version = gclib.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax", "sphinx.ext.viewcode"]
root_doc = "index"
exclude_patterns = ["_build"]

# Notebooks are rendered as they are (executed copies from `make reproduce`, or without outputs); never run here.
nb_execution_mode = "off"
nb_output_stderr = "remove"  # progress bars and warnings printed while the notebook ran
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type"]  # progress-bar widgets saved in executed notebooks

# a package's page documents what its modules define, not the names a package re-exports (``__all__``)
autodoc_default_options = {"member-order": "bysource", "ignore-module-all": True}
napoleon_google_docstring = True  # the docstrings' "Args:", "Returns:" and "Attributes:" sections
napoleon_numpy_docstring = False
autodoc_mock_imports = ["mpi4py"]  # the runtime imports MPI inside functions only; never load it for the docs

html_theme = "furo"
html_title = f"gclib {release}"
