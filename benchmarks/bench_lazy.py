"""Benchmark: one training run to gap 1e-6 per scheme on the LAG synthetic regression (12 workers, 4 groups,
Pareto shape 1.5 of mean 1), timed; plus the whole grid of notebook 06's full profile (6 Pareto shapes, the
exponential and the shifted exponential, 9 schemes, 10 seeds), whose target is under 3 minutes. Prints one JSON
object.

    python -m benchmarks.bench_lazy            # add --no-grid to skip the grid
"""
from __future__ import annotations

import json
import sys
import time


def main(argv=None) -> dict:
    from gclib.learning import lag_synthetic, train
    from gclib.studies.lazy_aggregation.study import mean_one_models, paper_schemes, run_grid

    argv = sys.argv[1:] if argv is None else argv
    workers, groups, target = 12, 4, 1e-6
    problem = lag_synthetic(workers=workers, seed=0)
    schemes = paper_schemes(workers, groups, seed=0)
    model = mean_one_models([1.5])["pareto 1.5"]
    runs = {}
    for name, sch in schemes.items():
        t0 = time.perf_counter()
        res = train(problem, sch, model, target=target, seed=1)
        sec = time.perf_counter() - t0
        runs[name] = {"seconds": round(sec, 4), "iterations": res.iterations,
                      "us_per_iteration": round(1e6 * sec / max(res.iterations, 1), 1), "status": res.status,
                      "sim_time": round(float(res.time[-1]), 2), "uploads": int(res.uploads[-1]),
                      "computations": int(res.computations[-1])}
    out = {"benchmark": "lazy", "problem": "lag-synthetic", "workers": workers, "groups": groups,
           "target": target, "model": "pareto(1/3, 1.5)", "runs": runs}
    if "--no-grid" not in argv:
        models = mean_one_models((1.25, 1.5, 2.0, 2.5, 3.0, 4.0))
        t0 = time.perf_counter()
        totals, _ = run_grid(problem, schemes, models, range(10), target=target, curves_seed=0)
        out["grid"] = {"runs": len(totals), "seconds": round(time.perf_counter() - t0, 2),
                       "target_seconds": 180, "not_converged": int((totals.status != "converged").sum())}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
