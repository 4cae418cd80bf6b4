"""JupyterLab in a real browser, served as ``make lab`` serves it: the repository's root, opening on the index.

A temporary copy of the repository's ``notebooks/`` and ``figures/`` (so nothing is written into either) is
served by ``jupyter lab`` (no browser, a free port on 127.0.0.1, a random token, root allowed, settings and
workspaces in a temporary directory) with ``make lab``'s default URL (LabApp.default_url), ``/lab/tree/notebooks/00_index.ipynb``.
Debian's Chromium (``/usr/bin/chromium``; the browser builds Playwright would download cannot be fetched here),
driven through the Playwright Python package:

1. opens the server's root and lands on the index; runs it; every image of the gallery is drawn (no
   ``naturalWidth`` 0), every data link answers 200, and the server logged no 404;
2. opens notebook 01, edits its parameters cell to ``profile = "quick"`` in the editor, runs all cells, checks
   every cell ran without error and a figure was drawn, saves from the browser, and checks that the figures went
   to ``build/figures/quick`` while ``figures/`` is byte for byte unchanged.

3. opens pages of the documentation site (built once per session, tests/docs_site.py) from disk with every
   request to another host refused: nothing asks for one, every formula is laid out as MathML (fractions stacked,
   matrix rows one below the other, no LaTeX left in the text), and wide tables and formulas scroll within the text
   column, left of the right-hand table of contents.

Screenshots go to ``build/browser/``. Skips, saying why, when Chromium or Playwright is missing (``apt-get install
chromium``; ``pip install -e '.[browser]'``). ``GCLIB_CHROMIUM`` names another browser binary;
``GCLIB_BROWSER_NOTEBOOK`` another notebook for step 2 (file name, default ``01_gradient_coding.ipynb``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("GCLIB_CHROMIUM", "/usr/bin/chromium"))
NOTEBOOK = os.environ.get("GCLIB_BROWSER_NOTEBOOK", "01_gradient_coding.ipynb")
INDEX = "notebooks/00_index.ipynb"
SHOTS = ROOT / "build" / "browser"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
#: JupyterLab user settings for the test: every cell stays in the DOM, no news or update checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}
SERVER_START_S = 90
RUN_ALL_S = 180

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]


def _requirements():
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (install it: apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the Playwright Python package is not installed (pip install -e '.[browser]')")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """``jupyter lab`` on ``root_dir`` in its own process group; ``url`` and ``token`` once started."""

    def __init__(self, root_dir: Path, work: Path):
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        settings = work / "lab-settings"
        for rel, value in LAB_SETTINGS.items():
            f = settings / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(value))
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)  # the kernel must use the inline backend for figures to show
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                         ("JUPYTER_DATA_DIR", "data")):
            env[var] = str(work / sub)
        # the kernelspec comes from sys.prefix (the venv), which stays on the data path
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
               f"--port={self.port}", "--port-retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={root_dir}", f"--LabApp.user_settings_dir={settings}",
               f"--LabApp.workspaces_dir={work / 'workspaces'}", "--LabApp.news_url=",
               "--ServerApp.open_browser=False", f"--LabApp.default_url=/lab/tree/{INDEX}"]
        self.log_path = work / "jupyter-lab.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_ready(self, timeout: float = SERVER_START_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"jupyter lab did not answer within {timeout} s:\n{self.log_text()}")

    def log_text(self, tail: int = 4000) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")[-tail:]

    def not_found(self) -> list[str]:
        """The requests the server answered with 404, from its log."""
        return [ln.strip() for ln in self.log_text(10 ** 7).splitlines() if re.search(r"\b404 [A-Z]+ /", ln)]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.log.close()


def _digests(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The server on a copy of the repository's layout: ``repo/notebooks`` and ``repo/figures``."""
    _requirements()
    work = tmp_path_factory.mktemp("lab")
    repo = work / "repo"
    def ignore(folder, names):  # checkpoints, caches, and sockets of kernels running there
        return [n for n in names if n in (".ipynb_checkpoints", "__pycache__")
                or not (os.path.isfile(os.path.join(folder, n)) or os.path.isdir(os.path.join(folder, n)))]

    shutil.copytree(ROOT / "notebooks", repo / "notebooks", ignore=ignore)
    shutil.copytree(ROOT / "figures", repo / "figures", ignore=ignore)
    server = LabServer(repo, work)
    try:
        server.wait_ready()
        yield server, repo, work
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser_present():
    """Skips, saying why, when Chromium or Playwright is missing (session-scoped: checked before the docs site is
    built for nothing)."""
    _requirements()


