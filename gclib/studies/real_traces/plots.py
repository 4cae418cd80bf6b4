"""Figures of notebook 10 (the shipped public traces through convert -> fit -> advise -> back-test), each readable
at one column width: the variance split per trace, the predicted against the held-out time of every design, and
where each model breaks."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gclib.plotting import SINGLE, plt

#: A colour per part of the variance and per model of the advice.
PART_COLORS = {"worker": "#d62728", "iteration": "#1f77b4", "residual": "#7f7f7f"}
MODEL_COLORS = {"replay": "#ff7f0e", "replay by iteration": "#2ca02c", "worker effects": "#9467bd"}


def variance_split(splits: pd.DataFrame):
    """One row per trace and part: the share of the variance of the log paces (dot) with its 95% interval (line).
    ``splits``: :meth:`gclib.studies.real_traces.study.Study.splits_table`."""
    traces = list(dict.fromkeys(splits["trace"]))
    parts = list(dict.fromkeys(splits["part"]))
    fig, ax = plt.subplots(figsize=(SINGLE, 0.55 + 0.62 * len(traces)))
    step = 0.24
    for i, t in enumerate(traces):
        g = splits[splits["trace"] == t].set_index("part")
        for j, p in enumerate(parts):
            y = i + (j - (len(parts) - 1) / 2) * step
            r = g.loc[p]
            ax.plot([100 * r["lo"], 100 * r["hi"]], [y, y], color=PART_COLORS.get(p), lw=2, alpha=0.55)
            ax.plot(100 * r["fraction"], y, "o", ms=5, color=PART_COLORS.get(p), label=p if i == 0 else None)
    ax.set_yticks(range(len(traces)), traces)
    ax.set_ylim(len(traces) - 0.5, -0.5)
    ax.set_xlim(-3, 103)
    ax.set_xlabel("share of the variance of log paces (%)")
    ax.set_title("Worker, iteration and the rest")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=3)
    return fig


def predicted_vs_held(designs: pd.DataFrame, band: float):
    """One panel per trace: every design's predicted mean iteration time (fitted on the first half; filled: the
    model the advice ranks under, hollow: the independent replay) against its mean time on the held-out half with
    every worker kept; the diagonal and a band of ``+/- band``; uncoded (a cross) and the advised design (a ring)
    marked, the legend under the panels. One column wide.
    ``designs``: :meth:`gclib.studies.real_traces.study.Study.designs`."""
    traces = list(dict.fromkeys(designs["trace"]))
    fig, axes = plt.subplots(len(traces), 1, figsize=(SINGLE, 1.9 * len(traces) + 0.8), squeeze=False,
                             layout="constrained")
    for ax, t in zip(axes[:, 0], traces):
        g = designs[designs["trace"] == t]
        x = g["observed_held"].to_numpy()
        lo, hi = np.nanmin(np.r_[x, g["predicted"], g["predicted_before"]]), np.nanmax(
            np.r_[x, g["predicted"], g["predicted_before"]])
        pad = 0.06 * (hi - lo) if hi > lo else 0.05 * hi
        line = np.array([lo - pad, hi + pad])
        ax.fill_between(line, line * (1 - band), line * (1 + band), color="0.88", lw=0,
                        label=f"prediction within {band:.0%}")
        ax.plot(line, line, color="0.4", lw=0.8)
        ax.scatter(x, g["predicted_before"], s=14, facecolors="none", edgecolors=MODEL_COLORS["replay"], lw=0.8,
                   label="independent replay (before)")
        ax.scatter(x, g["predicted"], s=10, color=MODEL_COLORS["replay by iteration"], lw=0,
                   label="ranking model (after)")
        for role, kw in (("uncoded", {"marker": "x", "s": 36, "color": "k"}),
                         ("advised", {"marker": "o", "s": 70, "facecolors": "none", "edgecolors": "k"})):
            r = g[g["role"] == role]
            ax.scatter(r["observed_held"], r["predicted"], lw=1, zorder=4,
                       label="advised design" if role == "advised" else role, **kw)
        ax.set_xlim(*line)
        ax.set_ylim(*line)
        ax.set_title(f"trace {t}")
        ax.set_ylabel("predicted (s)")
    axes[-1, 0].set_xlabel("held-out mean iteration time (s)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def model_errors(models: pd.DataFrame, in_sample: float, held_out: float):
    """One panel per trace: for every model the advice simulated, the error of its prediction of uncoded on the
    fitted half (circle) and on the held-out half (cross), and of its own recommendation on the held-out half
    (triangle); the bands of the targets. ``models``: :meth:`gclib.studies.real_traces.study.Study.models`."""
    traces = list(dict.fromkeys(models["trace"]))
    fig, axes = plt.subplots(len(traces), 1, figsize=(SINGLE, 1.75 * len(traces) + 0.5), squeeze=False,
                             sharex=False)
    for ax, t in zip(axes[:, 0], traces):
        g = models[models["trace"] == t].reset_index(drop=True)
        y = np.arange(len(g))
        ax.axvspan(-100 * held_out, 100 * held_out, color="0.92", lw=0)
        ax.axvspan(-100 * in_sample, 100 * in_sample, color="0.84", lw=0)
        ax.axvline(0, color="0.4", lw=0.8)
        ax.plot(100 * g["uncoded_error_fit"], y - 0.2, "o", ms=4, color="k", label="uncoded, fitted half")
        ax.plot(100 * g["uncoded_error_held"], y, "x", ms=5, color="#d62728", label="uncoded, held out")
        ax.plot(100 * g["advised_error_held"], y + 0.2, "^", ms=4, color="#1f77b4",
                label="its advised design, held out")
        names = [f"{m}{' *' if a else ''}{'' if s else ' (rejected)'}"
                 for m, a, s in zip(g["model"], g["primary"], g["supported"])]
        ax.set_yticks(y, names)
        ax.set_ylim(len(g) - 0.5, -0.5)
        ax.set_title(f"trace {t}: slowest worker drifted {100 * g['drift'].iloc[0]:+.1f}%")
        span = np.nanmax(np.abs(100 * g[["uncoded_error_fit", "uncoded_error_held", "advised_error_held"]].to_numpy()))
        lim = max(100 * held_out * 1.4, span * 1.15)
        ax.set_xlim(-lim, lim)
    axes[-1, 0].set_xlabel("prediction error (%): predicted / observed - 1\n"
                           f"(*: ranks the advice; bands: within {100 * in_sample:.0f}% and {100 * held_out:.0f}%)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig
