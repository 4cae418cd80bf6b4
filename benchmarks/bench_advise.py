"""Benchmark: ``gclib advise`` end to end (read a trace, fit the models, rank every design) at K = 8 and K = 100.

    python -m benchmarks.bench_advise          # one JSON object

The traces are drawn from a shifted exponential per task (50 iterations, ``max_load`` tasks per worker) and
written as the CSV ``gclib advise`` reads. Targets: K = 8 well under a minute, K = 100 in a few minutes (wall
seconds, on a shared 2-core machine; the load average is printed too).
"""
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def one(K: int, folder: Path) -> dict:
    import numpy as np

    from gclib import advise, fit, timings

    R = advise.default_max_load(K)
    rng = np.random.default_rng(K)
    durations = 0.01 + rng.exponential(0.1, size=(50, K, R))
    path = folder / f"trace_{K}.csv"
    timings.write(path, durations)
    t0, c0 = time.perf_counter(), time.process_time()
    models = fit.fit(timings.read(path), seed=0).models()
    t_fit = time.perf_counter() - t0
    res = advise.advise(models, K, seed=0)
    return {"K": K, "max_load": R, "models": len(models), "candidates": res.settings["candidates"],
            "simulated": res.settings["screened"], "trials": res.settings["trials"],
            "fit_seconds": round(t_fit, 3), "seconds": round(time.perf_counter() - t0, 3),
            "cpu_seconds": round(time.process_time() - c0, 3), "best": res.best["label"] if res.best else None}


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="gclib-bench-advise-") as d:
        runs = [one(K, Path(d)) for K in (8, 100)]
    out = {"advise": runs, "targets": {"K8_seconds": 60.0, "K100_seconds": 300.0},
           "load_average_1min": round(os.getloadavg()[0], 2)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
