"""Figures of notebook 09 (checking ``gclib advise``): the fits' intervals against the truth, a measured trace
against its fitted models, and the advice's predictions against real runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from gclib.fit import samples
from gclib.plotting import DOUBLE, plain_log, plt
from gclib.timings import Timings

#: Repetitions drawn per panel of :func:`intervals` (the first ones; all of them count in the coverage).
SHOWN = 40


def intervals(rec: pd.DataFrame, shown: int = SHOWN):
    """One panel per (generating model, parameter): the 95% interval of every shown repetition divided by the true
    value (a vertical line at 1), blue when it covers the truth, red when it misses; the title gives the coverage
    over every repetition."""
    keys = list(dict.fromkeys(zip(rec["truth"], rec["parameter"])))

    fig, axes = plt.subplots(1, len(keys), figsize=(DOUBLE, 3.0), sharey=True, squeeze=False)
    for ax, (truth, p) in zip(axes[0], keys):
        g = rec[(rec["truth"] == truth) & (rec["parameter"] == p)].sort_values("repeat")
        v = g.head(shown)
        y = np.arange(len(v))
        tv = v["true_value"].to_numpy()
        col = np.where(v["covered"], "tab:blue", "tab:red")
        ax.hlines(y, v["lo"] / tv, v["hi"] / tv, colors=col, lw=1)
        ax.scatter(v["estimate"] / tv, y, c=col, s=6, zorder=3)
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_title(f"{truth}\n{p}: covered {int(g['covered'].sum())}/{len(g)}", fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(3))
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_ylabel("repetition")
    fig.supxlabel("estimate and 95% interval divided by the true value (blue: covers it, red: misses)", fontsize=8)
    fig.tight_layout()
    return fig


def trace_fit(trace: np.ndarray, report, time_scale_label: str = "s"):
    """Empirical distribution of the per-worker sample of a measured trace (the worker's mean task time per
    iteration) beside the fitted per-worker models' distribution functions; the goodness of fit in the legend."""
    per_worker, _, _ = samples(Timings.from_array(np.asarray(trace, dtype=float)))
    x = np.sort(per_worker)
    fig, ax = plt.subplots(figsize=(DOUBLE * 0.62, 3.6), layout="constrained")
    ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color="k", lw=1.4, label="measured")
    grid = np.linspace(x.min() * 0.9, x.max() * 1.05, 400)
    for f in report.fits:
        if f.per_task:
            continue
        ax.plot(grid, f.cdf(grid), lw=1.2, label=f"{f.name}: KS {f.ks:.3f}, p {f.p_value:.2g}")
    ax.set_xlabel(f"a worker's mean task time in an iteration ({time_scale_label})")
    ax.set_ylabel("fraction of (iteration, worker)")
    ax.set_title("measured trace against the fitted per-worker models", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1,
              title="goodness of fit (Kolmogorov-Smirnov)", title_fontsize=8)
    ax.grid(True, alpha=0.3)
    return fig


