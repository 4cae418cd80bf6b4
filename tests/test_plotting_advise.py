"""The figures of notebook 09 on hand-made cases: the network case (the designs, their three estimates and the link's
time, one panel, three marker kinds) and the fits' intervals against the truth (a row per generating model)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from gclib import plotting# noqa: E402
from gclib.studies.advise import plots as plot  # noqa: E402


def test_network_figure_shows_both_designs_in_one_column():
    plotting.theme()
    real = pd.DataFrame([{"role": role, "label": label, "free": 0.02, "free_lo": 0.019, "free_hi": 0.021,
                          "charged": c, "charged_lo": c - 0.001, "charged_hi": c + 0.001, "mean_time": m,
                          "lo": m - 0.002, "hi": m + 0.002, "link": 0.05}
                         for role, label, c, m in (("free", "uc-mmc r=3", 0.04, 0.041), ("charged", "uncoded", 0.03,
                                                                                              0.031))])
    fig = plot.network(real, 0.1)
    (a,) = fig.axes  # one panel: the profile behind the charge is printed, not drawn beside it
    names = [t.get_text() for t in a.texts]  # each run named above its row, inside the panel
    assert names == ["advised with messages free: uc-mmc r=3", "advised with the network charged: uncoded"]
    assert len(a.patches) == 2  # the band around each charged prediction
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[-1] == "charged prediction +/- 10%" and "the link's time for every message sent" in labels
    data = [c.lines[0] for c in a.containers]  # each estimate's markers (the interval's caps aside)
    assert [ln.get_marker() for ln in data] == ["s", "s", "o"]  # two predictions (squares), the real runs
    assert data[0].get_markerfacecolor() == "white" and data[1].get_markerfacecolor() != "white"
    assert plotting.problems(fig) == [] and plotting.saved_width(fig) <= plotting.SINGLE + 0.2
    plt.close(fig)


def test_fit_recovery_has_a_row_per_model_and_the_legend_in_the_spare_panel():
    plotting.theme()
    rows = [{"truth": t, "parameter": p, "repeat": r, "true_value": v, "estimate": v * (1 + 0.01 * r),
             "lo": v * 0.95, "hi": v * (1.05 if r < 3 else 1.02), "covered": r < 3}
            for t, ps in (("shifted-exp per worker", {"mu": 10.0, "alpha": 0.01}), ("exp per task", {"rate": 2.0}))
            for p, v in ps.items() for r in range(5)]
    fig = plot.intervals(pd.DataFrame(rows))
    shown = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert [ax.get_title() for ax in shown] == ["shifted-exp per worker, mu = 10: 3 of 5 cover it",
                                                "shifted-exp per worker, alpha = 0.01: 3 of 5 cover it",
                                                "exp per task, rate = 2: 3 of 5 cover it"]
    assert all(len(ax.get_yticks()) == 0 for ax in shown) and shown[0].get_ylabel() == "first 40 fits"
    assert any(ax.get_legend() is not None for ax in fig.axes if not ax.axison)
    assert plotting.problems(fig) == []
    plt.close(fig)
