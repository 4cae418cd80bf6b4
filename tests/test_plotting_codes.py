"""Figures of notebooks 01, 02 and 03 (the plots of gclib.studies.gradient_coding, reed_solomon and
communication_efficient) on tiny tables."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from gclib.studies.communication_efficient import plots as ce  # noqa: E402
from gclib.studies.reed_solomon import plots as rsf  # noqa: E402


def test_conditioning_has_a_panel_column_per_fraction():
    rows = [{"n": n, "points": p, "assign": a, "s/n": f, "worst_kappa": 10.0 * n, "worst_error64": 1e-15 * n,
             "worst_error32": 1e-7 * n} for n in (10, 20) for p in ("equispaced", "chebyshev")
            for a in ("spread", "natural") for f in (0.1, 0.5)]
    fig = rsf.conditioning(pd.DataFrame(rows), [0.1, 0.5])
    axes = fig.axes
    assert len(axes) == 3 * 2 and axes[0].get_title() == "s = 0.1 n"  # rows: kappa, float64, float32
    assert len(axes[0].lines) == 4 + 1  # one line per (points, assign) and the warning threshold
    assert len(axes[2].lines) == len(axes[4].lines) == 4 + 1  # per (points, assign), and the 1e-6 line
    assert fig.legends and "spread assignment" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert axes[0].get_yscale() == "log"
    plt.close(fig)


def test_tradeoff_draws_one_construction_per_family():
    rows = [{"s": s, "m": m, "construction": c, "family": fam, "load d": d, "message size": 1 / m}
            for s in (1, 2) for m in (1, 2, 3)
            for c, fam, d in (("ye-abbe", "MDS", s + m), ("kadhe gaussian", "MDS", s + m),
                              ("kadhe repetition", "repetition", m * (s + 1)))]
    fig = ce.tradeoff(pd.DataFrame(rows))
    left, right = fig.axes
    assert len(left.lines) == 2 * 2 and len(right.lines) == 2  # (family, s) on the left, s on the right
    # the colour is s, the style the family: one legend each, every entry matching drawn lines
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["MDS (Ye-Abbe, Kadhe Gaussian)",
                                                                     "repetition (Kadhe)"]
    assert [t.get_text() for t in right.get_legend().get_texts()] == ["s = 1", "s = 2"]
    assert {ln.get_linestyle() for ln in left.lines} == {"-", "--"}
    assert [ln.get_color() for ln in right.lines] == [h.get_color() for h in right.get_legend().legend_handles]
    assert list(right.lines[0].get_xdata()) == [2, 3, 4]
    plt.close(fig)


def test_iteration_time_baselines_and_volume():
    itime = pd.DataFrame({"scheme": ["ye-abbe", "ye-abbe", "kadhe", "kadhe", "crc", "uncoded"],
                          "m": [1, 2, 1, 2, 1, 1], "mean_time": [3, 2, 2.5, 1.5, 3, 2.8],
                          "ci95_time": [0.1] * 6, "mean_volume": [10, 5, 6, 4, 10, 12]})
    fig = ce.iteration_time(itime, "title")
    left, right = fig.axes
    assert len(left.lines) == 2 + 2 and len(right.lines) == 2  # two codes, two baselines; two volume curves
    assert fig._suptitle.get_text() == "title"
    plt.close(fig)


def test_stability_has_a_panel_per_regime():
    rows = [{"regime": r, "n": n, "label": lab, "points": p, "assign": a, "worst_error64": 1e-15,
             "worst_error32": 1e-7} for r in ("smallest s", "largest s <= n/2") for n in (12, 24)
            for lab, p, a in (("kadhe", "-", "-"), ("ye-abbe chebyshev natural", "chebyshev", "natural"))]
    fig = ce.stability(pd.DataFrame(rows), 2)
    a, b, c, d = fig.axes  # columns: regimes; rows: float64, float32
    assert a.get_title() == "smallest s (m = 2)" and b.get_title() == "largest s <= n/2 (m = 2)"
    assert len(a.lines) == len(c.lines) == 2 + 1  # one line per label, and the 1e-6 line
    plt.close(fig)


def test_measured_vs_simulated_has_a_residual_panel_with_the_band():
    from gclib.studies.mpi_runs import plots as mpi_runs

    data = pd.DataFrame({"scheme": ["crc", "crc", "frc"], "predicted": [0.1, 0.2, 0.4], "time": [0.105, 0.19, 0.5]})
    fig = mpi_runs.measured_vs_simulated(data)
    scatter, res = fig.axes
    assert res.get_ylabel() == "measured / simulated - 1"
    ys = sorted(y for c in res.collections for y in c.get_offsets()[:, 1])
    assert ys == pytest.approx([-0.05, 0.05, 0.25])  # the residuals, the 25% one outside the band
    band = res.patches[0].get_extents().transformed(res.transData.inverted())
    assert band.y0 == pytest.approx(-0.10) and band.y1 == pytest.approx(0.10)
    plt.close(fig)


def test_completion_time_shows_the_monte_carlo_against_the_closed_form():
    from gclib.studies.gradient_coding import plots as tandon

    rows = [{"model": m, "scheme": s, "value": v, "mean_time": t * (1 + 0.01 * v), "ci95_time": 0.02,
             "closed_form_time": t if s != "ignore" else float("nan")}
            for m in ("A", "B") for s, t in (("uncoded", 1.0), ("ignore", 0.5)) for v in (0, 1, 2)]
    fig = tandon.completion_time(pd.DataFrame(rows))
    top, top_b, dev, dev_b = fig.axes  # two columns: the times, then the relative deviation
    assert top.get_title() == "A" and top.get_yscale() == "log"
    assert len(top.lines) == 4  # per scheme: the closed form (wide) and the Monte Carlo
    assert len(dev.lines) == 2  # the deviation of uncoded (ignore has no closed form) and the zero line
    np.testing.assert_allclose(dev.lines[0].get_ydata(), [0.0, 0.01, 0.02])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["uncoded", "ignore"]
    plt.close(fig)


def test_scale_figures_name_the_curves_that_stop_early():
    from gclib.studies.scale import plots as sp

    rows = [{"model": "M", "setting": st, "K": k, "scheme": s, "mean_time": 1.0 + k / 1000, "ci95_time": 0.01,
             "closed_form_time": 1.0, "gain": 1.5, "gain_lo": 1.4, "gain_hi": 1.6, "messages_per_worker": 2.0}
            for st in ("load fraction", "cluster size") for k in (40, 400, 4000) for s in ("GC", "UC-MMC")
            if not (s == "UC-MMC" and st == "load fraction" and k > 400)]
    t = pd.DataFrame(rows)
    for draw in (sp.completion_time, sp.gain, sp.messages):
        fig = draw(t)
        assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "log"
        title = fig.legends[0].get_title().get_text()
        assert "UC-MMC end at K = 400 (load a fixed fraction of K)" in title
        plt.close(fig)
    full = t[t.scheme == "GC"]
    fig = sp.completion_time(full)
    assert fig.legends[0].get_title().get_text() == ""  # no curve stops early
    plt.close(fig)
