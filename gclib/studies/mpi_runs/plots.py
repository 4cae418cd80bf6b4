"""Figures of notebook 07 (real MPI runs): one function per figure, each taking the table the notebook saves beside
it and returning the matplotlib Figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import ticker

from gclib.plotting import DOUBLE, color, plain_log


def curves(data: pd.DataFrame, ylabel: str):
    """``07_loss_vs_time`` / ``07_auc_vs_time``: one panel per (data set, model), one line per scheme of the
    metric against wall-clock time, from :func:`gclib.studies.mpi_runs.study.curve_table` (its last column is the
    metric). Two columns wide, the legend under the panels."""
    metric = data.columns[-1]
    datasets = list(dict.fromkeys(data["dataset"]))
    models = list(dict.fromkeys(data["model"]))
    fig, axes = plt.subplots(len(datasets), len(models), figsize=(DOUBLE, 2.2 * len(datasets) + 0.5),
                             squeeze=False, layout="constrained")
    for i, ds in enumerate(datasets):
        for j, m in enumerate(models):
            ax = axes[i, j]
            sub = data[(data["dataset"] == ds) & (data["model"] == m)]
            for sch, g in sub.groupby("scheme", sort=False):
                ax.plot(g["wall"], g[metric], marker=".", ms=2, lw=1, label=sch, color=color(sch))
            ax.set_title(f"{ds}, {m}")
            ax.set_xlabel("wall-clock time (s)" if i == len(datasets) - 1 else "")
            ax.set_ylabel(ylabel if j == 0 else "")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=6)
    return fig


def measured_vs_simulated(data: pd.DataFrame, band: float = 0.10):
    """``07_measured_vs_simulated``: every iteration's measured time against the simulator's time for the same
    delays (left, log-log, the diagonal dashed) and the residual ``measured / predicted - 1`` against the predicted
    time (right, the +/- ``band`` band shaded), one colour per scheme, from a table with ``scheme, predicted,
    time``."""
    fig, (ax, res) = plt.subplots(1, 2, figsize=(DOUBLE, 3.0), gridspec_kw={"width_ratios": [1, 1.35]},
                                  layout="constrained")
    ok = data[np.isfinite(data["predicted"]) & np.isfinite(data["time"]) & (data["predicted"] > 0)]
    res.axhspan(-band, band, color="0.88", lw=0, zorder=0, label=f"within {band:.0%}")
    res.axhline(0, color="k", lw=0.8, ls="--")
    for sch, g in ok.groupby("scheme", sort=False):
        ax.scatter(g["predicted"], g["time"], s=6, alpha=0.6, label=sch, color=color(sch), lw=0)
        res.scatter(g["predicted"], g["time"] / g["predicted"] - 1, s=6, alpha=0.6, color=color(sch), lw=0)
    both = ok[["predicted", "time"]].to_numpy(dtype=float)
    both = both[both > 0]
    if both.size:
        lo, hi = float(both.min()), float(both.max())
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, ls="--", label="measured = predicted")
    for axis in ("x", "y"):  # labels 0.001, 0.002, 0.005: no crowded minor labels where the span is a decade
        plain_log(ax, axis)
    ax.set_xlabel("simulated iteration time (s)")
    ax.set_ylabel("measured over MPI (s)")
    ax.legend(markerscale=1.5, loc="upper left")
    plain_log(res, "x")
    res.set_xlabel("simulated iteration time (s)")
    res.set_ylabel("measured / simulated - 1")
    res.yaxis.set_major_locator(ticker.MaxNLocator(steps=[1, 2, 5, 10]))  # whole percents: no 2.5% shown as 3%
    res.yaxis.set_major_formatter(ticker.PercentFormatter(1.0, decimals=0))
    res.legend(loc="upper right")
    return fig
