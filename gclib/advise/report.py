"""What a person reads of an advice (:mod:`gclib.advise`): the ranked table with uncoded, the design to beat, always
in it; what one iteration is in the terms of the trace the models were fitted to; the warning when messages cost
nothing and the recommendation receives more of them than uncoded; the sentence on the slowest worker's part in the
saving; and the figure of the front of time against communication, uncoded marked.

Every function reads an :class:`gclib.advise.Advice` (or its ``ranked`` table and ``settings``) and returns text,
numbers or a figure; nothing here simulates.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter, ScalarFormatter

from gclib.design import pareto_front
from gclib.plotting import DOUBLE, DPI, plt

#: The baseline every design is compared with (its label in the advice's tables).
UNCODED = "uncoded"
#: The columns of the ranked table in text: ``(heading, width)``.
TEXT_COLUMNS = [("#", 3), ("design", 26), ("time (95% CI)", 20), ("speed-up (95% CI)", 20), ("msgs", 7),
                ("grads", 6), ("load", 4), ("digits", 6), ("worst", 6), ("best", 5), ("fits", 4)]


def _fmt(v, spec: str) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def shown_rows(ranked: pd.DataFrame, rows: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first ``rows`` rows of ``ranked``, and uncoded's row when it is not among them (empty otherwise)."""
    top = ranked.head(rows)
    base = ranked[ranked["label"] == UNCODED]
    return top, base if UNCODED not in set(top["label"]) else base.iloc[0:0]


def table_text(ranked: pd.DataFrame, n_models: int, rows: int) -> list[str]:
    """The ranked table's first ``rows`` rows in text, then uncoded's (after ``...``) when it ranks lower."""
    def line(r) -> str:
        time = f"{_fmt(r.mean_time, '.4g')} +/- {_fmt(r.ci95_time, '.2g')}"
        sp = f"{_fmt(r.speedup, '.3g')} ({_fmt(r.speedup_lo, '.3g')}-{_fmt(r.speedup_hi, '.3g')})"
        vals = [str(r.rank), r.label, time, sp, _fmt(r.messages, ".4g"), _fmt(r.gradient_units, ".3g"),
                str(r.load), _fmt(r.digits, ".1f"), _fmt(r.worst_ratio, ".3g"), f"{r.best_under}/{n_models}",
                "yes" if r.feasible else "no"]
        return "  ".join(v.ljust(w) for v, (_, w) in zip(vals, TEXT_COLUMNS)).rstrip()

    top, base = shown_rows(ranked, rows)
    out = ["  ".join(n.ljust(w) for n, w in TEXT_COLUMNS).rstrip()] + [line(r) for r in top.itertuples()]
    if len(base):
        out += ["...", line(next(base.itertuples())) + "   <- uncoded, the design to beat"]
    return out


# ---------------------------------------------------------------------------------------------- free messages
def free_messages(advice) -> dict | None:
    """When messages cost nothing in ``advice`` (no network charged) and its recommendation receives more of them
    per iteration than uncoded: the numbers of :func:`free_messages_text` (``None`` otherwise).

    Returns:
        ``best``, ``best_messages``, ``uncoded_messages``, ``saving`` (uncoded's mean time minus the
        recommendation's, per iteration), ``break_even`` (``saving`` per extra message: the cost of a message at
        the master above which the saving is gone, were the extra messages taken in one after another),
        ``frugal`` (the fastest runnable design that receives at most uncoded's messages: its row as a dict, or
        ``None``).
    """
    s, b = advice.settings, advice.best
    if s.get("network") is not None or b is None or b["label"] == UNCODED:
        return None
    r = advice.ranked
    base = r[r["label"] == UNCODED]
    if base.empty:
        return None
    u = base.iloc[0]
    extra = float(b["messages"]) - float(u["messages"])
    if not extra > 0:
        return None
    saving = float(u["mean_time"]) - float(b["mean_time"])
    ok = r[r["runnable"].astype(bool) & r["feasible"].astype(bool) & np.isfinite(r["mean_time"])
           & (r["messages"] <= u["messages"])]
    return {"best": b["label"], "best_messages": float(b["messages"]), "uncoded_messages": float(u["messages"]),
            "saving": saving, "break_even": saving / extra,
            "frugal": None if ok.empty else ok.iloc[0][["label", "mean_time", "speedup", "messages"]].to_dict()}


