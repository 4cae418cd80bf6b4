"""Figures of notebook 02 (Reed-Solomon gradient codes): one function per figure, taking its result table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

#: Colour of each family of evaluation points.
POINT_COLORS = {"equispaced": "#2ca02c", "chebyshev": "#1f77b4", "roots-of-unity": "#d62728"}


def conditioning(stab: pd.DataFrame, s_fracs, *, warn: float | None = None, tol: float = 1e-6):
    """Worst error amplification (top row) and worst float64 / float32 decoding error (bottom row) against ``n``,
    one column per straggler fraction; solid lines for the spread assignment, dotted for the natural one.

    Args:
        stab: :func:`gclib.stability.fraction_study` (``n, points, assign, s/n, worst_kappa, worst_error64,
            worst_error32``).
        s_fracs: the fractions, one panel column each.
        warn: the decoder's warning threshold (default ``gclib.codes.COND_WARN``); tol: the error line.
    Returns:
        the matplotlib Figure (``2 x len(s_fracs)`` axes).
    """
    from ..codes import COND_WARN

    warn = COND_WARN if warn is None else warn
    fig, axes = plt.subplots(2, len(s_fracs), figsize=(4.2 * len(s_fracs), 7), sharex=True, sharey="row",
                             squeeze=False)
    for col, f in enumerate(s_fracs):
        sub = stab[stab["s/n"] == f]
        for (pts, assign), g in sub.groupby(["points", "assign"]):
            g = g.sort_values("n")
            ls = "-" if assign == "spread" else ":"
            c = POINT_COLORS[pts]
            axes[0, col].plot(g["n"], g["worst_kappa"], ls, marker="o", ms=3, color=c, label=f"{pts}, {assign}")
            axes[1, col].plot(g["n"], g["worst_error64"], ls, marker="o", ms=3, color=c)
            axes[1, col].plot(g["n"], g["worst_error32"], ls, marker="x", ms=3, color=c, alpha=0.45)
        axes[0, col].axhline(warn, color="k", lw=0.8, ls="--")
        axes[1, col].axhline(tol, color="k", lw=0.8, ls="--")
        axes[0, col].set_title(f"s = {f:g} n")
        axes[1, col].set_xlabel("workers n")
    for ax in axes.ravel():
        ax.set_yscale("log")
    axes[0, 0].set_ylabel("worst condition number $\\kappa$")
    axes[1, 0].set_ylabel("worst relative error\n(o float64, x float32)")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Reed-Solomon gradient codes: conditioning against n", y=1.0)
    fig.tight_layout()
    return fig
