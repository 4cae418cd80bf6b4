"""Figures of notebook 08 (gradient coding at scale): completion time, coding gain over uncoded and messages per
worker against the number of workers ``K``, one panel per model and setting
(:func:`gclib.studies.scale.study.study`)."""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from gclib.plotting import DOUBLE, PALETTE, plain_log, time_label

#: Palette key of each scheme of the study.
COLORS = {"uncoded": "uncoded", "GC": "gc", "FRC": "frc", "LCC": "lcc", "UC-MMC": "uc-mmc", "GC-MMC": "gc-mmc-1"}
SETTING_TITLES = {"load fraction": "load a fixed fraction of K", "cluster size": "fixed load, GC-MMC in fixed clusters"}


def _grid(t: pd.DataFrame, ylabel: str, *, logy: bool):
    """A figure with one panel per model (rows) and setting (columns): ``(fig, [(ax, rows of t), ...])``."""
    models = list(dict.fromkeys(t["model"]))
    settings = list(dict.fromkeys(t["setting"]))
    fig, axes = plt.subplots(len(models), len(settings), figsize=(DOUBLE, 2.9 * len(models) + 1.0),
                             squeeze=False, sharex=True, layout="constrained")
    panels = []
    for i, model in enumerate(models):
        for j, setting in enumerate(settings):
            ax = axes[i, j]
            plain_log(ax, "x", subs=(1.0,))
            if logy:
                plain_log(ax)
            ax.set_title(f"{SETTING_TITLES.get(setting, setting)}\n{model}")
            ax.set_xlabel("workers K" if i == len(models) - 1 else "")
            panels.append((ax, t[(t["model"] == model) & (t["setting"] == setting)]))
    fig.supylabel(ylabel)
    return fig, panels


def _finish(fig, panels) -> plt.Figure:
    """One legend for the figure (every label once) below the panels, and a note naming the curves that stop
    before a panel's largest ``K`` (points the study did not simulate: :func:`gclib.studies.scale.study.plan` says
    why)."""
    seen, stops = {}, {}
    for ax, g in panels:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
        if len(g):
            top = g["K"].max()
            for scheme, s in g.groupby("scheme", sort=False):
                if s["K"].max() < top:
                    stops.setdefault((scheme, int(s["K"].max())), set()).add(g["setting"].iloc[0])
    title = None
    if stops:
        by: dict = {}
        for (scheme, k), where in stops.items():
            by.setdefault((k, tuple(sorted(SETTING_TITLES.get(x, x) for x in where))), []).append(scheme)
        text = "; ".join(f"{' and '.join(schemes)} end at K = {k} ({', '.join(where)}): too many messages to "
                         f"simulate beyond" for (k, where), schemes in by.items())
        title = "\n".join(textwrap.wrap(text, 90))
    fig.legend(list(seen.values()), list(seen.keys()), loc="outside lower center", ncol=min(4, max(1, len(seen))),
               title=title)
    return fig


def _lines(ax, g, y, lo=None, hi=None):
    for scheme, s in g.groupby("scheme", sort=False):
        s = s.sort_values("K")
        c = PALETTE.get(COLORS.get(scheme, ""), None)
        ax.plot(s["K"], s[y], marker="o", ms=3.5, color=c, label=scheme)
        if lo is not None:
            ax.fill_between(s["K"], s[lo], s[hi], color=c, alpha=0.2, lw=0)


def completion_time(t: pd.DataFrame) -> plt.Figure:
    """Mean completion time (95% band) against ``K``, log-log, with the closed forms of the order statistics as
    black crosses where they exist."""
    fig, panels = _grid(t, time_label("mean completion time E[T]"), logy=True)
    for ax, g in panels:
        g = g.assign(lo=g["mean_time"] - g["ci95_time"], hi=g["mean_time"] + g["ci95_time"])
        _lines(ax, g, "mean_time", "lo", "hi")
        cf = g.dropna(subset=["closed_form_time"])
        cf = cf[np.isfinite(cf["closed_form_time"].astype(float))]
        ax.plot(cf["K"], cf["closed_form_time"].astype(float), "x", color="black", ms=6, label="closed form")
    return _finish(fig, panels)


def gain(t: pd.DataFrame) -> plt.Figure:
    """Coding gain ``E[T_uncoded] / E[T]`` against ``K`` with its paired 95% band; the dashed line is uncoded."""
    fig, panels = _grid(t, "gain over uncoded", logy=True)
    for ax, g in panels:
        _lines(ax, g[g["scheme"] != "uncoded"], "gain", "gain_lo", "gain_hi")
        ax.axhline(1.0, color=PALETTE["uncoded"], ls="--", lw=1, label="uncoded (gain 1)")
    return _finish(fig, panels)


def messages(t: pd.DataFrame) -> plt.Figure:
    """Mean messages received until completion, per worker, against ``K``."""
    fig, panels = _grid(t, "messages per worker until completion", logy=False)
    for ax, g in panels:
        _lines(ax, g, "messages_per_worker")
    return _finish(fig, panels)