def predicted_vs_real(real: pd.DataFrame, log: pd.DataFrame, rel: float):
    """Left: per real run (advised code, uncoded), the advice's predicted mean iteration time and the real mean
    with their 95% intervals, the band of +/- ``rel`` around the prediction shaded. Right: every real iteration's
    time against the simulator's time for its injected delays."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(DOUBLE, 3.1))
    y = np.arange(len(real))
    for i, r in enumerate(real.itertuples()):
        a.axvspan(r.predicted * (1 - rel), r.predicted * (1 + rel), ymin=(i + 0.1) / len(real),
                  ymax=(i + 0.9) / len(real), color="0.85", lw=0)
    a.errorbar(real["predicted"], y + 0.12, xerr=[real["predicted"] - real["predicted_lo"],
                                                  real["predicted_hi"] - real["predicted"]],
               fmt="s", ms=4, color="tab:blue", label="advice's prediction")
    a.errorbar(real["mean_time"], y - 0.12, xerr=[real["mean_time"] - real["lo"], real["hi"] - real["mean_time"]],
               fmt="o", ms=4, color="tab:orange", label="real runs (gclib run)")
    a.set_yticks(y, [f"{r.role}:\n{r.label}" for r in real.itertuples()], fontsize=8)
    a.set_ylim(-0.5, len(real) - 0.5)
    a.set_xlabel("mean iteration time (s)")
    handles, labels = a.get_legend_handles_labels()
    a.legend(handles + [Patch(color="0.85")], labels + [f"prediction +/- {rel:.0%}"], fontsize=8, loc="best")
    a.grid(True, axis="x", alpha=0.3)
    for role, g in log.groupby("role", sort=False):
        b.scatter(g["predicted"], g["time"], s=6, alpha=0.6, label=f"{role}: {g['label'].iloc[0]}")
    lim = [0, float(np.nanmax(log[["predicted", "time"]].to_numpy())) * 1.05]
    b.plot(lim, lim, color="k", lw=0.8)
    b.set_xlim(lim)
    b.set_ylim(lim)
    b.set_xlabel("simulated time of its injected delays (s)")
    b.set_ylabel("real iteration time (s)")
    b.legend(fontsize=8, loc="upper left")
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def network(real: pd.DataFrame, profile, rel: float):
    """Left: per design run for real in the network case (:func:`gclib.studies.advise.calibration.network_case`), the
    advice's
    prediction without communication, its prediction with the measured network charged, and the real mean
    iteration time, each with its 95% interval, and the time the measured network needs for every message the
    run sent (``link``, where the table has it); the band of +/- ``rel`` around the charged prediction shaded.
    Right: what ``gclib profile`` measured of a message (:class:`gclib.network.NetworkProfile`): the master's
    time per message in every flood against the message's bytes, with the fitted ``overhead + bytes /
    bandwidth``, and half of every round trip."""

    fig, (a, b) = plt.subplots(1, 2, figsize=(DOUBLE, 3.9))
    y = np.arange(len(real))
    for i, r in enumerate(real.itertuples()):
        a.axvspan(r.charged * (1 - rel), r.charged * (1 + rel), ymin=(i + 0.1) / len(real),
                  ymax=(i + 0.9) / len(real), color="0.88", lw=0)
    for col, dy, mk, c, lab in (("free", 0.2, "^", "tab:gray", "advice, communication not charged"),
                                ("charged", 0.0, "s", "tab:blue", "advice, measured network charged")):
        a.errorbar(real[col], y + dy, xerr=[real[col] - real[f"{col}_lo"], real[f"{col}_hi"] - real[col]],
                   fmt=mk, ms=4, color=c, label=lab)
    a.errorbar(real["mean_time"], y - 0.2, xerr=[real["mean_time"] - real["lo"], real["hi"] - real["mean_time"]],
               fmt="o", ms=4, color="tab:orange", label="real runs (gclib run)")
    if "link" in real:
        a.scatter(real["link"], y - 0.2, marker="|", s=120, color="k", zorder=3,
                  label="the link's time for every message sent")
    names = {"free": "advised without\ncommunication", "charged": "advised with\nthe network",
             "both": "advised by\nboth"}
    a.set_yticks(y, [f"{names[r.role]}:\n{r.label}" for r in real.itertuples()], fontsize=7)
    a.set_ylim(-0.6, len(real) - 0.4)
    a.set_xlabel("mean iteration time (s)")
    handles, labels = a.get_legend_handles_labels()
    a.legend(handles + [Patch(color="0.88")], labels + [f"charged prediction +/- {rel:.0%}"], fontsize=6.5,
             loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    a.grid(True, axis="x", alpha=0.3)
    fl = np.array(profile.flood, dtype=float).reshape(-1, 4)
    ok = fl[:, 1] >= 2
    gap = (fl[ok, 3] - fl[ok, 2]) / (fl[ok, 1] - 1)
    b.scatter(fl[ok, 0], 1e6 * gap, s=10, color="tab:blue", label="master's time per message (floods)")
    pg = np.array(profile.ping, dtype=float).reshape(-1, 3)
    b.scatter(pg[:, 0], 1e6 * pg[:, 2] / 2, s=4, alpha=0.35, color="tab:green", label="half a round trip (pings)")
    xs = np.geomspace(max(1.0, fl[:, 0].min()), fl[:, 0].max(), 100)
    b.plot(xs, 1e6 * (profile.overhead + xs / profile.bandwidth), color="k", lw=1,
           label="fitted: overhead + bytes / bandwidth")
    b.set_xscale("log")
    b.set_yscale("log")
    plain_log(b, "y")
    b.set_xlabel("message (bytes)")
    b.set_ylabel("microseconds")
    b.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)
    b.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig
