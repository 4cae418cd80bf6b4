"""Benchmark: ``gclib advise`` at datacenter scale, beside the same command before the advice scaled (not a timed
test).

    python -m benchmarks.bench_advise                  # one JSON object
    python -m benchmarks.bench_advise --before 183d98f [K10000 ...]   # the same with gclib of that commit

The trace: 15 workers x 150 iterations x 4 tasks, every worker's pace in an iteration ``0.05 s * exp(a + b + e)``
(an iteration effect ``a``, sd 0.1; a worker effect ``b``, sd 0.2; the rest, sd 0.15) and every task the pace
times a Gamma(20) shape, seed 0, written as the CSV ``gclib advise`` reads. Each measurement runs ``gclib advise
--trace T --workers K --json`` in a fresh process (the command line, in the process: peak memory ``VmHWM`` is its
own, read while it runs). Targets:

* ``K = 1000``: under 60 s and 1 GB;
* ``K = 10,000``: under 10 minutes and 2 GB;
* ``K = 100``: the recommendation is the exhaustive search's best (every candidate simulated in full,
  ``gclib.advise.from_trace(..., screen=False)``), or statistically tied with it: the paired 95% interval of the
  ratio of their mean times under the ranking model (4000 trials, common random numbers) holds 1.

Every target is printed beside its value before the change (``before``: the same measurement with gclib of the
commit named there, from ``benchmarks/before.json``; a run it stopped after 15 minutes says so). The machine may be
shared: the load average and every measuring process's CPU seconds are printed too.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from benchmarks._measure import before, child_peak_mb, extract, measure, save_before  # noqa: E402

MODULE = "benchmarks.bench_advise"
TRACE = Path(tempfile.gettempdir()) / "gclib-bench-advise-trace.csv"
#: Seconds, and resident megabytes, beyond which a measurement of the earlier commit is stopped (the machine is
#: shared).
BEFORE_LIMIT = 900.0
BEFORE_MB = 12_000.0
TARGETS = {"K1000": (60.0, 1024.0), "K10000": (600.0, 2048.0)}


def write_trace(path=TRACE, workers: int = 15, iterations: int = 150, tasks: int = 4, seed: int = 0) -> Path:
    """The benchmark's trace (see the module docstring), as a timing-trace CSV."""
    import numpy as np

    from gclib import timings

    rng = np.random.default_rng(seed)
    a = rng.normal(0, 0.1, (iterations, 1))
    b = rng.normal(0, 0.2, (1, workers))
    e = rng.normal(0, 0.15, (iterations, workers))
    pace = 0.05 * np.exp(a + b + e)
    timings.write(path, pace[:, :, None] * rng.gamma(20, 1 / 20, (iterations, workers, tasks)))
    return Path(path)


def _advise_cli(K: int) -> dict:
    """``gclib advise --trace TRACE --workers K --json`` in this process."""
    import contextlib
    import io

    c0 = time.process_time()
    t0 = time.perf_counter()
    from gclib.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["advise", "--trace", str(TRACE), "--workers", str(K), "--json"])
    sec = time.perf_counter() - t0
    out = json.loads(buf.getvalue())
    s = out["settings"]
    return {"exit": code, "seconds": round(sec, 2), "cpu_seconds": round(time.process_time() - c0, 2),
            "peak_mb": child_peak_mb(), "best": (out.get("best") or {}).get("label"),
            "candidates": s["candidates"], "simulated": s["screened"], "trials": s["trials"],
            "primary": s["primary"]}


def _tie(K: int = 100) -> dict:
    """The screened recommendation against the exhaustive search's, paired."""
    from gclib import advise, correlated_paces, fit, timings
    from gclib.stats import paired_change

    t = timings.read(TRACE)
    t0 = time.perf_counter()
    a = advise.from_trace(t, K)
    sec = time.perf_counter() - t0
    e = advise.from_trace(t, K, screen=False)
    models = {**fit.fit(t, seed=0, bootstrap=0).models(), **correlated_paces.models(t)[0]}
    primary = a.primary
    la, le = a.advice.best["label"], e.advice.best["label"]
    times = advise.trial_times([la, le], models[primary], K, a.advice.settings["max_load"], trials=advise.TRIALS,
                               seed=0)
    ch, lo, hi, n = paired_change(times[la], times[le])
    return {"seconds": round(sec, 2), "exhaustive_seconds": round(time.perf_counter() - t0 - sec, 2),
            "peak_mb": child_peak_mb(), "primary": primary, "screened": la, "exhaustive": le,
            "simulated": a.advice.settings["screened"], "candidates": a.advice.settings["candidates"],
            "ratio": round(ch + 1, 6), "ratio_lo": round(lo + 1, 6), "ratio_hi": round(hi + 1, 6), "trials": n,
            "tied": bool(la == le or lo <= 0)}


