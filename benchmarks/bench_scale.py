"""The simulator at datacenter scale, each target beside a numpy draw-and-partition baseline of the same run.

    python -m benchmarks.bench_scale          # one JSON object

Every measurement runs in a fresh Python process, so that its peak memory (``VmHWM``: the interpreter, NumPy and
gclib included) is its own. The baseline is what numpy alone needs for the same order statistic: draw the
per-worker times of eq. 5 (shifted exponential, ``mu = 10``, ``alpha = 0.01``) in chunks of 10,000 trials (1,000
at ``K = 10,000``), form the arrival times of the scheme's messages (``x[:, sender] * ready``) where they are not
the draws themselves, and ``np.partition`` them at the scheme's threshold; the simulator also counts messages,
messages per cluster, computations and volume. Targets:

* CRC, ``K = 1000``, ``s = 100``, 100,000 trials: peak under 1 GB, time at most 3 times the baseline's;
* FRC (groups of 10) and clustered GC-MMC (clusters of 10 workers, load 10, order 6: Fig. 1's GC-MMC-1 grown),
  ``K = 10,000``, 10,000 trials: under 20 s and 2 GB each;
* Fig. 1 of the GC-MMC paper (5 schemes x 100,000 trials, ``gclib.studies.gc_mmc.study.fig1``): no slower than sampling
  every task (the former path, measured in the same run), and at most 3 times the baseline of the five schemes (each
  baseline draws its own times);
* a study whose memory would exceed the budget is refused before it runs, with the estimate;
* ``design.search`` at ``K = 1000`` (a restricted grid of 85 designs, 5,000 trials) in minutes;
* ``gclib simulate --scheme frc --workers 10000 --stragglers 9 --trials 10000`` (the command line, in a fresh
  process): at most 1.5 times the library's FRC measurement above, both timed from the start of their process
  (the imports included), and under 500 MB; beside the same command before it ran on schedules (``before``: the
  command with gclib of the commit named there, ``python -m benchmarks.bench_scale --before REF``, in
  ``benchmarks/before.json``).

The targets are judged on wall-clock seconds; the machine may be shared, so the load average and the CPU seconds of
every measuring process are printed beside them.
"""
import time

STARTED = time.perf_counter()  # a measurement's process starts here (its imports count in process_seconds)

import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

os.environ.setdefault("OMP_NUM_THREADS", "1")

MU, ALPHA = 10.0, 0.01


