"""``gclib advise``: from a measured timing trace to the code to run (:func:`gclib.timings.read`, then
:func:`gclib.fit.fit` and its models, then :func:`gclib.advise.advise`)."""
from __future__ import annotations


#: As :data:`gclib.advise.MAX_WORKERS` (not imported here: ``gclib advise --help`` stays light).
MAX_WORKERS = 10_000


def add_parser(sub):
    from .. import checks

    p = sub.add_parser("advise", help="fit straggler models to a timing trace and rank the codes to run on it",
                       description="Read a timing trace (CSV: iteration, worker, task, seconds), fit the "
                                   "compute-time models to it (and keep the trace itself as a bootstrap replay), "
                                   "simulate every candidate code under every model and print them ranked under "
                                   "the replay, with the gclib run options of each.")
    p.add_argument("--trace", required=True, type=checks.option(checks.input_path, kind="file", must_exist=True),
                   metavar="CSV", help="the timing trace (gclib run --measure / gclib profile, or your own)")
    p.add_argument("--workers", required=True, type=checks.option(checks.integer, low=2, high=MAX_WORKERS),
                   metavar="K", help="workers of the run to advise (the models are per worker)")
    p.add_argument("--budget", type=checks.option(checks.real, above=0), default=None, metavar="MESSAGES",
                   help="largest mean number of messages received per iteration (default: no limit)")
    p.add_argument("--max-load", type=checks.option(checks.integer, low=1), default=None, metavar="R",
                   help="largest computation load, parts per worker (default ceil(sqrt(K)), at least 2)")
    p.add_argument("--trials", type=checks.option(checks.integer, low=2), default=None, metavar="N",
                   help="simulated iterations per model (default 4000)")
    p.add_argument("--seed", type=checks.option(checks.integer, low=0), default=0, metavar="S",
                   help="seed of the fits' bootstrap and of the simulation")
    p.add_argument("--all-models", action="store_true",
                   help="advise under every fitted model, also those the goodness-of-fit test rejects at 5%%")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--figure", type=checks.option(checks.output_file), default=None, metavar="PNG",
                   help="write the figure of the front of time against communication here")
    p.set_defaults(fn=run)


def run(a) -> int:
    from .. import advise, checks, timings

    if a.max_load is not None:
        checks.option_check("--max-load", checks.integer, a.max_load, low=1, high=a.workers,
                            why=f" (at most --workers {a.workers})")
    trials = advise.TRIALS if a.trials is None else a.trials
    advise.check_workload(a.workers, a.max_load, trials, models=1)  # before the trace is read and fitted
    trace = timings.read(a.trace)
    from .. import fit  # (SciPy's statistics: loaded once the trace is read)

    report = fit.fit(trace, seed=a.seed, progress=not a.json)
    if report.persistent > a.workers:
        raise ValueError(f"--workers {a.workers}: the trace {a.trace} has {report.persistent} workers per iteration "
                         f"that never answered (persistent stragglers); advise for more workers than that")
    level = None if a.all_models else advise.REJECT_LEVEL
    models = report.models(level=level)
    left_out = [] if level is None else report.rejected(level)
    advise.check_workload(a.workers, a.max_load, trials, models=len(models))  # before the simulation
    if not a.json:
        print(_fits_text(report, left_out, trace), flush=True)
    res = advise.advise(models, a.workers, max_load=a.max_load, budget=a.budget, trials=trials, seed=a.seed,
                        progress=not a.json)
    if a.figure is not None:
        import matplotlib.pyplot as plt

        try:
            fig = res.plot(a.figure)
        except OSError as e:  # a full disk: the error names the file
            raise OSError(e.errno, e.strerror or str(e), str(a.figure)) from None
        plt.close(fig)
    if a.json:
        import json

        out = res.to_dict()
        out["fits"] = _fits_rows(report, left_out)
        out["trace"] = {"file": str(a.trace), "iterations": trace.iterations, "workers": trace.workers,
                        "tasks": int(trace.durations.shape[2])}
        print(json.dumps(out))
    else:
        print(res.text())
    return 0


def _fits_rows(report, left_out) -> list:
    from ..jsonable import jsonable

    best = report.best.name
    return jsonable([{"name": f.name, "params": f.params, "ci": {k: list(v) for k, v in f.ci.items()},
                      "ks": f.ks, "p_value": f.p_value, "aic": f.aic, "n": f.n, "best": f.name == best,
                      "advised_under": f.name not in left_out} for f in report.fits])


def _fits_text(report, left_out, trace) -> str:
    """The fitted models, one line each, and which ones the advice leaves out."""
    best = report.best.name
    lines = [f"trace: {trace.iterations} iterations x {trace.workers} workers x {trace.durations.shape[2]} tasks "
             f"({trace.source}); {report.persistent} workers per iteration never answered",
             "fitted models (95% intervals; KS statistic and bootstrap p-value):"]
    for f in report.fits:
        mark = ", ".join(m for m, on in (("best", f.name == best), ("left out", f.name in left_out)) if on)
        lines.append(f"  {f.name:24s} {f.text():52s} KS {f.ks:.3f}  p {f.p_value:.3g}  {mark}")
    if left_out:
        lines.append(f"left out of the advice (rejected at p < 0.05; --all-models keeps them): {', '.join(left_out)}")
    return "\n".join(lines) + "\n"
