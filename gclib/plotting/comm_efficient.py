"""Figures of notebook 03 (communication-efficient gradient codes): one function per figure, taking its result
table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from . import color, errorbars

#: Legend label of each family of :func:`gclib.codes.comm_efficient.tradeoff`, and the construction drawn for it
#: (the two MDS constructions have the same loads).
FAMILIES = {"MDS": ("MDS (Ye-Abbe, Kadhe Gaussian)", "ye-abbe"), "repetition": ("repetition (Kadhe)",
                                                                               "kadhe repetition")}
S_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
POINT_COLORS = {"equispaced": "#2ca02c", "chebyshev": "#1f77b4", "roots-of-unity": "#d62728"}


def tradeoff(trade: pd.DataFrame):
    """Load ``d`` against ``m`` per family and ``s`` (left), message size against ``d`` for MDS codes (right).

    Args:
        trade: :func:`gclib.codes.comm_efficient.tradeoff` (``s, m, construction, family, load d, message size``).
    Returns:
        the matplotlib Figure (two axes).
    """
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    s_colors = dict(zip(sorted(trade["s"].unique()), S_COLORS))
    for family, (label, construction) in FAMILIES.items():
        sub = trade[trade["construction"] == construction]
        for s, g in sub.groupby("s"):
            ls = "-" if family == "MDS" else "--"
            ax[0].plot(g["m"], g["load d"], ls, marker="o", ms=3, color=s_colors[s], label=f"{label}, s = {s}")
    ax[0].set_xlabel("communication reduction m")
    ax[0].set_ylabel("computation load d (parts per worker)")
    ax[0].legend(fontsize=7)
    for s, g in trade[trade["construction"] == FAMILIES["MDS"][1]].groupby("s"):
        ax[1].plot(g["load d"], g["message size"], marker="o", ms=3, color=s_colors[s], label=f"s = {s}")
    ax[1].set_xlabel("computation load d")
    ax[1].set_ylabel("message size (gradients)")
    ax[1].set_title("MDS: size 1/(d - s)")
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def iteration_time(itime: pd.DataFrame, title: str = ""):
    """Mean iteration time (95% bands) against ``m`` for Ye-Abbe and Kadhe et al., with CRC and uncoded as
    horizontal lines (left), and the volume received per iteration (right).

    Args:
        itime: ``table`` of :func:`gclib.simulate.comm_efficient_sweep` (``scheme, m, mean_time, ci95_time,
            mean_volume``).
    Returns:
        the matplotlib Figure (two axes).
    """
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    coded = itime[itime["scheme"].isin(["ye-abbe", "kadhe"])]
    errorbars(ax[0], coded, "m", "mean_time", "ci95_time", "scheme")
    for name in ["crc", "uncoded"]:
        v = itime.loc[itime["scheme"] == name, "mean_time"]
        if len(v):
            ax[0].axhline(v.iloc[0], color=color(name), ls="--", lw=1, label=f"{name} (m = 1)")
    ax[0].set_xlabel("communication reduction m")
    ax[0].set_ylabel("mean iteration time")
    ax[0].legend(fontsize=8)
    for name, g in coded.groupby("scheme"):
        ax[1].plot(g["m"], g["mean_volume"], marker="o", ms=4, color=color(name), label=name)
    ax[1].set_xlabel("communication reduction m")
    ax[1].set_ylabel("volume per iteration (gradients)")
    ax[1].legend(fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.suptitle(title)
    return fig


def stability(stab: pd.DataFrame, m: int, *, tol: float = 1e-6):
    """Worst float64 (o) and float32 (x) decoding error against ``n``, one panel per straggler regime; Kadhe et
    al.'s code bold, Ye-Abbe's dotted for the natural assignment of its points.

    Args:
        stab: :func:`gclib.stability.regime_study` (``regime, label, points, assign, n, worst_error64,
            worst_error32``).
    Returns:
        the matplotlib Figure (two axes).
    """
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    colors = {**POINT_COLORS, "-": color("kadhe")}
    for ax, regime in zip(axes, ["smallest s", "largest s <= n/2"]):
        sub = stab[stab["regime"] == regime]
        for label, g in sub.groupby("label", sort=False):
            g = g.sort_values("n")
            pts, assign = g["points"].iloc[0], g["assign"].iloc[0]
            ls = ":" if assign == "natural" else "-"
            lw = 2.5 if label == "kadhe" else 1.2
            ax.plot(g["n"], g["worst_error64"], ls, lw=lw, marker="o", ms=3, color=colors[pts], label=label)
            ax.plot(g["n"], g["worst_error32"], ls, lw=lw * 0.6, marker="x", ms=3, color=colors[pts], alpha=0.4)
        ax.axhline(tol, color="k", lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_xlabel("workers n")
        ax.set_title(regime + f" (m = {m})")
    axes[0].set_ylabel("worst relative error (o float64, x float32)")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig
