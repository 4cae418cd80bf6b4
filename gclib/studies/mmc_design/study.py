"""Notebook 05's study: every candidate design of :func:`gclib.design.candidates` under several compute-time models
(:func:`gclib.design.evaluate` on common random numbers), the Pareto fronts of time against load, and the fastest
design within each budget and of each family."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gclib.design import _by_time, evaluate, fastest, pareto_front
from gclib.stragglers import model_set


# ---------------------------------------------------------------------------------------------- notebook 05
#: Columns of the design table that notebook 05 writes (``05_pareto.csv``).
TABLE_COLUMNS = ["model", "family", "label", "params", "mean_time", "ci95_time", "mean_messages",
                 "mean_cluster_messages", "mean_computations", "failed"]


#: The two load accountings: column of the table -> what it counts.
LOAD_COLUMNS = {"mean_messages": "messages until completion",
                "mean_cluster_messages": "messages until each cluster decodes"}


def design_models(mu: float = 10.0, alpha: float = 0.01, pareto_scale: float = 0.05, pareto_shape: float = 2.0
                  ) -> dict:
    """The compute-time models of notebook 05: ``{name: model}`` for the paper's shifted exponential (eq. 5)
    and a heavy-tailed Pareto (the set ``"mmc-design"`` of :func:`gclib.stragglers.model_set`)."""
    return model_set("mmc-design", mu=mu, alpha=alpha, pareto_scale=pareto_scale, pareto_shape=pareto_shape)


def family_counts(cands: list) -> dict:
    """``{family: number of candidates}``, most frequent first."""
    return pd.Series([c.family for c in cands], dtype=object).value_counts().to_dict()


def evaluate_models(cands: list, models: dict, K: int, trials: int = 10_000, seed=0, *,
                    progress: bool = False, keep_trials: bool = False):
    """:func:`evaluate` under every model of ``models`` (``{name: ComputeModel}``), each with the same ``seed``.

    Returns:
        the rows of :func:`evaluate` per model, with a column ``model``; ``params`` as text and ``clusters`` (the
        cluster count of the design, NaN for RS, FRC and LCC, which have none). With ``keep_trials``,
        ``(table, per_trial)``: ``per_trial[model]`` is :func:`evaluate`'s per-trial arrays under that model,
        their rows in the order of ``cands`` (the order of the model's rows in the table).
    """
    if not models:
        raise ValueError("models must name at least one compute-time model")
    frames, per_trial = [], {}
    for name, model in models.items():
        t = evaluate(cands, model, K, trials, seed, progress=progress, keep_trials=keep_trials)
        if keep_trials:
            t, per_trial[name] = t
        t["model"] = name
        frames.append(t)
    table = pd.concat(frames, ignore_index=True)
    table["clusters"] = [p.get("clusters", np.nan) for p in table["params"]]
    table["params"] = table["params"].astype(str)
    return (table, per_trial) if keep_trials else table


def pareto_fronts(table: pd.DataFrame, loads=tuple(LOAD_COLUMNS)) -> pd.DataFrame:
    """The Pareto front (:func:`pareto_front`, time against load) over all designs of each model, per load.

    Args:
        table: one row per design and model (``model``, ``mean_time`` and the ``loads`` columns).
        loads: load columns, each one front per model.
    Returns:
        the front rows, per model then load, with columns ``model`` and ``load`` (the load column's name).
    """
    fronts = []
    for name, g in table.groupby("model", sort=False):
        for load in loads:
            fronts.append(pareto_front(g, x=load).assign(model=name, load=load))
    return pd.concat(fronts, ignore_index=True)


def best_per_budget(table: pd.DataFrame, budgets, loads=tuple(LOAD_COLUMNS)) -> pd.DataFrame:
    """Per model, load accounting and budget ``B``: the design with the lowest mean time whose mean load is at
    most ``B``.

    Returns:
        a table of one row per model, load accounting and budget, with the columns ``model, load, budget, label``
        (None when no design fits), and for a design that fits ``family, mean_time, ci95_time, mean_messages,
        mean_cluster_messages``.
    """
    best = []
    for name, g in table.groupby("model", sort=False):
        for load in loads:
            for b in budgets:
                ok = g[g[load] <= b]
                if ok.empty:
                    best.append({"model": name, "load": load, "budget": b, "label": None})
                    continue
                row = fastest(ok)
                best.append({"model": name, "load": load, "budget": b, "label": row.label, "family": row.family,
                             "mean_time": row.mean_time, "ci95_time": row.ci95_time,
                             "mean_messages": row.mean_messages, "mean_cluster_messages": row.mean_cluster_messages})
    return pd.DataFrame(best)


def best_per_family(table: pd.DataFrame) -> pd.DataFrame:
    """The fastest design of each family per model, sorted by model then mean time."""
    return (_by_time(table).groupby(["model", "family"], sort=False).head(1)
            .sort_values(["model", "mean_time"])[["model", "family", "label", "mean_time", "ci95_time",
                                                  "mean_messages", "mean_cluster_messages"]])
