"""The documentation site built as ``make docs`` builds it, once per test session (``tests/conftest.py``'s
``docs_site`` fixture, used by tests/test_docs.py and tests/test_browser.py).

So that the site has notebook outputs whatever this checkout has run, it is staged with executed copies of two
notebooks made here, without a kernel: the index with the output of its gallery cell, ``gclib.studies.gallery``'s
Markdown for the committed ``figures/`` (written with the absolute folder, as a run writes it), and notebook 01
with the exact derivations ``gclib.symbolic`` renders (matrices as LaTeX, one of them wider than the page) and a
wide table. Every other notebook is shown as committed, without outputs.

A run of the whole suite builds the site in the background from the session's start (:func:`start`, from
``tests/conftest.py``), at the lowest CPU priority, so that it takes the cores' idle time (MPI ranks waiting out their
injected delays) rather than the tests' own; the fixture waits for it (:func:`wait`). ``python tests/docs_site.py
WORK`` is that build.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the notebooks given outputs here, and the profile their executed copies pretend to come from
EXECUTED = {"00_index": "full", "01_gradient_coding": "full"}


@functools.cache
def stage_module():
    """docs/stage.py as a module (loaded once, so that its exception classes are the same for every caller)."""
    spec = importlib.util.spec_from_file_location("docs_stage", ROOT / "docs" / "stage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@functools.cache
def check_module():
    """docs/check_site.py as a module."""
    spec = importlib.util.spec_from_file_location("docs_check_site", ROOT / "docs" / "check_site.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _markdown_output(text: str) -> dict:
    return {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": text, "text/plain": "<Markdown>"}}


def _with_outputs(stem: str, outputs: list[dict]) -> dict:
    """The committed notebook with ``outputs`` on its last code cell."""
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())
    last = [c for c in nb["cells"] if c["cell_type"] == "code"][-1]
    last["outputs"] = outputs
    return nb


def write_executed_copies(folder: Path) -> None:
    """Executed copies of the notebooks of ``EXECUTED`` in ``folder/<profile>/``."""
    from gclib import codes, symbolic
    from gclib.studies import gallery as gallery
    from gclib.codes import repetition

    figures = str(ROOT / "figures")
    # the claims tables are read from an empty folder: the links, not the verdicts, are what the site shows here
    index = _with_outputs("00_index", [
        _markdown_output(gallery.markdown(figures, data_dir=folder / "no-claims", notebooks_dir=".")),
        _markdown_output(gallery.status(figures))])
    small = repetition.exact_examples(6, 2, 1)
    table = symbolic.verification(small)
    wide = table.assign(**{f"column {i}": "a long cell that makes the table wider than the page" for i in range(6)})
    derivations = _with_outputs("01_gradient_coding", [
        _markdown_output(symbolic.derivation(codes.example_n3_code(), product=True)),
        _markdown_output(symbolic.derivation(small, rows=5)),
        {"output_type": "execute_result", "execution_count": 1, "metadata": {},
         "data": {"text/html": wide.to_html(), "text/plain": wide.to_string()}}])
    for stem, nb in (("00_index", index), ("01_gradient_coding", derivations)):
        out = folder / EXECUTED[stem] / f"{stem}.ipynb"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(nb))


def build(work: Path) -> Path:
    """Stage and build the site in ``work`` (``work/site``), as ``make docs`` does; raise AssertionError with
    Sphinx's output when the build fails (every warning is an error)."""
    write_executed_copies(work / "executed")
    stage_module().stage(work / "src", executed=work / "executed")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-c", str(ROOT / "docs"), "-b", "html",
           str(work / "src"), str(work / "site")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert p.returncode == 0, f"the site did not build:\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}"
    return work / "site"


#: What the background build writes in its folder when it ends: ``{"ok": bool, "error": "..."}``.
RESULT = "result.json"


def start(work: Path) -> subprocess.Popen:
    """Build the site in ``work`` in a process of its own, at the lowest CPU priority (``nice`` 19)."""
    work.mkdir(parents=True, exist_ok=True)
    nice = shutil.which("nice")  # (coreutils'; without it the build runs at the tests' priority)
    with open(work / "stderr.txt", "w") as err:
        proc = subprocess.Popen([*([nice, "-n", "19"] if nice else []), sys.executable, __file__, str(work)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    (work / "pid").write_text(str(proc.pid))
    return proc


def wait(work: Path, timeout: float = 900.0) -> Path:
    """The site the background build (:func:`start`) made in ``work``, once it is done; AssertionError with its
    error when it failed, died without a word, or did not end within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pid = int((work / "pid").read_text())
    while not (work / RESULT).exists():
        assert time.monotonic() < deadline, f"the site's background build did not end in {timeout:g} s"
        if not _alive(pid) and not (work / RESULT).exists():
            raise AssertionError(f"the site's background build died: {(work / 'stderr.txt').read_text()[-3000:]}")
        time.sleep(0.2)
    result = json.loads((work / RESULT).read_text())
    assert result["ok"], result["error"]
    return work / "site"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet waited for by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    try:
        build(folder)
        outcome = {"ok": True, "error": ""}
    except BaseException as e:  # what the waiting fixture raises
        outcome = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    (folder / (RESULT + ".part")).write_text(json.dumps(outcome))
    (folder / (RESULT + ".part")).rename(folder / RESULT)
