"""Notebook 04's study: Fig. 1 of the GC-MMC paper under several timing models, and the correlated design of every
order beside LCC (the order sweep), simulated by :func:`gclib.design.evaluate` on common random numbers."""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from gclib.design import Candidate, evaluate
from gclib.schemes import build
from gclib.stragglers import ComputeModel, model_set


# ---------------------------------------------------------------------------------------------- Fig. 1
def fig1_candidates(K: int = 40, r: int = 10, P: int = 4, m: int = 6, orders=(6, 8, 10)) -> list:
    """The five bars of Fig. 1 of the GC-MMC paper: GC, LCC, UC-MMC, GC-MMC-1 (correlated, order ``m``, ``P``
    clusters) and GC-MMC-2 (uncorrelated, ``orders``, ``P`` clusters), built by :func:`gclib.schemes.build`. GC
    and UC-MMC are unclustered."""
    kr = {"workers": K, "load": r}
    return [
        Candidate("gc", "GC", {"load": r}, lambda: build("gc", **kr)),
        Candidate("lcc", "LCC", {"load": r}, lambda: build("lcc", **kr)),
        Candidate("uc-mmc", "UC-MMC", {"load": r}, lambda: build("uc-mmc", **kr)),
        Candidate("gc-mmc-1", "GC-MMC-1", {"order": m, "clusters": P},
                  lambda: build("gc-mmc-correlated", **kr, order=m, clusters=P)),
        Candidate("gc-mmc-2", "GC-MMC-2", {"orders": list(orders), "clusters": P},
                  lambda: build("gc-mmc-uncorrelated", **kr, orders=orders, clusters=P, points="chebyshev")),
    ]


def fig1(model: ComputeModel, trials: int = 100_000, seed=0, K: int = 40, r: int = 10, **kw) -> pd.DataFrame:
    """Fig. 1 under ``model``: one row per bar (see :func:`evaluate` for the columns)."""
    return evaluate(fig1_candidates(K, r, **kw), model, K, trials, seed)


#: Columns of the Fig. 1 table that notebook 04 shows and writes (``04_fig1.csv``).
FIG1_COLUMNS = ["model", "label", "mean_time", "ci95_time", "mean_messages", "ci95_messages", "mean_cluster_messages",
                "ci95_cluster_messages", "mean_computations", "failed"]


#: Names of the paper's timing model and of the variant with independent task times in :func:`timing_models`.
EQ5, PER_TASK = model_set("timing")


def timing_models(mu: float = 10.0, alpha: float = 0.01) -> dict:
    """The two timing conventions of the shifted exponential under which notebook 04 checks Fig. 1:
    ``{EQ5: one draw per worker and iteration (the paper's eq. 5), PER_TASK: independent task times}`` (the set
    ``"timing"`` of :func:`gclib.stragglers.model_set`)."""
    return model_set("timing", mu=mu, alpha=alpha)


def fig1_models(models: dict, trials: int = 100_000, seed=0, K: int = 40, r: int = 10, **kw) -> pd.DataFrame:
    """:func:`fig1` under every model of ``models`` (``{name: ComputeModel}``), each with the same ``seed``.

    Returns:
        the rows of :func:`fig1` of each model, in the order of ``models``, with a column ``model`` (its name).
    """
    if not models:
        raise ValueError("models must name at least one compute-time model")
    frames = [fig1(model, trials=trials, seed=seed, K=K, r=r, **kw).assign(model=name)
              for name, model in models.items()]
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------------------------- order sweep
#: Columns of the order sweep that notebook 04 writes (``04_order_sweep.csv``).
SWEEP_COLUMNS = ["model", "label", "family", "order", "mean_time", "ci95_time", "mean_messages",
                 "mean_cluster_messages"]


def correlated_candidates(K: int, r: int, P: int = 1, orders: Iterable[int] | None = None) -> list:
    """The correlated design of every order in ``orders`` (default ``1..r``) in ``P`` clusters, labelled
    ``"m=<order>"`` (``m = 1`` is UC-MMC inside the clusters, ``m = r`` plain GC)."""
    orders = list(range(1, r + 1) if orders is None else orders)
    if not orders:
        raise ValueError("orders must list at least one order")
    return [Candidate("gc-mmc-correlated", f"m={m}", {"order": m},
                      lambda m=m: build("gc-mmc-correlated", workers=K, load=r, order=m, clusters=P)) for m in orders]


def order_sweep(models: dict, K: int = 40, r: int = 10, P: int = 4, trials: int = 20_000, seed=0) -> pd.DataFrame:
    """The correlated design of every order ``m = 1..r`` in ``P`` clusters beside LCC, on the same sampled times,
    under every model of ``models`` (``{name: ComputeModel}``).

    Returns:
        per model, one row per order then one for LCC: the columns of :func:`evaluate` plus ``model`` and
        ``order`` (NaN for LCC).
    """
    if not models:
        raise ValueError("models must name at least one compute-time model")
    cands = correlated_candidates(K, r, P) + [Candidate("lcc", "LCC", {"load": r},
                                                        lambda: build("lcc", workers=K, load=r))]
    frames = []
    for name, model in models.items():
        d = evaluate(cands, model, K, trials, seed)
        d["model"] = name
        d["order"] = [c.params.get("order", np.nan) for c in cands]
        frames.append(d)
    return pd.concat(frames, ignore_index=True)
