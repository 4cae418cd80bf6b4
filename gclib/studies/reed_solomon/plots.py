"""Figures of notebook 02 (Reed-Solomon gradient codes): one function per figure, taking its result table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from gclib.codes import COND_WARN
from gclib.plotting import DOUBLE

#: Colour of each family of evaluation points.
POINT_COLORS = {"equispaced": "#2ca02c", "chebyshev": "#1f77b4", "roots-of-unity": "#d62728"}


def conditioning(stab: pd.DataFrame, s_fracs, *, warn: float | None = None, tol: float = 1e-6):
    """Worst error amplification (top row), worst float64 (middle) and float32 (bottom) decoding error against
    ``n``, one column per straggler fraction: six lines a panel, the colour the evaluation points, solid for the
    spread assignment and dotted for the natural one.

    Args:
        stab: :func:`gclib.studies.reed_solomon.study.fraction_study` (``n, points, assign, s/n, worst_kappa,
            worst_error64, worst_error32``).
        s_fracs: the fractions, one panel column each.
        warn: the decoder's warning threshold (default ``gclib.codes.COND_WARN``); tol: the error line.
    Returns:
        the matplotlib Figure (``3 x len(s_fracs)`` axes).
    """
    warn = COND_WARN if warn is None else warn
    rows = [("worst_kappa", "worst condition\nnumber $\\kappa$", warn),
            ("worst_error64", "worst relative error\nfloat64", tol),
            ("worst_error32", "worst relative error\nfloat32", tol)]
    fig, axes = plt.subplots(len(rows), len(s_fracs), figsize=(DOUBLE, 7), sharex=True, sharey="row",
                             squeeze=False)
    for col, f in enumerate(s_fracs):
        sub = stab[stab["s/n"] == f]
        for (pts, assign), g in sub.groupby(["points", "assign"]):
            g = g.sort_values("n")
            ls = "-" if assign == "spread" else ":"
            for row, (y, _, _) in enumerate(rows):
                axes[row, col].plot(g["n"], g[y], ls, marker="o", ms=2.5, lw=1.2, color=POINT_COLORS[pts])
        for row, (_, _, line) in enumerate(rows):
            axes[row, col].axhline(line, color="k", lw=0.8, ls="--")
        axes[0, col].set_title(f"s = {f:g} n")
        axes[-1, col].set_xlabel("workers n")
    for ax in axes.ravel():
        ax.set_yscale("log")
    for row, (_, label, _) in enumerate(rows):
        axes[row, 0].set_ylabel(label)
    handles = [Line2D([], [], color=c, label=p) for p, c in POINT_COLORS.items()]
    handles += [Line2D([], [], color="0.3", ls="-", label="spread assignment"),
                Line2D([], [], color="0.3", ls=":", label="natural assignment"),
                Line2D([], [], color="k", lw=0.8, ls="--", label=f"warning {warn:g} / error {tol:g}")]
    fig.legend(handles=handles, loc="lower center", ncol=3, bbox_to_anchor=(0.5, -0.01))
    fig.suptitle("Reed-Solomon gradient codes: conditioning against n")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig
