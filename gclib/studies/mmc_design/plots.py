"""Figures of notebook 05 (choosing GC-MMC designs): time against load with the Pareto fronts, and the fastest
design within each communication budget."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker
from matplotlib.lines import Line2D

from gclib.design import pareto_front
from gclib.plotting import DOUBLE, PALETTE, plain_log, time_label

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
    """A log y axis with plain tick labels at 1, 1.5, 2, 3, 5 and 7 of each decade."""
    plain_log(ax, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0))


def pareto(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Mean completion time (log scale) against mean load: every design a faint grey dot, each family's Pareto
    front a coloured step line with its own marker, the front over all families black; rows: models, columns: the
    two load accountings; one legend below.

    Args:
        table: :func:`gclib.studies.mmc_design.study.evaluate_models` (``model, family, mean_time, mean_messages,
            mean_cluster_messages``).
        title: the figure's title.
    """
    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(len(models), 2, figsize=(DOUBLE, 2.9 * len(models) + 1.3), squeeze=False,
                             sharex="col", layout="constrained")
    families = list(dict.fromkeys(table["family"]))
    for i, (name, g) in enumerate(table.groupby("model", sort=False)):
        for j, (load, xlabel) in enumerate(_LOADS):
            ax = axes[i, j]
            ax.scatter(g[load], g["mean_time"], s=3, color="0.82", lw=0, zorder=1)
            for fam, gf in g.groupby("family", sort=False):
                f = pareto_front(gf, x=load)
                ax.plot(f[load], f["mean_time"], marker=MARKERS.get(fam, "o"), ms=4.5, lw=1.2, color=COLORS[fam],
                        drawstyle="steps-post", zorder=3 if fam in ("lcc", "frc", "uc-mmc", "gc", "rs") else 2)
            f = pareto_front(g, x=load)
            ax.plot(f[load], f["mean_time"], color="black", lw=1.2, ls="--", drawstyle="steps-post", zorder=4)
            _plain_log(ax)
            if i == len(models) - 1:
                ax.set_xlabel(xlabel)
            if i == 0:
                ax.set_title(xlabel.replace("messages ", "load: messages ", 1))
        axes[i, 0].set_ylabel(f"{name}\n" + time_label("mean time"))
    handles = [Line2D([], [], color=COLORS[f], marker=MARKERS.get(f, "o"), ms=5, label=NAMES.get(f, f))
               for f in families]
    handles += [Line2D([], [], color="black", lw=1.2, ls="--", label="front over all"),
                Line2D([], [], color="0.82", marker="o", ls="", ms=3, label="every design")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4,
               title="each family's Pareto front (markers) and the front over all families")
    fig.suptitle(title)
    return fig


def budget(best: pd.DataFrame) -> plt.Figure:
    """The best mean completion time against the budget: one row per load accounting (messages until
    completion, messages until each cluster decodes), one column per model; each point coloured by the family of
    the best design, and the design named where the best one changes (slanted labels above the line).

    Args:
        best: :func:`gclib.studies.mmc_design.study.best_per_budget` (``model, load, budget, label, family,
            mean_time``).
    """
    models = list(dict.fromkeys(best["model"]))
    loads = list(dict.fromkeys(best["load"]))
    fig, axes = plt.subplots(len(loads), len(models), figsize=(DOUBLE, 2.5 * len(loads) + 0.9), squeeze=False,
                             sharex=True, layout="constrained")
    for j, (name, g) in enumerate(best.groupby("model", sort=False)):
        for i, load in enumerate(loads):
            ax = axes[i, j]
            gl = g[g["load"] == load].sort_values("budget")
            ax.plot(gl["budget"], gl["mean_time"], color="0.3", lw=1.2, zorder=1)
            ax.scatter(gl["budget"], gl["mean_time"], s=30, zorder=2,
                       c=[COLORS.get(f, "0.5") if isinstance(f, str) else "white"
                          for f in gl.get("family", [None] * len(gl))], edgecolors="0.3", linewidths=0.6)
            previous = None
            for _, row in gl.iterrows():
                if isinstance(row.label, str) and row.label and row.label != previous:  # the best design changed
                    # slanted up and to the right of its point: clear of a line that falls with the budget
                    ax.annotate(row.label, (row.budget, row.mean_time), xytext=(4, 5), rotation=30,
                                ha="left", va="bottom", textcoords="offset points", rotation_mode="anchor",
                                color=COLORS.get(row.get("family"), "0.2"))
                previous = row.label
            ax.yaxis.set_major_locator(ticker.MaxNLocator(5))
            ax.margins(x=0.08, y=0.1)
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi + 0.3 * (hi - lo))  # room for the slanted names above the highest point
            x0, x1 = ax.get_xlim()
            ax.set_xlim(x0, x1 + 0.12 * (x1 - x0))
            if i == 0:
                ax.set_title(name)
            if j == 0:
                ax.set_ylabel(f"{LOAD_NAMES.get(load, load).replace('messages ', 'load: ', 1)}\n"
                              + time_label("best mean time"))
            if i == len(loads) - 1:
                ax.set_xlabel("budget (mean messages)")
    families = list(dict.fromkeys(f for f in best.get("family", []) if isinstance(f, str)))
    handles = [Line2D([], [], color=COLORS.get(f, "0.5"), marker="o", ls="", ms=6, label=NAMES.get(f, f))
               for f in families]
    fig.legend(handles=handles, loc="outside lower center", ncol=max(1, min(4, len(handles))),
               title="family of the best design")
    return fig
