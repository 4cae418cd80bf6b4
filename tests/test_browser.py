"""JupyterLab in a real browser: open notebook 01, run all cells, check that a figure rendered, save a screenshot.

Starts ``jupyter lab`` (no browser, a free port on 127.0.0.1, a random token, root allowed, settings and
workspaces in a temporary directory) on a temporary copy of the notebook with the ``quick`` profile's parameters
injected (papermill's way), so the run is short and nothing is written into ``notebooks/`` or ``figures/``. Then
drives Debian's Chromium (``/usr/bin/chromium``; the browser builds Playwright would download cannot be fetched
here) through the Playwright Python package: Run > Run All Cells, wait for every cell, check an ``<img>`` output
was drawn, save the notebook from the browser and check the saved file holds a PNG output and no error.
Screenshots go to ``build/browser/``.

Skips, saying why, when Chromium or Playwright is missing (``apt-get install chromium``;
``pip install -e '.[browser]'``) or when the notebook is not there. ``GCLIB_CHROMIUM`` names another browser binary;
``GCLIB_BROWSER_NOTEBOOKS`` another notebooks directory (it must hold the notebook; its ``profiles.toml`` is used
when present); ``GCLIB_BROWSER_NOTEBOOK`` another notebook (file name, default ``01_gradient_coding.ipynb``).
"""
from __future__ import annotations

import json
import os
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
NOTEBOOKS = Path(os.environ.get("GCLIB_BROWSER_NOTEBOOKS", ROOT / "notebooks"))
NOTEBOOK = os.environ.get("GCLIB_BROWSER_NOTEBOOK", "01_gradient_coding.ipynb")
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
    if not (NOTEBOOKS / NOTEBOOK).exists():
        pytest.skip(f"{NOTEBOOKS / NOTEBOOK} does not exist in this checkout")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def quick_copy(src: Path, dst_dir: Path, figures_dir: Path) -> Path:
    """Copy notebook ``src`` into ``dst_dir`` with the quick profile's parameters injected (as papermill would)."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    from gclib.reproduce import load_profiles

    profiles_file = src.parent / "profiles.toml"
    profiles = load_profiles(profiles_file) if profiles_file.exists() else load_profiles()
    params = dict(profiles.get("quick", {}).get(src.stem, {}))
    params.update(profile="quick", figures_dir=str(figures_dir))
    nb = load_notebook_node(str(src))  # nbformat.read, plus the empty tag lists papermill expects
    nb = parameterize_notebook(nb, params, report_mode=False, kernel_name="python3", language="python")
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / src.name
    nbformat.write(nb, dst)
    return dst


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
               "--ServerApp.open_browser=False"]
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

    def log_text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.log.close()


@pytest.fixture
def lab(tmp_path):
    _requirements()
    nb_dir = tmp_path / "notebooks"
    nb = quick_copy(NOTEBOOKS / NOTEBOOK, nb_dir, tmp_path / "figures")
    server = LabServer(nb_dir, tmp_path)
    try:
        server.wait_ready()
        yield server, nb
    finally:
        server.stop()


# JavaScript run in the page: the state of every code cell's prompt ("[ ]:", "[*]:", "[3]:").
_PROMPTS = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))" \
           ".map(e => e.textContent.trim())"
_KERNEL_IDLE = "() => { const t = (document.querySelector('.jp-StatusBar-Widget') || {}).textContent || '';" \
               " return /\\| Idle/.test(t) && !/No Kernel/.test(t); }"
_RENDERED_IMAGES = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img'))" \
                   ".filter(i => i.complete && i.naturalWidth > 0).length"


def test_notebook_01_runs_in_jupyterlab_and_draws_a_figure(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    import nbformat

    server, nb_path = lab
    n_code = sum(c.cell_type == "code" for c in nbformat.read(nb_path, as_version=4).cells)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{nb_path.stem}.png"
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.set_default_timeout(SERVER_START_S * 1000)
            page.goto(f"{server.url}/lab/tree/{nb_path.name}?token={server.token}")
            page.wait_for_selector(".jp-Notebook .jp-CodeCell")
            # the kernel is ready when the status bar says "<kernel name> | Idle" (the toolbar's indicator already
            # says idle before a kernel exists)
            page.wait_for_function(_KERNEL_IDLE, polling=250)
            # cells are rendered in batches: wait until every code cell of the file is on the page
            page.wait_for_function(f"() => ({_PROMPTS})().length === {n_code}")

            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
            page.wait_for_function(f"() => ({_PROMPTS})().every(p => p !== '[ ]:')", timeout=30_000)
            page.wait_for_function(f"() => !({_PROMPTS})().some(p => p.includes('*'))", timeout=RUN_ALL_S * 1000,
                                   polling=500)
            prompts = page.evaluate(_PROMPTS)
            images = page.evaluate(_RENDERED_IMAGES)
            img = page.locator(".jp-Notebook .jp-OutputArea-output img").last
            if images:
                img.scroll_into_view_if_needed()
            page.screenshot(path=str(shot))
            if images:
                img.screenshot(path=str(SHOTS / f"{nb_path.stem}_figure.png"))

            # save from the browser (Ctrl+S) and read back what JupyterLab wrote
            before = nb_path.stat().st_mtime_ns
            page.locator(".jp-Notebook").first.click()
            page.keyboard.press("Control+s")
            deadline = time.monotonic() + 30
            while nb_path.stat().st_mtime_ns == before and time.monotonic() < deadline:
                time.sleep(0.2)
        except Exception:
            page.screenshot(path=str(SHOTS / f"{nb_path.stem}_failure.png"))
            raise
        finally:
            ctx.close()

    assert all(p[1:-2].isdigit() for p in prompts), f"not every code cell ran: prompts {prompts}"
    assert images >= 1, f"no figure was drawn in the browser (prompts {prompts}); see {shot}"
    saved = nbformat.read(nb_path, as_version=4)
    outputs = [o for c in saved.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.get("output_type") == "error"]
    assert not errors, f"cells raised: {errors}"
    assert any("image/png" in o.get("data", {}) for o in outputs), "the saved notebook holds no PNG output"
    assert shot.stat().st_size > 10_000, f"screenshot {shot} looks empty"
    # the notebook wrote its figure files where the injected parameters said
    assert list((tmp_path / "figures").glob("*.png")), "the notebook saved no PNG into its figures_dir"
