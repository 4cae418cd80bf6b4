"""Real traces in: `gclib.timings.convert` and `gclib trace convert` read a wide CSV, a tidy CSV with other column
names and a per-operation parquet trace, each from a small sample written here; bad traces are one line and exit 2;
`gclib trace FIGURE` still reads as before."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gclib import timings
from gclib.cli import main


def _usage_error(capsys, argv, needle):
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2, err
    assert len(lines) == 1 and lines[0].startswith("gclib: error: ") and "Traceback" not in err, err
    assert needle in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------------------------------------- wide CSV
WIDE = """iteration,0,1,2
10,1.5,2.0,0.5
11,1.25,,0.75
12,1.0,2.5,inf
"""


def test_wide_csv_one_row_per_iteration_one_column_per_worker(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text(WIDE)
    c = timings.convert(p, "wide", min_samples=1, complete=False)
    t = c.timings
    assert c.format == "wide" and (t.iterations, t.workers, t.tasks) == (3, 3, 1)
    assert list(t.iteration_ids) == [10, 11, 12] and list(t.worker_ids) == [0, 1, 2]
    d = t.durations[:, :, 0]
    assert d[0].tolist() == [1.5, 2.0, 0.5] and np.isnan(d[1, 1]) and np.isinf(d[2, 2])
    assert c.rows == 9 and c.kept == 8 and c.dropped == {"empty cells (not observed)": 1}
    assert timings.convert(p, min_samples=1, complete=False).format == "wide"  # integer column names: auto


def test_wide_csv_without_iteration_column_numbers_rows_and_workers(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("a,b\n1,2\n3,4\n")
    c = timings.convert(p, "wide", min_samples=1)
    assert list(c.timings.iteration_ids) == [0, 1] and c.workers == {0: "a", 1: "b"}
    assert c.timings.durations[:, :, 0].tolist() == [[1, 2], [3, 4]]
    step = tmp_path / "s.csv"
    step.write_text("step,a,b\n5,1,2\n9,3,4\n")
    c = timings.convert(step, "wide", columns="iteration=step", min_samples=1)
    assert list(c.timings.iteration_ids) == [5, 9]


def test_a_worker_missing_from_a_whole_iteration_is_refused(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text(WIDE)
    with pytest.raises(ValueError, match=r"worker 1 is missing from iteration 11 \(no task time\)"):
        timings.convert(p, "wide", min_samples=1)


# ---------------------------------------------------------------------------------- tidy CSV, other names
def test_long_csv_with_other_column_names(tmp_path):
    rows = pd.DataFrame({"step": [3, 3, 3, 3, 4, 4, 4, 4], "rank": [0, 0, 1, 1, 0, 0, 1, 1],
                         "duration": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "note": "x"})
    p = tmp_path / "log.csv"
    rows.to_csv(p, index=False)
    c = timings.convert(p, columns="iteration=step,worker=rank,seconds=duration", min_samples=1)
    t = c.timings
    assert c.format == "csv" and (t.iterations, t.workers, t.tasks) == (2, 2, 2)
    # no task column: a worker's rows in an iteration are its tasks in the file's order
    assert t.durations[0].tolist() == [[0.1, 0.2], [0.3, 0.4]] and t.durations[1, 1].tolist() == [0.7, 0.8]
    assert "column 'note'" in " ".join(c.dropped) and any("no task column" in n for n in c.notes)
    out = c.write(tmp_path / "t.csv")
    back = timings.read(out, min_samples=1)
    assert np.array_equal(back.durations, t.durations) and list(back.iteration_ids) == [3, 4]


def test_long_csv_line_numbers_of_bad_values_are_the_files(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("step,rank,duration\n0,0,0.1\n0,1,-2\n")
    with pytest.raises(ValueError, match="must hold durations >= 0 at line 3") as e:
        timings.convert(p, columns={"iteration": "step", "worker": "rank", "seconds": "duration"}, min_samples=1)
    assert "-2" not in str(e.value).split("log.csv")[1]  # the line is named, what it holds is not echoed


@pytest.mark.parametrize("columns, needle", [
    ("iteration=step,worker=rank,seconds=time", "missing column 'time' (the seconds column given by columns)"),
    ("iteration=step,worker=rank", "missing column 'seconds'"),
    ("iteration=step,wrkr=rank", "a trace's columns are iteration, worker, task, seconds, host"),
    ("iteration=step,worker=step", "maps two trace columns to the same file column 'step'"),
    ("iteration", "NAME=COLUMN pairs"),
])
def test_bad_columns_are_named(tmp_path, columns, needle):
    p = tmp_path / "log.csv"
    p.write_text("step,rank,duration\n0,0,0.1\n0,1,0.2\n")
    with pytest.raises(ValueError) as e:
        timings.convert(p, "csv", columns=columns, min_samples=1)
    assert needle in str(e.value)


# ------------------------------------------------------------------------------------- per-operation parquet
def _ops(tmp_path, drop=(), rows=None):
    """A small per-operation trace of 2 steps, 2 data-parallel replicas of 2 pipeline stages, 2 microbatches: each
    microbatch's forward takes 1 + dp + stage/10 + mb/100 seconds and its backward twice that; plus a send and an
    optimizer step that the conversion drops."""
    pytest.importorskip("pyarrow")
    out = []
    for step in (7, 8):
        for dp in (0, 1):
            for stage in (0, 1):
                rank = dp * 2 + stage
                for mb in (0, 1):
                    f = 1 + dp + stage / 10 + mb / 100
                    out.append((dp, stage, rank, step, "forward-compute", f, mb))
                    out.append((dp, stage, rank, step, "backward-compute", 2 * f, mb))
                    out.append((dp, stage, rank, step, "forward-send", 0.5, -1))
                out.append((dp, stage, rank, step, "optimizer", 0.25, -1))
    df = pd.DataFrame(out, columns=["dp_rank", "stage", "rank", "step", "optype", "duration", "mb_id"])
    df["optype"] = df["optype"].astype("category")
    df["start_ts"] = 0.0
    if rows is not None:
        df = rows(df)
    p = tmp_path / "ops.parquet"
    df.drop(columns=list(drop)).to_parquet(p)
    return p


def test_ops_parquet_step_replica_microbatch(tmp_path):
    c = timings.convert(_ops(tmp_path), min_samples=1)
    t = c.timings
    assert c.format == "ops" and (t.iterations, t.workers, t.tasks) == (2, 2, 2)
    assert list(t.iteration_ids) == [7, 8] and list(t.worker_ids) == [0, 1]
    # forward + backward of both stages: 3 * ((1 + dp + mb/100) + (1 + dp + 0.1 + mb/100))
    want = np.array([[3 * (2 * (1 + dp + mb / 100) + 0.1) for mb in (0, 1)] for dp in (0, 1)])
    assert np.allclose(t.durations[0], want) and np.allclose(t.durations[1], want)
    assert c.kept == 32 and c.rows == 56
    assert c.dropped == {"operation forward-send": 16, "operation optimizer": 8}
    slowest = timings.convert(_ops(tmp_path), stages="max", min_samples=1).timings
    assert np.allclose(slowest.durations[0], [[3 * (1 + dp + 0.1 + mb / 100) for mb in (0, 1)] for dp in (0, 1)])


def test_ops_parquet_missing_column_and_missing_replica(tmp_path):
    with pytest.raises(ValueError, match="missing column 'mb_id'"):
        timings.convert(_ops(tmp_path, drop=["mb_id"]), min_samples=1)
    gone = _ops(tmp_path, rows=lambda df: df[~((df["step"] == 8) & (df["dp_rank"] == 1))])
    with pytest.raises(ValueError, match="worker 1 is missing from iteration 8"):
        timings.convert(gone, min_samples=1)


def test_ops_microbatch_missing_a_stage_is_not_observed(tmp_path):
    p = _ops(tmp_path, rows=lambda df: df[~((df["step"] == 7) & (df["dp_rank"] == 0) & (df["stage"] == 1)
                                            & (df["mb_id"] == 1))])
    c = timings.convert(p, min_samples=1)
    assert np.isnan(c.timings.durations[0, 0, 1]) and np.isfinite(c.timings.durations[1, 0, 1])
    assert c.dropped["microbatch times missing a pipeline stage (left out: not observed)"] == 1


def test_unknown_formats_are_refused(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"a": 1}\n')
    with pytest.raises(ValueError, match="unknown format"):
        timings.convert(p)
    b = tmp_path / "x.bin"
    b.write_bytes(bytes(range(256)))
    with pytest.raises(ValueError, match="line 1 holds a NUL byte: not text") as e:  # where, not what
        timings.convert(b)
    assert "\\x" not in str(e.value)


def test_the_shipped_traces_convert():
    pytest.importorskip("pyarrow")
    found = timings.shipped()
    assert set(found) == {"AR", "SE", "ST"}
    shapes = {k: timings.convert(p).timings.durations.shape for k, p in found.items()}
    assert shapes == {"AR": (44, 4, 32), "SE": (43, 32, 8), "ST": (32, 2, 4)}


# ---------------------------------------------------------------------------------------- the command line
def test_trace_convert_command_writes_a_trace_and_says_what_it_kept(tmp_path, capsys):
    src = tmp_path / "w.csv"
    src.write_text("iteration,0,1\n0,1.5,2\n1,1.25,2.5\n2,1,3\n")
    out = tmp_path / "t.csv"
    # 6 task times are fewer than a trace's minimum
    _usage_error(capsys, ["trace", "convert", src, "--out", out], "too few samples: 6 finite task times")
    src.write_text("iteration,0,1\n" + "".join(f"{i},{1 + i / 100},{2 + i / 50}\n" for i in range(20)))
    assert main(["trace", "convert", str(src), "--out", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["format"] == "wide" and rep["iterations"] == 20 and rep["workers"] == 2 and rep["out"] == str(out)
    assert timings.read(out).durations.shape == (20, 2, 1)


@pytest.mark.parametrize("argv, needle", [
    (["trace", "convert", "{src}"], "argument --out"),
    (["trace", "convert", "{src}", "{src}", "--out", "{out}"], "takes one trace file, got 2"),
    (["trace", "convert", "{src}", "--out", "{out}", "--executed", "{dir}"], "argument --executed: an option of"),
    (["trace", "{src}", "--out", "{out}"], "argument --out: an option of gclib trace convert"),
    (["trace", "convert", "{dir}/nope.csv", "--out", "{out}"], "does not exist"),
    (["trace", "convert", "{src}", "--out", "{out}", "--columns", "worker"], "argument --columns"),
    (["trace", "convert", "{src}", "--out", "{out}", "--format", "ops"], "not a readable parquet file"),
    (["trace", "convert", "{src}", "--out", "{out}", "--columns", "iteration=step,worker=rank,seconds=duration"],
     "missing column 'step'"),
    (["trace", "convert", "{src}", "--out", "{out}", "--stages", "max"],  # a wide CSV has no pipeline stages
     "stages applies to a per-operation trace only, and this one is read as format wide"),
])
def test_trace_convert_bad_input_is_one_line(tmp_path, capsys, argv, needle):
    pytest.importorskip("pyarrow")
    src = tmp_path / "w.csv"
    src.write_text("iteration,0,1\n0,1.5,2\n")
    sub = {"{src}": str(src), "{out}": str(tmp_path / "o.csv"), "{dir}": str(tmp_path)}
    _usage_error(capsys, [sub.get(a, a.replace("{dir}", str(tmp_path))) for a in argv], needle)
    assert not (tmp_path / "o.csv").exists()


def test_trace_figure_still_reads_a_figure(tmp_path, capsys):
    fig = tmp_path / "01_x.png"
    fig.write_bytes(b"png")
    assert main(["trace", str(fig), "--executed", str(tmp_path), "--figures-dir", str(tmp_path)]) == 1
    assert "matches no recorded run" in capsys.readouterr().out
    _usage_error(capsys, ["trace", fig, fig], "takes one figure file, got 2")


def test_the_shipped_traces_are_the_published_files():
    """The data folder's README gives each file's SHA-256; the files are unmodified copies."""
    import hashlib
    import re

    folder = timings.shipped()["AR"].parent
    table = dict(re.findall(r"\| `(trace-\w+\.parquet)` \| `([0-9a-f]{64})` \|", (folder / "README.md").read_text()))
    assert set(table) == {"trace-AR.parquet", "trace-SE.parquet", "trace-ST.parquet"}
    for name, digest in table.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    assert "Apache License" in (folder / "LICENSE").read_text() and "Bytedance" in (folder / "NOTICE").read_text()


def test_a_wide_trace_error_names_the_cell_without_echoing_it(tmp_path):
    p = tmp_path / "wide.csv"
    p.write_text("iteration,0,1\n0,0.1,0.2\n1,0.1,secret-token\n")
    with pytest.raises(ValueError, match=r"column '1' must hold seconds .* at line 3") as e:
        timings.convert(p, min_samples=1)
    assert "secret" not in str(e.value)