def child(name: str) -> dict:
    if name.startswith("advise-"):
        return _advise_cli(int(name.split("-")[1]))
    if name == "tie":
        return _tie()
    raise ValueError(f"unknown measurement {name!r}")


def _timed(res: dict, limit: tuple) -> dict:
    sec, mb = limit
    met = bool(res.get("finished")) and res["seconds"] < sec and res["peak_mb"] < mb
    return {"seconds": res.get("seconds"), "peak_mb": res.get("peak_mb"), "cpu_seconds": res.get("cpu_seconds"),
            "best": res.get("best"), "simulated": res.get("simulated"), "candidates": res.get("candidates"),
            "trials": res.get("trials"), "target": f"< {sec:g} s, < {mb / 1024:g} GB", "met": met}


def _before_of(b: dict, key: str) -> dict:
    r = b.get(key)
    if not r:
        return {"measured": False}
    if not r.get("finished"):
        why = r.get("stopped") or r.get("error") or f"still running after {r.get('stopped_after'):g} s"
        return {"finished": False, "stopped": why, "stopped_after":
                r.get("stopped_after", r.get("wall_seconds")), "peak_mb": r.get("peak_mb"), "commit": b["_commit"],
                "load_average_1min": r.get("load_average_1min")}
    return {"seconds": r.get("seconds"), "peak_mb": r.get("peak_mb"), "cpu_seconds": r.get("cpu_seconds"),
            "best": r.get("best"), "commit": b["_commit"], "load_average_1min": r.get("load_average_1min")}


def main() -> dict:
    write_trace()
    load0 = os.getloadavg()[0]
    runs = {k: measure(MODULE, f"advise-{k[1:]}") for k in TARGETS}
    tie = measure(MODULE, "tie")
    b = before("bench_advise")
    targets = {}
    for key, limit in TARGETS.items():
        targets[key] = {**_timed(runs[key], limit), "before": _before_of(b, key)}
    targets["K100_tie"] = {**{k: tie.get(k) for k in ("screened", "exhaustive", "primary", "ratio", "ratio_lo",
                                                      "ratio_hi", "trials", "simulated", "candidates", "seconds",
                                                      "exhaustive_seconds", "peak_mb")},
                           "target": "the exhaustive best, or its paired 95% interval holds 1",
                           "met": bool(tie.get("finished") and tie.get("tied")), "before": _before_of(b, "K100")}
    out = {"benchmark": "advise", "targets": targets, "all_met": all(t["met"] for t in targets.values()),
           "load_average_1min": {"start": round(load0, 2), "end": round(os.getloadavg()[0], 2)},
           "cores": os.cpu_count()}
    print(json.dumps(out))
    return out


def measure_before(ref: str, only=None) -> dict:
    """The same measurements with gclib of commit ``ref`` (each stopped after :data:`BEFORE_LIMIT` seconds or above
    :data:`BEFORE_MB`); ``only``: the keys to measure (``K100``, ``K1000``, ``K10000``), the others kept."""
    write_trace()
    keys = ["K100", *TARGETS] if not only else list(only)
    numbers = {}
    with tempfile.TemporaryDirectory(prefix="gclib-before-") as d:
        path = extract(ref, Path(d))
        for key in keys:
            numbers[key] = measure(MODULE, f"advise-{key[1:]}", gclib_path=path, timeout=BEFORE_LIMIT,
                                   max_mb=BEFORE_MB)
    save_before("bench_advise", ref, numbers)
    print(json.dumps({"before": ref, "numbers": numbers}))
    return numbers


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
    elif len(sys.argv) >= 3 and sys.argv[1] == "--before":
        measure_before(sys.argv[2], sys.argv[3:])
    else:
        main()
