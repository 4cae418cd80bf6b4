"""Figures of notebook 09 (checking ``gclib advise``): the fits' intervals against the truth, a measured trace
against its fitted models, and the advice's predictions against real runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from gclib.fit import samples
from gclib.plotting import DOUBLE, SINGLE, plain_log, plt
from gclib.timings import Timings

#: Repetitions drawn per panel of :func:`intervals` (the first ones; all of them count in the coverage).
SHOWN = 40
#: The colours of an interval that covers the true value and of one that misses it.
COVERS, MISSES = "tab:blue", "tab:red"


def intervals(rec: pd.DataFrame, shown: int = SHOWN):
    """One row of panels per generating model, one panel per parameter: the 95% interval of each of the first
    ``shown`` fits (one per simulated trace, stacked) divided by the true value (a vertical line at 1), blue when
    it covers the truth, red when it misses; the panel's title gives the coverage over every repetition. Two
    columns wide; the legend in the empty panel of a model with fewer parameters."""
    truths = list(dict.fromkeys(rec["truth"]))
    params = {t: list(dict.fromkeys(rec.loc[rec["truth"] == t, "parameter"])) for t in truths}
    cols = max(map(len, params.values()))
    fig, axes = plt.subplots(len(truths), cols, figsize=(DOUBLE, 1.45 * len(truths) + 0.5), squeeze=False,
                             layout="constrained")
    for row, truth in zip(axes, truths):
        for ax, p in zip(row, params[truth]):
            g = rec[(rec["truth"] == truth) & (rec["parameter"] == p)].sort_values("repeat")
            v = g.head(shown)
            y = np.arange(len(v))
            tv = v["true_value"].to_numpy()
            col = np.where(v["covered"], COVERS, MISSES)
            ax.hlines(y, v["lo"] / tv, v["hi"] / tv, colors=col, lw=0.9)
            ax.scatter(v["estimate"] / tv, y, c=col, s=4, zorder=3, lw=0)
            ax.axvline(1.0, color="k", lw=0.8)
            ax.set_title(f"{truth}, {p} = {tv[0]:g}: {int(g['covered'].sum())} of {len(g)} cover it")
            ax.xaxis.set_major_locator(MaxNLocator(4))
            ax.set_yticks([])
            ax.set_ylim(-1, len(v))
        for ax in row[len(params[truth]):]:
            ax.axis("off")
    for row in axes:
        row[0].set_ylabel(f"first {shown} fits")
    fig.supxlabel("estimate and its 95% interval, divided by the true value")
    spare = next((ax for row, t in zip(axes, truths) for ax in row[len(params[t]):]), None)
    handles = [Line2D([], [], color=COVERS, marker="o", ms=3, lw=0.9, label="the interval covers the true value"),
               Line2D([], [], color=MISSES, marker="o", ms=3, lw=0.9, label="it misses it")]
    if spare is not None:
        spare.legend(handles=handles, loc="center", title="each line: one simulated trace, fitted")
    else:
        fig.legend(handles=handles, loc="outside lower center", ncol=2)
    return fig


def trace_fit(trace: np.ndarray, report, time_scale_label: str = "s"):
    """Empirical distribution of the per-worker sample of a measured trace (the worker's mean task time per
    iteration) beside the fitted per-worker models' distribution functions; the goodness of fit in the legend.
    One column wide."""
    per_worker, _, _ = samples(Timings.from_array(np.asarray(trace, dtype=float)))
    x = np.sort(per_worker)
    fig, ax = plt.subplots(figsize=(SINGLE, 3.3), layout="constrained")
    ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color="k", lw=1.2, label="measured")
    grid = np.linspace(x.min() * 0.9, x.max() * 1.05, 400)
    for f in report.fits:
        if f.per_task:
            continue
        ax.plot(grid, f.cdf(grid), lw=1, label=f"{f.name}: KS {f.ks:.3f}, p {f.p_value:.2g}")
    ax.set_xlabel(f"a worker's mean task time in an iteration ({time_scale_label})")
    ax.set_ylabel("fraction of (iteration, worker)")
    ax.set_title("The measured trace and the fitted per-worker models")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=1,
               title="goodness of fit (Kolmogorov-Smirnov)")
    ax.grid(True, alpha=0.3)
    return fig


def _runs(ax, real: pd.DataFrame, series, band: str, rel: float, names=None) -> None:
    """Per real run (a row of ``real``, one line of the y axis): each of ``series`` (``(column, offset, marker
    face, colour, label)``: the column's value with its ``_lo``/``_hi`` or ``lo``/``hi`` interval) and the band of
    +/- ``rel`` around column ``band``; y tick labels the run's role (``names``) and design."""
    y = np.arange(len(real))
    for i, r in enumerate(real.itertuples()):
        c = getattr(r, band)
        ax.axvspan(c * (1 - rel), c * (1 + rel), ymin=(i + 0.12) / len(real), ymax=(i + 0.88) / len(real),
                   color="0.88", lw=0)
    for col, dy, face, c, lab in series:
        lo, hi = (real["lo"], real["hi"]) if col == "mean_time" else (real[f"{col}_lo"], real[f"{col}_hi"])
        ax.errorbar(real[col], y + dy, xerr=[real[col] - lo, hi - real[col]], fmt="o" if col == "mean_time" else
                    "s", ms=4, color=c, mfc=face or c, label=lab)
    if names is None:
        ax.set_yticks(y, [f"{r.role}:\n{r.label}" for r in real.itertuples()])
    else:  # the run's name written above its row, inside the panel: the panel keeps its width
        ax.set_yticks([])
        for i, r in enumerate(real.itertuples()):
            ax.annotate(f"{names.get(r.role, r.role)}: {r.label}", (0, i + 0.42), xycoords=("axes fraction", "data"),
                        xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    ax.set_ylim(-0.6, len(real) - 0.4)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")


def predicted_vs_real(real: pd.DataFrame, log: pd.DataFrame, rel: float):
    """Left: per real run (advised code, uncoded), the advice's predicted mean iteration time and the real mean
    with their 95% intervals, the band of +/- ``rel`` around the prediction shaded. Right: every real iteration's
    time against the simulator's time for its injected delays. Two columns wide."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(DOUBLE, 2.7), layout="constrained")
    _runs(a, real, [("predicted", 0.12, None, "tab:blue", "the advice's prediction"),
                    ("mean_time", -0.12, None, "tab:orange", "real runs (gclib run)")], "predicted", rel)
    a.set_xlabel("mean iteration time (s)")
    handles, labels = a.get_legend_handles_labels()
    a.legend(handles + [Patch(color="0.88")], labels + [f"prediction +/- {rel:.0%}"], loc="best")
    for role, g in log.groupby("role", sort=False):
        b.scatter(g["predicted"], g["time"], s=5, alpha=0.6, lw=0, label=f"{role}: {g['label'].iloc[0]}")
    lim = [0, float(np.nanmax(log[["predicted", "time"]].to_numpy())) * 1.05]
    b.plot(lim, lim, color="k", lw=0.8, label="real = simulated")
    b.set_xlim(lim)
    b.set_ylim(lim)
    b.set_xlabel("simulated time of its injected delays (s)")
    b.set_ylabel("real iteration time (s)")
    b.legend(loc="upper left", markerscale=2)
    b.grid(True, alpha=0.3)
    return fig


def network(real: pd.DataFrame, rel: float):
    """Per design run for real in the network case (:func:`gclib.studies.advise.study.network_case`): the
    advice's prediction without communication (open squares), its prediction with the measured network charged
    (filled squares) and the real mean iteration time (circles), each with its 95% interval; the band of +/- ``rel``
    around the charged prediction shaded; and, where the table has it (``link``), the time the measured network needs
    for every message the run sent (a cross). One column wide; the profile behind the charge is printed beside it in
    the notebook (:meth:`gclib.message_cost.NetworkProfile.text`)."""
    fig, ax = plt.subplots(figsize=(SINGLE, 0.8 * len(real) + 1.8), layout="constrained")
    names = {"free": "advised with messages free", "charged": "advised with the network charged",
             "both": "advised either way"}
    _runs(ax, real, [("free", 0.2, "white", "tab:blue", "advice, communication not charged"),
                     ("charged", 0.0, None, "tab:blue", "advice, measured network charged"),
                     ("mean_time", -0.2, None, "tab:orange", "real runs (gclib run)")], "charged", rel, names)
    if "link" in real:
        ax.scatter(real["link"], np.arange(len(real)) - 0.2, marker="x", s=20, lw=1, color="k", zorder=3,
                   label="the link's time for every message sent")
    plain_log(ax, "x")
    ax.set_xlabel("mean iteration time (s)")
    ax.set_ylim(-0.5, len(real) - 0.3)
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i].startswith("the link"))  # the estimates first
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    fig.legend(handles + [Patch(color="0.88")], labels + [f"charged prediction +/- {rel:.0%}"],
               loc="outside lower center", ncol=1)
    return fig
