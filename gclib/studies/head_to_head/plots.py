"""Notebook 14's figures: mean iteration time against computation and against communication, one panel per model,
one line per line of work (the lower envelope of its families)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from gclib.plotting import DOUBLE, TIME_UNIT, plain_log
from gclib.studies.head_to_head import study

#: Colour and marker of each line of work, in legend order.
STYLE = {
    "uncoded": ("#4d4d4d", "o"), study.REPETITION: ("#ff7f0e", "s"), "Reed-Solomon": ("#2ca02c", "^"),
    study.COMM_POLY: ("#d62728", "v"), study.COMM_LINEAR: ("#9467bd", "<"), study.MULTI: ("#e377c2", "D"),
    "Lagrange coded computing": ("#17becf", "P"), study.SEQ: ("#bcbd22", "h"),
    "partial-straggler protocol": ("#1f77b4", "*"), study.APPROX: ("#8c564b", "X"),
}
_OTHER = ("#7f7f7f", "d")


def envelope(best: pd.DataFrame, x: str) -> pd.DataFrame:
    """Per model and line of work, the fastest design at each value of ``x`` (``"load"`` or ``"mean_volume"``)
    among the families of that line (rows of :meth:`gclib.studies.head_to_head.study.Study.best`); for
    ``"mean_volume"``, the designs no other design of the line beats on both time and communication."""
    rows = []
    for (model, line), g in best.groupby(["model", "line"], sort=False):
        g = g.sort_values([x, "mean_time"], kind="stable")
        if x == "load":
            g = g.loc[g.groupby("load", sort=False)["mean_time"].idxmin()]
        else:
            keep = g["mean_time"].to_numpy() < np.minimum.accumulate(
                np.r_[np.inf, g["mean_time"].to_numpy()[:-1]])
            g = g[keep]
        rows.append(g)
    return pd.concat(rows, ignore_index=True) if rows else best.iloc[:0]


def _panels(models: list):
    cols = 2 if len(models) > 1 else 1
    nrows = math.ceil(len(models) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(DOUBLE, 2.6 * nrows + 1.2), squeeze=False, layout="constrained")
    for ax in axes.ravel()[len(models):]:
        ax.set_visible(False)
    return fig, axes.ravel()


def _lines(data: pd.DataFrame, x: str, xlabel: str, *, logx: bool) -> plt.Figure:
    models = list(dict.fromkeys(data["model"]))
    fig, axes = _panels(models)
    lines = list(dict.fromkeys(data["line"]))
    for ax, model in zip(axes, models):
        d = data[data["model"] == model]
        for line in lines:
            g = d[d["line"] == line].sort_values(x)
            if g.empty:
                continue
            c, mk = STYLE.get(line, _OTHER)
            dashed = (g["kind"] != "exact").all()
            ax.errorbar(g[x], g["mean_time"], yerr=g["ci95_time"], color=c, marker=mk, ms=5, lw=1.6, capsize=2,
                        ls="--" if dashed else "-", label=line)
        ax.set_title(model, fontsize=8)
        ax.tick_params(labelsize=8)
        unit = "s" if model.startswith("trace") else TIME_UNIT
        ax.set_ylabel(f"mean iteration time ({unit})", fontsize=8)
        plain_log(ax, "y")
        if logx:
            plain_log(ax, "x")
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    cols = 2 if len(models) > 1 else 1
    for ax in axes[max(0, len(models) - cols):len(models)]:
        ax.set_xlabel(xlabel, fontsize=8)
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    return fig


def time_vs_load(best: pd.DataFrame) -> plt.Figure:
    """Mean iteration time against the computation load ``r``, per model; a line per line of work (its fastest
    family at each load), dashed for approximate and sequential schemes."""
    return _lines(envelope(best, "load"), "load", "computation load r (parts per worker)", logx=False)


def time_vs_communication(best: pd.DataFrame) -> plt.Figure:
    """Mean iteration time against the gradient-length vectors received per iteration, per model; a line per line
    of work (the designs of its families no other of them beats on both)."""
    return _lines(envelope(best, "mean_volume"), "mean_volume", "gradient-length vectors received",
                  logx=True)
