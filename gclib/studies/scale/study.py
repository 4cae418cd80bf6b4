"""Notebook 08's study: completion time, coding gain and message load as the number of workers ``K`` grows to ten
thousand, on the schedules of :mod:`gclib.code_schedules`.

:func:`plan` lists the points of a study with their sizes and memory; :func:`study` simulates them under one or
several eq. 5 models with common random numbers (every scheme of one ``K`` sees the same worker draws), beside the
closed forms of the order statistics (:func:`gclib.theory.expected_time`) where they exist, and the paired coding
gain over uncoded.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gclib import checks, schemes
from gclib.progress import progress as _progress
from gclib.simulator import RESULT_BYTES, Schedule, simulate, simulate_bytes
from gclib.stats import paired_change
from gclib.stragglers import ComputeModel, model_set
from gclib.theory import expected_time


# ---------------------------------------------------------------------------------------------- the study
#: The schemes of the study, in display order (uncoded is the baseline of the coding gain).
SCHEMES = ("uncoded", "GC", "FRC", "LCC", "UC-MMC", "GC-MMC")


#: The two ways ``K`` grows: the load a fixed fraction of ``K``, or a fixed load with GC-MMC in clusters of a
#: fixed size.
SETTINGS = ("load fraction", "cluster size")


#: Columns of :func:`plan`.
PLAN_COLUMNS = ["setting", "K", "scheme", "load", "order", "clusters", "messages", "memory", "skipped"]


def point(setting: str, scheme: str, K: int, *, load_fraction: float = 0.1, load: int = 10,
          cluster_size: int = 10, order_fraction: float = 0.6) -> dict:
    """The parameters of one point of the study, without building anything: ``load`` ``r``, ``order`` ``m``
    (GC-MMC), ``clusters`` ``P`` and ``messages``.

    * ``"load fraction"``: ``r = round(load_fraction * K)``; GC-MMC unclustered of order
      ``m = round(order_fraction * r)``;
    * ``"cluster size"``: ``r = load``; GC-MMC of order ``m = round(order_fraction * r)`` in ``K / cluster_size``
      clusters (Fig. 1's GC-MMC-1 is ``K = 40``, ``r = 10``, ``m = 6`` in clusters of 10); GC, UC-MMC and LCC
      unclustered, as in Fig. 1.

    Uncoded has load 1; FRC needs ``r | K``.
    """
    checks.choice("setting", setting, SETTINGS)
    checks.choice("scheme", scheme, SCHEMES)
    K = checks.integer("workers", K, low=2)
    if setting == "load fraction":
        f = checks.real("load_fraction", load_fraction, above=0, high=1)
        r = max(1, int(round(f * K)))
        P = 1
    else:
        r = checks.integer("load", load, low=1, high=K)
        c = checks.integer("cluster_size", cluster_size, low=r)
        if K % c:
            raise ValueError(f"cluster_size must divide workers = {K}, got {c}")
        P = K // c
    m = max(1, min(r, int(round(checks.real("order_fraction", order_fraction, above=0, high=1) * r))))
    if scheme == "uncoded":
        return {"load": 1, "order": None, "clusters": 1, "messages": K}
    if scheme in ("GC", "FRC", "LCC"):
        return {"load": r, "order": None, "clusters": 1, "messages": K}
    if scheme == "UC-MMC":
        return {"load": r, "order": 1, "clusters": 1, "messages": K * r}
    return {"load": r, "order": m, "clusters": P, "messages": K * (r - m + 1)}


#: The scheme of :mod:`gclib.schemes` behind each scheme of the study.
REGISTRY = {"uncoded": "uncoded", "GC": "gc", "FRC": "frc", "LCC": "lcc", "UC-MMC": "uc-mmc",
            "GC-MMC": "gc-mmc-correlated"}


def build(setting: str, scheme: str, K: int, **kw) -> Schedule:
    """The schedule of one point (see :func:`point`): :func:`gclib.schemes.simulable` of its scheme
    (:data:`REGISTRY`) with the point's parameters."""
    p = point(setting, scheme, K, **kw)
    r = p["load"]
    params = {"workers": K, "load": r, "stragglers": r - 1, "order": p["order"], "clusters": p["clusters"]}
    return schemes.simulable(REGISTRY[scheme], **params)


def plan(Ks, *, settings=SETTINGS, schemes=SCHEMES, trials: int = 10_000, max_messages: int = 200_000,
         model: ComputeModel | None = None, **kw) -> pd.DataFrame:
    """Every point of a study with its sizes and the memory its simulation needs, before anything is built.

    A point is ``skipped`` (with the reason) when its scheme cannot be built at that ``K`` (FRC where ``r`` does
    not divide ``K``, LCC with too few workers) or when it has more than ``max_messages`` messages (the work of a
    trial grows with them: at a fixed load fraction UC-MMC sends ``K^2 / 10`` messages).

    Returns:
        ``pandas.DataFrame`` with :data:`PLAN_COLUMNS` (``memory`` in bytes, 0 for a skipped point).
    """
    Ks = checks.int_list("Ks", Ks, low=2)
    trials = checks.integer("trials", trials, low=1)
    max_messages = checks.integer("max_messages", max_messages, low=1)
    for s in settings:
        checks.choice("settings", s, SETTINGS)
    for s in schemes:
        checks.choice("schemes", s, SCHEMES)
    rows = []
    for setting in settings:
        for K in Ks:
            for scheme in schemes:
                row = {"setting": setting, "K": K, "scheme": scheme, "load": np.nan, "order": None,
                       "clusters": np.nan, "messages": np.nan, "memory": 0, "skipped": ""}
                try:
                    p = point(setting, scheme, K, **kw)
                except ValueError as e:
                    rows.append({**row, "skipped": str(e)})
                    continue
                row.update(p)
                if scheme == "FRC" and K % p["load"]:
                    row["skipped"] = f"FRC needs the load {p['load']} to divide K = {K}"
                elif scheme == "LCC" and 2 * -(-K // p["load"]) - 1 > K:
                    row["skipped"] = f"LCC with load {p['load']} needs more than K = {K} results"
                elif p["messages"] > max_messages:
                    row["skipped"] = f"{p['messages']:,} messages, more than max_messages = {max_messages:,}"
                else:
                    sizes = _Sizes(K, p["load"], p["messages"])
                    row["memory"] = simulate_bytes(sizes, trials, model)
                rows.append(row)
    return pd.DataFrame(rows, columns=PLAN_COLUMNS)


#: Columns of :func:`study`.
COLUMNS = ["model", "setting", "K", "scheme", "load", "order", "clusters", "messages", "trials", "mean_time",
           "ci95_time", "closed_form_time", "gain", "gain_lo", "gain_hi", "mean_messages", "ci95_messages",
           "messages_per_worker", "mean_computations", "failed"]


def _check_models(models) -> None:
    """Raise ValueError unless ``models`` is a non-empty dict of compute-time models with one draw per worker."""
    if not isinstance(models, dict) or not models:
        raise ValueError(f"models must be a non-empty dict of compute-time models, got {models!r}")
    for name, m in models.items():
        if not isinstance(m, ComputeModel) or m.per_task:
            raise ValueError(f"models[{name!r}] must be a compute-time model with one draw per worker "
                             f"(per_task=False), got {m!r}")


def _point(res, base, K: int) -> dict:
    """The measured columns of one simulated point: its summary and its gain over uncoded (``base``: uncoded's
    times on the same draws, or None before uncoded ran: NaN)."""
    s = res.summary()
    gain = lo = hi = math.nan
    if base is not None:
        change, c_lo, c_hi, _ = paired_change(base, res.time)
        gain, lo, hi = change + 1, c_lo + 1, c_hi + 1
    return {"mean_time": s["mean_time"], "ci95_time": s["ci95_time"], "gain": gain, "gain_lo": lo, "gain_hi": hi,
            "mean_messages": s["mean_messages"], "ci95_messages": s["ci95_messages"],
            "messages_per_worker": s["mean_messages"] / K if s["mean_messages"] is not None else math.nan,
            "mean_computations": s["mean_computations"], "failed": s["failed"]}


def study(Ks, models: dict, *, trials: int = 10_000, seed=0, settings=SETTINGS, schemes=SCHEMES,
          max_messages: int = 200_000, progress: bool = False, **kw) -> pd.DataFrame:
    """Completion time, coding gain over uncoded and message load of every scheme as ``K`` grows.

    Every point of :func:`plan` that is not skipped is simulated with ``trials`` trials under every model of
    ``models`` (``{name: eq. 5 model}``), with the same ``seed`` for every scheme of one ``K`` (so trial ``i``
    sees the same worker draws: the gain ``E[T_uncoded] / E[T]`` has a paired 95% interval,
    :func:`gclib.stats.paired_change`). The memory of the largest point is checked against the budget before
    anything runs (:func:`gclib.checks.need_memory`).

    Returns:
        ``pandas.DataFrame`` with :data:`COLUMNS`, one row per model and simulated point (``closed_form_time``
        NaN where the order statistics give none, e.g. multi-message and clustered schemes).
    """
    _check_models(models)
    trials = checks.integer("trials", trials, low=1)
    rng_seed = checks.integer("seed", seed, low=0)
    schemes = list(schemes)
    if "uncoded" not in schemes:
        schemes = ["uncoded"] + schemes  # the baseline of the gain
    todo = plan(Ks, settings=settings, schemes=schemes, trials=trials, max_messages=max_messages,
                model=next(iter(models.values())), **kw)
    todo = todo[todo["skipped"] == ""]
    if todo.empty:
        raise ValueError("the study has no point to simulate: every point is skipped "
                         "(see gclib.studies.scale.study.plan)")
    biggest = todo.sort_values(["memory", "messages"], kind="stable").iloc[-1]
    checks.need_memory("scale study", int(biggest["memory"]) + 2 * RESULT_BYTES * trials,
                       sizes=f"K = {biggest['K']}, {biggest['scheme']} ({int(biggest['messages']):,} messages), "
                             f"trials = {trials}", lower="trials, the largest K or max_messages")
    jobs = [(name, model, key, g) for name, model in models.items()
            for key, g in todo.groupby(["setting", "K"], sort=False)]
    it = _progress(jobs, "scale", progress)
    rows = []
    for name, model, (setting, K), g in it:
        base = None
        for p in g.itertuples():
            sch = build(setting, p.scheme, K, **kw)
            res = simulate(sch, model, trials, rng_seed)
            if p.scheme == "uncoded":
                base = res.time
            rows.append({"model": name, "setting": setting, "K": K, "scheme": p.scheme, "load": p.load,
                         "order": p.order, "clusters": p.clusters, "messages": p.messages, "trials": trials,
                         **_point(res, base, K), "closed_form_time": expected_time(sch, model)})
    out = pd.DataFrame(rows, columns=COLUMNS)
    return out.astype({"mean_time": float, "ci95_time": float, "mean_messages": float, "ci95_messages": float,
                       "mean_computations": float})


def models(mu: float = 10.0, alpha: float = 0.01, pareto_scale: float = 0.05, pareto_shape: float = 2.0) -> dict:
    """The two eq. 5 models of notebook 08: ``{name: model}``, the paper's shifted exponential and a
    heavy-tailed Pareto (the set ``"scale"`` of :func:`gclib.stragglers.model_set`)."""
    return model_set("scale", mu=mu, alpha=alpha, pareto_scale=pareto_scale, pareto_shape=pareto_shape)


class _Sizes:
    """The sizes :func:`gclib.simulator.simulate_bytes` reads."""

    def __init__(self, K, load, messages):
        self.n_workers, self.load, self.n_messages = int(K), int(load), int(messages)
