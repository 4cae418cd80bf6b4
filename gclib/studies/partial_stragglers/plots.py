"""Figures of notebook 11 (partial stragglers, Ramamoorthy, Meng and Girimaji, reconstructed): Q_max of the
orderings, exact-recovery time and communication, approximate-recovery error at deadlines."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from gclib.plotting import DOUBLE, time_label

_ORDER_STYLE = {"optimal": ("o", "-"), "cyclic": ("s", "--"), "random": ("^", ":")}
_ORDER_LABEL = {"optimal": "optimal (matchings)", "cyclic": "as listed (natural)", "random": "random"}


def q_max(table: pd.DataFrame) -> plt.Figure:
    """``Q_max`` above its lower bound against ``n`` for each ordering, one panel per assignment (cyclic,
    random regular); the bars span the draws' minimum to maximum. Two columns wide.

    Args:
        table: :func:`gclib.studies.partial_stragglers.study.qmax_table`, one load ``l`` per ``n``.
    """
    kinds = list(dict.fromkeys(table["assignment"]))
    fig, axes = plt.subplots(1, len(kinds), figsize=(DOUBLE, 2.8), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, kind in zip(axes[0], kinds):
        g = table[table["assignment"] == kind]
        for o, h in g.groupby("ordering", sort=False):
            marker, ls = _ORDER_STYLE.get(o, ("o", "-"))
            ax.errorbar(h["n"], h["excess_mean"], yerr=[h["q_max_mean"] - h["q_max_min"],
                                                         h["q_max_max"] - h["q_max_mean"]],
                        marker=marker, ms=3, ls=ls, label=_ORDER_LABEL.get(o, o))
        ax.set_title(f"{kind} assignment")
        ax.set_xlabel(f"workers n (load l = {', '.join(str(v) for v in sorted(set(g['l'])))})")
    axes[0][0].set_ylabel("Q_max minus its lower bound\n(chunk computations)")
    axes[0][0].legend(title="ordering")
    return fig


def exact_times(table: pd.DataFrame) -> plt.Figure:
    """Mean exact-recovery time (left) and vectors received (right) of every scheme, one bar per compute-time
    model, with 95% intervals; one row of panels per way the master takes uploads in; the schemes named once per
    row. Two columns wide.

    Args:
        table: the first table of :func:`gclib.studies.partial_stragglers.study.exact_times`.
    """
    uploads = list(dict.fromkeys(table["uploads"]))
    n = table["scheme"].nunique()
    fig, axes = plt.subplots(len(uploads), 2, figsize=(DOUBLE, (0.3 * n + 0.9) * len(uploads) + 0.4), squeeze=False,
                             sharey="row", layout="constrained")
    for i, u in enumerate(uploads):
        g = table[table["uploads"] == u]
        for ax, (y, ci, label) in zip(axes[i], [("mean_time", "ci95_time", time_label("mean exact-recovery time")),
                                                ("mean_volume", "ci95_volume", "vectors received")]):
            wide = g.pivot(index="scheme", columns="model", values=y).reindex(list(dict.fromkeys(g["scheme"])))
            err = g.pivot(index="scheme", columns="model", values=ci).reindex(wide.index)
            wide.plot.barh(ax=ax, xerr=err, legend=False, width=0.8)
            ax.set_xlabel(label)
            ax.set_ylabel("")
            ax.set_title(f"uploads taken {u}")
            ax.grid(False, axis="y")
        axes[i][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), title="compute-time model")
    return fig


def approx_mse(table: pd.DataFrame) -> plt.Figure:
    """Mean normalized error of approximate recovery against the deadline (a fraction of GC's mean exact time),
    log scale, one line per scheme, one panel per compute-time model; a zero error is drawn at the bottom of the
    axis (one tenth of the smallest positive mean). RMG's line is drawn dashed with open markers on top: on the
    same order its estimate is UC-MMC's (the sum of the covered chunks), so the two lines coincide. Two columns wide.

    Args:
        table: :func:`gclib.studies.partial_stragglers.study.approx_mse`.
    """
    pos = table.loc[table["mean_mse"] > 0, "mean_mse"]
    floor = max(float(pos.min()) / 10, 1e-9) if len(pos) else 1e-9
    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(DOUBLE, 2.9), sharey=True, squeeze=False, layout="constrained")
    for ax, m in zip(axes[0], models):
        for scheme, g in table[table["model"] == m].groupby("scheme", sort=False):
            style = (dict(ls="--", marker="o", mfc="none", ms=7, mew=1.2, zorder=5) if scheme.startswith("RMG")
                     else dict(marker="o", ms=3))
            ax.plot(g["fraction"], g["mean_mse"].clip(lower=floor), label=scheme, **style)
        ax.set_yscale("log")
        ax.set_title(m)
        ax.set_xlabel("deadline (a fraction of GC's mean exact time)")
    axes[0][0].set_ylabel("mean error |aB - 1|^2 / N")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside right center")
    return fig
