"""What the benchmarks that compare with an earlier commit share: a measurement in a fresh process whose peak memory
is read from the parent while it runs (so that a process stopped at its time limit still has one), and the numbers
of the earlier commit, measured with the same code (``benchmarks/before.json``).

``python -m benchmarks.bench_advise --before REF`` (and ``bench_scale``) extracts ``gclib/`` of commit ``REF``
(``git archive``) into a temporary folder, runs the same measurements with it first on ``PYTHONPATH``, and writes
their numbers into ``before.json`` under the benchmark's name, with the commit and the load of the machine.
"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEFORE = HERE / "before.json"


def _status(pid: int, key: str) -> int | None:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def measure(module: str, name: str, *, gclib_path=None, timeout: float | None = None,
            max_mb: float | None = None) -> dict:
    """Run ``python -m module --child name`` in a fresh process; returns its JSON answer (the last line of its
    output) with ``wall_seconds`` (the whole process), ``peak_mb`` (its largest ``VmHWM``, read every 0.2 s and at
    the end), ``finished`` and, when it did not finish, ``stopped_after`` and ``stopped``: why. ``gclib_path``: a
    folder holding another ``gclib`` to import first. ``timeout``: seconds after which the process is stopped;
    ``max_mb``: resident memory above which it is stopped (the machine is shared)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    paths = [str(gclib_path)] if gclib_path else []
    env["PYTHONPATH"] = os.pathsep.join(paths + [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    t0 = time.perf_counter()
    # the process starts in the folder of the gclib it imports (``python -m`` puts its folder first on sys.path)
    proc = subprocess.Popen([sys.executable, "-m", module, "--child", name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=str(gclib_path or ROOT))
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _status(proc.pid, "VmHWM") or 0)
        why = None
        if timeout is not None and time.perf_counter() - t0 > timeout:
            why = f"still running after {timeout:g} s"
        elif max_mb is not None and (_status(proc.pid, "VmRSS") or 0) / 1024 > max_mb:
            why = f"resident memory above {max_mb:g} MB"
        if why:
            proc.kill()
            proc.wait()
            return {"finished": False, "stopped": why, "stopped_after": round(time.perf_counter() - t0, 1),
                    "peak_mb": round(peak / 1024, 1)}
        time.sleep(0.2)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    lines = [x for x in out.strip().splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"finished": False, "error": (err.strip().splitlines() or ["no output"])[-1],
                "wall_seconds": round(wall, 2), "peak_mb": round(peak / 1024, 1)}
    res = json.loads(lines[-1])
    res.update({"finished": True, "wall_seconds": round(wall, 2),
                "peak_mb": max(res.get("peak_mb", 0.0), round(peak / 1024, 1))})
    return res


def child_peak_mb() -> float:
    """This process's peak resident memory in MB (``VmHWM``)."""
    return round((_status(os.getpid(), "VmHWM") or 0) / 1024, 1)


def extract(ref: str, folder: Path) -> Path:
    """``gclib/`` of commit ``ref`` into ``folder``; returns ``folder``."""
    data = subprocess.run(["git", "archive", ref, "gclib"], cwd=str(ROOT), capture_output=True, check=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".tar") as f:
        f.write(data)
        f.flush()
        with tarfile.open(f.name) as tar:
            tar.extractall(folder, filter="data")
    return folder


def load_average() -> float | None:
    """The machine's 1-minute load average, rounded to 2 decimals (``None`` where the system has none): a shared
    host's other processes lengthen every timing, so the benchmarks report it beside their numbers."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def commit_of(ref: str) -> str:
    return subprocess.run(["git", "rev-parse", "--short", ref], cwd=str(ROOT), capture_output=True, text=True,
                          check=True).stdout.strip()


def save_before(bench: str, ref: str, numbers: dict) -> None:
    """Write ``numbers`` measured at ``ref`` into :data:`BEFORE` under ``bench`` (added to those of the same
    commit measured before, each with the machine's load when it ended)."""
    data = json.loads(BEFORE.read_text()) if BEFORE.exists() else {}
    old = data.get(bench) or {}
    keep = old.get("numbers", {}) if old.get("commit") == commit_of(ref) else {}
    keep = {k: {**v, "load_average_1min": v.get("load_average_1min", old.get("load_average_1min"))}
            for k, v in keep.items()}
    load = round(os.getloadavg()[0], 2)
    numbers = {k: {**v, "load_average_1min": v.get("load_average_1min", load)} for k, v in numbers.items()}
    data[bench] = {"commit": commit_of(ref), "measured": time.strftime("%Y-%m-%d"), "numbers": {**keep, **numbers}}
    BEFORE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def before(bench: str) -> dict:
    """The numbers of ``bench`` at the earlier commit (``{}`` when not measured), with ``commit``."""
    data = json.loads(BEFORE.read_text()) if BEFORE.exists() else {}
    b = data.get(bench)
    if not b:
        return {}
    return {**b["numbers"], "_commit": b["commit"]}
