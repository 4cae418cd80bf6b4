"""Notebook 15's study: the network of :mod:`gclib.studies.your_model.perceptron` trained over MPI with the codes
``gclib advise`` recommends for a shipped real trace, against uncoded, under that trace's recorded delays.

1. The advice: :func:`gclib.advise.from_trace` on the trace for ``workers`` workers, once without charging
   communication and once with the messages' cost on this machine charged, as the first uncoded run measured it
   (:mod:`gclib.runtime.message_probe`, fitted by :func:`gclib.message_cost.fit`, in the trace's seconds: the runs go
   ``time_scale`` times faster than the trace).
2. The delays: per seed, ``workers`` of the trace's recorded workers drawn at random and its recorded steps from a
   random one on, replayed step by step (:func:`replayed`): iteration ``i`` of a run waits for the recorded
   microbatch times of step ``i`` of those workers, times ``time_scale``. Every scheme of a seed sees the same
   delays (a paired comparison).
3. The runs: for every seed, uncoded and every advised code (each once, whichever advice named it) train the network
   named by its import path (every rank builds it) with gradient descent; then each advised code that tolerates a
   straggler runs again with one worker killed at ``kill_iteration``. The runs go in series
   (:func:`gclib.runtime.launch_series`): every rank imports PyTorch once per series, not once per run.

:class:`Study` holds every iteration of every run; :meth:`Study.time_to_target`, :meth:`Study.savings` and
:meth:`Study.timing` make the tables the figures and the claims read.
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gclib import advise as _advise
from gclib import checks, message_cost, schemes
from gclib.codes import uncoded
from gclib.learning import GD
from gclib.learning.model import load
from gclib.runtime import RunSpec, launch_series
from gclib.simulator import Communication
from gclib.stats import Estimate, paired_difference
from gclib.stragglers import Replay, filled
from gclib.timings import load as load_trace, shipped

#: The import path every rank builds the network from.
NETWORK = "gclib.studies.your_model.perceptron:digits_mlp"
#: What each run is to the comparison.
UNCODED, FREE, CHARGED, BOTH = "uncoded", "advised", "advised with communication charged", "advised either way"
#: The columns kept of every iteration's record.
RECORD = ("iteration", "time", "predicted", "wall", "loss", "accuracy", "grad_error", "messages")


def replayed(durations: np.ndarray, workers: int, seed: int) -> tuple:
    """The delays of one seed: ``workers`` of the recorded workers of ``durations`` ``(steps, recorded workers,
    tasks)`` drawn without replacement, and the steps from a random one on (cycling), replayed as recorded
    (:class:`gclib.stragglers.Replay` by cycle; a task not observed takes its row's mean,
    :func:`gclib.stragglers.filled`).
    Returns ``(model, chosen workers, first step)``."""
    d = np.asarray(durations, dtype=float)
    workers = checks.integer("workers", workers, low=2, high=d.shape[1],
                             why=f" (at most the trace's {d.shape[1]} recorded workers)")
    rng = checks.generator(seed)
    chosen = np.sort(rng.choice(d.shape[1], size=workers, replace=False))
    first = int(rng.integers(d.shape[0]))
    return Replay(np.roll(filled(d[:, chosen, :]), -first, axis=0), by="cycle"), chosen, first


def code_of(command: str):
    """The code of an advice's ``gclib run`` options (``--scheme NAME --param value ...``)."""
    words = shlex.split(command)
    opts = dict(zip(words[0::2], words[1::2]))
    name = opts.pop("--scheme")
    return schemes.build(name, **{k[2:].replace("-", "_"): int(v) if v.isdigit() else v for k, v in opts.items()})


def trace_units(profile, time_scale: float, gradient_bytes: int) -> Communication:
    """The measured network (:class:`gclib.message_cost.NetworkProfile`, seconds) in the trace's seconds: a run goes
    ``time_scale`` real seconds per trace second, so a message's real cost is ``1 / time_scale`` times as long
    there."""
    c = profile.communication(gradient_bytes)
    return Communication(latency=c.latency / time_scale, bandwidth=c.bandwidth * time_scale,
                         overhead=c.overhead / time_scale, queue=c.queue)


