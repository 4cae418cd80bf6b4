"""Figures of notebook 05 (choosing GC-MMC designs): time against load with the Pareto fronts, and the fastest
design within each communication budget."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker
from matplotlib.lines import Line2D

from . import DOUBLE, PALETTE, time_label

#: Colour of each scheme family (the project palette; distinct hues for the two GC-MMC designs and the hybrid,
#: which the palette shares with the Reed-Solomon green and the grey of the background dots).
COLORS = {"gc": PALETTE["gc"], "rs": PALETTE["rs"], "frc": PALETTE["frc"], "uc-mmc": PALETTE["uc-mmc"],
          "lcc": PALETTE["lcc"], "gc-mmc-correlated": PALETTE["gc-mmc-1"], "gc-mmc-uncorrelated": PALETTE["kadhe"],
          "hybrid": PALETTE["partial"]}
#: Marker of each family: the designs of the GC-MMC paper filled circles, the baselines other shapes.
MARKERS = {"gc-mmc-correlated": "o", "gc-mmc-uncorrelated": "o", "hybrid": "o", "gc": "s", "uc-mmc": "D",
           "rs": "^", "frc": "v", "lcc": "*"}
#: Human names of the families and of the two load accountings.
NAMES = {"gc": "GC", "rs": "RS", "frc": "FRC", "uc-mmc": "UC-MMC", "lcc": "LCC",
         "gc-mmc-correlated": "GC-MMC correlated", "gc-mmc-uncorrelated": "GC-MMC uncorrelated", "hybrid": "hybrid"}
_LOADS = [("mean_messages", "messages until completion"),
          ("mean_cluster_messages", "messages until each cluster decodes")]
LOAD_NAMES = dict(_LOADS)


def _plain_log(ax):
    """A log y axis with plain tick labels (0.3, not 3 x 10^-1)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(ticker.FormatStrFormatter("%g"))
    ax.tick_params(axis="y", which="minor", labelsize=7)


def pareto(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Mean completion time (log scale) against mean load: every design a faint grey dot, each family's Pareto
    front a coloured step line with its own marker, the front over all families black; rows: models, columns: the
    two load accountings; one legend below.

    Args:
        table: :func:`gclib.design.evaluate_models` (``model, family, mean_time, mean_messages,
            mean_cluster_messages``).
        title: the figure's title.
    """
    from ..design import pareto_front

    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(len(models), 2, figsize=(DOUBLE, 2.9 * len(models) + 1.0), squeeze=False,
                             sharex="col")
    families = list(dict.fromkeys(table["family"]))
    for i, (name, g) in enumerate(table.groupby("model", sort=False)):
        for j, (load, xlabel) in enumerate(_LOADS):
            ax = axes[i, j]
            ax.scatter(g[load], g["mean_time"], s=4, color="0.75", lw=0, zorder=1)
            for fam, gf in g.groupby("family", sort=False):
                f = pareto_front(gf, x=load)
                ax.plot(f[load], f["mean_time"], marker=MARKERS.get(fam, "o"), ms=4.5, lw=1.2, color=COLORS[fam],
                        drawstyle="steps-post", zorder=3 if fam in ("lcc", "frc", "uc-mmc", "gc", "rs") else 2)
            f = pareto_front(g, x=load)
            ax.plot(f[load], f["mean_time"], color="black", lw=2.2, alpha=0.45, drawstyle="steps-post", zorder=4)
            _plain_log(ax)
            if i == len(models) - 1:
                ax.set_xlabel(xlabel)
            if i == 0:
                ax.set_title(xlabel.replace("messages ", "load: messages ", 1), fontsize=9)
        axes[i, 0].set_ylabel(f"{name}\n" + time_label("mean time"), fontsize=9)
    handles = [Line2D([], [], color=COLORS[f], marker=MARKERS.get(f, "o"), ms=5, label=NAMES.get(f, f))
               for f in families]
    handles += [Line2D([], [], color="black", lw=2.2, alpha=0.45, label="front over all"),
                Line2D([], [], color="0.75", marker="o", ls="", ms=3, label="every design")]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


def budget(best: pd.DataFrame) -> plt.Figure:
    """The best mean completion time against the budget, one line per load accounting (solid: messages until
    completion, dashed: until each cluster decodes), each point coloured by the family of the best design and
    labelled where the best design changes; one panel per model.

    Args:
        best: :func:`gclib.design.best_per_budget` (``model, load, budget, label, family, mean_time``).
    """
    models = list(dict.fromkeys(best["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(DOUBLE, 3.6), sharey=False, squeeze=False)
    styles = {"mean_messages": ("-", "0.2", (0, 7), "bottom"), "mean_cluster_messages": ("--", "0.55", (0, -9),
                                                                                          "top")}
    for ax, (name, g) in zip(axes[0], best.groupby("model", sort=False)):
        for load, gl in g.groupby("load", sort=False):
            ls, lc, offset, va = styles.get(load, ("-", "0.4", (0, 7), "bottom"))
            gl = gl.sort_values("budget")
            ax.plot(gl["budget"], gl["mean_time"], ls=ls, color=lc, lw=1.2, zorder=1)
            ax.scatter(gl["budget"], gl["mean_time"], s=22, zorder=2,
                       c=[COLORS.get(f, "0.5") if isinstance(f, str) else "white"
                          for f in gl.get("family", [None] * len(gl))],
                       edgecolors=lc, linewidths=0.6)
            previous = None
            for _, row in gl.iterrows():
                if isinstance(row.label, str) and row.label and row.label != previous:  # the best design changed
                    ax.annotate(row.label, (row.budget, row.mean_time), fontsize=6.5, xytext=offset, ha="center",
                                va=va, textcoords="offset points", color=COLORS.get(row.get("family"), "0.2"))
                previous = row.label
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("budget (mean messages)", fontsize=10)
        _plain_log(ax)
        ax.margins(x=0.08, y=0.15)
    axes[0, 0].set_ylabel(time_label("best mean time"), fontsize=10)
    families = list(dict.fromkeys(f for f in best.get("family", []) if isinstance(f, str)))
    handles = [Line2D([], [], color=st[1], ls=st[0], label=LOAD_NAMES.get(k, k)) for k, st in styles.items()]
    handles += [Line2D([], [], color=COLORS.get(f, "0.5"), marker="o", ls="", ms=5, label=NAMES.get(f, f))
                for f in families]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    return fig
