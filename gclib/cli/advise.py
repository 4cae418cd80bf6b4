"""``gclib advise``: from a measured timing trace to the code to run (:func:`gclib.timings.read`; the trace's fits,
made once, refused when more workers never answered than the run has; then :func:`gclib.advise.from_trace` on those
fits: the models that keep worker identity and whole iterations, their goodness of fit, and the advice under the best
supported one); with ``--holdout``, the back-test of that advice on the trace's last iterations
(:func:`gclib.advise.backtest`). The workload is checked once, before the trace is read when ``--workers`` is given,
just after it otherwise."""
from __future__ import annotations

import json
import math

from gclib import checks
from gclib.cli import options
from gclib.design_space import MAX_WORKERS
from gclib.jsonable import jsonable
from gclib.sequential_replay import MU


#: The command, and its line in ``gclib --help``.
NAME = "advise"
HELP = "fit straggler models to a timing trace and rank the codes to run on it"


#: The examples of ``gclib advise --help`` (the tests run each).
EXAMPLES = (
    ("gclib advise --trace data/straggler-analysis/trace-AR.parquet --workers 4",
     "the codes to run on 4 workers, ranked under the models fitted to a real training job's trace"),
    ("gclib advise --trace data/straggler-analysis/trace-SE.parquet --holdout 0.5",
     "fit on the first half of the iterations, check the advice on the second"),
    ("gclib advise --trace data/straggler-analysis/trace-SE.parquet --workers 32 --network "
     "latency=0.001,bandwidth=100 --figure front.png",
     "every message charged; the front of time against communication drawn"))


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       description="Read a timing trace (CSV: iteration, worker, task, seconds; other shapes: gclib "
                                   "trace convert), fit the compute-time models to it, together with the trace "
                                   "replayed by rows, by whole iterations (every worker kept) and as worker and "
                                   "iteration effects; judge every model on the trace's whole iterations, simulate "
                                   "every candidate code under every model and print them ranked under the first "
                                   "supported model that keeps the most of the trace, with the gclib run options of "
                                   "each. With --holdout F: fit and advise on the first iterations, and report how "
                                   "the advice holds on the last F of them (a warning when a target is missed).",
                       epilog=options.examples(EXAMPLES))
    p.add_argument("--trace", required=True, type=checks.option(checks.input_path, kind="file", must_exist=True),
                   metavar="CSV", help="the timing trace (gclib run --measure / gclib profile / gclib trace convert, or "
                                       "your own); a per-operation parquet trace is converted as gclib trace convert "
                                       "does by default")
    p.add_argument("--workers", type=checks.option(checks.integer, low=2, high=MAX_WORKERS), default=None, metavar="K",
                   help="workers of the run to advise (any number; required without --holdout, which advises for "
                        "the trace's own workers)")
    p.add_argument("--holdout", type=checks.option(checks.real, above=0, below=1), default=None, metavar="F",
                   help="back-test: fit on the first 1 - F of the iterations, check on the last F (e.g. 0.5)")
    p.add_argument("--budget", type=checks.option(checks.real, above=0), default=None, metavar="MESSAGES",
                   help="largest mean number of messages received per iteration (default: no limit)")
    p.add_argument("--network", default=None, metavar="SPEC",
                   help="what a message costs, charged in the ranking: latency=T,bandwidth=G[,overhead=T][,queue=no] "
                        "(T seconds, G gradients per second, inf: no limit; the master takes messages in one at a "
                        "time, queue=no: each arrives latency + overhead + size / bandwidth after it is sent), a "
                        "network profile (JSON, gclib profile writes TRACE.network.json), or none (default: the "
                        "profile beside the trace when there is one, else none)")
    p.add_argument("--max-load", type=checks.option(checks.integer, low=1), default=None, metavar="R",
                   help="largest computation load, parts per worker (default ceil(sqrt(K)), at least 2)")
    p.add_argument("--trials", type=checks.option(checks.integer, low=2), default=None, metavar="N",
                   help="simulated iterations per model (default: until every mean time is known within 1%%, "
                        "400 to 4000)")
    p.add_argument("--seed", type=checks.option(checks.integer, low=0), default=0, metavar="S",
                   help="seed of the fits' bootstrap, the goodness-of-fit tests and the simulation")
    p.add_argument("--all-models", action="store_true",
                   help="advise under every fitted model, also those the goodness-of-fit test rejects at 5%%")
    p.add_argument("--sequential", action="store_true",
                   help="also weigh coding across iterations (GC, SR-SGC, M-SGC of gclib sequential) under the "
                        "ranking model: time per gradient, its parameters chosen on draws of it, communication not "
                        "charged")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--figure", type=checks.option(checks.output_file), default=None, metavar="PNG",
                   help="write the figure of the front of time against communication here")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib import advise, message_cost, timings

    net = message_cost.parse(a.network, trace=a.trace)  # a bad --network is refused before any work
    trials = a.trials  # None: until every mean is known within 1% (at most advise.TRIALS)
    _check_before_reading(a)
    trace = advise.check_trace(timings.load(a.trace))  # refused before any fit: zeros, one time, 1e300, denormals
    K = _workers(a, trace)
    if a.holdout is not None:
        bt = advise.backtest(trace, a.holdout, seed=a.seed, trials=trials, max_load=a.max_load, budget=a.budget,
                             all_models=a.all_models, progress=not a.json, network=net)
        fa = bt.fit
    else:
        bt = None
        fa = advise.from_trace(trace, K, seed=a.seed, trials=trials, max_load=a.max_load, budget=a.budget,
                               all_models=a.all_models, progress=not a.json, network=net,
                               report=_fit_report(a, trace, K))
    res = fa.advice
    across = _across(fa, K, a.seed) if a.sequential else None
    if a.figure is not None:
        _figure(res, a.figure)
    if a.json:
        _print_json(a, trace, fa, bt, across)
    else:
        print(_fits_text(fa.report, fa.left_out, trace))
        print(fa.text())
        if bt is not None:
            print()
            print(bt.text())
        if across is not None:
            print()
            print(_across_text(across, fa))
    for w in res.warnings() + (bt.warnings if bt is not None else []):
        options.warn(w)
    return 0