@dataclass
class Study:
    """What :func:`run` measured.

    Attributes:
        settings: the parameters. trace: the :class:`gclib.timings.Timings` replayed. advice: ``{"free": ...,
            "charged": ...}`` the :class:`gclib.advise.TraceAdvice` without and with communication. network: the
            measured :class:`gclib.message_cost.NetworkProfile`. schemes: one row per scheme run (``scheme, role,
            command, family`` (its scheme's name) ``, tolerates, predicted_free, predicted_charged``: the advices'
            mean iteration times, trace seconds). runs: one row per
            iteration of every run (``scheme, seed, kind`` (``"compare"`` or ``"kill"``), ``killed``, and
            :data:`RECORD`). delays: one row per seed (its recorded workers and first step). kills: one row per run
            with a killed worker (``scheme, killed, at, iterations, finished, dead, max_grad_error, status``).
    """

    settings: dict
    trace: object
    advice: dict
    network: object
    schemes: pd.DataFrame
    runs: pd.DataFrame
    delays: pd.DataFrame
    kills: pd.DataFrame = field(default_factory=pd.DataFrame)

    def compared(self) -> pd.DataFrame:
        """The iterations of the comparison's runs (no worker killed)."""
        return self.runs[self.runs["kind"] == "compare"]

    def time_to_target(self, target: float | None = None) -> pd.DataFrame:
        """One row per (scheme, seed): ``iteration`` and ``wall`` (seconds) when the test accuracy first reached
        ``target`` (default the study's), ``nan`` where it never did."""
        target = self.settings["target"] if target is None else target
        rows = []
        for (sch, seed), g in self.compared().groupby(["scheme", "seed"], sort=False):
            hit = g[g["accuracy"] >= target]
            first = hit.iloc[0] if len(hit) else None
            rows.append({"scheme": sch, "seed": seed, "target": target,
                         "iteration": math.nan if first is None else int(first["iteration"]),
                         "wall": math.nan if first is None else float(first["wall"])})
        return pd.DataFrame(rows)

    def savings(self) -> pd.DataFrame:
        """One row per advised scheme: the time to the target saved against uncoded, paired over seeds (``saved``,
        ``saved_lo``, ``saved_hi``, seconds: uncoded's time less the scheme's, with its 95% Student-t interval) and
        relative to uncoded's mean (``fraction``)."""
        t = self.time_to_target()
        w = t.pivot(index="seed", columns="scheme", values="wall")
        rows = []
        for sch in [s for s in self.schemes["scheme"] if s != UNCODED]:
            e = paired_difference(w[UNCODED].to_numpy(), w[sch].to_numpy())
            both = w[[UNCODED, sch]].dropna()  # the seeds where both reached the target
            base = float(both[UNCODED].mean()) if len(both) else math.nan
            rows.append({"scheme": sch, "seeds": e.n, "uncoded": base,
                         "time": float(both[sch].mean()) if len(both) else math.nan, "saved": e.value,
                         "saved_lo": e.lo, "saved_hi": e.hi, "fraction": e.value / base if len(both) else math.nan})
        return pd.DataFrame(rows)

    def timing(self) -> pd.DataFrame:
        """Every iteration of every run: ``scheme, kind, seed, iteration, predicted`` (the simulator's time for its
        injected delays) and ``time`` (measured over MPI), seconds."""
        return self.runs[["scheme", "kind", "seed", "iteration", "predicted", "time"]].reset_index(drop=True)

    def ratio(self, scheme: str) -> Estimate:
        """The scheme's mean measured iteration time over its mean predicted one (the simulator's for the same
        delays), over the iterations of its comparison runs: ``1 +`` the mean overhead (measured less predicted)
        over the mean predicted time, with the overhead's Student-t 95% interval over the iterations."""
        g = self.compared()
        g = g[(g["scheme"] == scheme) & np.isfinite(g["predicted"]) & np.isfinite(g["time"])]
        if not len(g):
            return Estimate(math.nan, math.nan, math.nan, 0)
        e = Estimate.of((g["time"] - g["predicted"]).to_numpy()).scaled(1.0 / float(g["predicted"].mean()))
        return Estimate(1.0 + e.value, 1.0 + e.lo, 1.0 + e.hi, e.n)


# ---------------------------------------------------------------------------------------------- the runs
def advised(trace, workers: int, *, seed: int = 0, bootstrap: int = 200, trials: int | None = None, network=None,
            progress: bool = False):
    """``gclib advise --trace`` for ``workers`` workers (:func:`gclib.advise.from_trace`), communication charged
    when ``network`` (a :class:`gclib.simulator.Communication` in the trace's seconds) is given."""
    return _advise.from_trace(trace, workers, seed=seed, bootstrap=bootstrap, trials=trials, network=network,
                              progress=progress)


class _Runner:
    """What every run of a study shares: the network by name (built once per number of parts, checked here, built
    again on every rank), the update, the iterations, the time scale."""

    def __init__(self, *, hidden, framework, lr, iterations, time_scale, model_seed):
        self.kw = {"hidden": hidden, "framework": framework, "seed": model_seed}
        self.lr, self.iterations, self.time_scale = lr, iterations, time_scale
        self.models = {}

    def model(self, parts: int):
        if parts not in self.models:
            self.models[parts] = load(NETWORK, parts=parts, **self.kw)
        return self.models[parts]

    def spec(self, code, delays, seed: int, kill=None, probe: bool = False) -> RunSpec:
        model = self.model(code.n_parts)
        return RunSpec(code, model, GD(self.lr), delays, iterations=self.iterations, time_scale=self.time_scale,
                       seed=seed, kill=dict(kill or {}), timeout=60.0,
                       network=message_cost.sizes_for(model.dim) if probe else ())

    def __call__(self, runs) -> list:
        """The results of ``runs``, each the arguments of :meth:`spec`, run in series."""
        return launch_series([self.spec(*run) for run in runs]) if runs else []


def _rows(res, scheme: str, seed: int, kind: str, killed=None) -> list:
    return [{"scheme": scheme, "seed": seed, "kind": kind, "killed": killed,
             **{k: r.get(k) for k in RECORD}} for r in res.records]