def free_messages_text(advice) -> str | None:
    """The warning of :func:`free_messages` in words (``None`` when there is none)."""
    f = free_messages(advice)
    if f is None:
        return None
    unit = advice.settings.get("unit", "model time units")
    text = (f"messages cost nothing in this ranking (no --network): the recommendation, {f['best']}, receives "
            f"{f['best_messages']:.3g} messages per iteration against uncoded's {f['uncoded_messages']:.3g}, and its "
            f"saving of {f['saving']:.3g} {unit} per iteration is gone once each extra message costs the master "
            f"more than about {f['break_even']:.2g} {unit}")
    g = f["frugal"]
    if g is not None and g["label"] == UNCODED:
        text += "; no design that receives no more messages than uncoded is faster than it"
    elif g is not None:
        text += (f"; the fastest design that receives no more messages than uncoded is {g['label']} "
                 f"({g['mean_time']:.4g} {unit}, {g['speedup']:.3g}x uncoded's speed)")
    return (text + ". Measure what a message costs (gclib profile writes it beside its trace as "
            "TRACE.network.json) and give it with --network.")


# ---------------------------------------------------------------------------------------------- an iteration
def iteration_numbers(durations: np.ndarray, advice) -> dict:
    """What one iteration of ``advice`` is in the terms of the trace ``durations`` ``(iterations, workers,
    tasks)`` its models were fitted to: ``tasks`` (per worker and iteration of the trace), ``trace_iteration`` (the
    trace's mean iteration time: the slowest worker's sum of its tasks, iterations with a task not observed left
    out; NaN when none is whole), ``uncoded`` (the advice's predicted uncoded iteration, one task per worker) and
    ``uncoded_tasks`` (``tasks`` of them in a row)."""
    d = np.asarray(durations, dtype=float)
    whole = np.isfinite(d).all(axis=(1, 2))
    step = float(np.mean(d[whole].sum(axis=2).max(axis=1))) if whole.any() else math.nan
    r = advice.ranked
    base = r[r["label"] == UNCODED]
    unc = float(base.iloc[0]["mean_time"]) if len(base) else math.nan
    return {"tasks": int(d.shape[2]), "trace_iteration": step, "uncoded": unc, "uncoded_tasks": d.shape[2] * unc}


def iteration_text(n: dict, advice) -> str:
    """:func:`iteration_numbers` in words."""
    K, R = advice.settings["K"], advice.settings["max_load"]
    unit = advice.settings.get("unit", "model time units")
    text = (f"One iteration here: one gradient over {K} data parts, each as long to compute as one task of the trace "
            f"(one of its rows: for a per-operation trace, a microbatch of a replica), at most {R} parts per worker; "
            f"uncoded computes one part per worker.")
    if n["tasks"] > 1 and math.isfinite(n["trace_iteration"]):
        k = n["tasks"]
        text += (f" An iteration of the trace ran {k} tasks per worker, the data of {k} iterations here: it took "
                 f"{n['trace_iteration']:.4g} {unit} on average (its slowest worker's sum), and {k} uncoded iterations "
                 f"are predicted to take {k} x {n['uncoded']:.4g} = {n['uncoded_tasks']:.4g} {unit}")
        ratio = n["uncoded_tasks"] / n["trace_iteration"]
        text += (f", {ratio:.3g} times as long: they wait for their slowest worker {k} times, the trace's iteration "
                 f"once." if ratio > 1.05 else ", about as long.")
    return text


