"""The figures of notebook 06 (lazy aggregation): one function per figure, each taking a result table of
:mod:`gclib.studies.lazy_aggregation.study` and returning the matplotlib Figure (the notebook saves it with
:func:`gclib.plotting.save`, the table beside it).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from gclib.studies.lazy_aggregation.study import ORDER
from gclib.plotting import DOUBLE, PALETTE, plain_log, time_label

#: One colour per scheme of notebook 06: one hue per scheme, dark for the worker-side trigger, light for the
#: server side.
COLORS = {**PALETTE, "gc": PALETTE["crc"], "grouping": "#17becf", "lag-wk": PALETTE["lag"], "lag-ps": "#6baed6",
          "lagc-wk": "#9467bd", "lagc-ps": "#c5b0d5", "g-lag-wk": PALETTE["g-lag"], "g-lag-ps": "#98df8a",
          "lag-ps-chen": "#6baed6", "g-lag-ps-chen": "#98df8a"}
#: Line style per warm-up of the LAG check (``"none"``: GD).
STYLES = {"none": "-", "silent": "-", "upload": "--"}


def _style(name: str) -> str:
    """Solid for schemes without a trigger and the worker side, dashed for the server side."""
    return "--" if "-ps" in name else "-"


def _need(df: pd.DataFrame, columns, what: str):
    missing = [c for c in columns if c not in df]
    if missing:
        raise ValueError(f"{what} needs the columns {list(columns)}; missing {missing}")


def lag_check(curves: pd.DataFrame):
    """Loss gap against iterations and against uploads, one line per (scheme, warm-up).

    Args:
        curves: one row per iterate with ``scheme, warmup, iteration, gap, uploads`` (the curves of
            :func:`gclib.studies.lazy_aggregation.study.lag_check`). Chen et al.'s warm-up is solid, ours dashed.
    """
    _need(curves, ("scheme", "warmup", "iteration", "gap", "uploads"), "lag_check")
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 2.9), layout="constrained")
    for (name, warm), g in curves.groupby(["scheme", "warmup"], sort=False):
        label = name if warm != "upload" else f"{name}, every worker uploads in the warm-up"
        kw = dict(label=label, color=COLORS.get(name), ls=STYLES.get(warm, "-"))
        axes[0].semilogy(g.iteration, g.gap, **kw)
        axes[1].semilogy(g.uploads, g.gap, **kw)
    axes[0].set(xlabel="iteration", ylabel="loss gap", title="LAG problem, 9 workers: against iterations")
    axes[1].set(xlabel="uploads", ylabel="loss gap", title="against communication")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


def bars(data: pd.DataFrame, title: str, target: float):
    """Fig. 2 / Fig. 3: median time, uploads and computations to ``target`` per scheme, quartiles as error bars;
    a panel per metric, a horizontal bar per scheme (named once, on the left). Two columns wide.

    Args:
        data: :func:`gclib.studies.lazy_aggregation.study.bar_data` (``metric, scheme, median, q25, q75``).
    """
    _need(data, ("metric", "scheme", "median", "q25", "q75"), "bars")
    metrics = list(dict.fromkeys(data.metric))
    schemes = list(dict.fromkeys(data.scheme))
    fig, axes = plt.subplots(1, len(metrics), figsize=(DOUBLE, 0.15 * len(schemes) + 1.3), layout="constrained",
                             squeeze=False, sharey=True)
    for ax, metric in zip(axes[0], metrics):
        s = data[data.metric == metric].set_index("scheme").reindex(schemes)
        y = np.arange(len(s))
        ax.barh(y, s["median"], color=[COLORS.get(k) for k in s.index], height=0.75)
        ax.errorbar(s["median"], y, xerr=[s["median"] - s["q25"], s["q75"] - s["median"]], fmt="none",
                    ecolor="black", lw=0.8)
        ax.set_yticks(y, list(s.index))
        ax.set_ylim(len(s) - 0.5, -0.5)
        ax.set_xlabel(time_label("simulated time") if metric == "time" else metric)
        ax.set_title(f"{metric} to gap {target:g}")
        ax.grid(False, axis="y")
    fig.suptitle(title)
    return fig


def gap_curves(curves: pd.DataFrame, target: float):
    """Loss gap against simulated time, uploads and computations, one line per scheme (one model, one seed).

    Args:
        curves: one row per iterate with ``model, scheme, gap, time, uploads, computations`` for one model.
    """
    _need(curves, ("model", "scheme", "gap", "time", "uploads", "computations"), "gap_curves")
    fig, axes = plt.subplots(1, 3, figsize=(DOUBLE, 3.1), sharey=True, layout="constrained")
    for name in [k for k in ORDER if k in set(curves.scheme)]:
        g = curves[curves.scheme == name]
        for ax, metric in zip(axes, ("time", "uploads", "computations")):
            ax.semilogy(g[metric], g["gap"], label=name, color=COLORS[name], ls=_style(name))
    for ax, metric in zip(axes, (time_label("simulated time"), "uploads", "partial-gradient computations")):
        ax.set_xlabel(metric)
        ax.axhline(target, color="grey", ls=":", lw=1)
    axes[0].set_ylabel("loss gap")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=7)
    fig.suptitle(f"loss gap, {', '.join(dict.fromkeys(curves.model))} (server-side trigger dashed; dotted: the "
                 f"target)")
    return fig


def shapes(times: pd.DataFrame, target: float):
    """Median time to ``target`` (quartiles shaded) against the Pareto shape, one line per scheme.

    Args:
        times: :func:`gclib.studies.lazy_aggregation.study.spread` of ``time`` (``model, scheme, median, q25, q75,
            runs``); the rows of models ``"pareto <shape>"`` are drawn.
    """
    _need(times, ("model", "scheme", "median", "q25", "q75", "runs"), "shapes")
    heavy = times[times.model.str.startswith("pareto ")]
    fig, ax = plt.subplots(figsize=(DOUBLE, 2.9), layout="constrained")
    for name in [k for k in ORDER if k in set(heavy.scheme)]:
        g = heavy[heavy.scheme == name]
        a = g.model.str.split().str[1].astype(float)
        ax.plot(a, g["median"], marker="o", color=COLORS[name], label=name, ls=_style(name))
        ax.fill_between(a, g["q25"], g["q75"], color=COLORS[name], alpha=0.15, lw=0)
    ax.set(xlabel="Pareto shape (smaller = heavier tail; mean 1)", ylabel=time_label(f"time to gap {target:g}"),
           yscale="log", title=f"median and quartiles over {int(times['runs'].max())} seeds (server-side trigger "
                               f"dashed)")
    plain_log(ax)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right center", ncol=1)
    return fig


def family(totals: pd.DataFrame):
    """Iterations to the target relative to GD's on the same problem, per scheme, over a family of problems (one
    dot per problem, model and seed); runs that did not converge are drawn at the top, as crosses.

    Args:
        totals: :attr:`gclib.studies.lazy_aggregation.study.Robustness.totals` (``problem, model, scheme, seed,
            status, iterations``).
    """
    _need(totals, ("problem", "model", "scheme", "seed", "status", "iterations"), "family")
    gd = totals[totals.scheme == "gd"].groupby("problem")["iterations"].max()
    names = list(dict.fromkeys(totals.scheme))
    fig, ax = plt.subplots(figsize=(DOUBLE, 2.9), layout="constrained")
    rel = totals["iterations"] / totals["problem"].map(gd)
    ok = totals["status"] == "converged"
    top = float(np.nanmax(rel[ok])) * 2 if ok.any() else 10.0
    rng = np.random.default_rng(0)  # horizontal jitter only, so that dots do not hide each other
    for i, name in enumerate(names):
        m = totals.scheme == name
        x = i + rng.uniform(-0.25, 0.25, int(m.sum()))
        conv = ok[m].to_numpy()
        ax.scatter(x[conv], rel[m][conv], s=12, color=COLORS.get(name), alpha=0.7)
        if (~conv).any():
            ax.scatter(x[~conv], np.full(int((~conv).sum()), top), marker="x", s=30, color="black")
    ax.axhline(top, color="grey", lw=0.8, ls=":")
    ax.text(-0.4, top, "x: did not converge (diverged or ran out of iterations)", ha="left", va="bottom")
    ax.set_xticks(range(len(names)), names, rotation=35, ha="right")
    ax.set(yscale="log", ylabel="iterations / GD's iterations", ylim=(None, top * 1.6),
           title=f"{totals.problem.nunique()} generic problems: iterations to the target")
    plain_log(ax)
    return fig