def _peak_mb() -> float:
    """Peak resident memory of this process in MB: ``VmHWM`` (Linux), which starts afresh with the program;
    ``ru_maxrss`` elsewhere (on Linux it keeps the parent's peak across fork and exec)."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _baseline(K, trials, pick, sender=None, ready=None, blocks=1, chunk=10_000):
    """Seconds numpy needs to draw eq. 5 times, form the arrivals (``x[:, sender] * ready``) and partition them
    at index ``pick`` of each of ``blocks`` equal blocks (the clusters)."""
    import numpy as np

    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    done = 0
    while done < trials:
        n = min(chunk, trials - done)
        x = ALPHA + rng.exponential(1 / MU, (n, K))
        arr = (x if sender is None else np.take(x, sender, axis=1) * ready).reshape(n, blocks, -1)
        np.partition(arr, pick, axis=2)[:, :, pick].max(axis=1).mean()
        done += n
    return time.perf_counter() - t0


def _code_baseline(code, K, trials, chunk):
    rule = code.rule
    P = int(rule.n_clusters) if hasattr(rule, "thresholds") else 1
    k = int(rule.thresholds.max()) if hasattr(rule, "thresholds") else 1
    return _baseline(K, trials, k - 1, code.sender, code.ready, blocks=P, chunk=chunk)


CLI_FRC = ["simulate", "--scheme", "frc", "--workers", "10000", "--stragglers", "9", "--model", "shifted-exp",
           "--mu", str(MU), "--alpha", str(ALPHA), "--trials", "10000", "--seed", "1", "--json"]


def child(name: str, started: float) -> dict:
    """One measurement, in this process (``started``: when the process started, before any import)."""
    if name == "cli-frc":
        import contextlib
        import io

        from gclib.cli import main as cli

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = cli(CLI_FRC)
        return {"process_seconds": time.perf_counter() - started, "peak_mb": _peak_mb(), "exit": code,
                "mean_time": json.loads(buf.getvalue())["mean_time"]}
    import numpy as np

    from gclib import design, schemes
    from gclib.studies.gc_mmc import study as gc_mmc_study
    from gclib.studies.scale import study as scale_study
    from gclib.simulate import simulate
    from gclib.stragglers import ShiftedExponential

    model = ShiftedExponential(MU, ALPHA)
    if name == "crc":
        K, s, trials = 1000, 100, 100_000
        code = schemes.build("crc", workers=K, stragglers=s, seed=1)
        t0 = time.perf_counter()
        res = simulate(code, model, trials, seed=1)
        sec = time.perf_counter() - t0
        return {"seconds": sec, "peak_mb": _peak_mb(), "mean_time": res.summary()["mean_time"]}
    if name == "crc-baseline":
        return {"seconds": _baseline(1000, 100_000, 1000 - 100 - 1), "peak_mb": _peak_mb()}
    if name in ("frc", "gc-mmc"):
        K, trials = 10_000, 10_000
        t0 = time.perf_counter()
        sch = (schemes.simulable("frc", workers=K, stragglers=9) if name == "frc"
               else scale_study.build("cluster size", "GC-MMC", K, load=10, cluster_size=10, order_fraction=0.6))
        res = simulate(sch, model, trials, seed=1)
        sec = time.perf_counter() - t0
        return {"seconds": sec, "process_seconds": time.perf_counter() - started, "peak_mb": _peak_mb(),
                "messages": sch.n_messages, "mean_time": res.summary()["mean_time"]}
    if name in ("frc-baseline", "gc-mmc-baseline"):
        K = 10_000
        sch = (schemes.simulable("frc", workers=K, stragglers=9) if name == "frc-baseline"
               else scale_study.build("cluster size", "GC-MMC", K))
        return {"seconds": _code_baseline(sch, K, 10_000, chunk=1000), "peak_mb": _peak_mb()}
    if name == "fig1":
        cands = gc_mmc_study.fig1_candidates()
        t0 = time.perf_counter()
        df = gc_mmc_study.fig1(model, trials=100_000, seed=0)
        new = time.perf_counter() - t0
        # the former path: every task's finish time sampled and compared, the same chunks
        built = [c.build() for c in cands]
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        for _ in range(10):
            finish = model.sample(rng, 10_000, 40, 10).astype(np.float32)
            for code in built:
                design.fast_chunk(code, finish)
        old = time.perf_counter() - t0
        # the baseline: one draw, each scheme's arrivals partitioned at its threshold
        base = sum(_code_baseline(code, 40, 100_000, 10_000) for code in built)
        return {"seconds": new, "every_task_seconds": old, "baseline_seconds": base, "peak_mb": _peak_mb(),
                "mean_time": {row.label: round(row.mean_time, 5) for row in df.itertuples()}}
    if name == "refuse":
        t0 = time.perf_counter()
        try:
            scale_study.study([40, 10_000], scale_study.models(), trials=10 ** 9)
            msg = None
        except ValueError as e:
            msg = str(e)
        return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_mb(), "message": msg}
    if name == "search":
        t0 = time.perf_counter()
        res = design.search(1000, 10, model, budget=3000, trials=5000, seed=0, clusters=(1, 10, 50, 100),
                            order_grid=(1, 2, 5, 10), max_orders=2)
        return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_mb(), "candidates": len(res.table),
                "best_within_3000_messages": res.best["label"] if res.best else None}
    raise ValueError(f"unknown measurement {name!r}")


def run(name: str) -> dict:
    """``child(name)`` in a fresh process, with the CPU seconds of that process (wall time grows with the load of
    a shared machine, CPU time much less)."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", "--child", name], capture_output=True,
                         text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res


def _cli_target(cli: dict, frc: dict) -> dict:
    from benchmarks._measure import before

    b = before("bench_scale").get("cli-frc") or {}
    ratio = cli["process_seconds"] / frc["process_seconds"]
    return {"seconds": _r(cli["process_seconds"]), "library_seconds": _r(frc["process_seconds"]),
            "ratio": _r(ratio, 2), "peak_mb": cli["peak_mb"], "cpu_seconds": _r(cli["process_cpu_seconds"]),
            "same_mean_time": cli["mean_time"] == frc["mean_time"], "target": "ratio <= 1.5, < 500 MB",
            "met": ratio <= 1.5 and cli["peak_mb"] < 500 and cli["mean_time"] == frc["mean_time"],
            "before": ({"seconds": _r(b["process_seconds"]), "peak_mb": b["peak_mb"],
                        "commit": before("bench_scale")["_commit"]} if b.get("finished") else
                       {"measured": bool(b), **({"error": b.get("error")} if b else {})})}


