"""Figures of notebook 03 (communication-efficient gradient codes): one function per figure, taking its result
table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from gclib.plotting import DOUBLE, color, errorbars, time_label

#: Legend label of each family of :func:`gclib.codes.comm_efficient.tradeoff`, and the construction drawn for it
#: (the two MDS constructions have the same loads).
FAMILIES = {"MDS": ("MDS (Ye-Abbe, Kadhe Gaussian)", "ye-abbe"), "repetition": ("repetition (Kadhe)",
                                                                               "kadhe repetition")}
S_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
POINT_COLORS = {"equispaced": "#2ca02c", "chebyshev": "#1f77b4", "roots-of-unity": "#d62728"}


def tradeoff(trade: pd.DataFrame):
    """Load ``d`` against ``m`` per family and ``s`` (left), message size against ``d`` for MDS codes (right); the
    colour is ``s``, the line style the family, each with a legend of its own.

    Args:
        trade: :func:`gclib.codes.comm_efficient.tradeoff` (``s, m, construction, family, load d, message size``).
    Returns:
        the matplotlib Figure (two axes).
    """
    fig, ax = plt.subplots(1, 2, figsize=(DOUBLE, 3.2))
    s_colors = dict(zip(sorted(trade["s"].unique()), S_COLORS))
    styles = {"MDS": "-", "repetition": "--"}
    for family, (label, construction) in FAMILIES.items():
        sub = trade[trade["construction"] == construction]
        for s, g in sub.groupby("s"):
            ax[0].plot(g["m"], g["load d"], styles[family], marker="o", ms=3, color=s_colors[s])
    ax[0].set_xlabel("communication reduction m")
    ax[0].set_ylabel("computation load d\n(parts per worker)")
    fam = [Line2D([], [], color="0.3", ls=styles[f], label=label) for f, (label, _) in FAMILIES.items()]
    first = ax[0].legend(handles=fam, loc="upper left")
    ax[0].add_artist(first)
    for s, g in trade[trade["construction"] == FAMILIES["MDS"][1]].groupby("s"):
        ax[1].plot(g["load d"], g["message size"], marker="o", ms=3, color=s_colors[s])
    ax[1].set_xlabel("computation load d")
    ax[1].set_ylabel("message size (gradients)")
    ax[1].set_title("MDS: size 1/(d - s)")
    ss = [Line2D([], [], color=c, marker="o", ms=3, label=f"s = {s}") for s, c in s_colors.items()]
    ax[1].legend(handles=ss, title="stragglers")
    fig.tight_layout()
    return fig


def iteration_time(itime: pd.DataFrame, title: str = ""):
    """Mean iteration time (95% bands) against ``m`` for Ye-Abbe and Kadhe et al., with CRC and uncoded as
    horizontal lines (left), and the volume received per iteration (right).

    Args:
        itime: ``table`` of :func:`gclib.sweeps.comm_efficient_sweep` (``scheme, m, mean_time, ci95_time,
            mean_volume``).
    Returns:
        the matplotlib Figure (two axes).
    """
    fig, ax = plt.subplots(1, 2, figsize=(DOUBLE, 4.0), layout="constrained")
    coded = itime[itime["scheme"].isin(["ye-abbe", "kadhe"])]
    errorbars(ax[0], coded, "m", "mean_time", "ci95_time", "scheme")
    for name in ["crc", "uncoded"]:
        v = itime.loc[itime["scheme"] == name, "mean_time"]
        if len(v):
            ax[0].axhline(v.iloc[0], color=color(name), ls="--", lw=1, label=f"{name} (m = 1)")
    ax[0].set_xlabel("communication reduction m")
    ax[0].set_ylabel(time_label("mean iteration time").replace(" (", "\n("))
    ax[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    for name, g in coded.groupby("scheme"):
        ax[1].plot(g["m"], g["mean_volume"], marker="o", ms=4, color=color(name), label=name)
    ax[1].set_xlabel("communication reduction m")
    ax[1].set_ylabel("volume per iteration\n(gradients)")
    ax[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    fig.suptitle(title)
    return fig


def stability(stab: pd.DataFrame, m: int, *, tol: float = 1e-6):
    """Worst decoding error against ``n``: columns the straggler regimes, rows float64 and float32; colour the
    evaluation points of Ye-Abbe's code (solid: spread assignment, dotted: natural), Kadhe et al.'s code bold.

    Args:
        stab: :func:`gclib.studies.reed_solomon.study.regime_study` (``regime, label, points, assign, n,
            worst_error64, worst_error32``).
    Returns:
        the matplotlib Figure (2 x 2 axes).
    """
    regimes = ["smallest s", "largest s <= n/2"]
    fig, axes = plt.subplots(2, 2, figsize=(DOUBLE, 5.2), sharex=True, sharey="row")
    colors = {**POINT_COLORS, "-": color("kadhe")}
    for col, regime in enumerate(regimes):
        sub = stab[stab["regime"] == regime]
        for row, y in enumerate(["worst_error64", "worst_error32"]):
            ax = axes[row, col]
            for label, g in sub.groupby("label", sort=False):
                g = g.sort_values("n")
                pts, assign = g["points"].iloc[0], g["assign"].iloc[0]
                ls = ":" if assign == "natural" else "-"
                lw = 2.5 if label == "kadhe" else 1.3
                ax.plot(g["n"], g[y], ls, lw=lw, marker="o", ms=3, color=colors[pts])
            ax.axhline(tol, color="k", lw=0.8, ls="--")
            ax.set_yscale("log")
        axes[0, col].set_title(regime + f" (m = {m})")
        axes[1, col].set_xlabel("workers n")
    axes[0, 0].set_ylabel("worst relative error\nfloat64")
    axes[1, 0].set_ylabel("worst relative error\nfloat32")
    handles = [Line2D([], [], color=c, lw=1.3, label=f"Ye-Abbe, {p}") for p, c in POINT_COLORS.items()]
    handles += [Line2D([], [], color=color("kadhe"), lw=2.5, label="Kadhe (Gaussian)"),
                Line2D([], [], color="0.3", ls="-", label="spread assignment"),
                Line2D([], [], color="0.3", ls=":", label="natural assignment"),
                Line2D([], [], color="k", lw=0.8, ls="--", label=f"error {tol:g}")]
    fig.legend(handles=handles, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
