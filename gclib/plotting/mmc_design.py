"""Figures of notebook 05 (choosing GC-MMC designs): time against load with the Pareto fronts, and the fastest
design within each communication budget."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from . import PALETTE

#: Colour of each scheme family.
COLORS = {"gc": PALETTE["gc"], "rs": PALETTE["rs"], "frc": PALETTE["frc"], "uc-mmc": PALETTE["uc-mmc"],
          "lcc": PALETTE["lcc"], "gc-mmc-correlated": PALETTE["gc-mmc-1"], "gc-mmc-uncorrelated": "#98df8a",
          "hybrid": PALETTE["hybrid"]}
_LOADS = [("mean_messages", "messages until completion"),
          ("mean_cluster_messages", "messages until each cluster decodes")]


def pareto(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Mean completion time (log scale) against mean load, one dot per design and one step line per family's
    Pareto front, the black step line the front over all families; rows: models, columns: the two load
    accountings.

    Args:
        table: :func:`gclib.design.evaluate_models` (``model, family, mean_time, mean_messages,
            mean_cluster_messages``).
        title: the figure's title.
    """
    from ..design import pareto_front

    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(len(models), 2, figsize=(14, 5 * len(models)), squeeze=False)
    for i, (name, g) in enumerate(table.groupby("model", sort=False)):
        for j, (load, xlabel) in enumerate(_LOADS):
            ax = axes[i, j]
            for fam, gf in g.groupby("family", sort=False):
                ax.scatter(gf[load], gf["mean_time"], s=8, alpha=0.35, color=COLORS[fam])
                f = pareto_front(gf, x=load)
                ax.plot(f[load], f["mean_time"], marker="o", ms=4, color=COLORS[fam], label=fam,
                        drawstyle="steps-post")
            f = pareto_front(g, x=load)
            ax.plot(f[load], f["mean_time"], color="black", lw=1, drawstyle="steps-post", label="all schemes")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"mean completion time\n{name}")
    axes[0, 0].legend(fontsize=8, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def budget(best: pd.DataFrame) -> plt.Figure:
    """The best mean completion time against the budget, one line per load accounting, each point annotated with
    its design; one panel per model.

    Args:
        best: :func:`gclib.design.best_per_budget` (``model, load, budget, label, mean_time``).
    """
    models = list(dict.fromkeys(best["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 4.2), sharey=False, squeeze=False)
    for ax, (name, g) in zip(axes[0], best.groupby("model", sort=False)):
        for load, gl in g.groupby("load", sort=False):
            ax.plot(gl["budget"], gl["mean_time"], marker="o", label=load.replace("mean_", ""))
            for _, row in gl.iterrows():
                if isinstance(row.label, str) and row.label:  # no label: no design within the budget
                    ax.annotate(row.label, (row.budget, row.mean_time), fontsize=7, rotation=20, xytext=(2, 2),
                                textcoords="offset points")
        ax.set_title(name)
        ax.set_xlabel("communication budget (mean messages)")
        ax.set_ylabel("best mean completion time")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
