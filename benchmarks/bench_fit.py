"""Benchmark: read and fit a timing trace of K = 100 workers, 50 iterations x 10 tasks (shifted exponential per
worker, 3 workers that never answer), with the default 200 bootstrap replicates; the target is a few seconds.
Prints one JSON object.

    python -m benchmarks.bench_fit
"""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np


def main(argv=None) -> dict:
    from gclib import fit, timings
    from gclib.stragglers import ShiftedExponential

    workers, iterations, tasks = 100, 50, 10
    x = ShiftedExponential(10.0, 0.05).per_worker(np.random.default_rng(0), iterations, workers, tasks)
    d = np.repeat(x[:, :, None], tasks, axis=2)
    d[:, :3, :] = np.inf
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.csv"
        t0 = time.perf_counter()
        timings.write(path, d)
        t1 = time.perf_counter()
        trace = timings.read(path)
        t2 = time.perf_counter()
    report = fit.fit(trace, seed=0)
    t3 = time.perf_counter()
    sample = report.replay.sample(np.random.default_rng(0), 1000, workers, tasks)
    t4 = time.perf_counter()
    out = {"benchmark": "fit", "workers": workers, "iterations": iterations, "tasks": tasks, "bootstrap": 200,
           "write_seconds": round(t1 - t0, 3), "read_seconds": round(t2 - t1, 3), "fit_seconds": round(t3 - t2, 2),
           "replay_1000_trials_seconds": round(t4 - t3, 3), "target_seconds": 10, "best": report.best.name,
           "persistent": report.persistent, "replay_mean_finish": round(float(np.mean(sample[np.isfinite(sample)])), 4)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