@pytest.fixture(scope="module")
def playwright_sync(browser_present):
    """Playwright's synchronous API, started once for the module (it cannot run twice at the same time)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(lab, playwright_sync):
    _, _, work = lab
    ctx = playwright_sync.chromium.launch_persistent_context(
        str(work / "chromium-profile"), executable_path=str(CHROMIUM), headless=True,
        args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
    try:
        yield ctx
    finally:
        ctx.close()


# JavaScript run in the page: the state of every code cell's prompt ("[ ]:", "[*]:", "[3]:").
_PROMPTS = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))" \
           ".map(e => e.textContent.trim())"
_KERNEL_IDLE = "() => { const t = (document.querySelector('.jp-StatusBar-Widget') || {}).textContent || '';" \
               " return /\\| Idle/.test(t) && !/No Kernel/.test(t); }"
_IMAGES = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img'))" \
          ".map(i => ({src: i.getAttribute('src'), complete: i.complete, width: i.naturalWidth}))"
_LINKS = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output a[href]'))" \
         ".map(a => ({href: a.getAttribute('href'), url: a.href}))"


def _open(page, url: str, n_code: int):
    """Open ``url`` and wait until the notebook's kernel is idle and its ``n_code`` code cells are on the page."""
    page.set_default_timeout(SERVER_START_S * 1000)
    page.goto(url)
    page.wait_for_selector(".jp-Notebook .jp-CodeCell")
    # the status bar says "<kernel name> | Idle" once a kernel exists (the toolbar's indicator says idle before)
    page.wait_for_function(_KERNEL_IDLE, polling=250)
    page.wait_for_function(f"() => ({_PROMPTS})().length === {n_code}")  # cells are rendered in batches