# ---------------------------------------------------------------------------------------------- the slowest worker
def _apart(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with the fewest significant digits (3 at least, 8 at most) that tell them apart."""
    for p in range(3, 9):
        x, y = format(a, f"#.{p}g"), format(b, f"#.{p}g")
        if x != y:
            return x, y
    return x, y


def reliance_text(r: dict) -> str:
    """One sentence from :func:`gclib.advise.reliance`: how much of the predicted saving rests on the slowest
    worker, with the two speed-ups written so that they differ."""
    who = (f"worker {r['worker']} (the slowest in {100 * r['share_slowest']:.0f}% of iterations, {r['ratio']:.3g}x the "
           f"median worker's pace)")
    sp, sw = _apart(r["speedup"], r["speedup_without"])
    share = r["share"]
    if math.isnan(share):
        return (f"No predicted saving over uncoded; with {who} at the median pace, the speed-up would be "
                f"{r['speedup_without']:.3g}.")
    if round(100 * share) <= 0:
        more = " (higher: that worker slows the recommendation more than uncoded)" if share < 0 else ""
        return (f"None of the predicted saving rests on {who}: with that worker at the median pace the speed-up "
                f"would be {sw} rather than {sp}{more}.")
    if share >= 1:
        return (f"All of the predicted saving rests on {who}: with that worker at the median pace the speed-up "
                f"{sp} would be {sw}.")
    return (f"{100 * share:.0f}% of the predicted saving rests on {who}: with that worker at the median pace the "
            f"speed-up {sp} would be {sw}.")


# ---------------------------------------------------------------------------------------------- the figure
def plot(advice, path=None):
    """The front of expected time against communication per model (left: messages per iteration; right:
    gradient-length units per iteration), every design a faint point, uncoded marked on each model's front and the
    recommendation circled. Two columns wide (:data:`gclib.plotting.DOUBLE`). Writes ``path`` (PNG) when given,
    and returns the figure."""
    t = advice.table
    s = advice.settings
    models = list(dict.fromkeys(t["model"]))
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 3.4), sharey=True, layout="constrained")
    markers = "osD^vP*X<>"
    for ax, x, xl in zip(axes, ("messages", "gradient_units"),
                         ("messages received per iteration", "gradient-length vectors received per iteration")):
        for i, name in enumerate(models):
            g = t[(t["model"] == name) & np.isfinite(t["mean_time"])]
            pts = ax.scatter(g[x], g["mean_time"], s=6, alpha=0.25, marker=markers[i % len(markers)], lw=0)
            f = pareto_front(g, x, "mean_time")
            ax.plot(f[x], f["mean_time"], marker=markers[i % len(markers)], ms=3, lw=1,
                    color=pts.get_facecolor()[0][:3], label=name)
        u = t[t["label"] == UNCODED]
        ax.scatter(u[x], u["mean_time"], s=40, marker="x", color="k", lw=1.2, zorder=6,
                   label="uncoded (the design to beat)" if ax is axes[0] else None)
        if advice.best is not None:
            b = t[(t["model"] == s["primary"]) & (t["label"] == advice.best["label"])]
            ax.scatter(b[x], b["mean_time"], s=90, facecolors="none", edgecolors="k", lw=1.2, zorder=5,
                       label=f"recommended: {advice.best['label']}" if ax is axes[0] else None)
        ax.set_xlabel(xl)
        _scales(ax, t, x)
    unit = s.get("unit", "model time units")
    axes[0].set_ylabel(f"expected iteration time ({unit})")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=min(3, len(models) + 2))
    fig.suptitle(f"K = {s['K']} workers, load <= {s['max_load']}: time against communication, the front per model")
    if path is not None:
        fig.savefig(path, dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return fig


def _scales(ax, t: pd.DataFrame, x: str) -> None:
    """Log axes where the values span more than a factor of 20, plain tick labels, a grid."""
    xs = t[x][np.isfinite(t["mean_time"]) & (t[x] > 0)]
    if len(xs) and xs.max() > 20 * xs.min():
        ax.set_xscale("log")
    ys = t["mean_time"][np.isfinite(t["mean_time"]) & (t["mean_time"] > 0)]
    if len(ys) and ys.max() > 20 * ys.min():
        ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="both", alpha=0.3)

