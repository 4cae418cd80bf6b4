"""The papermill driver behind ``make reproduce``.

Every notebook in ``notebooks/`` is executed with the parameters of the chosen profile (``notebooks/profiles.toml``:
``quick`` for tests and CI, ``full`` for the figures), its executed copy written to ``build/executed/<profile>/``
(git-ignored), and its figures (PNG plus CSV) to the ``figures_dir`` given, else to ``figures/`` for the full
profile and ``build/figures/<profile>/`` for any other: only the full profile writes the committed figures (a
``figures_dir`` that is ``figures/`` is refused for the others). One line per notebook with its time; a failing
notebook is reported with the cell that failed and the others still run.

Every run also writes ``manifest.json`` next to the executed notebooks (see :func:`write_manifest`): for each
notebook its profile, effective parameters, seed, start time, duration, ok/failed, the figure files it wrote (with
their SHA-256), the git commit of the checkout and the versions of Python and of the packages. A full-profile run
into ``figures/`` also writes ``figures/manifest.json``, the committed record of the committed figures (paths in it
relative to the repository). :func:`trace` finds the run that made a file by its content's SHA-256.
"""
from __future__ import annotations

import ast
import contextlib
import datetime as _dt
import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from gclib import checks, files, notebook_schedule

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PROFILES = NOTEBOOKS / "profiles.toml"
EXECUTED = ROOT / "build" / "executed"
FIGURES = ROOT / "figures"
MANIFEST = "manifest.json"
#: the profile whose figures are committed
FULL = "full"


def in_clone() -> bool:
    """Whether this gclib is a checkout of the repository (its notebooks beside it), not an installed package."""
    return NOTEBOOKS.is_dir()


def plural(n: int, word: str) -> str:
    """``1 notebook``, ``2 notebooks``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def default_figures_dir(profile: str) -> Path:
    """Where a profile's figures go when no folder is given: ``figures/`` for the full profile, else
    ``build/figures/<profile>/``."""
    return FIGURES if profile == FULL else ROOT / "build" / "figures" / profile


def _is_committed_figures(d) -> bool:
    return Path(d).resolve() == FIGURES.resolve()


def check_figures_dir(profile: str, figures_dir) -> Path:
    """The figures folder of a run (:func:`default_figures_dir` when ``None``), resolved; a profile other than the
    full one may not write into the committed ``figures/`` (ValueError)."""
    d = default_figures_dir(profile) if figures_dir is None else Path(figures_dir)
    d = d.resolve()
    if profile != FULL and _is_committed_figures(d):
        raise ValueError(f"figures_dir must not be the committed figures folder for profile {profile!r} (only the "
                         f"{FULL} profile writes there), got {str(figures_dir)!r}; leave it out to write into "
                         f"{default_figures_dir(profile).relative_to(ROOT)}")
    return d


def _read_profiles_file(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"profiles file {path} not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"profiles file {path} is malformed: {e}") from None
    return data


def load_profiles(path: Path | None = None) -> dict:
    """``{profile: {notebook_stem: {param: value}}}`` (the ``[alone]`` table of
    :mod:`gclib.notebook_schedule` left out); raises ValueError naming a malformed file."""
    path = PROFILES if path is None else path
    data = {k: v for k, v in _read_profiles_file(path).items() if k != notebook_schedule.ALONE}
    for prof, table in data.items():
        if not isinstance(table, dict) or any(not isinstance(v, dict) for v in table.values()):
            raise ValueError(f"profiles file {path}: [{prof}] must hold one table per notebook")
    return data


def _check_profile(profiles: dict, profile: str) -> None:
    if profile not in profiles:
        raise ValueError(f"profile must be one of {sorted(profiles)}, got {profile!r}")


def notebook_paths(only=None, notebooks_dir: Path | None = None) -> list[Path]:
    """The notebooks to run, in order: by name, the index (``00_*``) last, since it summarizes what the others
    wrote (their claims tables and figures)."""
    paths = sorted(Path(notebooks_dir or NOTEBOOKS).glob("[0-9]*.ipynb"), key=lambda p: (p.stem[:2] == "00", p.stem))
    if only:
        wanted = set(only)
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            raise ValueError(f"unknown notebooks {sorted(unknown)}; have {[p.stem for p in paths]}")
        paths = [p for p in paths if p.stem in wanted]
    return paths


@dataclass
class NotebookRun:
    """One notebook's run through papermill (a run over MPI is :class:`gclib.runtime.result.RunResult`)."""
    notebook: str
    ok: bool
    seconds: float
    parameters: dict = field(default_factory=dict)
    error: str = ""
    output: str = ""
    #: every parameter the notebook ran with: its ``parameters`` cell overridden by the injected ones
    effective: dict = field(default_factory=dict)
    started: str = ""
    #: figure files written by this run, ``{file name: "sha256:<hex>"}``
    figures: dict = field(default_factory=dict)
    source: str = ""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _failed_cell(nb_path: Path) -> str:
    """Describe the first cell of an executed notebook that raised: its index, its first line and the error."""
    try:
        import nbformat

        nb = nbformat.read(nb_path, as_version=4)
    except Exception:  # pragma: no cover - unreadable output
        return "(executed notebook unreadable)"
    added = {"injected-parameters", "papermill-error-cell-tag"}  # cells papermill adds to the executed copy
    cells = [c for c in nb.cells if not added & set(c.metadata.get("tags", []))]
    for i, cell in enumerate(cells):  # i: the cell's index in the source notebook
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                return f"cell {i} ({first[:60]!r}): {out.get('ename')}: {_one_line(out.get('evalue', ''))[:300]}"
    return "(no failing cell recorded)"


