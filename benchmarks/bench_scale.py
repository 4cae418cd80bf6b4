"""The simulator at scale, each case timed against a hand-written NumPy baseline in the same process and run.

    python -m benchmarks.bench_scale            # one JSON object
    python -m benchmarks.bench_scale --save     # ... also written to benchmarks/scale.json
    python -m benchmarks.bench_scale --render   # the README's performance paragraph from benchmarks/scale.json
                                                # (--check: write nothing, exit 1 when the README differs)
    python -m benchmarks.bench_scale --before REF   # the command line's FRC case with gclib of commit REF

Each case runs twice, each time in a fresh process that times both sides one after the other, the baseline first
and then gclib, and the other way round: the two sides share the process, the machine's load at that moment and
NumPy's import; gclib's own imports count on its side. The ratio is gclib's seconds over the baseline's, summed
over the two orders. Each side's peak memory is its own (``VmHWM``, reset between the sides through
``/proc/self/clear_refs``). The baselines are the draw-plus-reduce a researcher would write in NumPy, given here in
full (``hand_*``), and must give the same numbers as gclib to every digit (``same_numbers``):

* FRC, ``K = 10,000`` (groups of 10), 10,000 trials, from the command line: ten chunks of draws, the minimum of
  each group, the largest of those, the messages up to it; at most 1.5 times the baseline and under 500 MB;
* CRC, ``K = 100,000``, ``s = 2``, 10,000 trials, from the command line: chunks of 100 trials, ``np.partition``
  at the one order statistic needed, the messages up to it; at most 1.5 times and under 500 MB;
* LCC at ``K = 10,000`` (load 10) and correlated GC-MMC in clusters of 10 workers at ``K = 10,000`` (load 10,
  order 6), from the command line: the same kind of loop for their rules (the GC-MMC baseline forms each
  class's first arrival from the workers' messages); at most 1.5 times;
* Fig. 1 of the GC-MMC paper, its five bars (GC, LCC, UC-MMC, GC-MMC-1, GC-MMC-2) and uncoded, 200,000 trials on
  shared draws in float32, as ``gclib.design.evaluate`` runs them: an independent Monte Carlo of the six rules;
  no slower than it.

Beside them, two library checks without a baseline: a study whose memory would exceed the budget is refused before
it runs, with its estimate; ``design.search`` at ``K = 1000`` (85 designs, 5,000 trials) in minutes. The machine
may be shared: the load average and the CPU seconds of every side are printed beside the wall-clock seconds.
"""
import time

STARTED = time.perf_counter()  # a measurement's process starts here

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
SAVED = HERE / "scale.json"
README = HERE.parent / "README.md"
MARK = "<!-- performance -->", "<!-- /performance -->"
MU, ALPHA = 10.0, 0.01
MODEL = ["--model", "shifted-exp", "--mu", str(MU), "--alpha", str(ALPHA), "--seed", "1", "--json"]
CLI = {
    "frc": ["simulate", "--scheme", "frc", "--workers", "10000", "--stragglers", "9", "--trials", "10000", *MODEL],
    "crc": ["simulate", "--scheme", "crc", "--workers", "100000", "--stragglers", "2", "--trials", "10000", *MODEL],
    "lcc": ["simulate", "--scheme", "lcc", "--workers", "10000", "--load", "10", "--trials", "10000", *MODEL],
    "gc-mmc": ["simulate", "--scheme", "gc-mmc-correlated", "--workers", "10000", "--load", "10", "--order", "6",
               "--clusters", "1000", "--trials", "2000", *MODEL],
}


# ------------------------------------------------------------------------------------------ the hand baselines
def _draws(rng, n, K):
    """Eq. 5's shifted exponential draws of ``n`` trials of ``K`` workers."""
    return ALPHA + rng.exponential(1 / MU, (n, K))


def _means(t, m) -> dict:
    return {"mean_time": float(np.concatenate(t).astype(float).mean()),
            "mean_messages": float(np.concatenate(m).astype(float).mean())}


