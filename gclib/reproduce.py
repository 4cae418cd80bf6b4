"""The papermill driver behind ``make reproduce``.

Every notebook in ``notebooks/`` is executed with the parameters of the chosen profile (``notebooks/profiles.toml``:
``quick`` for tests and CI, ``full`` for the figures), its executed copy written to ``build/executed/<profile>/``
(git-ignored), and its figures (PNG plus CSV) to ``figures/`` (or the ``figures_dir`` given). One line per
notebook with its time; a failing notebook is reported with the cell that failed and the others still run.
"""
from __future__ import annotations

import json
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PROFILES = NOTEBOOKS / "profiles.toml"
EXECUTED = ROOT / "build" / "executed"
FIGURES = ROOT / "figures"


def load_profiles(path: Path | None = None) -> dict:
    """``{profile: {notebook_stem: {param: value}}}``; raises ValueError naming a malformed file."""
    path = PROFILES if path is None else path
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"profiles file {path} not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"profiles file {path} is malformed: {e}") from None
    for prof, table in data.items():
        if not isinstance(table, dict) or any(not isinstance(v, dict) for v in table.values()):
            raise ValueError(f"profiles file {path}: [{prof}] must hold one table per notebook")
    return data


def notebook_paths(only=None) -> list[Path]:
    paths = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    if only:
        wanted = set(only)
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            raise ValueError(f"unknown notebooks {sorted(unknown)}; have {[p.stem for p in paths]}")
        paths = [p for p in paths if p.stem in wanted]
    return paths


@dataclass
class RunResult:
    notebook: str
    ok: bool
    seconds: float
    parameters: dict = field(default_factory=dict)
    error: str = ""
    output: str = ""


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
                return f"cell {i} ({first[:60]!r}): {out.get('ename')}: {out.get('evalue', '')[:300]}"
    return "(no failing cell recorded)"


def _kernel_manager_class():
    """A kernel manager on IPC transport (local, no TCP ports, and no ipykernel warning about plain TCP)."""
    from jupyter_client.manager import KernelManager

    class IPCKernelManager(KernelManager):
        def __init__(self, **kw):
            kw.setdefault("transport", "ipc")
            super().__init__(**kw)

    return IPCKernelManager


def run_notebook(path: Path, profile: str = "full", out_dir: Path | None = None, figures_dir: Path | None = None,
                 extra: dict | None = None, profiles: dict | None = None) -> RunResult:
    """Execute one notebook with its profile parameters; never raises for a failing notebook."""
    import papermill as pm

    profiles = load_profiles() if profiles is None else profiles
    if profile not in profiles:
        raise ValueError(f"profile must be one of {sorted(profiles)}, got {profile!r}")
    params = dict(profiles[profile].get(path.stem, {}))
    params.update({"profile": profile, "figures_dir": str(figures_dir or FIGURES)})
    params.update(extra or {})
    out_dir = Path(out_dir or EXECUTED / profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    Path(params["figures_dir"]).mkdir(parents=True, exist_ok=True)
    out = out_dir / path.name
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(str(path), str(out), parameters=params, cwd=str(path.parent), progress_bar=False,
                            kernel_name="python3", log_output=False,
                            kernel_manager_class=_kernel_manager_class())
        return RunResult(path.stem, True, time.perf_counter() - t0, params, output=str(out))
    except pm.PapermillExecutionError:
        return RunResult(path.stem, False, time.perf_counter() - t0, params, _failed_cell(out), str(out))
    except Exception as e:  # kernel died, notebook unreadable, ...
        return RunResult(path.stem, False, time.perf_counter() - t0, params, f"{type(e).__name__}: {e}", str(out))


def main(profile: str = "full", only=None, figures_dir=None, out_dir=None) -> int:
    """Run the suite; print a line per notebook and a summary; return 0 when every notebook passed."""
    try:
        profiles = load_profiles()
        paths = notebook_paths(only)
        if profile not in profiles:
            raise ValueError(f"profile must be one of {sorted(profiles)}, got {profile!r}")
    except ValueError as e:
        print(f"gclib: error: {e}", file=sys.stderr)
        return 2
    print(f"reproduce: {len(paths)} notebooks, profile '{profile}'", flush=True)
    results = []
    t0 = time.perf_counter()
    for p in paths:
        print(f"  {p.stem:32s} ", end="", flush=True)
        r = run_notebook(p, profile, out_dir=out_dir, figures_dir=figures_dir, profiles=profiles)
        results.append(r)
        status = "ok" if r.ok else "FAILED"
        print(f"{status:6s} {r.seconds:7.1f} s" + ("" if r.ok else f"  {r.error}"), flush=True)
    failed = [r for r in results if not r.ok]
    total = time.perf_counter() - t0
    print(f"reproduce: {len(results) - len(failed)} passed, {len(failed)} failed in {total:.1f} s; "
          f"executed notebooks in {Path(out_dir or EXECUTED / profile)}, figures in {figures_dir or FIGURES}")
    for r in failed:
        print(f"  failed: {r.notebook}: {r.error}  (see {r.output})")
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(*(sys.argv[1:2] or ["full"])))