def _kernel_manager_class():
    """A kernel manager on IPC transport (local, no TCP ports, and no ipykernel warning about plain TCP), its
    sockets under a name of its own in the temporary folder: left to jupyter_client, every kernel started from one
    folder would take the same ``kernel-ipc-1`` to ``-5`` there, and two notebooks run at once (two test workers, a
    lab beside a run) would answer each other's messages ("Invalid Signature")."""
    from jupyter_client.manager import KernelManager

    class IPCKernelManager(KernelManager):
        def __init__(self, **kw):
            kw.setdefault("transport", "ipc")
            kw.setdefault("ip", os.path.join(tempfile.gettempdir(), f"gclib-kernel-{uuid.uuid4().hex[:16]}-ipc"))
            super().__init__(**kw)

        async def _async_interrupt_kernel(self):
            # papermill shuts a kernel down after its last cell, and jupyter_client interrupts it first: nothing
            # runs then, and the signal, landing in a message handler, would log "KeyboardInterrupt caught"
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return IPCKernelManager


def run_notebook(path: Path, profile: str = "full", out_dir: Path | None = None, figures_dir: Path | None = None,
                 extra: dict | None = None, profiles: dict | None = None, progress: bool = False) -> NotebookRun:
    """Execute one notebook with its profile parameters; never raises for a failing notebook. With ``progress``,
    a bar on stderr counts its cells done (removed when the notebook ends)."""
    import papermill as pm

    profiles = load_profiles() if profiles is None else profiles
    _check_profile(profiles, profile)
    params = dict(profiles[profile].get(path.stem, {}))
    # notebooks run with their own folder as working directory: a relative folder given here means the caller's
    figures_dir = check_figures_dir(profile, figures_dir or None)
    out_dir = Path(out_dir).resolve() if out_dir else EXECUTED / profile
    params.update({"profile": profile, "figures_dir": str(figures_dir)})
    params.update(extra or {})
    out_dir.mkdir(parents=True, exist_ok=True)
    fig_dir = Path(params["figures_dir"])
    fig_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / path.name
    before = _snapshot(fig_dir)
    meta = dict(effective=effective_parameters(path, params), started=_utcnow(), source=str(path))
    t0 = time.perf_counter()
    try:
        with _inline_figures():
            bar = {"desc": f"  {path.stem}", "leave": False, "file": sys.stderr} if progress else False
            pm.execute_notebook(str(path), str(out), parameters=params, cwd=str(path.parent), progress_bar=bar,
                                kernel_name="python3", log_output=False,
                                kernel_manager_class=_kernel_manager_class())
        r = NotebookRun(path.stem, True, time.perf_counter() - t0, params, output=str(out), **meta)
    except pm.PapermillExecutionError:
        r = NotebookRun(path.stem, False, time.perf_counter() - t0, params, _failed_cell(out), str(out), **meta)
    except Exception as e:  # kernel died, notebook unreadable, ...
        r = NotebookRun(path.stem, False, time.perf_counter() - t0, params, f"{type(e).__name__}: {_one_line(e)}",
                      str(out), **meta)
    r.figures = _written(fig_dir, before, prefix=f"{path.stem[:2]}_")
    return r


