"""Figures of notebook 12, each readable at one column width: the gain of SR-SGC and M-SGC over GC per delay source,
and its sensitivity to the deadline factor mu."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gclib.plotting import SINGLE, plt

#: A colour per scheme.
COLORS = {"sr-sgc": "#1f77b4", "m-sgc": "#d62728"}


#: The gain axis of :func:`gains` (percent); a gain beyond it is drawn at the edge as an arrowhead with its value.
GAIN_AXIS = (-50.0, 30.0)


def gains(table: pd.DataFrame, paper: float, axis=GAIN_AXIS):
    """One row per delay source: the held-out gain over GC (dot) of SR-SGC and M-SGC with its 95% interval (line),
    and the paper's gain (dashed); a gain outside ``axis`` (percent) is an arrowhead at the edge, labelled with its
    value. ``table``: :meth:`gclib.studies.sequential.study.Study.gains` at one mu."""
    srcs = list(dict.fromkeys(table["source"]))
    lo_ax, hi_ax = axis
    fig, ax = plt.subplots(figsize=(SINGLE, 0.9 + 0.36 * len(srcs)))
    for j, scheme in enumerate(("sr-sgc", "m-sgc")):
        g = table[table["scheme"] == scheme].set_index("source")
        for i, s in enumerate(srcs):
            y = i + (j - 0.5) * 0.3
            r = g.loc[s]
            v = 100 * r["gain"]
            if r["lo"] == r["lo"]:
                ax.plot(np.clip([100 * r["lo"], 100 * r["hi"]], lo_ax, hi_ax), [y, y], color=COLORS[scheme], lw=2,
                        alpha=0.55)
            if lo_ax <= v <= hi_ax:
                ax.plot(v, y, "o", ms=5, color=COLORS[scheme])
            else:
                edge = lo_ax + 1 if v < lo_ax else hi_ax - 1
                ax.plot(edge, y, "<" if v < lo_ax else ">", ms=6, color=COLORS[scheme])
                ax.annotate(f"{v:.0f}%", (edge, y), xytext=(6 if v < lo_ax else -6, 0), textcoords="offset points",
                            ha="left" if v < lo_ax else "right", va="center", fontsize=6.5, color=COLORS[scheme])
    ax.axvline(0, color="0.4", lw=0.8)
    ax.axvline(100 * paper, color="k", lw=1, ls="--")
    ax.set_yticks(range(len(srcs)), [x.replace(", simulator's convention", ", simulator's GC") for x in srcs],
                  fontsize=7.5)
    ax.set_ylim(len(srcs) - 0.5, -0.5)
    ax.set_xlim(lo_ax, hi_ax)
    ax.set_xlabel("run time below GC's (%), held out", fontsize=8)
    ax.set_title("Gain over GC (dots: mean, lines: 95% CI)", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    handles = [Line2D([], [], color=COLORS[k], marker="o", ms=5, lw=2, alpha=0.8, label=k.upper()) for k in COLORS]
    handles.append(Line2D([], [], color="k", lw=1, ls="--", label=f"paper (M-SGC, {paper:.0%})"))
    fig.legend(handles=handles, fontsize=7, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.4 / (0.9 + 0.36 * len(srcs)), 1, 1))
    return fig


def mu_sensitivity(table: pd.DataFrame, paper: float):
    """One panel per compute-time model and load model swept over mu (without effects): SR-SGC's and M-SGC's gain
    over GC against mu, with 95% intervals, beside the paper's gain (dashed). ``table``:
    :meth:`gclib.studies.sequential.study.Study.gains`."""
    t = table[~table["effects"].astype(bool) & table["scheme"].isin(COLORS)]
    t = t[~t["source"].str.contains("convention")]
    srcs = [x for x in dict.fromkeys(t["source"]) if t[t["source"] == x]["mu"].nunique() > 1]
    fig, axes = plt.subplots(len(srcs), 1, figsize=(SINGLE, 1.7 * len(srcs) + 0.9), squeeze=False, sharex=True)
    for ax, src in zip(axes[:, 0], srcs):
        g = t[t["source"] == src]
        for scheme, mark in zip(COLORS, ("s", "o")):
            r = g[g["scheme"] == scheme].sort_values("mu")
            ax.errorbar(r["mu"], 100 * r["gain"], yerr=[100 * (r["gain"] - r["lo"]), 100 * (r["hi"] - r["gain"])],
                        color=COLORS[scheme], marker=mark, ms=4, lw=1.2, capsize=2, label=scheme.upper())
        ax.axhline(0, color="0.4", lw=0.8)
        ax.axhline(100 * paper, color="k", lw=1, ls="--", label=f"paper (M-SGC, {paper:.0%})")
        ax.set_title(src, fontsize=9)
        ax.set_ylabel("gain over GC (%)", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.set_xscale("log", base=2)
    axes[-1, 0].set_xlabel("deadline factor mu (straggler: slower than (1 + mu) x fastest)", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.45 / (1.7 * len(srcs) + 0.9), 1, 1))
    return fig
