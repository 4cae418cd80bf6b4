"""Developer tool: build a notebook from a percent-format script, or dump a notebook back to one.

    python tools/nb.py build src.py notebooks/NN_name.ipynb   # cells split at '# %%' lines
    python tools/nb.py dump notebooks/NN_name.ipynb > src.py
    python tools/nb.py metadata notebooks/*.ipynb             # the metadata JupyterLab writes, nothing else changed

'# %% [markdown]' starts a markdown cell (its lines lose the leading '# '); '# %% tags=["parameters"]' starts a
code cell tagged for papermill. Notebooks are written without outputs, with the metadata JupyterLab writes when it
opens them on the python3 kernel (:func:`lab_metadata`), so that opening one does not mark it modified.
"""
import json
import re
import sys

import nbformat


def lab_metadata() -> dict:
    """The notebook metadata JupyterLab sets when the python3 kernel connects: the kernelspec (its name, display name
    and language) and the kernel's ``language_info`` (ipykernel's, with this Python's version). A notebook whose
    metadata differs is marked modified on opening, and its autosave rewrites the file."""
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"kernelspec": {"name": "python3", "display_name": spec.display_name, "language": spec.language},
            "language_info": dict(IPythonKernel.language_info)}


def set_metadata(path: str) -> None:
    """Rewrite ``path`` with :func:`lab_metadata` (its cells as they are)."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata.update(lab_metadata())
    nbformat.write(nb, path)


def build(src: str, dst: str) -> None:
    text = open(src).read()
    cells = []
    for chunk in re.split(r"^(?=# %%)", text, flags=re.M):
        if not chunk.strip():
            continue
        head, _, body = chunk.partition("\n")
        if not head.startswith("# %%"):
            body, head = chunk, "# %%"
        body = body.strip("\n")
        if "[markdown]" in head:
            lines = [ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in body.splitlines()]
            cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
        else:
            cell = nbformat.v4.new_code_cell(body)
            m = re.search(r"tags=(\[.*\])", head)
            if m:
                cell.metadata["tags"] = json.loads(m.group(1))
            cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata.update(lab_metadata())
    for i, c in enumerate(nb.cells):
        c["id"] = f"cell-{i:02d}"
    nbformat.write(nb, dst)


def dump(src: str) -> None:
    nb = nbformat.read(src, as_version=4)
    for c in nb.cells:
        if c.cell_type == "markdown":
            print("# %% [markdown]")
            print("\n".join("# " + ln if ln else "#" for ln in c.source.splitlines()))
        else:
            tags = c.metadata.get("tags")
            print("# %%" + (f" tags={json.dumps(tags)}" if tags else ""))
            print(c.source)
        print()


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "build":
        build(args[1], args[2])
    elif len(args) == 2 and args[0] == "dump":
        dump(args[1])
    elif len(args) >= 2 and args[0] == "metadata":
        for path in args[1:]:
            set_metadata(path)
    else:
        sys.exit("usage: nb.py build SRC DST | dump NB | metadata NB ...")
