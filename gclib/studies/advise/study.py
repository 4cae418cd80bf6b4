"""Checking ``gclib advise`` (notebook 09): do the fits recover known models, and does the advice predict real runs?

Two studies, each a function returning tables (no plotting, no printing):

* :func:`recovery`: traces drawn by gclib's own compute-time models (``truths``), each fitted by
  :func:`gclib.fit.fit`; per repetition, every parameter's estimate and 95% interval beside the truth, and the
  family that fits best. :func:`coverage` and :func:`goodness` summarise it (the inputs of
  :mod:`gclib.studies.advise.claims`).
* :func:`machine`: on this machine (or a hostfile's hosts), ``gclib profile`` with injected delays of a known
  model, the fit of its trace, the advice for the same number of workers, then real runs (``gclib run``'s
  runtime) of the advised code and of uncoded under the same injected delays, beside the advice's predictions.

Times of :func:`machine` are in seconds: the injected model's units times ``time_scale``.
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gclib import advise as _advise
from gclib import checks, schemes
from gclib import fit as _fit
from gclib import message_cost
from gclib.learning import TandonAGD
from gclib.parallel import ordered_map
from gclib.runtime import RunSpec, launch, launch_series, namespace_hosts
from gclib.runtime.measure import host_names, profile_spec
from gclib.stats import Estimate
from gclib.stragglers import ComputeModel, expected_order_statistic, model_set
from gclib.studies.mpi_runs.study import problem
from gclib.timings import Timings


def truths(mu: float = 10.0, alpha: float = 0.01, rate: float = 10.0, pareto_scale: float = 0.05,
           pareto_shape: float = 2.5) -> dict:
    """The generating models of :func:`recovery`, by label: the set ``"calibration"`` of
    :func:`gclib.stragglers.model_set`, the GC-MMC paper's shifted exponential (one draw per worker and iteration,
    its eq. 5), an exponential drawn per task, and a Pareto drawn per worker."""
    return model_set("calibration", mu=mu, alpha=alpha, rate=rate, pareto_scale=pareto_scale,
                     pareto_shape=pareto_shape)


def durations(model: ComputeModel, workers: int, iterations: int, tasks: int, rng) -> np.ndarray:
    """A trace drawn from ``model``: ``(iterations, workers, tasks)`` task durations (the differences of the
    model's finish times)."""
    finish = model.sample(rng, iterations, workers, tasks)
    return np.diff(finish, axis=2, prepend=0.0)


def _matching(report, model: ComputeModel):
    """The fit of ``report`` with the family and the convention of ``model``."""
    for f in report.fits:
        if f.family == model.name and bool(f.per_task) == bool(model.per_task):
            return f
    raise ValueError(f"the fit report has no {model.name} fit with per_task = {model.per_task}")


def recovery(models: dict, *, workers: int, iterations: int, tasks: int, repeats: int, seed: int = 0,
             bootstrap: int = 200, progress: bool = False, processes: int = 1) -> pd.DataFrame:
    """Fit ``repeats`` traces of every model of ``models`` (label -> model), the fits in ``processes`` processes
    (:func:`gclib.parallel.ordered_map`: the traces and the fits' seeds are drawn here first, in order, so that the
    numbers do not depend on ``processes``).

    Returns:
        one row per (truth, repeat, parameter): ``truth, repeat, parameter, true_value, estimate, lo, hi,
        covered``, ``fit`` (the name of the fit of the truth's family and convention, e.g. ``"exp per task"``) and
        ``winner`` (the name of :attr:`gclib.fit.FitReport.best`: the convention and the family the report picks).
    """
    repeats = checks.integer("repeats", repeats, low=1)
    rng = np.random.default_rng(checks.integer("seed", seed, low=0))
    jobs = []
    for label in models:
        for r in range(repeats):
            d = durations(models[label], workers, iterations, tasks, rng)
            jobs.append((label, r, models[label], d, int(rng.integers(2 ** 31)), bootstrap))
    done = ordered_map(_recovered, jobs, processes, desc="fit", show=progress, chunksize=4)
    return pd.DataFrame([row for rows in done for row in rows])


def _recovered(job) -> list[dict]:
    """The rows of :func:`recovery` for one trace: ``job`` is ``(label, repeat, model, durations, seed,
    bootstrap)``."""
    label, r, model, d, fit_seed, bootstrap = job
    report = _fit.fit(d, seed=fit_seed, bootstrap=bootstrap)
    f = _matching(report, model)
    rows = []
    for p, est in f.params.items():
        truth = float(getattr(model, p))
        lo, hi = f.ci[p]
        rows.append({"truth": label, "fit": f.name, "repeat": r, "parameter": p, "true_value": truth,
                     "estimate": float(est), "lo": float(lo), "hi": float(hi), "covered": bool(lo <= truth <= hi),
                     "winner": report.best.name})
    return rows


def coverage(rec: pd.DataFrame) -> pd.DataFrame:
    """Per (truth, parameter): ``true_value, repeats, covered`` (count) and ``median_estimate``."""
    g = rec.groupby(["truth", "parameter"], sort=False)
    return g.agg(true_value=("true_value", "first"), repeats=("covered", "size"), covered=("covered", "sum"),
                 median_estimate=("estimate", "median")).reset_index()


def goodness(rec: pd.DataFrame) -> pd.DataFrame:
    """Per truth: ``repeats``, ``wins`` (repetitions whose best fit has the truth's family and convention) and
    ``other`` (the fit that won most often otherwise, ``""`` if none)."""
    one = rec.drop_duplicates(["truth", "repeat"])
    rows = []
    for truth, g in one.groupby("truth", sort=False):
        lost = g[g["winner"] != g["fit"]]["winner"]
        rows.append({"truth": truth, "repeats": len(g), "wins": int((g["winner"] == g["fit"]).sum()),
                     "other": lost.value_counts().index[0] if len(lost) else ""})
    return pd.DataFrame(rows)


def trace_table(trace: np.ndarray) -> pd.DataFrame:
    """The timing trace of ``trace`` (``(iterations, workers, tasks)`` durations) as its CSV's table."""
    return Timings.from_array(trace, host_names(None, np.shape(trace)[1])).frame()


def mean_task_time(fit) -> tuple:
    """The mean task duration of a fit and a 95% interval from its parameters' intervals (the interval's ends
    combine the parameters' ends that give the smallest and the largest mean: conservative)."""
    p, ci = fit.params, fit.ci
    if fit.family == "shifted-exp":
        return (p["alpha"] + 1 / p["mu"], ci["alpha"][0] + 1 / ci["mu"][1], ci["alpha"][1] + 1 / ci["mu"][0])
    if fit.family == "exp":
        return 1 / p["rate"], 1 / ci["rate"][1], 1 / ci["rate"][0]
    if fit.family == "pareto":
        mean = lambda s, a: s * a / (a - 1) if a > 1 else math.inf  # noqa: E731
        return mean(p["scale"], p["shape"]), mean(ci["scale"][0], ci["shape"][1]), mean(ci["scale"][1],
                                                                                          ci["shape"][0])
    raise ValueError(f"no mean task time for family {fit.family!r}")


def model_mean(model: ComputeModel) -> float:
    """The mean task duration of a shifted-exponential, exponential or Pareto model (model units): the expected
    first of one draw, :func:`gclib.stragglers.expected_order_statistic` ``(model, 1, 1)``."""
    try:
        return expected_order_statistic(model, 1, 1)
    except ValueError:
        raise ValueError(f"no mean task time for {type(model).__name__}") from None


@dataclass
class Machine:
    """What :func:`machine` measured: the profile's ``trace`` (task durations, seconds), the fit ``report``, the
    ``advice``, ``fit_check`` (the fit of the injected family beside the injected mean task time, for
    :func:`gclib.studies.advise.claims.judge`), ``real`` (one row per real run: ``role, label, command, predicted,
    predicted_lo, predicted_hi, mean_time, lo, hi, iterations``) and ``log`` (every real iteration:
    ``role, label, iteration, time, predicted``; ``predicted``: the simulator's time for that iteration's
    injected delays)."""

    trace: np.ndarray
    report: object
    advice: object
    fit_check: dict
    real: pd.DataFrame
    log: pd.DataFrame


def _run_options(command: str) -> tuple:
    """``(scheme, {parameter: value})`` of an advice's ``gclib run`` options (``--name value`` pairs; the scheme
    checks the values when it builds)."""
    words = shlex.split(command)
    if len(words) % 2:
        raise ValueError(f"expected --name value pairs, got {command!r}")
    opts = dict(zip(words[0::2], words[1::2]))
    scheme = opts.pop("--scheme")
    return scheme, {k[2:].replace("-", "_"): int(v) if v.isdigit() else v for k, v in opts.items()}


def run_advised(commands, model: ComputeModel, *, samples: int, dim: int, iterations: int, time_scale: float,
                seed: int, where: dict) -> list:
    """Run advices' designs for real, in series (:func:`gclib.runtime.launch_series`): ``gclib run``'s runtime
    trains with the design of each of ``commands`` (an advice's run options) for ``iterations`` iterations under
    delays of ``model`` (``time_scale`` seconds per unit, ``seed``) on Tandon's synthetic logistic regression of
    ``samples`` rows (at least one per data part) of ``dim`` features, on the hosts of ``where``
    (:func:`gclib.runtime.launch`'s ``hosts`` and ``mpiexec_args``).

    Returns:
        per command, ``(result, code, estimate)``: the :class:`gclib.runtime.RunResult`, the code run, and the
        Student-t mean of its iteration times (seconds).
    """
    codes, specs = [], []
    for command in commands:
        scheme, opts = _run_options(command)
        code = schemes.build(scheme, **opts)
        prob = problem("tandon-logistic", code.n_parts, samples=max(samples, code.n_parts), dim=dim)
        codes.append(code)
        specs.append(RunSpec(code, prob, TandonAGD(1.0 / prob.smoothness), model, iterations=iterations,
                             time_scale=time_scale, seed=seed, timeout=60.0))
    runs = launch_series(specs, **where) if specs else []
    return [(run, code, Estimate.of(np.array([x["time"] for x in run.records]))) for run, code in zip(runs, codes)]


def machine(*, workers: int, tasks: int, iterations: int, model: ComputeModel, time_scale: float,
            run_iterations: int, samples: int = 2000, dim: int = 20, max_load: int | None = None,
            trials: int = 4000, seed: int = 0, bootstrap: int = 200, hosts=None, progress: bool = False) -> Machine:
    """Profile, fit, advise and run on this machine (see the module docstring)."""
    spec = profile_spec(workers, tasks, iterations, samples=samples, dim=dim, model=model, time_scale=time_scale,
                        seed=seed)
    trace = launch(spec, hosts=hosts).task_durations()
    report = _fit.fit(trace, seed=seed, bootstrap=bootstrap)
    f = _matching(report, model)
    mean, lo, hi = mean_task_time(f)
    fit_check = {"fit": f.name, "injected": f"{model.name} {_params(model)} x {time_scale:g} s",
                 "injected_mean": model_mean(model) * time_scale, "fitted_mean": mean, "fitted_lo": lo,
                 "fitted_hi": hi}
    advice = _advise.advise(report.models(level=_advise.REJECT_LEVEL), workers, max_load=max_load, trials=trials,
                            seed=seed, progress=progress)
    advice.settings["unit"] = "s"  # the models are fitted to a trace measured in seconds
    chosen = [("advised", advice.best)]
    unc = advice.ranked[advice.ranked["family"] == "uncoded"]
    chosen.append(("uncoded", unc.iloc[0].to_dict() if len(unc) else None))
    chosen = [(role, r) for role, r in chosen if r is not None]
    ran = run_advised([r["command"] for _, r in chosen], model, samples=samples, dim=dim, iterations=run_iterations,
                      time_scale=time_scale, seed=seed + 1, where={"hosts": hosts})
    rows, logs = [], []
    for (role, r), (run, code, e) in zip(chosen, ran):
        rows.append({"role": role, "label": r["label"], "command": r["command"], "predicted": r["mean_time"],
                     "predicted_lo": r["mean_time"] - r["ci95_time"], "predicted_hi": r["mean_time"] + r["ci95_time"],
                     "mean_time": e.value, "lo": e.lo, "hi": e.hi, "iterations": len(run.records)})
        logs += [{"role": role, "label": r["label"], "iteration": x["iteration"], "time": x["time"],
                  "predicted": x["predicted"]} for x in run.records]
    return Machine(trace, report, advice, fit_check, pd.DataFrame(rows), pd.DataFrame(logs))


def _params(model: ComputeModel) -> str:
    d = {k: v for k, v in model.describe().items() if k not in ("model", "per_task")}
    return "(" + ", ".join(f"{k} = {v:g}" for k, v in d.items()) + ")"


@dataclass
class NetworkCase:
    """What :func:`network_case` measured.

    Attributes:
        trace: the profile's task durations (seconds). report: their fits. network: the measured cost of a message
            (:class:`gclib.message_cost.NetworkProfile`). free, charged: the advice without communication and with the
            measured network charged (:class:`gclib.advise.Advice`). real: one row per design run for real
            (``role`` "free" / "charged" / "both" when the two advices agree, ``label, command``, the predictions
            of both advices ``free, free_lo, free_hi, charged, charged_lo, charged_hi``, the real ``mean_time, lo,
            hi`` with a Student-t 95% interval over the ``iterations``, ``messages``: received per iteration when
            it decoded, ``sent``: messages the workers sent per iteration, and ``link``: the seconds the measured
            network needs to carry them, ``sent`` times the master's time for one message of the design's size).
            log: every real iteration (``label, iteration, time, predicted``: the simulator's time for its
            injected delays, without communication). where: the hosts, in words.
    """

    trace: np.ndarray
    report: object
    network: object
    free: object
    charged: object
    real: pd.DataFrame
    log: pd.DataFrame
    where: str = "this machine"


def network_slots(workers: int, hosts: int) -> tuple:
    """Ranks per host for :func:`network_case`'s local hosts: the master alone on the first, ``workers`` spread
    evenly over ``hosts`` more."""
    workers = checks.integer("workers", workers, low=1)
    hosts = checks.integer("hosts", hosts, low=1, high=workers)
    return (1,) + tuple(workers // hosts + (i < workers % hosts) for i in range(hosts))


def network_case(*, workers: int, tasks: int, iterations: int, model: ComputeModel, time_scale: float,
                 run_iterations: int, dim: int, samples: int | None = None, max_load: int | None = None,
                 trials: int | None = None, seed: int = 0, bootstrap: int = 200, hosts=None, rate=None,
                 worker_hosts: int = 4) -> NetworkCase:
    """Profile, measure the network, advise with and without charging it, and run both recommendations for real.

    ``gclib profile`` with injected delays of ``model`` and gradients of ``dim`` numbers, then its measurement of
    what a message costs (:mod:`gclib.runtime.message_probe`, fitted by :func:`gclib.message_cost.fit`); the fits of the
    trace; the advice for the same workers without communication and with the measured network
    (:func:`gclib.advise.advise`, ``network=``); then ``gclib run``'s runtime trains with each recommended design
    (once if they agree), ``run_iterations`` iterations under the same injected delays (the same seed for both)
    on Tandon's synthetic logistic regression of ``samples`` rows of ``dim`` features (default: two rows per data
    part of the profile). Times are in seconds.

    Where: ``rate`` (bits per second, or e.g. ``"100mbit"``) runs everything on local hosts
    (:class:`gclib.runtime.namespace_hosts.LocalHosts`): the master alone on one, the workers on ``worker_hosts``
    more, talking over TCP through a link into the master's host limited to ``rate`` by the kernel; where they
    cannot be made (not Linux, not root), on ``hosts`` as without ``rate``, and :attr:`NetworkCase.where` says
    why. Without ``rate``: this machine, or ``hosts`` (a hostfile, or an object with ``launch_options``).
    """
    why = "no link rate given" if rate is None else namespace_hosts.why_not(rate)
    if why is None:
        slots = network_slots(workers, worker_hosts)
        bits = namespace_hosts.rate_bits(rate)
        local = namespace_hosts.LocalHosts(slots, rate=bits)
        try:
            local.__enter__()
        except namespace_hosts.HostsUnavailable as e:
            why = str(e)
        else:
            where = (f"the master alone on one host, the {workers} workers on {worker_hosts} more (network "
                     f"namespaces of this machine, TCP), the link into the master's host limited to "
                     f"{bits / 1e6:g} Mbit/s")
            try:
                return _network_case(local.launch_options, where, workers, tasks, iterations, model, time_scale,
                                     run_iterations, dim, samples, max_load, trials, seed, bootstrap)
            finally:
                local.close()
    where = "this machine" if hosts is None else "the hostfile's hosts"
    if rate is not None:
        where += f" (no throttled local hosts: {why})"
    opts = hosts.launch_options if hasattr(hosts, "launch_options") else {"hosts": hosts}
    return _network_case(opts, where, workers, tasks, iterations, model, time_scale, run_iterations, dim, samples,
                         max_load, trials, seed, bootstrap)


def _network_case(where_opts, where, workers, tasks, iterations, model, time_scale, run_iterations, dim, samples,
                  max_load, trials, seed, bootstrap) -> NetworkCase:
    dim = checks.integer("dim", dim, low=1)
    samples = 2 * workers * tasks if samples is None else samples
    spec = profile_spec(workers, tasks, iterations, samples=samples, dim=dim, model=model, time_scale=time_scale,
                        seed=seed, network=message_cost.sizes_for(dim))
    res = launch(spec, **where_opts)
    trace = res.task_durations()
    net = message_cost.fit(res.network or {}, 8 * dim, hosts=host_names(res.hosts, workers))
    report = _fit.fit(trace, seed=seed, bootstrap=bootstrap)
    models = report.models(level=_advise.REJECT_LEVEL)
    kw = dict(max_load=max_load, trials=trials, seed=seed)
    free = _advise.advise(models, workers, **kw)
    charged = _advise.advise(models, workers, network=net.communication(), **kw)
    free.settings["unit"] = charged.settings["unit"] = "s"  # fitted to a trace measured in seconds
    picks = {}
    for role, adv in (("free", free), ("charged", charged)):
        if adv.best is not None:
            picks.setdefault(adv.best["label"], []).append(role)

    def predicted(adv, label) -> tuple:  # mean and 95% interval; nan where a screen left the design out
        r = adv.ranked[adv.ranked["label"] == label]
        if r.empty:
            return math.nan, math.nan, math.nan
        m, h = float(r["mean_time"].iloc[0]), float(r["ci95_time"].iloc[0])
        return m, m - h, m + h

    commands = {label: (free.best if roles[0] == "free" else charged.best)["command"] for label, roles in picks.items()}
    ran = run_advised(list(commands.values()), model, samples=samples, dim=dim, iterations=run_iterations,
                      time_scale=time_scale, seed=seed + 1, where=where_opts)
    rows, logs = [], []
    for (label, roles), (run, code, e) in zip(picks.items(), ran):
        command = commands[label]
        (f, f_lo, f_hi), (c, c_lo, c_hi) = predicted(free, label), predicted(charged, label)
        sent = run.messages_sent / max(1, len(run.records))
        one = net.overhead + 8 * dim * float(np.mean(code.size)) / net.bandwidth  # the master's time per message
        rows.append({"role": "both" if len(roles) == 2 else roles[0], "label": label, "command": command,
                     "free": f, "free_lo": f_lo, "free_hi": f_hi, "charged": c, "charged_lo": c_lo,
                     "charged_hi": c_hi, "mean_time": e.value, "lo": e.lo, "hi": e.hi, "iterations": len(run.records),
                     "messages": float(np.mean([x["messages"] for x in run.records])), "sent": sent,
                     "link": sent * one})
        logs += [{"label": label, "iteration": x["iteration"], "time": x["time"], "predicted": x["predicted"]}
                 for x in run.records]
    return NetworkCase(trace, report, net, free, charged, pd.DataFrame(rows), pd.DataFrame(logs), where)
