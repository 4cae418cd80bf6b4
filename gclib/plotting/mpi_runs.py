"""Figures of notebook 07 (real MPI runs): one function per figure, each taking the table the notebook saves beside
it and returning the matplotlib Figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import color


def curves(data: pd.DataFrame, ylabel: str):
    """``07_loss_vs_time`` / ``07_auc_vs_time``: one panel per (data set, model), one line per scheme of the
    metric against wall-clock time, from :func:`gclib.runtime.experiments.curve_table` (its last column is the
    metric)."""
    metric = data.columns[-1]
    datasets = list(dict.fromkeys(data["dataset"]))
    models = list(dict.fromkeys(data["model"]))
    fig, axes = plt.subplots(len(datasets), len(models), figsize=(5.2 * len(models), 3.6 * len(datasets)),
                             squeeze=False)
    for i, ds in enumerate(datasets):
        for j, m in enumerate(models):
            ax = axes[i, j]
            sub = data[(data["dataset"] == ds) & (data["model"] == m)]
            for sch, g in sub.groupby("scheme", sort=False):
                ax.plot(g["wall"], g[metric], marker=".", ms=3, label=sch, color=color(sch))
            ax.set_title(f"{ds}, {m}", fontsize=10)
            ax.set_xlabel("wall-clock time (s)")
            ax.set_ylabel(ylabel)
    axes[0, 0].legend()
    fig.tight_layout()
    return fig


def measured_vs_simulated(data: pd.DataFrame):
    """``07_measured_vs_simulated``: every iteration's measured time against the simulator's time for the same
    delays (log-log, one colour per scheme, the diagonal dashed), from a table with ``scheme, predicted, time``."""
    fig, ax = plt.subplots(figsize=(5.6, 5.0))
    for sch, g in data.groupby("scheme", sort=False):
        ax.scatter(g["predicted"], g["time"], s=10, alpha=0.7, label=sch, color=color(sch))
    both = data[["predicted", "time"]].to_numpy(dtype=float)
    both = both[np.isfinite(both) & (both > 0)]
    if both.size:
        lo, hi = float(both.min()), float(both.max())
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, ls="--", label="measured = predicted")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("simulator's iteration time for the same delays (s)")
    ax.set_ylabel("measured iteration time over MPI (s)")
    ax.legend(fontsize=8)
    return fig
