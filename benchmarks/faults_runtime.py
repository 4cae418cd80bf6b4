"""Kill one worker of a real run at a random moment, many times, and count what happened.

    python -m benchmarks.faults_runtime [--trials 60] [--seed 42] [--dim 10]

Each trial runs CRC with 4 workers tolerating one straggler (20 iterations, time scale 0.05) and, after a delay
drawn uniformly in [0, 3] s from the launch (start-up, iterations and the stop all fall in it), sends a signal
drawn among SIGKILL, SIGSEGV, SIGTERM, SIGINT and SIGHUP to one worker's rank process, found among the job's
processes. Prints one JSON object: per outcome the number of trials (``survived``: the worker died and the run
finished without it; ``restarted``: it died before every rank was through ``MPI_Init`` and the job was started
again; ``lived``: the rank took the signal and lived on, as with SIGHUP, which MPICH catches; ``missed``: the
moment fell before the rank existed or after the run), the runs that failed and why, the trials that left a
process behind, and seconds.
Not part of ``python -m benchmarks`` (it takes a few minutes).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

SIGNALS = ("SIGKILL", "SIGSEGV", "SIGTERM", "SIGINT", "SIGHUP")


def run(trials=60, seed=42, dim=10):
    from gclib import schemes
    from gclib.learning import TandonAGD, make_problem
    from gclib.runtime import RunSpec, RuntimeFailure, launch
    from gclib.runtime.launcher import job_processes, rank_processes
    from gclib.stragglers import ShiftedExponential

    code = schemes.build("crc", workers=4, stragglers=1)
    problem = make_problem("tandon-logistic", parts=4, seed=0, n_samples=400, dim=dim)
    rng = random.Random(seed)
    outcomes, by_signal, failures, left = Counter(), {}, [], []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gclib-faults-") as base:
        for t in range(trials):
            spec = RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(10, 0.01),
                           iterations=20, time_scale=0.05, seed=t, timeout=5.0, stop_timeout=3.0)
            run_dir = Path(base) / f"t{t}"
            delay, worker, name = rng.uniform(0.0, 3.0), rng.randrange(4), rng.choice(SIGNALS)
            sent = []

            def kill():
                time.sleep(delay)
                pid = rank_processes(run_dir).get(worker + 1)
                if pid:
                    try:
                        os.kill(pid, getattr(signal, name))
                        sent.append(pid)
                    except ProcessLookupError:
                        pass

            killer = threading.Thread(target=kill)
            killer.start()
            try:
                res = launch(spec, run_dir=run_dir, job_timeout=60)
                if any(worker in r for r in res.restarts):
                    outcome = "restarted"
                elif worker in res.deaths and res.deaths[worker].get("name") == name:
                    outcome = "survived"
                else:
                    outcome = "lived" if sent else "missed"
                if len(res.records) != 20:
                    outcome = "short"
            except RuntimeFailure as e:
                outcome = "failed"
                failures.append({"trial": t, "signal": name, "delay": round(delay, 3), "error": str(e)[:300]})
            killer.join()
            if job_processes(run_dir):
                left.append(t)
            outcomes[outcome] += 1
            by_signal.setdefault(name, Counter())[outcome] += 1
    return {"benchmark": "faults_runtime", "trials": trials, "seed": seed, "dim": dim,
            "outcomes": dict(outcomes), "by_signal": {k: dict(v) for k, v in sorted(by_signal.items())},
            "failures": failures, "trials_with_processes_left": left,
            "seconds": round(time.perf_counter() - t_all, 1)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=60)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--dim", type=int, default=10)
    a = p.parse_args(argv)
    print(json.dumps(run(a.trials, a.seed, a.dim)))


if __name__ == "__main__":
    main()
