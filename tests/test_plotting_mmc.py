"""Figures of notebooks 04 and 05 on tiny hand-made tables: the expected panels and lines."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from gclib.studies.gc_mmc import plots as gc_mmc
from gclib.studies.mmc_design import plots as mmc_design  # noqa: E402

LABELS = ["GC", "LCC", "UC-MMC", "GC-MMC-1", "GC-MMC-2"]


def test_fig1_has_a_row_of_three_panels_per_model():
    df = pd.DataFrame([{"model": m, "label": lab, "mean_time": 1 + i, "ci95_time": 0.1, "mean_messages": 10 * i,
                        "ci95_messages": 1, "mean_cluster_messages": 5 * i, "ci95_cluster_messages": 1}
                       for m in ("a", "b") for i, lab in enumerate(LABELS)])
    fig = gc_mmc.fig1(df, title="t")
    assert len(fig.axes) == 6 and all(len(ax.patches) == 5 for ax in fig.axes)
    assert fig.axes[0].get_ylabel() == "E[T] (model time units)" and fig.axes[1].get_ylabel() == "messages"
    assert [sub.get_suptitle() for sub in fig.subfigs] == ["timing model: a", "timing model: b"]
    plt.close(fig)


def test_order_sweep_has_one_panel_per_model_with_lcc():
    rows = [{"model": m, "family": "gc-mmc-correlated", "label": f"m={o}", "order": o, "mean_time": 1 / o,
             "ci95_time": 0.01, "mean_messages": 10 * o} for m in ("a", "b") for o in (1, 2, 3)]
    rows += [{"model": m, "family": "lcc", "label": "LCC", "order": None, "mean_time": 0.5, "ci95_time": 0.01,
              "mean_messages": 7} for m in ("a", "b")]
    fig = gc_mmc.order_sweep(pd.DataFrame(rows), clusters=2)
    assert len(fig.axes) == 2 and [ax.get_title() for ax in fig.axes] == ["timing model: a", "timing model: b"]
    assert [t.get_text() for t in fig.axes[0].texts] == ["m=1", "m=3"]  # every other order named
    assert fig.axes[0].get_legend_handles_labels()[1] == ["LCC (7 messages)", "correlated design, 2 clusters"]
    plt.close(fig)


def test_pareto_draws_a_front_per_family_and_one_overall():
    rows = [(m, fam, f"{fam}{i}", 1 + i, 3 - i, 2 - i) for m in ("a", "b") for fam in ("gc", "lcc")
            for i in range(2)]
    t = pd.DataFrame(rows, columns=["model", "family", "label", "mean_time", "mean_messages",
                                    "mean_cluster_messages"])
    fig = mmc_design.pareto(t, title="t")
    assert len(fig.axes) == 4
    assert [len(ax.lines) for ax in fig.axes] == [3, 3, 3, 3]  # two families + all schemes
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


def test_budget_has_a_line_per_load_and_skips_empty_budgets():
    best = pd.DataFrame([{"model": m, "load": load, "budget": b, "label": {1: None, 2: "x", 4: "y", 8: "y"}[b],
                          "mean_time": float("nan") if b == 1 else 1 / b}
                         for m in ("a", "b") for load in ("mean_messages", "mean_cluster_messages")
                         for b in (1, 2, 4, 8)])
    fig = mmc_design.budget(best)
    assert len(fig.axes) == 4 and [len(ax.lines) for ax in fig.axes] == [1, 1, 1, 1]  # loads x models
    assert [len(ax.texts) for ax in fig.axes] == [2, 2, 2, 2]  # a label where the best design changes (x, then y)
    assert "model time units" in fig.axes[0].get_ylabel() and "until completion" in fig.axes[0].get_ylabel()
    plt.close(fig)