def measure_before(ref: str) -> dict:
    """The command line's FRC measurement with gclib of commit ``ref`` (``benchmarks/before.json``)."""
    import tempfile
    from pathlib import Path

    from benchmarks._measure import extract, measure, save_before

    with tempfile.TemporaryDirectory(prefix="gclib-before-") as d:
        res = measure("benchmarks.bench_scale", "cli-frc", gclib_path=extract(ref, Path(d)), timeout=900)
    save_before("bench_scale", ref, {"cli-frc": res})
    print(json.dumps({"before": ref, "cli-frc": res}))
    return res


def _r(x, n=3):
    return round(float(x), n)


def main() -> dict:
    load0 = os.getloadavg()[0]
    crc, crc_b = run("crc"), run("crc-baseline")
    frc, frc_b = run("frc"), run("frc-baseline")
    mmc, mmc_b = run("gc-mmc"), run("gc-mmc-baseline")
    fig1, refuse, search = run("fig1"), run("refuse"), run("search")
    cli = run("cli-frc")
    targets = {
        "crc_K1000_s100_100k_trials": {
            "seconds": _r(crc["seconds"]), "baseline_seconds": _r(crc_b["seconds"]),
            "ratio": _r(crc["seconds"] / crc_b["seconds"], 2), "peak_mb": crc["peak_mb"],
            "cpu_seconds": _r(crc["process_cpu_seconds"]), "baseline_cpu_seconds": _r(crc_b["process_cpu_seconds"]),
            "target": "peak < 1 GB, ratio <= 3",
            "met": crc["peak_mb"] < 1024 and crc["seconds"] <= 3 * crc_b["seconds"]},
        "frc_K10000_10k_trials": {
            "seconds": _r(frc["seconds"]), "baseline_seconds": _r(frc_b["seconds"]),
            "ratio": _r(frc["seconds"] / frc_b["seconds"], 2), "peak_mb": frc["peak_mb"],
            "cpu_seconds": _r(frc["process_cpu_seconds"]), "baseline_cpu_seconds": _r(frc_b["process_cpu_seconds"]),
            "target": "< 20 s, < 2 GB", "met": frc["seconds"] < 20 and frc["peak_mb"] < 2048},
        "gc_mmc_clusters_of_10_K10000_10k_trials": {
            "seconds": _r(mmc["seconds"]), "baseline_seconds": _r(mmc_b["seconds"]),
            "ratio": _r(mmc["seconds"] / mmc_b["seconds"], 2), "peak_mb": mmc["peak_mb"], "messages": mmc["messages"],
            "cpu_seconds": _r(mmc["process_cpu_seconds"]), "baseline_cpu_seconds": _r(mmc_b["process_cpu_seconds"]),
            "target": "< 20 s, < 2 GB", "met": mmc["seconds"] < 20 and mmc["peak_mb"] < 2048},
        "fig1_5_schemes_100k_trials": {
            "seconds": _r(fig1["seconds"]), "every_task_seconds": _r(fig1["every_task_seconds"]),
            "baseline_seconds": _r(fig1["baseline_seconds"]), "ratio": _r(fig1["seconds"] / fig1["baseline_seconds"], 2),
            "peak_mb": fig1["peak_mb"], "process_cpu_seconds": _r(fig1["process_cpu_seconds"]),
            "target": "no slower than every task, ratio <= 3",
            "met": fig1["seconds"] <= fig1["every_task_seconds"] and fig1["seconds"] <= 3 * fig1["baseline_seconds"]},
        "refused_up_front": {
            "seconds": _r(refuse["seconds"]), "message": refuse["message"],
            "target": "refused before running, with the estimate",
            "met": bool(refuse["message"]) and "needs about" in refuse["message"]},
        "design_search_K1000": {
            "seconds": _r(search["seconds"], 1), "candidates": search["candidates"], "trials": 5000,
            "peak_mb": search["peak_mb"], "best": search["best_within_3000_messages"],
            "cpu_seconds": _r(search["process_cpu_seconds"], 1),
            "target": "minutes (under 10)", "met": search["seconds"] < 600},
        "cli_simulate_frc_K10000_10k_trials": _cli_target(cli, frc),
    }
    out = {"benchmark": "scale", "targets": targets, "all_met": all(t["met"] for t in targets.values()),
           "load_average_1min": {"start": _r(load0, 2), "end": _r(os.getloadavg()[0], 2)}, "cores": os.cpu_count()}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        c0 = time.process_time()
        res = child(sys.argv[2], STARTED)
        res["process_cpu_seconds"] = time.process_time() - c0
        print(json.dumps(res))
    elif len(sys.argv) == 3 and sys.argv[1] == "--before":
        measure_before(sys.argv[2])
    else:
        main()
