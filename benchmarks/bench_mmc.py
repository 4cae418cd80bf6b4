"""Benchmark: Fig. 1 of the GC-MMC paper (5 schemes x 100,000 trials) and the order search.

    python -m benchmarks.bench_mmc          # one JSON object

Targets: Fig. 1 under 5 s, the order search over the full grid (every order, every order vector of up
to 3 orders, every cluster count, the hybrid and the baselines; K = 40, r = 10, 10,000 trials) under a minute. Wall and CPU seconds are both printed: on a shared 2-core machine the wall time grows with the
load average (printed too).
"""
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> dict:
    from gclib import ShiftedExponential, design
    from gclib.studies.gc_mmc import study as gc_mmc_study

    model = ShiftedExponential(mu=10.0, alpha=0.01)
    t0, c0 = time.perf_counter(), time.process_time()
    df = gc_mmc_study.fig1(model, trials=100_000, seed=0)
    t_fig, c_fig = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    res = design.search(40, 10, model, budget=40.0, trials=10_000, seed=0)
    t_search, c_search = time.perf_counter() - t0, time.process_time() - c0
    out = {
        "fig1_seconds": round(t_fig, 3), "fig1_trials_per_scheme": 100_000, "fig1_schemes": len(df),
        "fig1_mean_time": {row.label: round(row.mean_time, 5) for row in df.itertuples()},
        "fig1_cpu_seconds": round(c_fig, 3),
        "search_seconds": round(t_search, 3), "search_cpu_seconds": round(c_search, 3), "search_candidates": len(res.table), "search_trials": 10_000,
        "search_best_within_40_messages": res.best["label"] if res.best else None,
        "targets": {"fig1_seconds": 5.0, "search_seconds": 60.0},
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
