"""Start-up of the command line and of the library: how long a fresh process takes, median of several.

    python -m benchmarks.bench_startup [--repeats 9] [--before REF]

Measures, each in a fresh interpreter: ``gclib --help``, a one-line error (``gclib simulate --scheme crc
--workers 0``), ``gclib simulate --help``, and ``import gclib``; and, for the heavier parts of the library a user
imports by name (``gclib.symbolic``, ``gclib.design``, ``gclib.advise``, ``gclib.runtime``, ``gclib.learning``,
``gclib.fit``), the import of each. The targets: ``gclib --help`` and the one-line error under a second.
``--before REF`` measures the same commands with ``gclib/`` of an earlier commit too (``git archive``).

Prints one JSON object: per command the median, the smallest and the largest wall time in seconds, and ``targets``
with ``met`` for each; ``load`` is the 1-minute load average before and after (a shared machine's other processes
lengthen every start-up).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._measure import extract, load_average

ROOT = Path(__file__).resolve().parent.parent
#: What is measured: a name and the arguments of ``python``.
COMMANDS = {
    "gclib --help": ["-m", "gclib", "--help"],
    "one-line error": ["-m", "gclib", "simulate", "--scheme", "crc", "--workers", "0"],
    "gclib simulate --help": ["-m", "gclib", "simulate", "--help"],
    "import gclib": ["-c", "import gclib"],
    **{f"import {m}": ["-c", f"import {m}"] for m in
       ("gclib.symbolic", "gclib.design", "gclib.advise", "gclib.runtime", "gclib.learning", "gclib.fit")},
}
#: The start-up targets, in seconds.
TARGETS = {"gclib --help": 1.0, "one-line error": 1.0}


def time_commands(repeats: int, gclib_path: Path | None = None) -> dict:
    """Median, smallest and largest wall time of every command over ``repeats`` fresh processes, the commands
    taken in turn (so that a slow moment of the machine spreads over all of them)."""
    # the package measured comes first on the path, and the processes run in an empty folder: ``python -m`` puts
    # the working directory before PYTHONPATH, and a checkout there would be imported instead
    env = dict(os.environ, PYTHONPATH=str(ROOT if gclib_path is None else gclib_path))
    times = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory() as empty:
        for _ in range(repeats):
            for name, args in COMMANDS.items():
                t0 = time.perf_counter()
                subprocess.run([sys.executable, *args], env=env, cwd=empty, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
                times[name].append(time.perf_counter() - t0)
    return {name: {"median": round(statistics.median(t), 4), "min": round(min(t), 4), "max": round(max(t), 4)}
            for name, t in times.items()}


def run(repeats: int = 9, before: str | None = None) -> dict:
    load0 = load_average()
    out = {"benchmark": "startup", "repeats": repeats, "now": time_commands(repeats)}
    if before:
        with tempfile.TemporaryDirectory() as tmp:
            out["before"] = {"commit": before, **time_commands(repeats, extract(before, Path(tmp)))}
    out["targets"] = {name: {"target_seconds": limit, "median": out["now"][name]["median"],
                             "met": out["now"][name]["median"] < limit} for name, limit in TARGETS.items()}
    out["all_met"] = all(t["met"] for t in out["targets"].values())
    out["load"] = [load0, load_average()]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--before", default=None, help="an earlier commit to measure too")
    a = ap.parse_args(argv if argv is not None else [])
    print(json.dumps(run(a.repeats, a.before), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
