"""Figures of notebook 04 (GC-MMC, Ozfatura, Gunduz and Ulukus): Fig. 1 under both timing models and the order
sweep of the correlated design."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from gclib.plotting import PALETTE, time_label

#: Palette key of each Fig. 1 bar.
BAR_COLORS = {"GC": "gc", "LCC": "lcc", "UC-MMC": "uc-mmc", "GC-MMC-1": "gc-mmc-1", "GC-MMC-2": "gc-mmc-2"}
_PANELS = [("mean_time", "ci95_time", time_label("average completion time E[T]")),
           ("mean_messages", "ci95_messages", "messages until completion"),
           ("mean_cluster_messages", "ci95_cluster_messages", "messages until each cluster decodes")]


def fig1(df: pd.DataFrame, title: str = "") -> plt.Figure:
    """Fig. 1: one row of panels per timing model (time, messages until completion, messages until each cluster
    decodes), one bar per scheme with its 95% interval.

    Args:
        df: :func:`gclib.studies.gc_mmc.study.fig1_models` (``model, label`` and the means and ``ci95_`` columns of the
            panels).
        title: the figure's title.
    """
    models = list(dict.fromkeys(df["model"]))
    fig, axes = plt.subplots(len(models), 3, figsize=(13, 3.5 * len(models)), sharex=True, squeeze=False)
    for i, (name, g) in enumerate(df.groupby("model", sort=False)):
        for j, (y, ci, panel) in enumerate(_PANELS):
            ax = axes[i, j]
            ax.bar(g["label"], g[y], yerr=g[ci], color=[PALETTE[BAR_COLORS[lab]] for lab in g["label"]], capsize=3)
            ax.set_title(panel if i == 0 else "")
            ax.set_ylabel(name if j == 0 else "")
            ax.tick_params(axis="x", rotation=30)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def order_sweep(sweep: pd.DataFrame, clusters: int = 4) -> plt.Figure:
    """Completion time against messages until completion for the correlated design of every order (annotated
    ``m=...``), with LCC as a dashed line; one panel per timing model.

    Args:
        sweep: :func:`gclib.studies.gc_mmc.study.order_sweep` (``model, family, label, mean_time, ci95_time,
            mean_messages``).
        clusters: the cluster count of the sweep (for the legend).
    """
    models = list(dict.fromkeys(sweep["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4.2), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, (name, g) in zip(axes, sweep.groupby("model", sort=False)):
        c = g[g.family == "gc-mmc-correlated"]
        ax.errorbar(c.mean_messages, c.mean_time, yerr=c.ci95_time, marker="o", color=PALETTE["gc-mmc-1"],
                    label=f"correlated, {clusters} clusters")
        for _, row in c.iterrows():
            ax.annotate(row.label, (row.mean_messages, row.mean_time), fontsize=8, xytext=(3, 3),
                        textcoords="offset points")
        lcc = g[g.family == "lcc"].iloc[0]
        ax.axhline(lcc.mean_time, color=PALETTE["lcc"], ls="--", label=f"LCC ({lcc.mean_messages:.0f} messages)")
        ax.set_xlabel("messages until completion")
        ax.set_title(name)
    axes[0].set_ylabel(time_label("average completion time"))
    axes[0].legend()
    fig.tight_layout()
    return fig