def _workers(a, trace) -> int:
    """The workers to advise: --workers, or with --holdout the trace's own; the load, the workload and the work of
    --sequential checked here when they could not be before the trace was read (no --workers)."""
    if a.holdout is not None:
        if a.workers is not None and a.workers != trace.workers:
            raise ValueError(f"argument --workers: the back-test keeps the trace's {trace.workers} workers, each with "
                             f"its own times; got --workers {a.workers} (leave it out)")
        K = trace.workers
    elif a.workers is None:
        raise ValueError("argument --workers: required without --holdout (the workers of the run to advise)")
    else:
        K = a.workers
    if a.workers is None:  # with --workers, _check_before_reading checked them for these very workers
        _check_work(a, K)
    return K


def _fit_report(a, trace, K):
    """The fits of the trace (:func:`gclib.fit.fit`, made once: the advice takes them), refused when the trace has
    more workers per iteration that never answered (persistent stragglers) than the run to advise."""
    from gclib import advise, fit

    report = fit.fit(trace, seed=a.seed, bootstrap=advise.BOOTSTRAP)
    if report.persistent > K:
        raise ValueError(f"--workers {K}: the trace {a.trace} has {report.persistent} workers per iteration "
                         f"that never answered (persistent stragglers); advise for more workers than that")
    return report


def _figure(res, path) -> None:
    """The figure of the front of time against communication, written to ``path``."""
    import matplotlib.pyplot as plt

    from gclib.plotting import theme

    theme()
    try:
        fig = res.plot(path)
    except OSError as e:  # a full disk: the error names the file
        raise OSError(e.errno, e.strerror or str(e), str(path)) from None
    plt.close(fig)


def _print_json(a, trace, fa, bt, across) -> None:
    """The advice (or the back-test, the advice in it) as one JSON object, with the fits and the trace's shape."""
    if bt is not None:
        out = bt.to_dict()
        out["advice"]["fits"] = _fits_rows(fa.report, fa.left_out)
    else:
        out = fa.to_dict()
        out["fits"] = _fits_rows(fa.report, fa.left_out)
    out["trace"] = {"file": str(a.trace), "iterations": trace.iterations, "workers": trace.workers,
                    "tasks": int(trace.durations.shape[2])}
    if across is not None:
        out["sequential"] = jsonable(across.to_dict(orient="records"))
    print(json.dumps(out))


def _check_before_reading(a) -> None:
    """What can be checked before the trace is read and fitted: the figure's format, and with --workers the load,
    the workload and the work of --sequential."""
    if a.figure is not None:
        _check_figure(a.figure)
    if a.workers is not None:
        _check_work(a, a.workers)


