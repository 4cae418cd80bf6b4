"""Benchmark: the targets of ``gclib advise --holdout 0.5`` on the shipped public traces (not a timed test).

    python -m benchmarks.bench_backtest        # one JSON object

Each trace of ``data/straggler-analysis`` is converted, fitted on its first half and advised for its own workers,
and the advice checked on the held-out half with every worker kept (:func:`gclib.studies.real_traces.study.study`, the
defaults
of ``gclib advise``: 4000 trials, 200 bootstrap replicates, seed 0). Targets (:data:`gclib.advise.TARGETS`): on the
fitted half, uncoded's and the advised design's predicted mean iteration time within 5%; on the held-out half, the
advised design's within 7% and the regret under 3%. Printed per trace: every target's value and whether it is met,
the model the advice ranks under, its errors beside those of the independent replay it ranked under before, and the
slowest worker's drift between the halves; then whether every target of every trace is met, and the wall and CPU
seconds.
"""
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> dict:
    from gclib import advise
    from gclib.studies.real_traces import study as real_traces

    t0, c0 = time.perf_counter(), time.process_time()
    s = real_traces.study(holdout=0.5, seed=0, trials=advise.TRIALS, bootstrap=200)
    traces = s.summary()
    out = {"backtest": traces, "targets": advise.TARGETS,
           "all_met": all(t["all_met"] for t in traces.values()),
           "missed": {name: [k for k, v in t["targets"].items() if not v["met"]] for name, t in traces.items()
                      if not t["all_met"]},
           "seconds": round(time.perf_counter() - t0, 3), "cpu_seconds": round(time.process_time() - c0, 3),
           "load_average_1min": round(os.getloadavg()[0], 2)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
