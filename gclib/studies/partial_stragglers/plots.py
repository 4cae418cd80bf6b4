"""Figures of notebook 11 (partial stragglers, Ramamoorthy, Meng and Girimaji, reconstructed): Q_max of the
orderings, exact-recovery time and communication, approximate-recovery error at deadlines."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from gclib.plotting import time_label

_FONT = 13
_ORDER_STYLE = {"optimal": ("o", "-"), "cyclic": ("s", "--"), "random": ("^", ":")}
_ORDER_LABEL = {"optimal": "optimal (matchings)", "cyclic": "as listed (natural)", "random": "random"}


def _big(ax):
    ax.title.set_fontsize(_FONT + 1)
    ax.xaxis.label.set_fontsize(_FONT)
    ax.yaxis.label.set_fontsize(_FONT)
    ax.tick_params(labelsize=_FONT - 2)


def q_max(table: pd.DataFrame) -> plt.Figure:
    """``Q_max`` above its lower bound against ``n`` for each ordering, one panel per assignment (cyclic,
    random regular); the bars span the draws' minimum to maximum.

    Args:
        table: :func:`gclib.studies.partial_stragglers.study.qmax_table`, one load ``l`` per ``n``.
    """
    kinds = list(dict.fromkeys(table["assignment"]))
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 4.2), sharey=True, squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        g = table[table["assignment"] == kind]
        for o, h in g.groupby("ordering", sort=False):
            marker, ls = _ORDER_STYLE.get(o, ("o", "-"))
            ax.errorbar(h["n"], h["excess_mean"], yerr=[h["q_max_mean"] - h["q_max_min"],
                                                         h["q_max_max"] - h["q_max_mean"]],
                        marker=marker, ls=ls, capsize=3, label=_ORDER_LABEL.get(o, o))
        ax.set_title(f"{kind} assignment")
        ax.set_xlabel(f"workers n (load l = {', '.join(str(v) for v in sorted(set(g['l'])))})")
        _big(ax)
    axes[0][0].set_ylabel("Q_max minus its lower bound")
    axes[0][0].legend(fontsize=_FONT - 2, title="ordering")
    fig.tight_layout()
    return fig


def exact_times(table: pd.DataFrame) -> plt.Figure:
    """Mean exact-recovery time (left) and vectors received (right) of every scheme, one bar per compute-time
    model, with 95% intervals; one row of panels per way the master takes uploads in.

    Args:
        table: the first table of :func:`gclib.studies.partial_stragglers.study.exact_times`.
    """
    uploads = list(dict.fromkeys(table["uploads"]))
    fig, axes = plt.subplots(len(uploads), 2, figsize=(12, 3.9 * len(uploads)), squeeze=False)
    for i, u in enumerate(uploads):
        g = table[table["uploads"] == u]
        for ax, (y, ci, label) in zip(axes[i], [("mean_time", "ci95_time", time_label("mean exact-recovery time")),
                                                ("mean_volume", "ci95_volume", "vectors received")]):
            wide = g.pivot(index="scheme", columns="model", values=y).reindex(list(dict.fromkeys(g["scheme"])))
            err = g.pivot(index="scheme", columns="model", values=ci).reindex(wide.index)
            wide.plot.barh(ax=ax, xerr=err, capsize=3, legend=False)
            ax.set_xlabel(label if i == len(uploads) - 1 else "")
            ax.set_ylabel("")
            ax.set_title(f"uploads taken {u}")
            ax.invert_yaxis()
            _big(ax)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=_FONT - 1, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def approx_mse(table: pd.DataFrame) -> plt.Figure:
    """Mean normalized error of approximate recovery against the deadline (a fraction of GC's mean exact time),
    log scale, one line per scheme, one panel per compute-time model; a zero error is drawn at the bottom of the
    axis (one tenth of the smallest positive mean). RMG's line is drawn dashed with open markers on top: on the
    same order its estimate is UC-MMC's (the sum of the covered chunks), so the two lines coincide.

    Args:
        table: :func:`gclib.studies.partial_stragglers.study.approx_mse`.
    """
    pos = table.loc[table["mean_mse"] > 0, "mean_mse"]
    floor = max(float(pos.min()) / 10, 1e-9) if len(pos) else 1e-9
    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(5.6 * len(models), 4.4), sharey=True, squeeze=False)
    for ax, m in zip(axes[0], models):
        for scheme, g in table[table["model"] == m].groupby("scheme", sort=False):
            style = (dict(ls="--", marker="o", mfc="none", ms=11, mew=1.8, zorder=5) if scheme.startswith("RMG")
                     else dict(marker="o"))
            ax.plot(g["fraction"], g["mean_mse"].clip(lower=floor), label=scheme, **style)
        ax.set_yscale("log")
        ax.set_title(m)
        ax.set_xlabel("deadline / GC's mean exact time")
        _big(ax)
    axes[0][0].set_ylabel("mean error |aB - 1|^2 / N")
    axes[0][0].legend(fontsize=_FONT - 3)
    fig.tight_layout()
    return fig