def _check_work(a, K: int) -> None:
    """The load (--max-load at most ``K``), the workload (:func:`gclib.advise.check_workload`) and the work of
    --sequential for ``K`` workers, before any fit."""
    from gclib import advise

    if a.max_load is not None:
        checks.option_check("--max-load", checks.integer, a.max_load, low=1, high=K, why=f" (at most the {K} workers)")
    advise.check_workload(K, a.max_load, a.trials, models=1)
    if a.sequential:
        _check_across(K, a.max_load)


def _check_figure(path) -> None:
    """Refuse a --figure whose suffix names no format matplotlib writes (fig.txt), before any work."""
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = path.suffix.lower().lstrip(".")
    kinds = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in kinds:
        raise ValueError(f"argument --figure: {str(path)!r} names the format {suffix!r}, which is not a figure "
                         f"format; use one of {', '.join(sorted(kinds))} (e.g. fig.png)")


def _check_across(K: int, max_load) -> None:
    """The work of --sequential (:func:`gclib.sequential.check_advice`) for ``K`` workers, before any fit."""
    from gclib import advise, sequential as sq

    R = advise.default_max_load(K) if max_load is None else max_load
    try:
        sq.check_advice(K, R)
    except ValueError as e:
        raise ValueError(f"argument --sequential: {e}") from None


def _across(fa, K, seed):
    """The sequential schemes under the advice's ranking model (:func:`gclib.sequential.advice`)."""
    from gclib import sequential as sq

    return sq.advice(fa.primary_model, K, fa.advice.settings["max_load"], seed=seed)


def _across_text(t, fa) -> str:
    """The table of :func:`_across` and a sentence against the recommendation."""
    s = fa.advice.settings
    head = (f"Coding across iterations (gclib sequential: a gradient may finish T rounds after it starts; deadline "
            f"(1 + {MU:g}) x a round's fastest, --deadline-factor {MU:g}): each scheme's parameters chosen on draws of '{s['primary']}' "
            f"(at most {s['max_load']} data parts per worker and round), judged on the next {int(t['jobs'].iloc[0])} "
            f"gradients, {int(t['draws'].iloc[0])} draws; time per gradient in the models' unit; communication not "
            f"charged")
    fmt = lambda v: "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4g}"  # noqa: E731
    lines = [head, "", f"{'scheme':11}{'chosen':20}{'parts':>6}{'T':>3}  {'time per gradient (95% CI)':30}{'waits':>6}"]
    for r in t.itertuples():
        lines.append(f"{r.scheme:11}{r.chosen:20}{fmt(r.parts):>6}{'-' if r.T < 0 else r.T:>3}  "
                     f"{fmt(r.time) + ' (' + fmt(r.lo) + '-' + fmt(r.hi) + ')':30}{fmt(r.waits):>6}")
    coded = t[t["scheme"].isin(["sr-sgc", "m-sgc"]) & t["time"].notna()]
    best = fa.advice.best
    if coded.empty:
        lines += ["", f"No scheme coded across iterations fits within {s['max_load']} data parts a round "
                      f"(--max-load)."]
    elif best is not None:
        b = coded.loc[coded["time"].idxmin()]
        ratio = b["time"] / best["mean_time"]
        lines += ["", f"Best across iterations: {b['chosen']}, {fmt(b['time'])} per gradient (95% CI {fmt(b['lo'])}-"
                      f"{fmt(b['hi'])}), {ratio:.3g}x the recommendation's {fmt(best['mean_time'])} per iteration "
                      f"({best['label']}); its gradients arrive up to T = {int(b['T'])} rounds late. Replay a "
                      f"measured delay matrix with gclib sequential --delays FILE (--mpi: run it)."]
    return "\n".join(lines)


def _fits_rows(report, left_out) -> list:
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
        rejected = f.name in left_out
        mark = ("lowest AIC, but rejected: left out" if f.name == best and rejected else "best" if f.name == best
                else "left out" if rejected else "")
        lines.append(f"  {f.name:24s} {f.text():52s} KS {f.ks:.3f}  p {f.p_value:.3g}  {mark}")
    if left_out:
        lines.append(f"left out of the advice (rejected at p < 0.05; --all-models keeps them): {', '.join(left_out)}")
    return "\n".join(lines) + "\n"
