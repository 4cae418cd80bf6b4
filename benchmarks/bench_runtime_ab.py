"""What each mechanism of the MPI runtime buys: A/B runs with each one left out (``benchmarks/runtime_arms.py``).

    python -m benchmarks.bench_runtime_ab [--rounds 2] [--iterations 30] [--time-scale 0.05]
                                          [--schemes uncoded crc gc-mmc] [--arms ...] [--out FILE]
    python -m benchmarks.bench_runtime_ab --from SAVED.json [--out FILE]    # judge saved runs again, run nothing

Arms: ``baseline`` (every mechanism on), one arm per mechanism of :data:`benchmarks.runtime_arms.MECHANISMS` with
that one left out, ``cache+ahead`` (two mechanisms that stand in for each other, so that one alone shows little),
``bell+spin+yield+lead+freeze+slack`` (the waits' six, each too small alone to tell; ``--arms a+b+...`` names any
such group), and ``all`` (every one left out: the plain polling loop). Every round runs every arm once on
every scheme, at ``bench_runtime``'s settings (K = 8 workers, one straggler, shifted exponential with ``mu = 10``
and ``alpha = 0.01``, Tandon's synthetic data, seed 1) and at time scale 0.05, where the targets are judged. The
host is shared and its load drifts, so rounds go in mirrored pairs (the second runs the arms in the first one's
order backwards: a drift linear over the pair adds the same to every arm and to the baseline), each pair starting
one arm further on (:func:`round_order`).

Per run: the median over its iterations of the overhead (measured time minus the simulator's time for the same
injected delays, in ms) and the relative error of the mean measured time against the mean predicted one
(measured / predicted - 1). Per arm, its difference to the baseline of the same scheme in the same round, paired,
pooled over the schemes (``gclib.stats.paired_difference``: the mean difference with a Student-t 95% interval
over the ``rounds x schemes`` pairs), and the same per scheme. A mechanism *earns* its place when leaving it out
raises the median overhead, or the size of the relative error, with a 95% interval wholly above zero; it *buys
nothing* when both intervals lie within :data:`NOTHING_MS` and :data:`NOTHING_ERROR` of zero (then it goes); any
other interval is too wide to tell, on a loaded host most of all. A run that fails (an error, no records) counts in
``failed`` and leaves its pairs out.

Prints one JSON object (``--out FILE`` also writes it, indented; ``python -m benchmarks.render_runtime_ab FILE``
renders the table of ``docs/runtime.md`` from it). Each run is a fresh MPI job of 9 ranks, about 6 s on a
2-core host whatever the iterations, so the default (2 rounds of 15 arms on 3 schemes) takes about 9 minutes on
a quiet host.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

from benchmarks._measure import load_average
from benchmarks.bench_runtime import scheme_codes
from benchmarks.runtime_arms import MECHANISMS, ArmSpec, unguarded_mpiexec
from gclib.learning import TandonAGD, make_problem
from gclib.runtime import RuntimeFailure, launch
from gclib.stats import paired_difference
from gclib.stragglers import ShiftedExponential

#: The arms besides one per mechanism.
BASELINE, ALL = "baseline", "all"
#: Arms that leave out mechanisms together: the decoder cache and decoding ahead, which both keep a decode off the
#: critical path (one alone shows little); and the six of the waits, each of which alone moves the overhead by
#: less than a run on a shared host can tell.
PAIRS = ("cache+ahead", "bell+spin+yield+lead+freeze+slack")
#: What counts as nothing: a difference in median overhead per iteration (ms) and in the size of the relative error
#: (a fraction) whose whole 95% interval lies within these of zero.
NOTHING_MS, NOTHING_ERROR = 0.1, 0.01
#: The rule a mechanism's place is judged by (said in the output).
RULE = ("a mechanism earns its place when leaving it out raises the median overhead per iteration, or the size of "
        "the relative error measured/predicted - 1, by a paired difference whose 95% interval lies wholly above "
        f"zero (pooled over the schemes and rounds); it buys nothing when the two intervals lie within "
        f"{NOTHING_MS:g} ms and {NOTHING_ERROR:.0%} of zero, and is removed then; any other interval is too wide to "
        f"tell")


def arms(only=None) -> dict:
    """``{arm: the mechanisms it leaves out}``: the baseline, one arm per mechanism, the :data:`PAIRS` and all of
    them off; ``only``: the baseline and these (a name ``a+b`` leaves out ``a`` and ``b``)."""
    out = {BASELINE: ()}
    out.update({name: (name,) for name in MECHANISMS})
    out.update({pair: tuple(pair.split("+")) for pair in PAIRS if set(pair.split("+")) <= set(MECHANISMS)})
    out[ALL] = tuple(MECHANISMS)
    if only:
        extra = {a: tuple(a.split("+")) for a in only if a not in out}
        unknown = sorted({n for names in extra.values() for n in names} - set(MECHANISMS))
        if unknown:
            raise SystemExit(f"unknown arms {unknown}; the arms are {', '.join(out)} (or names joined by +)")
        out = {BASELINE: (), **{a: out.get(a, extra.get(a)) for a in only if a != BASELINE}}
    return out


def one_run(code, without, iterations, time_scale, seed=1, problem="tandon-logistic", unguarded=None) -> dict:
    """One MPI job of ``code`` with the mechanisms ``without`` left out (``unguarded``: the ``mpiexec`` of
    :func:`~benchmarks.runtime_arms.unguarded_mpiexec`, for an arm without ``guard``): its median overhead (ms), its
    relative error, its mean overhead (ms) and whether it finished (``ok``, with ``error`` when not)."""
    prob = make_problem(problem, parts=code.n_parts, seed=0)
    spec = ArmSpec(code, prob, TandonAGD(1.0 / prob.smoothness), ShiftedExponential(mu=10.0, alpha=0.01),
                   iterations=iterations, time_scale=time_scale, seed=seed, timeout=60.0, left_out=tuple(without))
    try:
        res = launch(spec, mpiexec=unguarded if "guard" in without else None)
    except RuntimeFailure as e:
        return {"ok": False, "error": str(e).splitlines()[0][:300]}
    if not res.records:
        return {"ok": False, "error": res.error[:300] or "no iteration recorded"}
    t = np.array([r["time"] for r in res.records])
    p = np.array([r["predicted"] for r in res.records])
    return {"ok": True, "median_overhead_ms": float(1e3 * np.median(t - p)),
            "mean_overhead_ms": float(1e3 * np.mean(t - p)), "relative_error": float(t.mean() / p.mean() - 1),
            "max_grad_error": float(max(r["grad_error"] for r in res.records))}


def _estimate(e) -> dict:
    return {"value": _num(e.value), "lo": _num(e.lo), "hi": _num(e.hi), "n": e.n}


def _num(x):
    return None if x is None or not math.isfinite(x) else float(x)


def _paired(runs, arm, key, schemes, transform=lambda x: x):
    """The paired difference arm - baseline of ``key`` over the (round, scheme) pairs of ``schemes``."""
    base = {(r["round"], r["scheme"]): r for r in runs if r["arm"] == BASELINE}
    a, b = [], []
    for r in runs:
        if r["arm"] != arm or r["scheme"] not in schemes:
            continue
        other = base.get((r["round"], r["scheme"]))
        if other is None:
            continue
        a.append(transform(r[key]) if r["ok"] else math.nan)
        b.append(transform(other[key]) if other["ok"] else math.nan)
    return paired_difference(a, b)


def summarize(runs, schemes) -> dict:
    """Per arm: its runs, failures, mean per-scheme numbers and its paired differences to the baseline; per
    mechanism: whether it earns its place (:data:`RULE`) and a verdict in words."""
    names = list(dict.fromkeys(r["arm"] for r in runs))
    out, verdicts = {}, {}
    for arm in names:
        mine = [r for r in runs if r["arm"] == arm]
        row = {"runs": len(mine), "failed": sum(not r["ok"] for r in mine), "per_scheme": {}}
        for s in schemes:
            ok = [r for r in mine if r["scheme"] == s and r["ok"]]
            row["per_scheme"][s] = {
                "median_overhead_ms": _num(float(np.mean([r["median_overhead_ms"] for r in ok]))) if ok else None,
                "relative_error": _num(float(np.mean([r["relative_error"] for r in ok]))) if ok else None}
        if arm != BASELINE:
            over = _paired(runs, arm, "median_overhead_ms", schemes)
            err = _paired(runs, arm, "relative_error", schemes, transform=abs)
            row["overhead_ms_vs_baseline"] = _estimate(over)
            row["abs_relative_error_vs_baseline"] = _estimate(err)
            for s in schemes:
                row["per_scheme"][s]["overhead_ms_vs_baseline"] = _estimate(
                    _paired(runs, arm, "median_overhead_ms", [s]))
                row["per_scheme"][s]["abs_relative_error_vs_baseline"] = _estimate(
                    _paired(runs, arm, "relative_error", [s], transform=abs))
            if arm in MECHANISMS or arm in PAIRS:
                verdicts[arm] = judge(over, err)
                verdicts[arm]["what_without"] = "; ".join(MECHANISMS[n] for n in arm.split("+"))
        out[arm] = row
    return {"arms": out, "mechanisms": verdicts}


def judge(over, err) -> dict:
    """The verdict on a mechanism (:data:`RULE`) from the paired differences, arm - baseline, of the median
    overhead (ms) and of the size of the relative error: ``earns`` (its place), ``nothing`` (it buys nothing
    measurable: remove it) and ``verdict`` in words."""
    if not (over.known and err.known):
        return {"earns": False, "nothing": False, "verdict": "not measured (fewer than two pairs)"}
    earns = over.lo > 0 or err.lo > 0
    nothing = (not earns and -NOTHING_MS <= over.lo and over.hi <= NOTHING_MS
               and -NOTHING_ERROR <= err.lo and err.hi <= NOTHING_ERROR)
    return {"earns": bool(earns), "nothing": bool(nothing),
            "verdict": ("earns its place" if earns else "buys nothing measurable" if nothing else
                        "costs more than it buys" if over.hi < 0 else "too noisy to tell (interval too wide)")}


def round_order(names, rnd) -> list:
    """The order of the arms in round ``rnd``: rounds go in pairs, the second of a pair the first one backwards
    (a drift of the host's load that is linear over a pair of rounds then adds the same to every arm and to the
    baseline), and each pair starts one arm further on than the one before."""
    turn = (rnd // 2) % len(names)
    order = list(names[turn:]) + list(names[:turn])
    return order[::-1] if rnd % 2 else order


def run(rounds=2, iterations=30, time_scale=0.05, schemes=("uncoded", "crc", "gc-mmc"), only=None, workers=8,
        stragglers=1, seed=1, progress=None) -> dict:
    codes = scheme_codes(workers, stragglers)
    unknown = sorted(set(schemes) - set(codes))
    if unknown:
        raise SystemExit(f"unknown schemes {unknown}; have {sorted(codes)}")
    plan = arms(only)
    names = list(plan)
    load0, t0 = load_average(), time.perf_counter()
    runs = []
    with unguarded_mpiexec() as unguarded:
        for rnd in range(rounds):
            order = round_order(names, rnd)
            for scheme in schemes:
                for arm in order:
                    r = one_run(codes[scheme], plan[arm], iterations, time_scale, seed=seed, unguarded=unguarded)
                    runs.append({"round": rnd, "scheme": scheme, "arm": arm, **r})
                    if progress:
                        progress(runs[-1])
    out = {"benchmark": "runtime_ab", "workers": workers, "stragglers": stragglers, "iterations": iterations,
           "time_scale": time_scale, "rounds": rounds, "schemes": list(schemes), "seed": seed,
           "model": {"name": "shifted-exp", "mu": 10.0, "alpha": 0.01}, "rule": RULE,
           "only": list(only) if only else None, "arms_without": {k: list(v) for k, v in plan.items()}}
    out.update(summarize(runs, list(schemes)))
    out.update({"runs": runs, "load": {"before": load0, "after": load_average(), "cores": os.cpu_count()},
                "seconds": round(time.perf_counter() - t0, 1),
                "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())})
    return out


def main(argv=None):
    """Run with defaults (``argv=None``, as ``python -m benchmarks`` calls it) or with command-line options."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_runtime_ab", description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2, help="rounds of every arm on every scheme (at least 2)")
    p.add_argument("--iterations", type=int, default=30, help="iterations per run")
    p.add_argument("--time-scale", type=float, default=0.05)
    p.add_argument("--schemes", nargs="+", default=["uncoded", "crc", "gc-mmc"])
    p.add_argument("--arms", nargs="+", default=None, help="only these arms (the baseline always runs)")
    p.add_argument("--out", default=None, help="also write the JSON object to this file")
    p.add_argument("--verbose", action="store_true", help="one line per run on stderr")
    p.add_argument("--from", dest="saved", default=None,
                   help="run nothing: judge the runs of this saved output again (with the present rule)")
    a = p.parse_args([] if argv is None else argv)
    if a.saved:
        with open(a.saved) as fh:
            out = json.load(fh)
        out.update(summarize(out["runs"], out["schemes"]))
        out["rule"] = RULE
        if a.out:
            with open(a.out, "w") as fh:
                fh.write(json.dumps(out, indent=1) + "\n")
        print(json.dumps(out))
        return out
    if a.rounds < 2:
        p.error("--rounds must be at least 2 (a paired interval needs two pairs per scheme)")
    if a.iterations < 1:
        p.error("--iterations must be at least 1")
    def progress(r):
        print(json.dumps(r), file=sys.stderr, flush=True)
    out = run(a.rounds, a.iterations, a.time_scale, tuple(a.schemes), a.arms, progress=progress if a.verbose else None)
    text = json.dumps(out)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(json.dumps(out, indent=1) + "\n")
    print(text)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