def _schemes(free, charged, workers: int) -> pd.DataFrame:
    """Uncoded, then every advised code once, with its role and both advices' predicted mean iteration times."""
    picks = {}
    for role, adv in ((FREE, free), (CHARGED, charged)):
        best = adv.advice.best if adv is not None else None
        if best is not None:
            picks.setdefault(best["label"], {"command": best["command"], "roles": []})["roles"].append(role)

    def predicted(adv, label):
        r = adv.advice.ranked[adv.advice.ranked["label"] == label] if adv is not None else []
        return float(r["mean_time"].iloc[0]) if len(r) else math.nan

    rows = [{"scheme": UNCODED, "role": UNCODED, "command": f"--scheme uncoded --workers {workers}"}]
    rows += [{"scheme": label, "role": BOTH if len(p["roles"]) == 2 else p["roles"][0], "command": p["command"]}
             for label, p in picks.items()]
    for r in rows:
        r["family"] = shlex.split(r["command"])[1]
        r["tolerates"] = int(code_of(r["command"]).stragglers)
        r["predicted_free"] = predicted(free, r["scheme"] if r["scheme"] != UNCODED else _uncoded_label(free))
        r["predicted_charged"] = predicted(charged, r["scheme"] if r["scheme"] != UNCODED else
                                           _uncoded_label(charged))
    return pd.DataFrame(rows)


def _uncoded_label(adv) -> str:
    r = adv.advice.ranked[adv.advice.ranked["family"] == "uncoded"] if adv is not None else []
    return r["label"].iloc[0] if len(r) else ""


def run(*, trace: str = "SE", workers: int = 8, hidden: int = 32, framework: str = "torch", lr: float = 0.5,
        iterations: int = 60, target: float = 0.95, seeds: int = 5, time_scale: float = 0.02, kill_iteration: int = 5,
        seed: int = 0, bootstrap: int = 200, trials: int | None = None, progress: bool = False) -> Study:
    """The advice, the comparison's runs and the runs with a killed worker (see the module docstring); ``seeds``
    seeds of delays from ``seed`` on, the network's initial parameters drawn from ``seed``."""
    settings = {k: v for k, v in locals().items() if k != "progress"}
    t = load_trace(shipped()[trace])
    free = advised(t, workers, seed=seed, bootstrap=bootstrap, trials=trials, progress=progress)
    runner = _Runner(hidden=hidden, framework=framework, lr=lr, iterations=iterations, time_scale=time_scale,
                     model_seed=seed)
    draws = [replayed(t.durations, workers, s) for s in range(seed, seed + seeds)]
    rows = []
    # uncoded first: its first run measures the network
    done = runner([(uncoded(workers), delays, seed + i, None, i == 0) for i, (delays, _, _) in enumerate(draws)])
    first = done[0]
    for i, res in enumerate(done):
        rows += _rows(res, UNCODED, seed + i, "compare")
    dim = runner.model(workers).dim
    profile = message_cost.fit(first.network or {}, 8 * dim, hosts=sorted(set(first.hosts.values())))
    charged = advised(t, workers, seed=seed, bootstrap=bootstrap, trials=trials,
                      network=trace_units(profile, time_scale, 8 * dim), progress=progress)
    table = _schemes(free, charged, workers)
    runs = [(sch, code_of(cmd), i) for sch, cmd in zip(table["scheme"][1:], table["command"][1:])
            for i in range(len(draws))]
    for (sch, _, i), res in zip(runs, runner([(code, draws[i][0], seed + i) for _, code, i in runs])):
        rows += _rows(res, sch, seed + i, "compare")
    rows_k, kills = _kill_runs(runner, table, draws[0][0], seed, kill_iteration, workers)
    delays = pd.DataFrame([{"seed": seed + i, "workers": " ".join(map(str, c)), "first_step": f}
                           for i, (_, c, f) in enumerate(draws)])
    return Study(settings, t, {"free": free, "charged": charged}, profile, table, pd.DataFrame(rows + rows_k),
                 delays, kills)


def _kill_runs(runner, table: pd.DataFrame, delays, seed: int, at: int, workers: int) -> tuple:
    """Every advised code that tolerates a straggler, again on the first seed's delays with its last worker killed
    at iteration ``at``: ``(iteration rows, one summary row per run)``."""
    rows, summary = [], []
    killed = workers - 1
    tolerant = list(table[(table["scheme"] != UNCODED) & (table["tolerates"] >= 1)].itertuples())
    for r, res in zip(tolerant, runner([(code_of(r.command), delays, seed, {killed: at}) for r in tolerant])):
        rows += _rows(res, r.scheme, seed, "kill", killed)
        errors = [x["grad_error"] for x in res.records]
        summary.append({"scheme": r.scheme, "killed": killed, "at": at, "iterations": runner.iterations,
                        "finished": len(res.records), "dead": " ".join(map(str, res.dead_workers)),
                        "max_grad_error": max(errors) if errors else math.nan, "status": res.status})
    return rows, pd.DataFrame(summary)
