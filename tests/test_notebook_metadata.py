"""The notebooks as JupyterLab writes them: opening one on the python3 kernel changes nothing in it (its kernelspec
and language_info are the kernel's), so saving it does not dirty git; and the index, committed without outputs,
says to run it."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import nb as nbtool  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_carries_the_metadata_jupyterlab_writes(path):
    meta = nbformat.read(path, as_version=4).metadata
    lab = nbtool.lab_metadata()
    # what JupyterLab sets from the kernel when it connects; a difference marks the notebook modified
    assert meta["kernelspec"] == lab["kernelspec"] == {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                                       "language": "python"}
    info = dict(meta["language_info"])
    assert re.fullmatch(r"3\.\d+\.\d+", info.pop("version"))  # the Python of whoever saved it last
    assert info == {k: v for k, v in lab["language_info"].items() if k != "version"}
    assert set(meta) == {"kernelspec", "language_info"}


def test_the_tool_writes_that_metadata_and_leaves_the_cells(tmp_path):
    src = tmp_path / "s.py"
    src.write_text('# %% [markdown]\n# # A title\n\n# %% tags=["parameters"]\nseed = 0\n\n# %%\nprint(seed)\n')
    out = tmp_path / "n.ipynb"
    nbtool.build(str(src), str(out))
    nb = nbformat.read(out, as_version=4)
    assert nb.metadata == nbtool.lab_metadata()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    nbformat.write(nb, out)
    nbtool.set_metadata(str(out))
    again = nbformat.read(out, as_version=4)
    assert again.metadata == nbtool.lab_metadata() and [c.source for c in again.cells] == [c.source for c in nb.cells]


def test_the_index_says_to_run_it():
    nb = nbformat.read(ROOT / "notebooks" / "00_index.ipynb", as_version=4)
    first = nb.cells[0].source
    assert "**Run this notebook**" in first and "committed without outputs" in first
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
