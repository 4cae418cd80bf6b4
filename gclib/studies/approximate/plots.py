"""Figures of notebook 13 (approximate gradient codes): one function per figure, taking its result table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from gclib.plotting import DOUBLE, PALETTE, SINGLE, time_label

#: Colour of every scheme of the notebook.
COLORS = {"expander, optimal": "#2ca02c", "expander, fixed": "#9467bd", "stochastic GC": "#17becf",
          "ignore stragglers": PALETTE["ignore"], "CRC (exact)": PALETTE["crc"], "uncoded": PALETTE["uncoded"]}


def _band(ax, g, x, y, ci, label):
    g = g.sort_values(x)
    c = COLORS.get(label)
    ax.plot(g[x], g[y], marker="o", ms=4, lw=1.6, color=c, label=label)
    ax.fill_between(g[x], g[y] - g[ci], g[y] + g[ci], color=c, alpha=0.2, lw=0)


def errors(summary: pd.DataFrame, n: int, d: int):
    """The decoding error against the straggler fraction: ``||a B_R - 1||_2`` (left) and ``||a B_R - 1||^2 / n``
    (right), mean and 95% band over the graphs, one line per scheme.

    Args:
        summary: :func:`gclib.studies.approximate.study.summary`.
    """
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 3.0), layout="constrained")
    for name, g in summary.groupby("scheme", sort=False):
        _band(axes[0], g, "fraction", "error", "error_ci", name)
        _band(axes[1], g, "fraction", "sq_error", "sq_error_ci", name)
    axes[0].set_ylabel(r"$\|a B_R - \mathbf{1}\|_2$")
    axes[1].set_ylabel(r"$\|a B_R - \mathbf{1}\|_2^2 / n$")
    for ax in axes:
        ax.set_xlabel("fraction of stragglers")
        ax.set_ylim(bottom=0)
    axes[0].legend(loc="upper left")
    fig.suptitle(f"Decoding error, n = {n}, load d = {d} (ignore stragglers: load 1)")
    return fig


def benchmark(table: pd.DataFrame):
    """Our run of the authors' benchmark (lines, 95% bars over the graphs) against their published means
    (crosses): the spectral bound, the fixed decoder and the optimal decoder against ``s``.

    Args:
        table: :func:`gclib.studies.approximate.study.benchmark_table`.
    """
    fig, ax = plt.subplots(figsize=(SINGLE, 2.8), layout="constrained")
    series = {"bound": ("spectral bound", "0.3"), "fixed": ("fixed decoder", COLORS["expander, fixed"]),
              "optimal": ("optimal decoder", COLORS["expander, optimal"])}
    for col, (label, c) in series.items():
        ax.errorbar(table["s"], table[col], yerr=table[f"{col}_ci"], marker="o", ms=4, color=c, label=f"{label} (ours)",
                    capsize=2)
        ax.plot(table["s"], table[f"published_{col}"], "x", ms=6, mew=1.5, color=c)
    ax.plot([], [], "x", color="k", label="published")
    ax.set_xlabel("stragglers s (n = 50, d = 3)")
    ax.set_ylabel(r"mean $\|a B_F - \mathbf{1}\|_2$")
    ax.legend()
    ax.set_title("The authors' benchmark")
    return fig


#: The schemes of each panel of :func:`training`.
PANELS = (("expander, optimal", "expander, fixed", "stochastic GC", "ignore stragglers"),
          ("expander, optimal", "CRC (exact)", "uncoded"))


def training(curves: pd.DataFrame, seed: int = 0):
    """The relative loss gap against simulated time, one seed: the approximate codes (left) and the best of them
    against the exact code of the same load and uncoded GD (right).

    Args:
        curves: :func:`gclib.studies.approximate.training.runs` (``scheme, seed, time, rel_gap``).
    """
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 3.0), sharey=True, layout="constrained")
    c = curves[curves["seed"] == seed]
    ends = c.groupby("scheme")["time"].max()
    exact = ends[ends.index.isin(("CRC (exact)", "uncoded"))]
    right = min(float(ends.max()), 3 * float(exact.max())) if len(exact) else float(ends.max())
    for ax, names, title in zip(axes, PANELS, ("approximate codes", "against exact and uncoded")):
        for name in names:
            g = c[c["scheme"] == name]
            ax.plot(g["time"], g["rel_gap"], lw=1.4, color=COLORS[name], label=name)
        ax.set_yscale("log")
        ax.set_xlim(0, right)
        ax.set_xlabel(time_label())
        ax.set_title(title)
        ax.legend()
    axes[0].set_ylabel("loss gap / initial gap")
    fig.suptitle(f"Gradient descent with the decoded gradients (seed {seed})")
    return fig
