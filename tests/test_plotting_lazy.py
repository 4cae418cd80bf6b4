"""gclib.studies.lazy_aggregation.plots: every figure of notebook 06 on a tiny hand-made table."""
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from gclib.studies.lazy_aggregation import plots as plots


def _curves(model="exp"):
    rows = []
    for scheme, slope in (("gd", 1.0), ("g-lag-ps", 2.0)):
        for k in range(3):
            rows.append({"model": model, "scheme": scheme, "iteration": k, "gap": 10.0 ** (-slope * k),
                         "time": float(k), "uploads": 4 * k, "computations": 4 * k})
    return pd.DataFrame(rows)


def test_lag_check_draws_one_line_per_run_in_each_panel():
    c = _curves()
    c["warmup"] = c.scheme.map({"gd": "none", "g-lag-ps": "upload"})
    fig = plots.lag_check(c)
    a, b = fig.axes
    assert len(a.lines) == len(b.lines) == 2 and a.get_yscale() == "log" and b.get_xlabel() == "uploads"
    assert b.lines[1].get_linestyle() == "--" and "every worker uploads" in b.lines[1].get_label()
    plt.close(fig)
    with pytest.raises(ValueError, match="warmup"):
        plots.lag_check(_curves())


def test_bars_has_one_panel_per_metric_and_one_bar_per_scheme():
    data = pd.DataFrame([{"metric": m, "scheme": s, "median": 2.0, "q25": 1.0, "q75": 3.0}
                         for m in ("time", "uploads") for s in ("gd", "gc", "g-lag")])
    fig = plots.bars(data, "toy", 1e-6)
    assert len(fig.axes) == 2 and [len(ax.patches) for ax in fig.axes] == [3, 3]
    assert fig.axes[1].get_title() == "uploads to gap 1e-06" and fig._suptitle.get_text() == "toy"
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["gd", "gc", "g-lag"]  # a bar per scheme
    assert "model time units" in fig.axes[0].get_xlabel() and fig.axes[1].get_xlabel() == "uploads"
    plt.close(fig)


def test_gap_curves_draws_every_scheme_against_three_measures():
    fig = plots.gap_curves(_curves(), 1e-3)
    assert len(fig.axes) == 3 and all(len(ax.lines) == 3 for ax in fig.axes)  # 2 schemes + the target line
    assert fig._suptitle.get_text().startswith("loss gap, exp (server-side trigger dashed")
    plt.close(fig)


def test_shapes_draws_the_pareto_models_only():
    t = pd.DataFrame([{"model": m, "scheme": s, "median": 1.0, "q25": 0.5, "q75": 2.0, "runs": 3}
                      for m in ("pareto 1.5", "pareto 3", "exp") for s in ("gd", "g-lag-ps")])
    fig = plots.shapes(t, 1e-6)
    (ax,) = fig.axes
    assert len(ax.lines) == 2 and list(ax.lines[0].get_xdata()) == [1.5, 3.0]
    assert ax.get_title().startswith("median and quartiles over 3 seeds")
    plt.close(fig)


def test_family_draws_converged_runs_as_dots_and_failures_as_crosses():
    rows = [{"problem": p, "model": "exp", "scheme": s, "seed": 0, "status": st, "iterations": it}
            for p in ("a", "b") for s, st, it in (("gd", "converged", 10), ("g-lag-ps", "converged", 20),
                                                   ("g-lag-ps-chen", "diverged", float("nan")))]
    fig = plots.family(pd.DataFrame(rows))
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["gd", "g-lag-ps", "g-lag-ps-chen"]
    dots = [c for c in ax.collections if len(c.get_offsets())]
    assert [len(c.get_offsets()) for c in dots] == [2, 2, 2]  # gd, g-lag-ps, and the chen crosses
    assert sorted(dots[1].get_offsets()[:, 1]) == [2.0, 2.0] and ax.get_yscale() == "log"
    assert "2 generic problems" in ax.get_title()
    plt.close(fig)
    with pytest.raises(ValueError, match="status"):
        plots.family(pd.DataFrame(rows).drop(columns="status"))