def _run_all(page) -> list[str]:
    """Run > Run All Cells; wait until no cell is pending or running; return the prompts."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
    page.wait_for_function(f"() => ({_PROMPTS})().every(p => p !== '[ ]:')", timeout=30_000)
    page.wait_for_function(f"() => !({_PROMPTS})().some(p => p.includes('*'))", timeout=RUN_ALL_S * 1000,
                           polling=500)
    return page.evaluate(_PROMPTS)


def _code_cells(path: Path) -> int:
    import nbformat

    return sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)


def _shot(page, name: str):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_the_index_opens_first_and_every_image_and_data_link_resolves(lab, browser):
    from gclib.studies import gallery as gallery

    server, repo, _ = lab
    shown = [f.stem for f in gallery.FIGURES if (repo / "figures" / f"{f.stem}.png").exists()]
    page = browser.new_page()
    try:
        _open(page, f"{server.url}/?token={server.token}", _code_cells(repo / INDEX))  # the default URL
        assert page.url.split("?")[0].endswith(f"/lab/tree/{INDEX}"), f"the server opened on {page.url}"
        prompts = _run_all(page)
        page.wait_for_function(f"() => ({_IMAGES})().length >= {len(shown)} && "
                               f"({_IMAGES})().every(i => i.complete)", timeout=60_000)
        images, links = page.evaluate(_IMAGES), page.evaluate(_LINKS)
        _shot(page, "00_index")
        answers = {}
        for link in links:  # JupyterLab makes relative links absolute: /files/<path from the root>
            if link["url"].startswith(server.url + "/"):
                answers[link["url"].split("?")[0][len(server.url):]] = page.request.get(link["url"]).status
    except Exception:
        _shot(page, "00_index_failure")
        raise
    finally:
        page.close()
    assert all(p[1:-2].isdigit() for p in prompts), f"not every code cell of the index ran: prompts {prompts}"
    broken = [i["src"] for i in images if not i["width"]]
    assert not broken, f"images the index could not load: {broken}"
    drawn = {Path(i["src"].split("?")[0]).stem for i in images}
    assert set(shown) <= drawn, f"figures missing from the index: {sorted(set(shown) - drawn)}"
    data = [h for h in answers if h.startswith("/files/figures/") and h.endswith(".csv")]
    assert len(data) >= len(shown), f"the index links fewer data files ({len(data)}) than figures ({len(shown)})"
    bad = {h: code for h, code in answers.items() if code != 200}
    assert not bad, f"links of the index that do not resolve: {bad}"
    assert not server.not_found(), "the server answered 404:\n" + "\n".join(server.not_found())


def test_profile_quick_set_in_the_browser_runs_quick_and_leaves_figures_alone(lab, browser):
    import nbformat

    server, repo, _ = lab
    nb_path = repo / "notebooks" / NOTEBOOK
    if not nb_path.exists():
        pytest.skip(f"notebooks/{NOTEBOOK} does not exist in this checkout")
    committed = _digests(repo / "figures")
    params_at = next(i for i, c in enumerate(nbformat.read(nb_path, as_version=4).cells)
                     if "parameters" in c.metadata.get("tags", []))
    page = browser.new_page()
    try:
        # ?reset: a fresh workspace, without the tab of the index
        _open(page, f"{server.url}/lab/tree/notebooks/{NOTEBOOK}?reset&token={server.token}", _code_cells(nb_path))
        # the first line of the parameters cell is `profile = "full"`: replace it in the editor
        editor = page.locator(".jp-Notebook .jp-Cell").nth(params_at).locator(".cm-content")
        editor.click()
        page.keyboard.press("Control+Home")
        page.keyboard.press("Shift+End")
        page.keyboard.insert_text('profile = "quick"')
        page.keyboard.press("Escape")
        prompts = _run_all(page)
        images = page.evaluate(_IMAGES)
        img = page.locator(".jp-Notebook .jp-OutputArea-output img").last
        if images:
            img.scroll_into_view_if_needed()
            img.screenshot(path=str(SHOTS / f"{nb_path.stem}_figure.png"))
        _shot(page, nb_path.stem)
        # save from the browser (Ctrl+S) and read back what JupyterLab wrote
        before = nb_path.stat().st_mtime_ns
        page.locator(".jp-Notebook").first.click()
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while nb_path.stat().st_mtime_ns == before and time.monotonic() < deadline:
            time.sleep(0.2)
    except Exception:
        _shot(page, f"{nb_path.stem}_failure")
        raise
    finally:
        page.close()

    assert all(p[1:-2].isdigit() for p in prompts), f"not every code cell ran: prompts {prompts}"
    assert sum(bool(i["width"]) for i in images) >= 1, f"no figure was drawn in the browser (prompts {prompts})"
    saved = nbformat.read(nb_path, as_version=4)
    assert saved.cells[params_at].source.splitlines()[0] == 'profile = "quick"', "the edit was not saved"
    outputs = [o for c in saved.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.get("output_type") == "error"]
    assert not errors, f"cells raised: {errors}"
    assert any("image/png" in o.get("data", {}) for o in outputs), "the saved notebook holds no PNG output"
    said = "".join(o.get("text", "") for o in saved.cells[params_at + 1].get("outputs", []))
    assert said.startswith("profile 'quick':"), f"the validation cell did not apply the quick profile: {said!r}"
    quick = repo / "build" / "figures" / "quick"
    assert list(quick.glob(f"{nb_path.stem[:2]}_*.png")), f"no figure written into {quick}"
    assert _digests(repo / "figures") == committed, "the quick run wrote into figures/"
    assert not server.not_found(), "the server answered 404:\n" + "\n".join(server.not_found())



# JavaScript run in a page of the documentation site: how its formulas and wide content are laid out.
_DOCS_LAYOUT = r"""() => {
  const article = document.querySelector('article');
  const maths = [...article.querySelectorAll('math')];
  const box = e => e.getBoundingClientRect();
  const fractions = [...article.querySelectorAll('mfrac')].map(
    f => box(f.children[0]).bottom <= box(f.children[1]).top + 1);
  const matrices = [...article.querySelectorAll('mtable')].map(t => {
    const rows = [...t.children].filter(r => r.localName === 'mtr');
    return rows.length < 2 || box(rows[1]).top >= box(rows[0]).bottom - 1; });
  const prose = article.cloneNode(true);
  prose.querySelectorAll('pre, code, math').forEach(e => e.remove());
  const visibleRight = e => { let r = box(e).right;
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
      if (getComputedStyle(p).overflowX !== 'visible') r = Math.min(r, box(p).right);
    return r; };
  const wide = [...article.querySelectorAll('table, div.math, .cell_output .output, img')];
  const toc = document.querySelector('.toc-drawer');
  return {
    boxes: article.querySelectorAll('span.math, div.math').length,
    maths: maths.length,
    mathml: maths.filter(m => m instanceof MathMLElement && box(m).width > 0 && box(m).height > 0).length,
    fractions, matrices,
    raw: (prose.textContent.match(/\\\(|\\\[|\$\$|\\(frac|begin|left|alpha|sum)\b/g) || []),
    scrolled: wide.filter(e => e.scrollWidth > e.clientWidth + 1).length,
    right: Math.max(...wide.map(visibleRight)),
    column: box(article).right,
    toc: toc && getComputedStyle(toc).display !== 'none' ? box(toc).left : null,
  }; }"""


def test_the_docs_site_draws_its_formulas_offline_and_keeps_wide_content_in_its_column(browser_present, docs_site,
                                                                                        playwright_sync):
    outside, pages = [], {}
    # a browser of its own: the site is read from disk, without JupyterLab's server
    chromium = playwright_sync.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    try:
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        # no network: a request to another host is recorded and refused
        page.route(re.compile(r"^(https?|wss?)://"), lambda route: (outside.append(route.request.url),
                                                                    route.abort()))
        # 02: inline formulas of the Markdown cells; 01: the derivations' matrices and a table wider than the page
        for name in ("notebooks/02_reed_solomon.html", "notebooks/01_gradient_coding.html"):
            page.goto((docs_site / name).as_uri())
            page.wait_for_load_state("load")
            pages[name] = page.evaluate(_DOCS_LAYOUT)
            _shot(page, "docs_" + Path(name).stem)
            first = page.locator("article div.math").first
            if first.count():
                first.scroll_into_view_if_needed()
                first.screenshot(path=str(SHOTS / f"docs_{Path(name).stem}_formula.png"))
    finally:
        chromium.close()
    assert not outside, f"the site asked for files from other hosts: {outside}"
    for name, got in pages.items():
        assert got["maths"] and got["maths"] == got["boxes"], f"{name}: formulas without MathML: {got}"
        assert got["mathml"] == got["maths"], f"{name}: formulas the browser did not lay out as MathML: {got}"
        assert all(got["fractions"]), f"{name}: a fraction whose numerator is not above its denominator: {got}"
        assert all(got["matrices"]), f"{name}: a matrix whose rows are not stacked: {got}"
        assert not got["raw"], f"{name}: LaTeX left in the text: {got['raw']}"
        assert got["right"] <= got["column"] + 1, f"{name}: content runs past the text column: {got}"
        if got["toc"] is not None:
            assert got["right"] <= got["toc"], f"{name}: content runs under the table of contents: {got}"
    derivations = pages["notebooks/01_gradient_coding.html"]
    assert derivations["matrices"] and derivations["fractions"], f"no matrix or fraction was shown: {derivations}"
    assert derivations["scrolled"] >= 1, f"nothing wider than the column was shown: {derivations}"
    assert derivations["toc"] is not None, "no right-hand table of contents at 1400 px"
