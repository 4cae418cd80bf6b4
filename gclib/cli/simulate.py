"""``gclib simulate``: a Monte Carlo of one code under one compute-time model (:func:`gclib.simulator.simulate`)."""
from __future__ import annotations

import argparse
import json
import math

from gclib import checks, message_cost
from gclib.cli import options, registries
from gclib.jsonable import jsonable
from gclib.simulator import Communication, completion_tail_index, simulate, tail_index
from gclib.stats import median_ci


#: The command, and its line in ``gclib --help``.
NAME = "simulate"
HELP = "Monte Carlo of completion time, communication and computation"


#: The examples of ``gclib simulate --help`` (the tests run each).
EXAMPLES = (
    ("gclib simulate --scheme crc --workers 8 --stragglers 2 --model shifted-exp --mu 10 --alpha 0.01",
     "Tandon et al.'s cyclic repetition code (any 6 of 8 workers) under shifted-exponential compute times"),
    ("gclib simulate --scheme gc-mmc-uncorrelated --workers 40 --load 10 --orders 6,8,10 --clusters 4 --json",
     "a multi-message design in 4 clusters, as one JSON object"),
    ("gclib simulate --scheme kadhe --workers 12 --stragglers 2 --comm 2 --network latency=0.01,bandwidth=100",
     "a communication-efficient code with every message charged (the master takes them in one at a time)"),
    ("gclib simulate --scheme frc --workers 12 --stragglers 2 --model pareto --shape 1.5 --persistent 1",
     "heavy-tailed times, one worker per iteration never answering"))


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       epilog=options.examples(EXAMPLES) + "\n\n" + registries.epilog())
    options.add_scheme_args(p, seed_help=", and of the simulated compute times")
    options.add_model_args(p)
    p.add_argument("--trials", type=checks.option(checks.integer, low=1), default=10_000,
                   metavar=options.METAVARS["trials"],
                   help="iterations simulated, each one draw of every worker's compute times (refused when their "
                        f"results would not fit the memory budget, half the available memory unless "
                        f"{checks.MEMORY_ENV} says otherwise)")
    p.add_argument("--network", default=None, metavar=options.METAVARS["network"],
                   help="what a message costs, in the model's time unit: latency=T,bandwidth=G[,overhead=T]"
                        "[,queue=no] (G gradients per time unit, inf: no limit; the master takes messages in one at "
                        "a time, queue=no: each arrives latency + overhead + size / bandwidth after it is sent), a "
                        "network profile (JSON, written by gclib profile), or none (default: messages cost nothing)")
    for old in ("--latency", "--bandwidth"):  # before --network: --latency S --bandwidth G (independent delays)
        p.add_argument(old, dest=f"old_{old[2:]}", action=options.Renamed, default=argparse.SUPPRESS,
                       new="--network latency=...,bandwidth=...,queue=no", help=argparse.SUPPRESS,
                       type=checks.option(checks.real, low=0) if old == "--latency" else
                       checks.option(checks.real, above=0, finite=False))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


def communication(a):
    """The :class:`gclib.simulator.Communication` of ``--network`` (or of the old ``--latency`` and
    ``--bandwidth``), ``None`` when messages cost nothing."""
    latency, bandwidth = getattr(a, "old_latency", None), getattr(a, "old_bandwidth", None)
    if latency is None and bandwidth is None:
        comm = message_cost.parse(a.network)
        return None if comm is None or comm.free else comm
    if a.network is not None:
        raise ValueError("argument --network: cannot be given with --latency or --bandwidth (their new form: "
                         "--network latency=...,bandwidth=...,queue=no)")
    return Communication(latency=latency or 0.0, bandwidth=math.inf if bandwidth is None else bandwidth)


def run(a) -> int:
    options.reject_unused(a)
    comm = communication(a)  # a bad --network is refused before the code is built
    code = options.code_from_args(a, schedule=True)  # the schedule where the family has one: no dense matrix
    model = options.model_from_args(a, workers=code.n_workers)
    res = simulate(code, model, trials=a.trials, seed=a.seed, comm=comm, progress=not a.json and a.trials >= 100_000)
    out = res.summary()
    med, lo, hi = median_ci(res.time)
    tail = completion_tail_index(code, model)
    out.update(jsonable({"median_time": med, "median_time_ci95": [lo, hi], "mean_time_finite": tail > 1,
                         "variance_time_finite": tail > 2}))
    infinite = tail <= 1
    if infinite:  # the sample mean of an infinite mean says nothing: it grows with the trials
        out["sample_mean_time"], out["mean_time"], out["ci95_time"] = out["mean_time"], None, None
    elif tail <= 2:  # a finite mean, an infinite variance: the normal interval of the mean means nothing
        out["ci95_time"] = None
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{out['scheme']} under {model_text(out['model'])}:")
        k = code.stragglers + 1
        why = (f"the completion time's tail index is {tail:g}: {tail_index(model):g} per worker, and an iteration "
               f"may wait for its {'' if k == 1 else f'{k}{_ordinal(k)} '}slowest worker")
        if infinite:
            print(f"  mean time infinite ({why}); the mean of these trials, {_fmt(out['sample_mean_time'], '.5g')}, "
                  f"estimates nothing")
        elif out["ci95_time"] is None and tail <= 2:
            print(f"  mean time {_fmt(out['mean_time'], '.5g')} (model time units; no interval: its variance is "
                  f"infinite, {why})")
        else:
            print(f"  mean time {_fmt(out['mean_time'], '.5g')} +/- {_fmt(out['ci95_time'], '.2g')} (model time "
                  f"units)")
        print(f"  median time {_fmt(out['median_time'], '.5g')} (95% CI {_fmt(out['median_time_ci95'][0], '.5g')} "
              f"to {_fmt(out['median_time_ci95'][1], '.5g')}), "
              f"messages {_fmt(out['mean_messages'], '.4g')}, computations {_fmt(out['mean_computations'], '.4g')}, "
              f"volume {_fmt(out['mean_volume'], '.4g')} ({out['trials']} trials, {out['failed']} never decoded)")
    return 0


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def model_text(desc: dict) -> str:
    """A model's description (:meth:`gclib.stragglers.ComputeModel.describe`) in words, e.g. ``shifted-exp (mu 10,
    alpha 0.01, one draw per worker)``; a wrapper (persistent stragglers) around its base model's."""
    desc = dict(desc)
    name = desc.pop("model", "?")
    if "base" in desc:
        base = model_text(desc.pop("base"))
        count, workers = desc.get("count"), desc.get("workers")
        dead = (f"workers {workers} never answer" if workers else
                f"{count} random worker{'s' if count != 1 else ''} per trial never answer{'' if count != 1 else 's'}")
        return f"{base}, {dead}"
    per_task = desc.pop("per_task", False)
    params = [f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in desc.items()]
    params.append("one draw per partial gradient" if per_task else "one draw per worker")
    return f"{name} ({', '.join(params)})"


def _fmt(x, spec: str) -> str:
    """A number of a summary, ``n/a`` where it is undefined (``None``: every trial failed, or one trial)."""
    return "n/a" if x is None else format(x, spec)
