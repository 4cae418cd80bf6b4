"""One figure style, a palette per scheme, and the few figure helpers the notebooks share.

The style (:data:`STYLE`, set by :func:`theme`) is a paper's: a figure is one column wide (:data:`SINGLE`, the
default size) or two (:data:`DOUBLE`), and every text in it is at least :data:`MIN_FONT` points at that size, so that
it reads in print at one column. :func:`save` writes ``name.png`` and ``name.csv`` (the data behind the figure) side
by side, the CSV with fixed float formatting so that the same seed gives the same bytes; before it writes, it
checks the figure (:func:`problems`: no wider than :data:`MAX_WIDTH` as saved, no text below :data:`MIN_FONT`, a
unit in every axis label about time, :data:`TIME_UNIT` defined where it is used) and refuses one that fails; under
the title of a figure that speaks of :data:`TIME_UNIT`, it writes what that unit is (:data:`TIME_UNIT_NOTE`,
:func:`define_time_unit`).
"""
from __future__ import annotations

import sys
import textwrap
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
from matplotlib.text import Text  # noqa: E402

#: One colour per scheme, stable across notebooks.
PALETTE = {
    "uncoded": "#4d4d4d", "ignore": "#999999", "frc": "#1f77b4", "crc": "#ff7f0e", "partial": "#8c564b",
    "rs": "#2ca02c", "ye-abbe": "#d62728", "kadhe": "#9467bd", "uc-mmc": "#e377c2", "lcc": "#17becf",
    "gc": "#ff7f0e", "gc-mmc-1": "#bcbd22", "gc-mmc-2": "#2ca02c", "hybrid": "#7f7f7f",
    "gd": "#4d4d4d", "lag": "#1f77b4", "lagc": "#ff7f0e", "g-lag": "#2ca02c",
}

#: The unit of simulated time: the compute-time models' (a shifted exponential with rate mu has mean alpha + 1/mu
#: of them); measured times (notebooks 07, 09, 10) are in seconds.
TIME_UNIT = "model time units"
#: What :data:`TIME_UNIT` is, written under every figure that uses it (by :func:`save`).
TIME_UNIT_NOTE = ("model time unit: the unit the compute-time models are stated in (a partial gradient takes alpha + "
                  "an exponential of mean 1/mu of them under the shifted exponential)")
#: Figure widths (inches): one column of a two-column paper, and two columns.
SINGLE, DOUBLE = 3.5, 7.0
#: The widest a saved figure may be (inches, at the size it is saved), and its smallest text (points).
MAX_WIDTH, MIN_FONT = 7.2, 7.0
#: Dots per inch of a saved figure.
DPI = 200
#: The style of every figure (matplotlib rcParams): the default size one column, text of 7 to 9 points.
STYLE = {
    "figure.figsize": (SINGLE, 2.6), "figure.dpi": 110, "savefig.dpi": DPI, "savefig.pad_inches": 0.03,
    "font.size": 8.0, "axes.titlesize": 8.0, "axes.labelsize": 8.0, "xtick.labelsize": 7.0, "ytick.labelsize": 7.0,
    "legend.fontsize": 7.0, "legend.title_fontsize": 7.0, "figure.titlesize": 9.0, "figure.labelsize": 8.0,
    "axes.titleweight": "normal", "axes.linewidth": 0.6, "grid.linewidth": 0.5, "lines.linewidth": 1.2,
    "lines.markersize": 4.0, "patch.linewidth": 0.5, "errorbar.capsize": 2.0,
    "xtick.major.size": 3.0, "ytick.major.size": 3.0, "xtick.major.pad": 2.0, "ytick.major.pad": 2.0,
    "axes.labelpad": 2.0, "axes.titlepad": 4.0, "legend.frameon": False, "legend.handlelength": 1.6,
    "legend.columnspacing": 1.0, "legend.borderaxespad": 0.3,
}


def time_label(what: str = "time") -> str:
    """An axis label of simulated time with its unit, e.g. ``mean completion time (model time units)``."""
    return f"{what} ({TIME_UNIT})"


def theme():
    """The project's figure style (:data:`STYLE` on seaborn's white grid; call once per notebook)."""
    sns.set_theme(context="paper", style="whitegrid", palette="deep")
    plt.rcParams.update(STYLE)


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


# ------------------------------------------------------------------------------------------------ the checks
def texts(fig) -> list[Text]:
    """Every text of ``fig`` that shows (titles, labels, tick labels, legends, annotations), once drawn."""
    fig.canvas.draw()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and _shown(t)]


def _shown(t: Text) -> bool:
    """A tick label outside its axis' view is not drawn, though it exists."""
    ax = t.axes
    return ax is None or ax.get_visible()


def saved_width(fig, drawn: bool = False) -> float:
    """The width in inches of ``fig`` as :func:`save` writes it (its tight box and the padding); ``drawn``: the
    figure was drawn since it last changed, and is not drawn again."""
    if not drawn:
        fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    return float(box.width) + 2 * float(plt.rcParams["savefig.pad_inches"])


