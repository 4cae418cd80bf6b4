"""Figures of notebook 15, one column wide (3.5 in), every text 7 pt or more: one function per figure, each taking the
table the notebook saves beside it (:func:`curves`, :func:`timing`) and returning the matplotlib Figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from gclib.plotting import SINGLE, color
from gclib.stats import Estimate

#: Font sizes (points) of the axis labels and of the ticks, legends and notes.
LABEL, SMALL = 8, 7


def _colour(scheme: str, family: str):
    return color(family) or color(scheme.split()[0])


def curves(study) -> pd.DataFrame:
    """The table behind ``15_accuracy_vs_time``: every iteration of every comparison run, ``scheme, family, seed,
    iteration, wall`` (seconds of measured iterations so far) ``, accuracy`` (test accuracy after it)."""
    fam = dict(zip(study.schemes["scheme"], study.schemes["family"]))
    d = study.compared()[["scheme", "seed", "iteration", "wall", "accuracy"]].copy()
    d.insert(1, "family", d["scheme"].map(fam))
    return d.reset_index(drop=True)


def accuracy_vs_time(data: pd.DataFrame, target: float):
    """``15_accuracy_vs_time``: above, the test accuracy against the wall-clock time, per scheme (its mean time at
    each iteration over the seeds); below, each seed's time to ``target`` accuracy per scheme (dots, the same seed
    joined by grey lines) and their mean with its 95% Student-t interval."""
    fig, (ax, low) = plt.subplots(2, 1, figsize=(SINGLE, 4.4), gridspec_kw={"height_ratios": [1.3, 1]})
    schemes = list(dict.fromkeys(data["scheme"]))
    fam = dict(zip(data["scheme"], data["family"]))
    for sch in schemes:
        g = data[data["scheme"] == sch].groupby("iteration")[["wall", "accuracy"]].mean()
        ax.plot(g["wall"], g["accuracy"], lw=1.2, color=_colour(sch, fam[sch]), label=sch)
    ax.axhline(target, color="k", lw=0.7, ls="--", label=f"target {target:g}")
    ax.set_xlabel("wall-clock time (s)", fontsize=LABEL)
    ax.set_ylabel("test accuracy", fontsize=LABEL)
    ax.legend(fontsize=SMALL, loc="lower right")
    hits = [_hit(g, target) for _, g in data.groupby(["scheme", "seed"], sort=False)]
    t = pd.DataFrame(hits)
    w = t.pivot(index="seed", columns="scheme", values="wall")[schemes]
    for seed, row in w.iterrows():
        low.plot(row.to_numpy(), range(len(schemes)), color="0.75", lw=0.6, zorder=1)
    for i, sch in enumerate(schemes):
        vals = w[sch].to_numpy(dtype=float)
        low.scatter(vals, np.full(vals.size, i), s=10, color=_colour(sch, fam[sch]), zorder=2)
        e = Estimate.of(vals[np.isfinite(vals)])
        if e.known:
            low.errorbar([e.value], [i - 0.25], xerr=[[e.value - e.lo], [e.hi - e.value]], fmt="D", ms=3,
                         color=_colour(sch, fam[sch]), capsize=2, lw=1)
    low.set_yticks(range(len(schemes)), schemes, fontsize=SMALL)
    low.set_ylim(len(schemes) - 0.5, -0.6)
    low.set_xlabel(f"wall-clock time to accuracy {target:g} (s)", fontsize=LABEL)
    for a in (ax, low):
        a.tick_params(labelsize=SMALL)
    fig.tight_layout()
    return fig


def _hit(g: pd.DataFrame, target: float) -> dict:
    ok = g[g["accuracy"] >= target]
    return {"scheme": g["scheme"].iloc[0], "seed": g["seed"].iloc[0],
            "wall": float(ok["wall"].iloc[0]) if len(ok) else np.nan}


def timing(study) -> pd.DataFrame:
    """The table behind ``15_measured_vs_predicted``: every iteration of every run (the comparison's and those
    with a killed worker), ``scheme, family, kind, seed, iteration, predicted, time`` (seconds)."""
    fam = dict(zip(study.schemes["scheme"], study.schemes["family"]))
    d = study.timing()
    d.insert(1, "family", d["scheme"].map(fam))
    return d


def measured_vs_predicted(data: pd.DataFrame):
    """``15_measured_vs_predicted``: every iteration's time measured over MPI against the simulator's time for the
    same injected delays, one colour per scheme, circles for the comparison's runs and crosses for the runs with a
    killed worker; the diagonal dashed."""
    fig, ax = plt.subplots(figsize=(SINGLE, 3.0))
    ok = data[np.isfinite(data["predicted"]) & np.isfinite(data["time"])]
    for (sch, kind), g in ok.groupby(["scheme", "kind"], sort=False):
        killed = kind == "kill"
        ax.scatter(1e3 * g["predicted"], 1e3 * g["time"], s=9 if killed else 6, marker="x" if killed else "o",
                   lw=0.7 if killed else 0, alpha=0.7, color=_colour(sch, g["family"].iloc[0]),
                   label=f"{sch}, a worker killed" if killed else sch)
    both = 1e3 * ok[["predicted", "time"]].to_numpy(dtype=float)
    if both.size:
        lo, hi = float(both.min()), float(both.max())
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.7, ls="--", label="measured = predicted")
    ax.set_xlabel("simulated iteration time, same delays (ms)", fontsize=LABEL)
    ax.set_ylabel("measured over MPI (ms)", fontsize=LABEL)
    ax.tick_params(labelsize=SMALL)
    ax.legend(fontsize=SMALL, loc="upper left", markerscale=1.5)
    fig.tight_layout()
    return fig
