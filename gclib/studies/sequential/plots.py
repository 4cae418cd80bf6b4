"""Figures of notebook 12, each readable at one column width: the run time of SR-SGC and M-SGC relative to GC's per
delay source, and the gain's sensitivity to the deadline factor mu."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gclib.plotting import SINGLE, plt

#: A colour per scheme.
COLORS = {"sr-sgc": "#1f77b4", "m-sgc": "#d62728"}


#: Ticks of the relative run-time axis of :func:`gains` (run time over GC's, log scale).
RATIO_TICKS = (0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0)


def _two_lines(source: str) -> str:
    """A delay source's label on two lines: the model, then the load model (``"shifted-exp + effects\\nshift"``)."""
    head, _, tail = source.replace(", simulator's convention", ", simulator's GC").partition(", ")
    return f"{head}\n{tail}" if tail else head


def gains(table: pd.DataFrame, paper: float, simulated: float | None = None):
    """One row per delay source: the held-out run time of SR-SGC and M-SGC relative to GC's (dot: mean over seeds,
    line: its 95% interval), on a log scale so that every source fits without clipping (a gain of -273% is a run
    time 3.73 times GC's), beside the paper's gain (dashed) and the authors' simulated one (dotted).
    ``table``: :meth:`gclib.studies.sequential.study.Study.gains` at one mu."""
    srcs = list(dict.fromkeys(table["source"]))
    height = 1.0 + 0.32 * len(srcs)
    fig, ax = plt.subplots(figsize=(SINGLE, height))
    values = []
    for j, scheme in enumerate(("sr-sgc", "m-sgc")):
        g = table[table["scheme"] == scheme].set_index("source")
        for i, s in enumerate(srcs):
            y = i + (j - 0.5) * 0.3
            r = g.loc[s]
            if r["lo"] == r["lo"]:
                ax.plot([1 - r["hi"], 1 - r["lo"]], [y, y], color=COLORS[scheme], lw=2, alpha=0.55)
                values += [1 - r["hi"], 1 - r["lo"]]
            ax.plot(1 - r["gain"], y, "o", ms=4, color=COLORS[scheme])
            values.append(1 - r["gain"])
    ax.axvline(1, color="0.4", lw=0.8)
    ax.axvline(1 - paper, color="k", lw=1, ls="--")
    if simulated is not None:
        ax.axvline(1 - simulated, color="k", lw=1, ls=":")
    ax.set_xscale("log")
    v = np.asarray(values, float)
    lo, hi = min(v.min(), 1 - paper) / 1.05, max(v.max(), 1.0) * 1.05
    ax.set_xlim(lo, hi)
    ticks = [t for t in RATIO_TICKS if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(range(len(srcs)), [_two_lines(x) for x in srcs], fontsize=7)
    ax.set_ylim(len(srcs) - 0.5, -0.5)
    ax.set_xlabel("held-out run time / GC's (log scale)", fontsize=7.5)
    ax.text(0.02, 1.0, "< faster than GC", transform=ax.transAxes, fontsize=7, va="bottom", ha="left")
    ax.tick_params(axis="x", labelsize=7)
    handles = [Line2D([], [], color=COLORS[k], marker="o", ms=4, lw=2, alpha=0.8, label=k.upper()) for k in COLORS]
    handles.append(Line2D([], [], color="k", lw=1, ls="--", label=f"paper, Lambda ({paper:.0%} faster)"))
    if simulated is not None:
        handles.append(Line2D([], [], color="k", lw=1, ls=":", label=f"authors' simulation ({simulated:.1%})"))
    fig.legend(handles=handles, fontsize=7, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.55 / height, 1, 1))
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
