"""Figures of notebooks 02 and 03 (gclib.plotting.reed_solomon, gclib.plotting.comm_efficient) on tiny tables."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from gclib.plotting import comm_efficient as ce  # noqa: E402
from gclib.plotting import reed_solomon as rsf  # noqa: E402


def test_conditioning_has_a_panel_column_per_fraction():
    rows = [{"n": n, "points": p, "assign": a, "s/n": f, "worst_kappa": 10.0 * n, "worst_error64": 1e-15 * n,
             "worst_error32": 1e-7 * n} for n in (10, 20) for p in ("equispaced", "chebyshev")
            for a in ("spread", "natural") for f in (0.1, 0.5)]
    fig = rsf.conditioning(pd.DataFrame(rows), [0.1, 0.5])
    axes = fig.axes
    assert len(axes) == 4 and axes[0].get_title() == "s = 0.1 n"
    assert len(axes[0].lines) == 4 + 1  # one line per (points, assign) and the warning threshold
    assert len(axes[2].lines) == 2 * 4 + 1  # float64 and float32 per (points, assign) and the 1e-6 line
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
    assert [t.get_text() for t in left.get_legend().get_texts()][0] == "MDS (Ye-Abbe, Kadhe Gaussian), s = 1"
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
    a, b = fig.axes
    assert a.get_title() == "smallest s (m = 2)" and b.get_title() == "largest s <= n/2 (m = 2)"
    assert len(a.lines) == 2 * 2 + 1  # float64 and float32 per label, and the 1e-6 line
    plt.close(fig)
