"""What a person reads of an advice (`gclib.advise.report`): uncoded always in the table and the figure, the warning
when free messages decide the ranking, what an iteration is in a trace's terms, the slowest worker's part in the
saving in words that add up; and the same through `gclib advise` on a shipped trace."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gclib.advise import report as rep
from gclib import advise as adv
from gclib.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _advice(rows, network=None, best=0, K=4):
    """An :class:`gclib.advise.Advice` by hand: ``rows`` of ``(label, mean_time, messages)``, ranked as given,
    uncoded among them; ``best``: the index of the recommendation."""
    unc = next(t for lab, t, _ in rows if lab == "uncoded")
    ranked = pd.DataFrame([{"rank": i + 1, "label": lab, "scheme": lab.split()[0], "family": lab.split()[0],
                            "load": 1 if lab == "uncoded" else 2, "mean_time": t, "ci95_time": 0.01,
                            "speedup": unc / t, "speedup_lo": unc / t, "speedup_hi": unc / t, "messages": m,
                            "gradient_units": m, "computations": 2 * K, "failed": 0, "digits": math.nan,
                            "worst_ratio": 1.0, "best_under": 1, "feasible": True, "runnable": True,
                            "command": f"--scheme {lab.split()[0]}"} for i, (lab, t, m) in enumerate(rows)])
    table = ranked.assign(model="m", ratio=1.0, tied=True)
    settings = {"K": K, "max_load": 2, "network": network, "primary": "m", "models": {"m": {}}, "unit": "s"}
    return adv.Advice(ranked, table, ranked.iloc[best].to_dict(), settings)


def test_uncoded_is_in_the_table_however_low_it_ranks():
    rows = [(f"crc r={i}", 1.0 + i / 100, 4) for i in range(2, 12)] + [("uncoded", 2.0, 4)]
    lines = rep.table_text(_advice(rows).ranked, 1, rows=3)
    assert len(lines) == 1 + 3 + 2 and lines[4] == "..."
    assert lines[5].startswith("11   uncoded") and lines[5].endswith("<- uncoded, the design to beat")
    lines = rep.table_text(_advice([("uncoded", 1.0, 4), ("crc r=2", 1.1, 4)]).ranked, 1, rows=3)
    assert len(lines) == 3 and "..." not in lines  # among the first rows: not twice


def test_free_messages_that_decide_the_ranking_are_warned_with_the_break_even_cost():
    a = _advice([("uc-mmc r=2", 0.9, 7), ("crc r=2", 0.95, 4), ("uncoded", 1.0, 4)])
    f = rep.free_messages(a)
    # saving 0.1 s over 3 extra messages: each may cost about 0.0333 s before uncoded is as fast
    assert f["saving"] == pytest.approx(0.1) and f["break_even"] == pytest.approx(0.1 / 3)
    assert f["frugal"]["label"] == "crc r=2"
    text = a.warnings()[0]
    assert "no --network" in text and "receives 7 messages per iteration against uncoded's 4" in text
    assert "more than about 0.033 s" in text and "the fastest design that receives no more messages than uncoded is " \
                                                  "crc r=2" in text
    assert a.to_dict()["warnings"] == [text]
    charged = _advice([("uc-mmc r=2", 0.9, 7), ("uncoded", 1.0, 4)], network={"latency": 0.01})
    assert rep.free_messages(charged) is None and charged.warnings() == []
    assert rep.free_messages(_advice([("uncoded", 1.0, 4), ("uc-mmc r=2", 1.1, 7)])) is None  # uncoded advised
    assert rep.free_messages(_advice([("crc r=2", 0.9, 4), ("uncoded", 1.0, 4)])) is None  # no more messages


def test_what_an_iteration_is_in_the_trace_s_terms():
    # 2 iterations x 2 workers x 3 tasks: the trace's iteration is its slowest worker's sum of tasks
    d = np.array([[[1, 1, 1], [2, 2, 2]], [[3, 1, 1], [1, 1, 1]]], dtype=float)
    a = _advice([("uncoded", 2.5, 2), ("crc r=2", 3.0, 2)], K=2)
    n = rep.iteration_numbers(d, a)
    assert n == {"tasks": 3, "trace_iteration": pytest.approx((6 + 5) / 2), "uncoded": 2.5,
                 "uncoded_tasks": pytest.approx(7.5)}
    text = rep.iteration_text(n, a)
    assert "one gradient over 2 data parts, each as long to compute as one task of the trace" in text
    assert "3 uncoded iterations are predicted to take 3 x 2.5 = 7.5 s, 1.36 times as long" in text
    d[1, 0, 0] = np.nan  # an iteration with a task not observed is left out of the trace's mean
    assert rep.iteration_numbers(d, a)["trace_iteration"] == pytest.approx(6)


@pytest.mark.parametrize("speedup, without, says, never", [
    (1.0398, 1.0412, "None of the predicted saving rests on worker 8", "-4%"),
    (1.5, 1.25, "50% of the predicted saving rests on worker 8", "None"),
    (1.5, 0.98, "All of the predicted saving rests on worker 8", "%"),
])
def test_the_slowest_worker_s_part_in_the_saving_reads_right(speedup, without, says, never):
    share = (speedup - without) / (speedup - 1)
    r = {"worker": 8, "share_slowest": 0.09, "ratio": 1.03, "speedup": speedup, "speedup_without": without,
         "share": share}
    text = rep.reliance_text(r)
    assert says in text and never not in text.split("(the slowest")[0]
    a, b = text.split("speed-up")[-1].replace("would be", "|").replace("rather than", "|").split("|")[-2:]
    assert a.strip(" .") != b.split("(")[0].strip(" .")  # the two speed-ups are written apart
    assert "1.040" in rep.reliance_text({**r, "speedup": 1.0398, "speedup_without": 1.0412, "share": -0.035})


def test_the_figure_marks_uncoded_and_the_recommendation(tmp_path):
    import matplotlib.pyplot as plt

    a = _advice([("uc-mmc r=2", 0.9, 7), ("crc r=2", 0.95, 4), ("uncoded", 1.0, 4)])
    fig = a.plot(tmp_path / "front.png")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close(fig)
    assert "uncoded (the design to beat)" in labels and "recommended: uc-mmc r=2" in labels
    assert (tmp_path / "front.png").stat().st_size > 5_000


@pytest.fixture(scope="module")
def se_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("se") / "se.csv"
    assert main(["trace", "convert", str(ROOT / "data" / "straggler-analysis" / "trace-SE.parquet"), "--out",
                 str(out), "--json"]) == 0
    return out


def test_advise_on_the_shipped_trace_defines_its_iteration_and_shows_and_warns(se_csv, capsys):
    capsys.readouterr()
    assert main(["advise", "--trace", str(se_csv), "--workers", "32", "--json"]) == 0
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert d["iteration"]["tasks"] == 8 and d["iteration"]["trace_iteration"] > 0
    assert "uncoded" in {r["label"] for r in d["ranked"]}
    unc = next(r for r in d["ranked"] if r["label"] == "uncoded")
    # on this trace the recommendation receives more messages than uncoded, and they cost nothing: warned
    assert d["best"]["messages"] > unc["messages"]
    assert d["warnings"] and "no --network" in d["warnings"][0] and "gclib: warning: messages cost" in err
    assert main(["advise", "--trace", str(se_csv), "--workers", "32", "--network", "latency=0.001,bandwidth=100"]) == 0
    out, err = capsys.readouterr()
    assert "One iteration here: one gradient over 32 data parts" in out and "8 tasks per worker" in out
    assert "uncoded" in out and "messages cost nothing" not in err
