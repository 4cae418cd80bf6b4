"""Figures of notebook 01 (Tandon et al., "Gradient Coding", ICML 2017): one function per figure, each taking the
table the notebook saves beside it and returning the matplotlib Figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker

from . import color, errorbars, time_label


def conditioning(cond: pd.DataFrame):
    """``01_crc_conditioning``: worst and median condition number (left) and float64 decoding error (right) of
    CRC against ``n``, from a :func:`gclib.diagnostics.conditioning` table (one row per ``n`` and seed): the
    median over seeds of the worst pattern, its range over seeds as a band, and the median pattern."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    g = cond.groupby("n")
    for ax, (col, label) in zip(axes, [("cond", "condition number of $B_F$"), ("error", "relative decoding error")]):
        worst = g[f"worst_{col}"]
        ax.semilogy(worst.median().index, worst.median(), "o-", color=color("crc"),
                    label="worst pattern (median over seeds)")
        ax.fill_between(worst.min().index, worst.min(), worst.max(), color=color("crc"), alpha=0.2,
                        label="worst pattern (range over seeds)")
        ax.semilogy(g[f"median_{col}"].median().index, g[f"median_{col}"].median(), "s--", color="0.4",
                    label="median pattern")
        ax.set_xlabel("workers n (s = n/4)")
        ax.set_ylabel(label)
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    axes[0].set_title("CRC (Tandon's random H): conditioning")
    axes[1].set_title("CRC: float64 decoding error")
    axes[0].legend()
    return fig


def completion_time(times: pd.DataFrame):
    """``01_completion_time``: expected completion time against ``s``, one panel per model, from a
    :func:`gclib.simulate.sweep` table with a ``model`` column: Monte Carlo means with their 95% bands per
    scheme, and the closed forms dashed."""
    models = list(dict.fromkeys(times["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4.5), squeeze=False)
    axes = axes[0]
    for ax, label in zip(axes, models):
        df = times[times["model"] == label]
        errorbars(ax, df, "value", "mean_time", "ci95_time", "scheme")
        for name, g in df.groupby("scheme", sort=False):
            ax.plot(g["value"], g["closed_form_time"], ls="--", lw=1, color=color(name))
        ax.set_title(label)
        ax.set_xlabel("stragglers tolerated s")
        ax.set_ylabel(time_label("expected completion time"))
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.15),
               title="scheme: Monte Carlo mean with 95% CI band; dashed: closed form")
    fig.tight_layout()
    return fig