# ------------------------------------------------------------------------------------------------- manifest
def _utcnow() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def _inline_figures():
    """Let the kernel use its inline backend (figures embedded in the executed notebook) even when the caller set
    ``MPLBACKEND=Agg`` for itself (the Makefile does); restored afterwards."""
    saved = os.environ.get("MPLBACKEND")
    if saved is not None and saved.lower() == "agg":
        del os.environ["MPLBACKEND"]
    try:
        yield
    finally:
        if saved is not None:
            os.environ["MPLBACKEND"] = saved


def _snapshot(d: Path) -> dict:
    """``{relative path: (size, mtime_ns)}`` of every file under ``d`` (its manifest excepted)."""
    if not d.is_dir():
        return {}
    return {str(f.relative_to(d)): (f.stat().st_size, f.stat().st_mtime_ns) for f in d.rglob("*")
            if f.is_file() and f.relative_to(d) != Path(MANIFEST)}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def _written(d: Path, before: dict, prefix: str = "") -> dict:
    """Files under ``d`` created or rewritten since ``before`` (a :func:`_snapshot`) whose names start with
    ``prefix`` (a notebook's number: another notebook may be writing beside it), with their hashes."""
    after = _snapshot(d)
    return {name: sha256(d / name) for name, st in sorted(after.items())
            if before.get(name) != st and name.startswith(prefix)}


def _literal(src: str):
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return src  # an expression: recorded as its source text


def effective_parameters(path: Path, injected: dict) -> dict:
    """The defaults of the notebook's ``parameters`` cell (literals evaluated, other expressions kept as source
    text) overridden by the ``injected`` values: what the run actually used."""
    try:
        import papermill as pm

        defaults = {k: _literal(v["default"]) for k, v in pm.inspect_notebook(str(path)).items()}
    except Exception:  # no parameters cell, unreadable notebook: the injected values are all we know
        defaults = {}
    return {**defaults, **injected}


