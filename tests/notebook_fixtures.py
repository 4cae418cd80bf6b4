"""Tiny notebooks written into a temporary directory, for the tests of the papermill driver, the manifest and
parameter validation (they do not depend on which real notebooks exist yet)."""
from __future__ import annotations

from pathlib import Path

import nbformat

PARAMETERS = '''profile = "full"
figures_dir = "../figures"
seed = 3
n = 40
scale = 2.5'''

VALIDATE = '''from gclib.studies.params import Parameters
p = Parameters(globals())
p.choice("profile", ["full", "quick"])
p.text("figures_dir")
p.integer("seed", low=0)
p.integer("n", low=2, high=10_000)
p.real("scale", above=0)'''

BODY = '''import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from gclib.plotting import save, theme
theme()
rng = np.random.default_rng(seed)
x = np.arange(n)
df = pd.DataFrame({"x": x, "y": scale * rng.exponential(size=n), "z": rng.normal(size=n) / 3})
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot(df.x, df.y)
save(fig, df, f"{stem}_fixture", figures_dir)
plt.show()'''


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    """Write a notebook of ``(kind, source)`` cells; kind ``"parameters"`` is a code cell tagged for papermill."""
    nb = nbformat.v4.new_notebook()
    for i, (kind, src) in enumerate(cells):
        if kind == "markdown":
            c = nbformat.v4.new_markdown_cell(src)
        else:
            c = nbformat.v4.new_code_cell(src)
            if kind == "parameters":
                c.metadata["tags"] = ["parameters"]
        c["id"] = f"cell-{i:02d}"
        nb.cells.append(c)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def good_notebook(path: Path) -> Path:
    """A seeded notebook that validates its parameters and saves one figure ``<stem>_fixture`` (PNG + CSV)."""
    return write_notebook(path, [("markdown", "# fixture"), ("parameters", PARAMETERS), ("code", VALIDATE),
                                 ("code", BODY.replace("{stem}", path.stem))])


def failing_notebook(path: Path) -> Path:
    return write_notebook(path, [("parameters", PARAMETERS), ("code", "raise RuntimeError('boom in fixture')")])


def profiles(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def validation_cell(nb) -> int:
    """Index of the first code cell after the parameters (and papermill's injected-parameters) cells: the cell
    that validates them."""
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    last = max(i for i, t in enumerate(tags) if "parameters" in t or "injected-parameters" in t)
    return next(i for i in range(last + 1, len(nb.cells)) if nb.cells[i].cell_type == "code")
