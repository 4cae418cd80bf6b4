"""One seaborn theme and the few figure helpers the notebooks share.

Every figure is saved with the data behind it: ``save(fig, data, name, figures_dir)`` writes ``name.png`` and
``name.csv`` side by side, and the CSV is written with fixed float formatting so that the same seed gives the same
bytes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import matplotlib
from matplotlib import ticker

# Scripts and tests draw off-screen; inside a Jupyter kernel keep the kernel's (inline) backend, or figures would
# not show in JupyterLab nor in the executed notebooks.
if "ipykernel" not in sys.modules:
    matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

#: One colour per scheme, stable across notebooks.
PALETTE = {
    "uncoded": "#4d4d4d", "ignore": "#999999", "frc": "#1f77b4", "crc": "#ff7f0e", "partial": "#8c564b",
    "rs": "#2ca02c", "ye-abbe": "#d62728", "kadhe": "#9467bd", "uc-mmc": "#e377c2", "lcc": "#17becf",
    "gc": "#ff7f0e", "gc-mmc-1": "#bcbd22", "gc-mmc-2": "#2ca02c", "hybrid": "#7f7f7f",
    "gd": "#4d4d4d", "lag": "#1f77b4", "lagc": "#ff7f0e", "g-lag": "#2ca02c",
}


#: The unit of simulated time: the compute-time models' (a shifted exponential with rate mu has mean alpha + 1/mu
#: of them); measured times (notebook 07) are in seconds.
TIME_UNIT = "model time units"
#: Figure widths (inches) of a paper's single and double column.
SINGLE, DOUBLE = 3.5, 7.2


def time_label(what: str = "time") -> str:
    """An axis label of simulated time with its unit, e.g. ``mean completion time (model time units)``."""
    return f"{what} ({TIME_UNIT})"


def theme():
    """The project's plotting theme (call once per notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="deep")
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 130, "figure.autolayout": False,
                         "axes.titleweight": "bold", "legend.frameon": False})


def color(name: str):
    return PALETTE.get(name)


def plain_log(ax, axis: str = "y", subs=(1.0, 2.0, 5.0)):
    """A log scale on ``axis`` with plain tick labels (``200``, ``0.3``; not ``2 x 10^2``) at ``subs`` of every
    decade, major ticks only, so that even a narrow range has several labelled ticks."""
    getattr(ax, f"set_{axis}scale")("log")
    a = getattr(ax, f"{axis}axis")
    a.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    a.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_locator(ticker.NullLocator())


def save(fig, data: pd.DataFrame, name: str, figures_dir) -> Path:
    """Write ``name.png`` and ``name.csv`` (the data behind the figure) into ``figures_dir``."""
    d = Path(figures_dir)
    d.mkdir(parents=True, exist_ok=True)
    data.to_csv(d / f"{name}.csv", index=False, float_format="%.6g", lineterminator="\n")
    fig.savefig(d / f"{name}.png", bbox_inches="tight", metadata={"Software": None})
    return d / f"{name}.png"


def errorbars(ax, df: pd.DataFrame, x: str, y: str, ci: str, hue: str, **kw):
    """Line plot of ``y`` against ``x`` per ``hue`` with ``+/- ci`` bands, colours from :data:`PALETTE`."""
    for key, g in df.groupby(hue, sort=False):
        g = g.sort_values(x)
        c = color(str(key))
        ax.plot(g[x], g[y], marker="o", ms=4, label=str(key), color=c, **kw)
        if ci in g:
            ax.fill_between(g[x], g[y] - g[ci], g[y] + g[ci], alpha=0.2, color=c, lw=0)
    return ax