def git_state(root: Path = ROOT) -> dict:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout at ``root`` (``dirty``: uncommitted
    changes to tracked files)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        status = git("status", "--porcelain", "--untracked-files=no")
        return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def _requirement_names(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """Distribution names of every dependency and optional dependency in ``pyproject.toml``."""
    try:
        with open(pyproject, "rb") as fh:
            proj = tomllib.load(fh).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return []
    reqs = list(proj.get("dependencies", []))
    for extra in proj.get("optional-dependencies", {}).values():
        reqs += extra
    names = {re.split(r"[\s\[<>=!~;]", r.strip(), maxsplit=1)[0] for r in reqs}
    return sorted(n for n in names if n and n != proj.get("name"))


def package_versions(names=None) -> dict:
    """``{distribution: version or None}`` for gclib's dependencies (and extras), plus the Jupyter pieces that run
    the notebooks."""
    names = sorted(set(_requirement_names() if names is None else names)
                   | {"gclib", "nbclient", "jupyter_client", "ipykernel"})
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def environment() -> dict:
    """Where a run happened: git commit, Python, platform and package versions (JSON-ready)."""
    return {"git": git_state(), "python": platform.python_version(), "platform": platform.platform(),
            "packages": package_versions()}


def manifest_entry(r: NotebookRun, profile: str, env: dict) -> dict:
    """One notebook's record in the manifest."""
    return {
        "notebook": r.notebook, "profile": profile, "ok": r.ok, "status": "ok" if r.ok else "failed",
        "error": r.error, "started": r.started, "duration_s": round(r.seconds, 3),
        "parameters": r.effective or r.parameters, "injected": r.parameters,
        "seed": (r.effective or r.parameters).get("seed"), "source": r.source, "executed": r.output,
        "figures": r.figures, "git_commit": env["git"]["commit"], "git_dirty": env["git"]["dirty"],
        "gclib_version": env["packages"].get("gclib"), "python": env["python"], "platform": env["platform"],
        "packages": env["packages"], "run": env.get("run", {}),
    }


def _relative(value, root: Path = ROOT):
    """``value`` with every string that is a path inside ``root`` made relative to it (recursively through dicts
    and lists): the committed manifest names no folder outside the repository."""
    if isinstance(value, dict):
        return {k: _relative(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative(v, root) for v in value]
    if isinstance(value, str) and value.startswith(str(root) + os.sep):
        return value[len(str(root)) + 1:]
    if isinstance(value, str) and value == str(root):
        return "."
    return value


def read_manifest(out_dir: Path) -> dict:
    """The manifest in ``out_dir`` (``{}`` when there is none or it is unreadable)."""
    try:
        return json.loads((Path(out_dir) / MANIFEST).read_text())
    except (OSError, ValueError, RecursionError):
        return {}


def write_manifest(out_dir: Path, profile: str, results: list[NotebookRun], env: dict | None = None,
                   figures_dir=None, relative_to: Path | None = None) -> Path:
    """Record ``results`` in ``out_dir/manifest.json``; entries of notebooks not run this time are kept (a run
    with ``--only`` does not forget the others), unless the manifest was for another profile. Written atomically.

    Layout: ``{"manifest": 1, "profile", "updated", "figures_dir", "notebooks": {stem: entry}, "files": {file:
    {"sha256", "notebook"}}}`` with the entry of :func:`manifest_entry`; ``files`` indexes every figure file by
    name. With ``relative_to`` (the committed ``figures/manifest.json``), paths inside that folder are written
    relative to it.
    """
    env = environment() if env is None else env
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    old = read_manifest(out_dir)
    entries = dict(old.get("notebooks", {})) if old.get("profile") == profile else {}
    for r in results:
        entries[r.notebook] = manifest_entry(r, profile, env)
    doc = {"manifest": 1, "profile": profile, "updated": _utcnow(), "figures_dir": str(figures_dir or FIGURES),
           "notebooks": dict(sorted(entries.items()))}
    doc["files"] = {name: {"sha256": digest, "notebook": stem} for stem, e in doc["notebooks"].items()
                    for name, digest in sorted(e.get("figures", {}).items())}
    if relative_to is not None:
        doc = _relative(doc, Path(relative_to))
    path = out_dir / MANIFEST
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    os.replace(tmp, path)
    return path


#: The most a manifest may hold, checked before it is read.
MANIFEST_BUDGET = files.Budget("a manifest", 64 * files.MIB, constant="gclib.reproduce.MANIFEST_BUDGET")


def checked_manifest(path: Path) -> dict:
    """The manifest at ``path``, its shape checked: a JSON object whose ``notebooks`` maps names to entries, each
    entry an object whose ``figures`` maps file names to digests.

    Raises:
        ValueError naming the file and what is wrong with it (unreadable, not JSON, the wrong shape).
    """
    try:
        data = files.read_text(None, path, MANIFEST_BUDGET, expected="a manifest of gclib reproduce (JSON)")
    except files.FileRefused as e:
        raise ValueError(f"manifest {e}") from None
    try:
        man = json.loads(data)
    except ValueError as e:  # invalid JSON
        raise ValueError(f"manifest {path} is not valid JSON ({_one_line(e)}); run gclib reproduce again to "
                         f"rewrite it") from None
    except RecursionError:
        raise ValueError(f"manifest {path} is nested too deeply to be a manifest; run gclib reproduce again to "
                         f"rewrite it") from None
    if not isinstance(man, dict):
        raise ValueError(f"manifest {path} must hold a JSON object, got {type(man).__name__}")
    if not isinstance(man.get("figures_dir", ""), (str, type(None))):
        raise ValueError(f"manifest {path}: 'figures_dir' must be a folder path, got a "
                         f"{type(man['figures_dir']).__name__}")
    books = man.get("notebooks", {})
    if not isinstance(books, dict):
        raise ValueError(f"manifest {path}: 'notebooks' must map notebook names to entries, got "
                         f"{type(books).__name__}")
    for stem, e in books.items():
        if not isinstance(e, dict):
            raise ValueError(f"manifest {path}: the entry of {stem!r} must be an object, got {type(e).__name__}")
        figs = e.get("figures", {})
        if not isinstance(figs, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in figs.items()):
            raise ValueError(f"manifest {path}: 'figures' of {stem[:60]!r} must map file names to digests")
    return man


def _manifest_paths(executed, figures_dir, near: Path | None) -> list[Path]:
    """Every manifest :func:`trace` reads: the committed one in the figures folder, the per-profile ones under
    ``executed``, and the one beside the file traced; each once."""
    executed = Path(executed)
    found = [Path(figures_dir or FIGURES) / MANIFEST, *sorted(executed.glob(f"*/{MANIFEST}")), executed / MANIFEST]
    if near is not None:
        found.append(near / MANIFEST)
    out, seen = [], set()
    for p in found:
        key = p.resolve()
        if p.is_file() and key not in seen:
            seen.add(key)
            out.append(p)
    return out


def duration_text(manifest: Path = FIGURES / MANIFEST) -> str:
    """How long the run recorded in ``manifest`` took on the clock, and its longest notebook, in one sentence (the
    README's, rendered from the committed manifest so that it stays that of the last full run)."""
    m = checked_manifest(manifest)
    nbs = m["notebooks"]
    total, jobs = notebook_schedule.wall_seconds(nbs)
    longest = max(nbs, key=lambda k: float(nbs[k].get("duration_s", 0.0)))
    at_once = f", {jobs} at a time" if jobs > 1 else ""
    return (f"The last `{m['profile']}` run took {int(total // 60)} min {int(total % 60):02d} s for its {len(nbs)} "
            f"notebooks{at_once} (the longest, `{longest}`, {nbs[longest]['duration_s']:.0f} s; recorded in "
            f"`{manifest.parent.name}/{manifest.name}`).")


def figure_file(figure, figures_dir=None) -> Path:
    """The file named by ``figure``: a path to a file, or the name of one in the figures folder (``04_fig1`` for
    ``figures/04_fig1.png``). Raises ValueError when there is no such file."""
    fig = Path(figure)
    if fig.is_file():
        return fig
    if fig.parent == Path("."):
        base = Path(figures_dir or FIGURES)
        for candidate in (base / fig.name, base / (fig.name + ".png")):
            if candidate.is_file():
                return candidate
    raise ValueError(f"figure {str(figure)!r} is not a file (give a path, or the name of a file in "
                     f"{figures_dir or FIGURES})")


def trace(figure, executed=EXECUTED, figures_dir=None) -> list[dict]:
    """The recorded run(s) that wrote the content of ``figure`` (a file, or a name in the figures folder), newest
    first: matched by SHA-256, whatever the file is called now. ``[]`` when no recorded run wrote these bytes.

    The manifests read: ``figures_dir/manifest.json`` (default the committed ``figures/manifest.json``), every
    ``executed/*/manifest.json`` (one per profile) and the ``manifest.json`` beside the file.

    Each record: file, sha256, recorded_as (the file name the run wrote), notebook, profile, started, duration_s,
    status, seed, parameters, git_commit, git_dirty, gclib_version, manifest. The same run found in two manifests
    is listed once.

    Raises:
        ValueError: a manifest is malformed (see :func:`checked_manifest`), or ``figure`` names no file.
    """
    manifests = [(mf, checked_manifest(mf))
                 for mf in _manifest_paths(executed, figures_dir, Path(figure).parent if Path(figure).is_file()
                                           else None)]
    path = figure_file(figure, figures_dir)
    digest = sha256(path)
    out, seen = [], set()
    for mf, man in manifests:
        for stem, e in man.get("notebooks", {}).items():
            for fname, recorded in e.get("figures", {}).items():
                key = (stem, e.get("started"), fname)
                if recorded != digest or key in seen:
                    continue
                seen.add(key)
                out.append({"file": str(path), "sha256": digest, "recorded_as": fname, "notebook": stem,
                            "profile": e.get("profile", man.get("profile")), "started": e.get("started"),
                            "duration_s": e.get("duration_s"), "status": e.get("status"), "seed": e.get("seed"),
                            "parameters": e.get("parameters"), "git_commit": e.get("git_commit"),
                            "git_dirty": e.get("git_dirty"),
                            "gclib_version": e.get("gclib_version", (e.get("packages") or {}).get("gclib")),
                            "manifest": str(mf)})
    return sorted(out, key=lambda r: str(r["started"] or ""), reverse=True)


def main(profile: str = "full", only=None, figures_dir=None, out_dir=None, notebooks_dir=None,
         jobs: int = 1) -> int:
    """Run the suite; print a line per notebook and a summary; return 0 when every notebook passed. With one job,
    on a terminal, a bar on stderr counts the cells of the notebook that runs.

    ``notebooks_dir`` (default ``notebooks/``) holds the notebooks and their ``profiles.toml``. The manifest
    (``manifest.json`` beside the executed notebooks) is updated after every notebook. ``jobs`` notebooks run at
    a time, but those that start MPI jobs run alone and the index runs last (:mod:`gclib.notebook_schedule`).
    """
    if notebooks_dir is None and not in_clone():
        print(f"gclib: error: gclib reproduce runs the notebooks of a checkout of the repository, and this gclib "
              f"({ROOT / 'gclib'}) is an installed package without them: clone the repository and run `make "
              f"reproduce` in the clone", file=sys.stderr)
        return 2
    try:
        figures_dir, out_dir, profiles, paths, alone = _arguments(profile, only, figures_dir, out_dir,
                                                                  notebooks_dir, jobs)
    except ValueError as e:
        print(f"gclib: error: {e}", file=sys.stderr)
        return 2
    import papermill  # noqa: F401  (a missing one is the command's one line of error, before any other line)

    exec_dir = Path(out_dir or EXECUTED / profile)
    solo = [p.stem for p in paths if p.stem in alone.get(profile, set())]
    print(f"reproduce: {plural(len(paths), 'notebook')}, profile '{profile}'"
          + (f", {jobs} at a time ({', '.join(solo) or 'none'} alone, the index last)" if jobs > 1 else ""),
          flush=True)
    results, announced = [], []  # announced: the notebook whose name starts the line being printed, if any
    t0 = time.perf_counter()
    env = dict(environment(), run={"started": _utcnow(), "jobs": jobs})  # each entry says which run made it

    def done(r: NotebookRun) -> None:
        results.append(r)
        write_manifest(exec_dir, profile, [r], env, figures_dir)
        if profile == FULL and _is_committed_figures(figures_dir):  # the record committed with the figures
            write_manifest(figures_dir, profile, [r], env, figures_dir, relative_to=ROOT)
        print(("" if r.notebook in announced else f"  {r.notebook:32s} ") + _status(r), flush=True)
        announced.clear()

    def starting(p: Path) -> None:  # a notebook run here: on a terminal a bar counts its cells, else its name
        if not live:
            print(f"  {p.stem:32s} ", end="", flush=True)
            announced.append(p.stem)

    live = jobs == 1 and sys.stderr.isatty()
    run_one = functools.partial(run_notebook, profile=profile, out_dir=out_dir, figures_dir=figures_dir,
                                profiles=profiles, progress=live)
    stages = ([notebook_schedule.Stage((p,), False) for p in paths] if jobs == 1 else notebook_schedule.plan(
        paths, alone.get(profile, set()), notebook_schedule.durations(read_manifest(exec_dir), profile)))
    notebook_schedule.run(stages, jobs, run_one, done, starting)
    failed = [r for r in results if not r.ok]
    total = time.perf_counter() - t0
    print(f"reproduce: {len(results) - len(failed)} passed, {len(failed)} failed in {total:.1f} s; "
          f"executed notebooks and {MANIFEST} in {exec_dir}, figures in {figures_dir}")
    for r in failed:
        print(f"  failed: {r.notebook}: {r.error}  (see {r.output})")
    return 1 if failed else 0


def _arguments(profile, only, figures_dir, out_dir, notebooks_dir, jobs):
    """``main``'s arguments checked before any notebook runs (ValueError): the folders (a '' is refused, not read
    as "the default"), the profiles file and its ``[alone]`` table, the notebooks and the jobs."""
    figures_dir = None if figures_dir is None else checks.output_dir("figures_dir", figures_dir).resolve()
    out_dir = None if out_dir is None else checks.output_dir("out_dir", out_dir).resolve()
    profiles_file = Path(notebooks_dir) / "profiles.toml" if notebooks_dir else PROFILES
    profiles = load_profiles(profiles_file)
    paths = notebook_paths(only, notebooks_dir)
    _check_profile(profiles, profile)
    checks.integer("jobs", jobs, low=1)
    stems = {p.stem for p in notebook_paths(None, notebooks_dir)}
    alone = notebook_schedule.alone_table(_read_profiles_file(profiles_file), profiles_file, profiles, stems)
    # a misspelt table would silently leave its notebook on the defaults of its parameters cell
    stray = sorted(set(profiles[profile]) - stems)
    if stray:
        raise ValueError(f"profiles file {profiles_file}: [{profile}] names notebooks that do not exist: {stray}")
    figures_dir = check_figures_dir(profile, figures_dir)
    checks.output_dir("figures_dir", figures_dir)
    checks.output_dir("out_dir", out_dir or EXECUTED / profile)
    return figures_dir, out_dir, profiles, paths, alone


def _status(r: NotebookRun) -> str:
    return f"{'ok' if r.ok else 'FAILED':6s} {r.seconds:7.1f} s" + ("" if r.ok else f"  {r.error}")
