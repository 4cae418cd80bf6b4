"""Figures of notebook 12, each readable at one column width: the gain of SR-SGC and M-SGC over GC per delay source,
and its sensitivity to the deadline factor mu."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gclib.plotting import SINGLE, plt

#: A colour per scheme.
COLORS = {"sr-sgc": "#1f77b4", "m-sgc": "#d62728"}


def gains(table: pd.DataFrame, paper: float):
    """One row per delay source: the held-out gain over GC (dot) of SR-SGC and M-SGC with its 95% interval (line),
    and the paper's gain (dashed). ``table``: :meth:`gclib.studies.sequential.study.Study.gains` at one mu."""
    srcs = list(dict.fromkeys(table["source"]))
    fig, ax = plt.subplots(figsize=(SINGLE, 0.9 + 0.36 * len(srcs)))
    for j, scheme in enumerate(("sr-sgc", "m-sgc")):
        g = table[table["scheme"] == scheme].set_index("source")
        for i, s in enumerate(srcs):
            y = i + (j - 0.5) * 0.3
            r = g.loc[s]
            if r["lo"] == r["lo"]:
                ax.plot([100 * r["lo"], 100 * r["hi"]], [y, y], color=COLORS[scheme], lw=2, alpha=0.55)
            ax.plot(100 * r["gain"], y, "o", ms=5, color=COLORS[scheme], label=scheme.upper() if i == 0 else None)
    ax.axvline(0, color="0.4", lw=0.8)
    ax.axvline(100 * paper, color="k", lw=1, ls="--", label=f"paper (M-SGC, {paper:.0%})")
    ax.set_yticks(range(len(srcs)), srcs, fontsize=7.5)
    ax.set_ylim(len(srcs) - 0.5, -0.5)
    vals = 100 * table[table["scheme"].isin(COLORS)][["gain", "lo", "hi"]].to_numpy()
    ax.set_xlim(max(np.nanmin(vals) - 5, -105), min(max(np.nanmax(vals) + 5, 100 * paper + 10), 100))
    ax.set_xlabel("run time below GC's (%), held out", fontsize=8)
    ax.set_title("Gain over GC (dots: mean, lines: 95% CI)", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.4 / (0.9 + 0.36 * len(srcs)), 1, 1))
    return fig


def mu_sensitivity(table: pd.DataFrame, paper: float):
    """One panel per load model swept over mu: M-SGC's and SR-SGC's gain over GC against mu, per compute-time model
    (without effects), with 95% intervals. ``table``: :meth:`gclib.studies.sequential.study.Study.gains`."""
    t = table[~table["effects"].astype(bool) & table["scheme"].isin(COLORS)]
    t = t[~t["source"].str.contains("convention")]
    lms = [lm for lm in dict.fromkeys(t["load_model"]) if t[t["load_model"] == lm]["mu"].nunique() > 1]
    fig, axes = plt.subplots(len(lms), 1, figsize=(SINGLE, 2.1 * len(lms) + 0.9), squeeze=False, sharex=True)
    marks = ["o", "s", "^", "D"]
    styles = ["-", ":", "--", "-."]
    for ax, lm in zip(axes[:, 0], lms):
        g = t[t["load_model"] == lm]
        for k, model in enumerate(dict.fromkeys(g["model"])):
            for scheme in COLORS:
                r = g[(g["model"] == model) & (g["scheme"] == scheme)].sort_values("mu")
                if r["mu"].nunique() < 2:
                    continue
                ax.errorbar(r["mu"], 100 * r["gain"], yerr=[100 * (r["gain"] - r["lo"]), 100 * (r["hi"] - r["gain"])],
                            color=COLORS[scheme], marker=marks[k % 4], ms=4, lw=1, capsize=2,
                            ls=styles[k % 4], label=f"{scheme.upper()}, {model}")
        ax.axhline(0, color="0.4", lw=0.8)
        ax.axhline(100 * paper, color="k", lw=1, ls="--")
        ax.set_title(f"load model: {lm}", fontsize=9)
        ax.set_ylabel("gain over GC (%)", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.set_xscale("log", base=2)
    axes[-1, 0].set_xlabel("deadline factor mu (straggler: slower than (1 + mu) x fastest)", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.6 / (2.1 * len(lms) + 0.9), 1, 1))
    return fig