def hand_frc(K=10_000, s=9, trials=10_000, chunk=1000) -> dict:
    """FRC: groups of ``s + 1`` workers send the same message after ``s + 1`` parts; one per group decodes."""
    rng, g, ts, ms = np.random.default_rng(1), s + 1, [], []
    for _ in range(trials // chunk):
        arr = _draws(rng, chunk, K) * g
        t = arr.reshape(chunk, K // g, g).min(axis=2).max(axis=1)
        ts.append(t)
        ms.append((arr <= t[:, None]).sum(axis=1))
    return _means(ts, ms)


def hand_threshold(K, ready, k, trials, chunk) -> dict:
    """Any ``k`` of the ``K`` workers' messages, each sent after ``ready`` parts (CRC, LCC): the ``k``-th arrival
    by ``np.partition``."""
    rng, ts, ms = np.random.default_rng(1), [], []
    for _ in range(trials // chunk):
        arr = _draws(rng, chunk, K) * ready
        t = np.partition(arr, k - 1, axis=1)[:, k - 1].copy()
        ts.append(t)
        ms.append((arr <= t[:, None]).sum(axis=1))
    return _means(ts, ms)


def hand_correlated(K=10_000, r=10, m=6, size=10, trials=2000, chunk=200) -> dict:
    """Correlated GC-MMC in clusters of ``size`` workers: local worker ``i`` sends class ``(i + j) % size`` after
    ``m + j`` parts (``j < r - m + 1``); a cluster decodes at its ``size - m + 1``-th distinct class."""
    rng, P, ts, ms = np.random.default_rng(1), K // size, [], []
    for _ in range(trials // chunk):
        x = _draws(rng, chunk, K).reshape(chunk, P, size)
        arrs = [x * (m + j) for j in range(r - m + 1)]
        first = arrs[0].copy()
        for j, a in enumerate(arrs[1:], 1):  # class c hears from worker c - j at its j-th message
            np.minimum(first, np.roll(a, j, axis=2), out=first)
        t = np.partition(first, size - m, axis=2)[:, :, size - m].max(axis=1)
        ts.append(t)
        ms.append(sum((a <= t[:, None, None]).sum(axis=(1, 2)) for a in arrs))
    return _means(ts, ms)


def _fig1_counts(arrs, tc, finish, loads):
    """``(time, messages, cluster messages, computations)`` per trial from the arrivals ``arrs`` (a list of
    ``(n, clusters, m)`` arrays), the clusters' decoding times ``tc`` ``(n, clusters)``, the tasks' finish times
    ``finish`` ``(n, 40, 10)`` and the workers' load."""
    t = tc.max(axis=1)
    msgs = sum((a <= t[:, None, None]).sum(axis=(1, 2)) for a in arrs)
    cmsgs = sum((a <= tc[:, :, None]).sum(axis=(1, 2)) for a in arrs)
    done = (finish[:, :, :loads] <= t[:, None, None]).sum(axis=(1, 2))
    return t, msgs, cmsgs, done


def _fig1_chunk(x) -> list:
    """The four numbers of Fig. 1's table per trial (:func:`_fig1_counts`) of its six rules (K = 40, r = 10) on
    draws ``x`` ``(n, 40)``, times rounded to float32 as ``design.evaluate`` rounds them."""
    n, f32 = x.shape[0], np.float32
    finish = (x[:, :, None] * np.arange(1, 11)).astype(f32)  # every task's finish time
    out = []
    one = finish[:, None, :, 9]  # GC and LCC: one message after the whole load, (n, 1, 40)
    for k in (31, 7):  # GC: any 31 of 40; LCC: 2 ceil(40 / 10) - 1 = 7 results
        out.append(_fig1_counts([one], np.partition(one, k - 1, axis=2)[:, :, k - 1], finish, 10))
    for K_c, m in ((40, 1), (10, 6)):  # UC-MMC: correlated of order 1 unclustered; GC-MMC-1: order 6, 4 clusters
        fc = finish.reshape(n, 40 // K_c, K_c, 10)
        arrs = [fc[:, :, :, m + j - 1] for j in range(10 - m + 1)]  # local worker i's j-th message
        first = arrs[0].copy()
        for j, a in enumerate(arrs[1:], 1):  # class c hears from worker c - j at its j-th message
            np.minimum(first, np.roll(a, j, axis=2), out=first)
        out.append(_fig1_counts(arrs, np.partition(first, K_c - m, axis=2)[:, :, K_c - m], finish, 10))
    arr = finish[:, :, [5, 7, 9]].reshape(n, 4, 30)  # GC-MMC-2: messages after 6, 8 and 10 parts
    out.append(_fig1_counts([arr], np.partition(arr, 6, axis=2)[:, :, 6], finish, 10))  # 30 - 24 + 1 = 7
    first = finish[:, None, :, 0]  # uncoded: every worker's one part
    out.append(_fig1_counts([first], first.max(axis=2), finish, 1))
    return out


KEYS = ("mean_time", "mean_messages", "mean_cluster_messages", "mean_computations")


def hand_fig1(trials=200_000, chunk=10_000) -> dict:
    """Fig. 1's six rules on shared draws (seed 0): the means of its table."""
    rng = np.random.default_rng(0)
    parts = [_fig1_chunk(_draws(rng, chunk, 40)) for _ in range(trials // chunk)]
    return {k: [float(np.concatenate([p[i][q] for p in parts]).astype(float).mean()) for i in range(6)]
            for q, k in enumerate(KEYS)}


# ------------------------------------------------------------------------------------------------ gclib's side
def gclib_cli(args) -> dict:
    """``gclib simulate ...`` in this process, its imports included."""
    import contextlib
    import io

    from gclib.cli import main as cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(list(args))
    out = json.loads(buf.getvalue())
    return {"exit": code, "mean_time": out["mean_time"], "mean_messages": out["mean_messages"]}


def gclib_fig1() -> dict:
    from gclib import design
    from gclib.schemes import build
    from gclib.stragglers import ShiftedExponential
    from gclib.studies.gc_mmc import study

    cands = study.fig1_candidates() + [design.Candidate("uncoded", "uncoded", {}, lambda: build("uncoded",
                                                                                                 workers=40))]
    df = design.evaluate(cands, ShiftedExponential(MU, ALPHA), 40, 200_000, seed=0)
    return {k: [float(v) for v in df[k]] for k in KEYS}


#: ``name: (gclib's side, the baseline, the largest ratio allowed (``None``: reported, no target), the largest peak
#: of gclib's side in MB, what is measured)``.
CASES = {
    "frc_K10000_10k_trials_cli": (lambda: gclib_cli(CLI["frc"]), hand_frc, 1.5, 500,
                                  "FRC, K = 10,000, 10,000 trials, from the command line"),
    "crc_K100000_s2_10k_trials_cli": (lambda: gclib_cli(CLI["crc"]),
                                      lambda: hand_threshold(100_000, 3, 100_000 - 2, 10_000, 100), 1.5, 500,
                                      "CRC, K = 100,000, s = 2, 10,000 trials, from the command line"),
    "lcc_K10000_10k_trials_cli": (lambda: gclib_cli(CLI["lcc"]),
                                  lambda: hand_threshold(10_000, 10, 1999, 10_000, 1000), None, 500,
                                  "LCC, K = 10,000, load 10, 10,000 trials, from the command line"),
    "gc_mmc_clusters_of_10_K10000_2k_trials_cli": (lambda: gclib_cli(CLI["gc-mmc"]), hand_correlated, None, 500,
                                                   "correlated GC-MMC in clusters of 10, K = 10,000, 2,000 trials, "
                                                   "from the command line"),
    "fig1_six_schemes_200k_trials": (gclib_fig1, hand_fig1, 1.0, 500,
                                     "Fig. 1's five bars and uncoded, 200,000 trials"),
}


def _peak_mb() -> float:
    """This process's peak resident memory since the last :func:`_reset_peak`, in MB (``VmHWM``)."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the peak starts again from the memory held now
    except OSError:
        pass


def child(name: str, gclib_first: bool) -> dict:
    """Both sides of case ``name`` in this process, in the order asked."""
    gclib_side, hand_side = CASES[name][:2]
    out = {}
    for side in (("gclib", "hand") if gclib_first else ("hand", "gclib")):
        _reset_peak()
        t0, c0 = time.perf_counter(), time.process_time()
        res = (gclib_side if side == "gclib" else hand_side)()
        out[side] = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
                     "peak_mb": _peak_mb(), **res}
    return out


def _run_child(name: str, gclib_first: bool) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_scale", "--child", name, "gclib" if gclib_first else "hand"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=str(HERE.parent))
    return json.loads(out.stdout.strip().splitlines()[-1])


def paired(name: str) -> dict:
    """Case ``name`` in both orders: the seconds of each side summed, their ratio, the peaks, the numbers."""
    _, _, limit, max_mb, what = CASES[name]
    runs = [_run_child(name, first) for first in (False, True)]
    g = sum(r["gclib"]["seconds"] for r in runs)
    h = sum(r["hand"]["seconds"] for r in runs)
    same = all(r["gclib"][k] == r["hand"][k] for r in runs for k in r["hand"] if k.startswith("mean_"))
    peak = max(r["gclib"]["peak_mb"] for r in runs)
    cpu = sum(r["gclib"]["cpu_seconds"] for r in runs) / sum(r["hand"]["cpu_seconds"] for r in runs)
    return {"what": what, "seconds": _r(g / 2), "baseline_seconds": _r(h / 2), "ratio": _r(g / h, 2),
            "cpu_ratio": _r(cpu, 2),
            "ratio_each_order": {"baseline_first": _r(runs[0]["gclib"]["seconds"] / runs[0]["hand"]["seconds"], 2),
                                 "gclib_first": _r(runs[1]["gclib"]["seconds"] / runs[1]["hand"]["seconds"], 2)},
            "cpu_seconds": _r(sum(r["gclib"]["cpu_seconds"] for r in runs) / 2),
            "baseline_cpu_seconds": _r(sum(r["hand"]["cpu_seconds"] for r in runs) / 2),
            "peak_mb": peak, "baseline_peak_mb": max(r["hand"]["peak_mb"] for r in runs),
            "same_numbers": same, "mean_time": runs[0]["gclib"]["mean_time"],
            "mean_messages": runs[0]["gclib"]["mean_messages"],
            "target": (f"ratio <= {limit:g}, peak < {max_mb} MB, the same numbers" if limit is not None else
                       "reported (no target)"),
            "met": (g <= limit * h and peak < max_mb and same) if limit is not None else None}


def library_checks() -> dict:
    """The two checks without a baseline, in a fresh process each."""
    refuse, search = (json.loads(subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", "--child", n],
                                                capture_output=True, text=True, check=True,
                                                cwd=str(HERE.parent)).stdout.strip().splitlines()[-1])
                      for n in ("refuse", "search"))
    return {
        "refused_up_front": {"seconds": _r(refuse["seconds"]), "message": refuse["message"],
                             "target": "refused before running, with the estimate",
                             "met": bool(refuse["message"]) and "needs about" in refuse["message"]},
        "design_search_K1000": {"seconds": _r(search["seconds"], 1), "candidates": search["candidates"],
                                "trials": 5000, "peak_mb": search["peak_mb"], "best": search["best"],
                                "target": "minutes (under 10)", "met": search["seconds"] < 600}}


def library_child(name: str) -> dict:
    from gclib import design
    from gclib.stragglers import ShiftedExponential
    from gclib.studies.scale import study as scale_study

    t0 = time.perf_counter()
    if name == "refuse":
        try:
            scale_study.study([40, 10_000], scale_study.models(), trials=10 ** 9)
            msg = None
        except ValueError as e:
            msg = str(e)
        return {"seconds": time.perf_counter() - t0, "message": msg}
    res = design.search(1000, 10, ShiftedExponential(MU, ALPHA), budget=3000, trials=5000, seed=0,
                        clusters=(1, 10, 50, 100), order_grid=(1, 2, 5, 10), max_orders=2)
    return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_mb(), "candidates": len(res.table),
            "best": res.best["label"] if res.best else None}


# ---------------------------------------------------------------------------------------- the README's paragraph
def _case_text(t: dict, name: str) -> str:
    return (f"{name} {t['seconds']:.1f} s, {t['ratio']:.2f} times the loop's {t['baseline_seconds']:.1f} s (in CPU "
            f"time {t['cpu_ratio']:.2f} times), in {t['peak_mb']:.0f} MB")


def performance_text(data: dict) -> str:
    """The README's paragraph on the simulator's speed, rendered from a saved run (``benchmarks/scale.json``)."""
    t = data["targets"]
    load = data["load_average_1min"]
    cases = [_case_text(t["frc_K10000_10k_trials_cli"], "FRC at `K = 10,000` (10,000 trials)"),
             _case_text(t["crc_K100000_s2_10k_trials_cli"], "CRC at `K = 100,000`, `s = 2` (10,000 trials)"),
             _case_text(t["lcc_K10000_10k_trials_cli"], "LCC at `K = 10,000`, load 10 (10,000 trials)"),
             _case_text(t["gc_mmc_clusters_of_10_K10000_2k_trials_cli"],
                        "correlated GC-MMC in clusters of 10 at `K = 10,000` (2,000 trials)")]
    fig1 = t["fig1_six_schemes_200k_trials"]
    same = all(t[k]["same_numbers"] for k in CASES)
    return (f"How fast: from the command line, `gclib simulate` took {'; '.join(cases)}, each against a hand-written "
            f"NumPy loop of the same draws in the same process and run (`python -m benchmarks.bench_scale`, "
            f"`benchmarks/scale.json`: the {data['cores']}-core development machine at a load of "
            f"{load['start']:.1f} to {load['end']:.1f}, {data['measured']}); Fig. 1 of the GC-MMC paper "
            f"(its five bars and uncoded, 200,000 trials, the four numbers of its table) took {fig1['seconds']:.1f} "
            f"s, {fig1['ratio']:.2f} times an independent NumPy Monte Carlo of the six rules (in CPU time "
            f"{fig1['cpu_ratio']:.2f} times). "
            + ("Every baseline gave the same numbers to every digit." if same else
               "Some baselines did not give the same numbers (see `same_numbers`)."))


def render(check: bool = False) -> int:
    """Write :func:`performance_text` of the saved run between the README's markers; ``check``: write nothing,
    return 1 when the README's paragraph is not it."""
    text = README.read_text()
    a, b = text.index(MARK[0]) + len(MARK[0]), text.index(MARK[1])
    want = performance_text(json.loads(SAVED.read_text()))
    if text[a:b] == want:
        return 0
    if check:
        print("README's performance paragraph differs from benchmarks/scale.json: "
              "python -m benchmarks.bench_scale --render", file=sys.stderr)
        return 1
    README.write_text(text[:a] + want + text[b:])
    return 0


# --------------------------------------------------------------------------------------------------- the run
def _r(x, n=3):
    return round(float(x), n)


def measure_before(ref: str) -> dict:
    """gclib's side of the command line's FRC case with gclib of commit ``ref`` (``benchmarks/before.json``)."""
    import tempfile

    from benchmarks._measure import extract, measure, save_before

    with tempfile.TemporaryDirectory(prefix="gclib-before-") as d:
        res = measure("benchmarks.bench_scale", "cli-frc", gclib_path=extract(ref, Path(d)), timeout=900)
    save_before("bench_scale", ref, {"cli-frc": res})
    print(json.dumps({"before": ref, "cli-frc": res}))
    return res


def _before() -> dict:
    from benchmarks._measure import before

    b = before("bench_scale")
    f = b.get("cli-frc") or {}
    if not f.get("finished"):
        return {"measured": bool(f)}
    return {"seconds": _r(f["process_seconds"]), "peak_mb": f["peak_mb"], "commit": b["_commit"],
            "load_average_1min": f.get("load_average_1min")}


def main(save: bool = False) -> dict:
    load0 = os.getloadavg()[0]
    targets = {name: paired(name) for name in CASES}
    targets["frc_K10000_10k_trials_cli"]["before"] = _before()
    targets.update(library_checks())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=str(HERE.parent), capture_output=True,
                            text=True).stdout.strip() or None
    out = {"benchmark": "scale", "targets": targets,
           "all_met": all(t["met"] for t in targets.values() if t["met"] is not None),
           "load_average_1min": {"start": _r(load0, 2), "end": _r(os.getloadavg()[0], 2)}, "cores": os.cpu_count(),
           "commit": commit, "measured": time.strftime("%Y-%m-%d")}
    print(json.dumps(out))
    if save:
        SAVED.write_text(json.dumps(out, indent=1) + "\n")
    return out


def _child_main(args) -> None:
    if args[0] == "cli-frc":  # the process of --before: gclib's side alone, timed from the process's start
        res = gclib_cli(CLI["frc"])
        res.update(process_seconds=time.perf_counter() - STARTED, peak_mb=_peak_mb())
    elif args[0] in CASES:
        res = child(args[0], gclib_first=args[1] == "gclib")
    else:
        res = library_child(args[0])
    print(json.dumps(res))


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["--child"]:
        _child_main(argv[1:])
    elif argv[:1] == ["--before"] and len(argv) == 2:
        measure_before(argv[1])
    elif argv[:1] == ["--render"]:
        sys.exit(render(check="--check" in argv))
    else:
        main(save="--save" in argv)
