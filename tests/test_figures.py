"""Figures that read at one or two columns: every committed PNG is at most two columns wide at the resolution it was
saved with; the style's text is never below 7 pt at its sizes; and `gclib.plotting.save` refuses a figure that is too
wide, has text too small, a time axis without its unit, or model time units it does not define."""
from __future__ import annotations

import struct
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from gclib import plotting# noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FONT_KEYS = ("font.size", "axes.titlesize", "axes.labelsize", "xtick.labelsize", "ytick.labelsize", "legend.fontsize",
             "legend.title_fontsize", "figure.titlesize", "figure.labelsize")


def png_inches(path: Path) -> tuple[float, float, float]:
    """``(width, height, dpi)`` of a PNG: its pixels (IHDR) over the resolution it was saved with (pHYs, pixels per
    metre)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    at = data.find(b"pHYs")
    assert at > 0, f"{path.name} does not say its resolution (no pHYs chunk)"
    ppm_x, _, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    assert unit == 1, f"{path.name}: its resolution is not in pixels per metre"
    dpi = ppm_x * 0.0254
    return width / dpi, height / dpi, dpi


def test_png_inches_reads_what_matplotlib_wrote(tmp_path):
    fig = plt.figure(figsize=(3.0, 2.0))
    fig.savefig(tmp_path / "f.png", dpi=150)
    plt.close(fig)
    w, h, dpi = png_inches(tmp_path / "f.png")
    assert dpi == pytest.approx(150, abs=0.05) and (w, h) == (pytest.approx(3.0, abs=0.01), pytest.approx(2.0,
                                                                                                           abs=0.01))


@pytest.mark.parametrize("png", sorted((ROOT / "figures").glob("*.png")), ids=lambda p: p.name)
def test_every_committed_figure_is_at_most_two_columns_wide(png):
    w, _, _ = png_inches(png)
    assert w <= plotting.MAX_WIDTH + 0.01, f"{png.name} is {w:.2f} in wide, more than {plotting.MAX_WIDTH} in"


def test_the_style_is_a_column_wide_with_text_of_7_pt_at_least():
    plotting.theme()
    assert plotting.SINGLE == pytest.approx(3.5) and plotting.DOUBLE <= plotting.MAX_WIDTH
    assert plt.rcParams["figure.figsize"][0] == plotting.SINGLE
    sizes = {k: matplotlib.font_manager.FontProperties(size=plt.rcParams[k]).get_size_in_points() for k in FONT_KEYS}
    assert min(sizes.values()) >= plotting.MIN_FONT, sizes
    fig, ax = plt.subplots()  # a default figure of the style: every text of it at 7 pt or more
    ax.plot([0, 1], [0, 1], label="a line")
    ax.set(xlabel="x (s)", ylabel="y", title="a title")
    ax.legend()
    fig.suptitle("a figure")
    assert min(t.get_fontsize() for t in plotting.texts(fig)) >= plotting.MIN_FONT
    assert plotting.problems(fig) == []
    plt.close(fig)


def _figure(width=plotting.SINGLE, font=None, xlabel="x (s)", layout="constrained"):
    plotting.theme()
    fig, ax = plt.subplots(figsize=(width, 2.0), layout=layout)
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel(xlabel)
    if font is not None:
        ax.text(0.5, 0.5, "small", fontsize=font)
    return fig


@pytest.mark.parametrize("kw, says", [
    ({"width": 9.0}, "in wide as saved, more than 7.2 in"),
    ({"font": 6.5}, "1 texts are smaller than 7 pt, e.g. 6.5 pt: 'small'"),
    ({"xlabel": "completion time"}, "speaks of time without its unit in parentheses"),
    ({"xlabel": plotting.time_label(), "layout": None}, "speaks of model time units without saying what they are"),
])
def test_save_refuses_a_figure_that_does_not_read_at_its_size_and_writes_nothing(kw, says, tmp_path):
    fig = _figure(**kw)
    with pytest.raises(ValueError, match="figure f: .*" + says.replace("(", r"\(").replace(")", r"\)")):
        plotting.save(fig, pd.DataFrame({"a": [1]}), "f", tmp_path)
    plt.close(fig)
    assert list(tmp_path.iterdir()) == []


def test_save_defines_model_time_units_under_the_title_and_writes_the_png_at_its_width(tmp_path):
    fig = _figure(xlabel=plotting.time_label("mean time"))
    fig.suptitle("a title")
    plotting.save(fig, pd.DataFrame({"a": [1]}), "f", tmp_path)
    title = fig.get_suptitle()
    plt.close(fig)
    assert title.startswith("a title\nmodel time unit: ") and "alpha" in title
    w, _, dpi = png_inches(tmp_path / "f.png")
    assert dpi == pytest.approx(plotting.DPI, abs=0.05) and w <= plotting.SINGLE + 0.05
    assert (tmp_path / "f.csv").read_text() == "a\n1\n"


@pytest.mark.parametrize("label, drawings", [("iterations", 1), (plotting.time_label(), 2 + plotting.SETTLE)])
def test_save_draws_a_plain_figure_once_for_its_checks_and_one_given_a_note_until_its_layout_settles(
        tmp_path, label, drawings):
    """Before the file is written: one drawing to look for the note, which every check reads when no note is
    needed; else the note, the SETTLE passes the constrained layout needs, and one more drawing for the checks."""
    plotting.theme()
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1], [1, 2])
    ax.set_xlabel(label)
    calls = []
    draw = fig.canvas.draw
    fig.canvas.draw = lambda: (calls.append(1), draw())[1]
    fig.savefig = lambda *a, **k: None  # the file's own drawings are matplotlib's
    plotting.save(fig, pd.DataFrame({"x": [0]}), "f", tmp_path)
    plt.close(fig)
    assert len(calls) == drawings