def problems(fig, shown: list[Text] | None = None) -> list[str]:
    """What keeps ``fig`` from reading at one or two columns, one sentence each: wider than :data:`MAX_WIDTH`
    as saved; a text below :data:`MIN_FONT` points (the first few named); an axis label about time without its unit
    in parentheses. Empty when there is nothing. ``shown``: :func:`texts` of ``fig`` drawn as it is now (else it is
    drawn here)."""
    out = []
    shown = texts(fig) if shown is None else shown  # the one drawing the checks read
    if not _defines_time_unit(shown):
        out.append(f"it speaks of {TIME_UNIT} without saying what they are (gclib.plotting.define_time_unit; "
                   f"layout='constrained' and save() does it)")
    width = saved_width(fig, drawn=True)
    if width > MAX_WIDTH + 1e-6:
        out.append(f"it is {width:.2f} in wide as saved, more than {MAX_WIDTH:g} in (two columns)")
    small = sorted({(round(t.get_fontsize(), 2), t.get_text()[:30]) for t in shown
                    if t.get_fontsize() < MIN_FONT - 1e-9})
    if small:
        out.append(f"{len(small)} texts are smaller than {MIN_FONT:g} pt, e.g. "
                   + "; ".join(f"{s:g} pt: {x!r}" for s, x in small[:3]))
    for ax in fig.axes:
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            if "time" in label.lower() and "(" not in label:
                out.append(f"the axis label {label!r} speaks of time without its unit in parentheses")
    return out


def _defines_time_unit(shown: list[Text]) -> bool:
    """Whether one of the texts ``shown`` (:func:`texts`) defines :data:`TIME_UNIT`, or none speaks of it."""
    shown = [t.get_text() for t in shown]
    return not any(TIME_UNIT in s for s in shown) or any(TIME_UNIT_NOTE.split(":")[0] + ":" in s for s in shown)


def define_time_unit(fig) -> bool:
    """Write :data:`TIME_UNIT_NOTE` under the title of ``fig`` (the title made of it when there is none) when a text
    of ``fig`` says :data:`TIME_UNIT` and none defines it; for a figure whose layout makes room for its title
    (``layout="constrained"``, as :func:`save` does by itself). Returns whether it wrote the note."""
    if _defines_time_unit(texts(fig)):
        return False
    _write_time_unit(fig)
    return True


def _write_time_unit(fig) -> None:
    """Write :data:`TIME_UNIT_NOTE` under the title of ``fig`` (the title made of it when there is none)."""
    chars = max(40, int(fig.get_figwidth() * 72 / (0.55 * STYLE["figure.titlesize"] * 0.9)))
    note = textwrap.fill(TIME_UNIT_NOTE, chars)
    title = fig.get_suptitle()
    fig.suptitle(f"{title}\n{note}" if title else note, fontsize=STYLE["font.size"])


#: Drawings of a figure with a constrained layout after :func:`define_time_unit` wrote its note, before the one
#: the checks read: the layout takes three passes to make room for the note (with one, some figures moved by a
#: pixel).
SETTLE = 2


def save(fig, data: pd.DataFrame, name: str, figures_dir) -> Path:
    """Write ``name.png`` and ``name.csv`` (the data behind the figure) into ``figures_dir``, once the figure
    passes :func:`problems` (the definition of :data:`TIME_UNIT` written under its title where it is used, when its
    layout is constrained).

    Raises:
        ValueError: naming the figure and what keeps it from reading at its size; nothing is written.
    """
    engine = fig.get_layout_engine()
    shown = None
    if engine is not None and type(engine).__name__ == "ConstrainedLayoutEngine":  # room is made for the title
        shown = texts(fig)
        if not _defines_time_unit(shown):
            _write_time_unit(fig)
            for _ in range(SETTLE):
                fig.canvas.draw()
            shown = None  # (the figure changed: drawn again for the checks)
    wrong = problems(fig, shown)
    if wrong:
        raise ValueError(f"figure {name}: {'; '.join(wrong)}")
    d = Path(figures_dir)
    d.mkdir(parents=True, exist_ok=True)
    data.to_csv(d / f"{name}.csv", index=False, float_format="%.6g", lineterminator="\n")
    fig.savefig(d / f"{name}.png", dpi=DPI, bbox_inches="tight", pad_inches=plt.rcParams["savefig.pad_inches"],
                metadata={"Software": None})
    return d / f"{name}.png"


def errorbars(ax, df: pd.DataFrame, x: str, y: str, ci: str, hue: str, **kw):
    """Line plot of ``y`` against ``x`` per ``hue`` with ``+/- ci`` bands, colours from :data:`PALETTE`."""
    for key, g in df.groupby(hue, sort=False):
        g = g.sort_values(x)
        c = color(str(key))
        ax.plot(g[x], g[y], marker="o", ms=3, label=str(key), color=c, **kw)
        if ci in g:
            ax.fill_between(g[x], g[y] - g[ci], g[y] + g[ci], alpha=0.2, color=c, lw=0)
    return ax
