"""Figures of notebook 01 (Tandon et al., "Gradient Coding", ICML 2017): one function per figure, each taking the
table the notebook saves beside it and returning the matplotlib Figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import ticker

from gclib.plotting import DOUBLE, color, plain_log, time_label


def conditioning(cond: pd.DataFrame):
    """``01_crc_conditioning``: worst and median condition number (left) and float64 decoding error (right) of
    CRC against ``n``, from a :func:`gclib.diagnostics.conditioning` table (one row per ``n`` and seed): the
    median over seeds of the worst pattern, its range over seeds as a band, and the median pattern."""
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 2.7), layout="constrained")
    g = cond.groupby("n")
    for ax, (col, label) in zip(axes, [("cond", "condition number of $B_F$"), ("error", "relative decoding error")]):
        worst = g[f"worst_{col}"]
        ax.semilogy(worst.median().index, worst.median(), "o-", ms=3, color=color("crc"),
                    label="worst pattern (median over seeds)")
        ax.fill_between(worst.min().index, worst.min(), worst.max(), color=color("crc"), alpha=0.2,
                        label="worst pattern (range over seeds)")
        ax.semilogy(g[f"median_{col}"].median().index, g[f"median_{col}"].median(), "s--", ms=3, color="0.4",
                    label="median pattern")
        ax.set_xlabel("workers n (s = n/4)")
        ax.set_ylabel(label)
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    axes[0].set_title("CRC (Tandon's random H): conditioning")
    axes[1].set_title("CRC: float64 decoding error")
    axes[0].legend(loc="upper left")
    return fig


def completion_time(times: pd.DataFrame):
    """``01_completion_time``: expected completion time against ``s``, one column per model, from a
    :func:`gclib.sweeps.sweep` table with a ``model`` column. Top: the Monte Carlo means (markers) on the closed
    forms (wide pale lines, where one exists). Bottom: the Monte Carlo mean relative to the closed form, minus 1,
    with its 95% band, which is where the intervals are large enough to see."""
    models = list(dict.fromkeys(times["model"]))
    fig, axes = plt.subplots(2, len(models), figsize=(DOUBLE, 4.6), squeeze=False, sharex="col",
                             height_ratios=(2.2, 1), layout="constrained")
    for col, label in enumerate(models):
        ax, dev = axes[0, col], axes[1, col]
        df = times[times["model"] == label]
        for name, g in df.groupby("scheme", sort=False):
            g = g.sort_values("value")
            c = color(name)
            ax.plot(g["value"], g["closed_form_time"], lw=5, alpha=0.25, color=c, solid_capstyle="round")
            ax.plot(g["value"], g["mean_time"], marker="o", ms=3, lw=1, color=c, label=name)
            cf = g["closed_form_time"].to_numpy(float)
            ok = np.isfinite(cf) & (cf > 0)
            if ok.any():
                rel = g["mean_time"].to_numpy(float)[ok] / cf[ok] - 1
                half = g["ci95_time"].to_numpy(float)[ok] / cf[ok]
                x = g["value"].to_numpy()[ok]
                dev.plot(x, rel, marker="o", ms=2.5, lw=1, color=c)
                dev.fill_between(x, rel - half, rel + half, color=c, alpha=0.25, lw=0)
        ax.set_title(label)
        plain_log(ax)
        dev.axhline(0, color="black", lw=0.8)
        dev.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
        dev.set_xlabel("stragglers tolerated s")
        dev.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    axes[0, 0].set_ylabel(time_label("expected completion time").replace(" (", "\n("))
    axes[1, 0].set_ylabel("Monte Carlo / closed\nform - 1 (95% band)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4,
               title="markers: Monte Carlo mean; wide pale line: closed form")
    return fig
