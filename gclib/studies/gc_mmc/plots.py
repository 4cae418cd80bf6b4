"""Figures of notebook 04 (GC-MMC, Ozfatura, Gunduz and Ulukus): Fig. 1 under both timing models and the order
sweep of the correlated design."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from gclib.plotting import DOUBLE, PALETTE, time_label

#: Palette key of each Fig. 1 bar.
BAR_COLORS = {"GC": "gc", "LCC": "lcc", "UC-MMC": "uc-mmc", "GC-MMC-1": "gc-mmc-1", "GC-MMC-2": "gc-mmc-2"}
_PANELS = [("mean_time", "ci95_time", "completion time", time_label("E[T]")),
           ("mean_messages", "ci95_messages", "messages until completion", "messages"),
           ("mean_cluster_messages", "ci95_cluster_messages", "messages until each cluster decodes", "messages")]


def fig1(df: pd.DataFrame, title: str = "") -> plt.Figure:
    """Fig. 1: one row of panels per timing model (time, messages until completion, messages until each cluster
    decodes), one bar per scheme with its 95% interval. Two columns wide.

    Args:
        df: :func:`gclib.studies.gc_mmc.study.fig1_models` (``model, label`` and the means and ``ci95_`` columns of the
            panels).
        title: the figure's title.
    """
    models = list(dict.fromkeys(df["model"]))
    fig = plt.figure(figsize=(DOUBLE, 2.3 * len(models) + 0.3), layout="constrained")
    rows = fig.subfigures(len(models), 1, squeeze=False)[:, 0]
    for sub, (name, g) in zip(rows, df.groupby("model", sort=False)):
        axes = sub.subplots(1, len(_PANELS))
        for j, (ax, (y, ci, panel, unit)) in enumerate(zip(axes, _PANELS)):
            ax.bar(g["label"], g[y], yerr=g[ci], color=[PALETTE[BAR_COLORS[lab]] for lab in g["label"]])
            ax.set_title(panel)
            ax.set_ylabel(unit)
            ax.tick_params(axis="x", rotation=35)
            ax.grid(False, axis="x")
        sub.suptitle(f"timing model: {name}", fontweight="bold", fontsize=8)
    if title:
        fig.suptitle(title)
    return fig


def order_sweep(sweep: pd.DataFrame, clusters: int = 4) -> plt.Figure:
    """Completion time against messages until completion for the correlated design of every order (annotated
    ``m=...``), with LCC as a dashed line; one panel per timing model. Two columns wide.

    Args:
        sweep: :func:`gclib.studies.gc_mmc.study.order_sweep` (``model, family, label, mean_time, ci95_time,
            mean_messages``).
        clusters: the cluster count of the sweep (for the legend).
    """
    models = list(dict.fromkeys(sweep["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(DOUBLE, 2.9), sharey=True, squeeze=False, layout="constrained")
    axes = axes[0]
    for ax, (name, g) in zip(axes, sweep.groupby("model", sort=False)):
        c = g[g.family == "gc-mmc-correlated"]
        ax.errorbar(c.mean_messages, c.mean_time, yerr=c.ci95_time, marker="o", ms=3, color=PALETTE["gc-mmc-1"],
                    label=f"correlated design, {clusters} clusters")
        for _, row in c.iloc[::2].iterrows():  # every other order named: they lie close together
            ax.annotate(row.label, (row.mean_messages, row.mean_time), xytext=(3, 3), textcoords="offset points",
                        fontsize=7)
        lcc = g[g.family == "lcc"].iloc[0]
        ax.axhline(lcc.mean_time, color=PALETTE["lcc"], ls="--", label=f"LCC ({lcc.mean_messages:.0f} messages)")
        ax.set_xlabel("messages until completion")
        ax.set_title(f"timing model: {name}")
    axes[0].set_ylabel(time_label("average completion time"))
    axes[0].legend(loc="upper right")
    return fig
