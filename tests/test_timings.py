"""The timing trace CSV: write / read round trips, and one line naming the file, the column and the first bad line
for every bad trace."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gclib import timing_trace, timings
from gclib.timings import MIN_SAMPLES, Timings


def _durations(seed=0, shape=(5, 4, 3)):
    return np.random.default_rng(seed).exponential(1.0, shape)


def _good_frame():
    return timings.Timings.from_array(_durations()).frame()


def test_write_then_read_gives_the_same_array_hosts_and_ids(tmp_path):
    d = _durations()
    d[0, 1, 2] = np.nan  # not observed
    d[1, 2, :] = np.inf  # never answered
    d[2, 3, 1:] = np.inf  # died after its first task
    p = timings.write(tmp_path / "sub" / "t.csv", d, hosts=["a", "b", "b", "c"])
    t = timings.read(p)
    assert np.array_equal(t.durations, d, equal_nan=True)
    assert t.hosts == ("a", "b", "b", "c")
    assert list(t.worker_ids) == [0, 1, 2, 3] and list(t.iteration_ids) == [0, 1, 2, 3, 4]
    assert t.n_finite == int(np.isfinite(d).sum())
    assert np.array_equal(t.finish_times(), np.cumsum(d, axis=2), equal_nan=True)
    frame = pd.read_csv(p)
    assert list(frame.columns) == [*timings.COLUMNS, "host"]
    assert len(frame) == d.size - 1  # the nan cell is left out
    assert not list(tmp_path.joinpath("sub").glob(".*"))  # no temporary file left


def test_ids_are_compacted_and_extra_columns_ignored(tmp_path):
    f = _good_frame()
    f["iteration"] += 7
    f["worker"] = f["worker"] * 3 + 1
    f["note"] = "x"
    f.to_csv(tmp_path / "t.csv", index=False)
    t = timings.read(tmp_path / "t.csv")
    assert list(t.iteration_ids) == [7, 8, 9, 10, 11] and list(t.worker_ids) == [1, 4, 7, 10]
    assert t.hosts is None and np.array_equal(t.durations, _durations())


def _corrupt(kind):
    f = _good_frame()
    if kind == "missing column":
        return f.drop(columns="seconds"), "missing column 'seconds'"
    if kind == "missing columns":
        return f.drop(columns=["task", "worker"]), "missing columns 'worker', 'task'"
    if kind == "NaN":
        f.loc[4, "seconds"] = np.nan
        return f, "column 'seconds' is empty or NaN at line 6"
    if kind == "negative":
        f.loc[3, "seconds"] = -0.5
        return f, "column 'seconds' must hold durations >= 0 at line 5"
    if kind == "-inf":
        f.loc[3, "seconds"] = -np.inf
        return f, "column 'seconds' must hold durations >= 0 at line 5"
    if kind == "text":
        f["seconds"] = f["seconds"].astype(object)
        f.loc[7, "seconds"] = "fast"
        return f, "column 'seconds' must hold numbers (inf for a task that never finished) at line 9"
    if kind == "non-integer id":
        f["worker"] = f["worker"].astype(float)
        f.loc[5, "worker"] = 1.5
        return f, "column 'worker' must hold integers at line 7"
    if kind == "negative id":
        f.loc[2, "iteration"] = -1
        return f, "column 'iteration' must hold integers >= 0 at line 4"
    if kind == "task 0":
        f.loc[0, "task"] = 0
        return f, "column 'task' must hold integers >= 1 at line 2"
    if kind == "duplicate":
        return pd.concat([f, f.iloc[[2]]]), "an (iteration, worker, task) appears twice, at line 4 and again at line 62"
    if kind == "too few samples":
        return f.iloc[:MIN_SAMPLES - 1], f"too few samples: {MIN_SAMPLES - 1} finite task times, at least {MIN_SAMPLES}"
    if kind == "one worker":
        return f[f.worker == 0], "a trace needs at least 2 workers, got 1"
    if kind == "finite after inf":
        f.loc[(f.iteration == 1) & (f.worker == 2) & (f.task == 1), "seconds"] = np.inf
        return f, ("a worker has a finite time for task 2 after task 1 never finished (inf), at line 21 (the inf at "
                   "line 20)")
    if kind == "two hosts":
        f["host"] = "h" + f["worker"].astype(str)
        f.loc[len(f) - 1, "host"] = "other"
        return f, "a worker appears on several hosts (at line 11 and line 61)"
    raise AssertionError(kind)


KINDS = ["missing column", "missing columns", "NaN", "negative", "-inf", "text", "non-integer id", "negative id",
         "task 0", "duplicate", "too few samples", "one worker", "finite after inf", "two hosts"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_trace_raises_one_line_naming_the_file_and_the_problem(tmp_path, kind):
    frame, words = _corrupt(kind)
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError) as e:
        timings.read(path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{path}: ") and words in msg, msg
    # what the file holds beyond its header is never in the message: only the file, the column and the line
    body = msg[len(f"{path}: "):]
    for cell in ("-0.5", "fast", "1.5", "-1", "'h3'", "other"):
        assert cell not in body, msg


def test_a_table_given_in_python_is_named_by_its_values():
    f = _good_frame()
    f.loc[3, "seconds"] = -0.5
    with pytest.raises(ValueError, match=r"column 'seconds' must hold durations >= 0, got -0.5 at row 3"):
        timings.from_frame(f)
    f = _good_frame()
    f["host"] = "h" + f["worker"].astype(str)
    f.loc[len(f) - 1, "host"] = "other"
    with pytest.raises(ValueError, match=r"worker 3 appears on several hosts \('h3', 'other'\)"):
        timings.from_frame(f)


def test_a_file_that_is_no_trace_is_refused_without_a_word_of_its_content(tmp_path):
    """``gclib advise --trace /etc/shadow``: its first line is not a trace's header, and stays out of the message;
    a FIFO or a device is refused before it is opened (reading one would block, or never end)."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$salt$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
    secret.chmod(0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(secret)
    for path in (secret, link):
        with pytest.raises(ValueError) as e:
            timings.read(path)
        msg = str(e.value)
        assert "its first line is not the header of a timing trace" in msg and "salt" not in msg, msg
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is not a regular file"):
        timings.read(fifo)
    if Path("/dev/zero").exists():
        with pytest.raises(ValueError, match="is not a regular file"):
            timings.read("/dev/zero")


def test_a_duration_too_large_for_a_float_is_refused_not_read_as_never(tmp_path):
    for huge in ("9" * 100_000, "1e400", "-1e999"):
        f = _good_frame()
        f["seconds"] = f["seconds"].astype(object)
        f.loc[3, "seconds"] = huge
        path = tmp_path / "t.csv"
        f.to_csv(path, index=False)
        with pytest.raises(ValueError, match=r"column 'seconds' holds a number too large for a float at line 5 "):
            timings.read(path)
    f = _good_frame()
    f.loc[f.worker == 1, "seconds"] = np.inf  # "inf" is how a file says never
    f.to_csv(path, index=False)
    assert np.isinf(timings.read(path).durations[:, 1]).all()


def test_a_trace_too_large_to_fit_is_refused_as_soon_as_its_rows_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(timing_trace, "MAX_ROWS", 50)  # (the module of read; gclib.timings re-exports it)
    _good_frame().to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(ValueError, match="more than 50 rows, too large a trace to fit"):
        timings.read(tmp_path / "t.csv")


def test_too_few_samples_counts_finite_times_only(tmp_path):
    d = _durations(shape=(2, 2, 10))  # 40 samples
    d[1] = np.inf  # 20 left
    timings.write(tmp_path / "t.csv", d)
    with pytest.raises(ValueError, match="too few samples: 20 finite task times"):
        timings.read(tmp_path / "t.csv")
    assert timings.read(tmp_path / "t.csv", min_samples=20).n_finite == 20


@pytest.mark.parametrize("content, words", [("", "empty file"), ("a,b\n1,2\n", "missing columns"),
                                            ("iteration,worker,task,seconds\n", "no rows")])
def test_empty_or_foreign_files(tmp_path, content, words):
    (tmp_path / "t.csv").write_text(content)
    with pytest.raises(ValueError, match=words):
        timings.read(tmp_path / "t.csv")


def test_missing_file_and_bad_arrays(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        timings.read(tmp_path / "none.csv")
    with pytest.raises(ValueError, match=r"durations must be an \(iterations, workers, tasks\) array.*shape \(3, 4\)"):
        timings.write(tmp_path / "t.csv", np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"durations must hold durations >= 0.*-1.0 at index \(0, 1, 0\)"):
        timings.write(tmp_path / "t.csv", np.array([[[1.0], [-1.0]]]))
    with pytest.raises(ValueError, match="hosts must be a sequence of one host name per worker"):
        timings.write(tmp_path / "t.csv", np.ones((3, 4, 1)), hosts=["a"])
    assert not (tmp_path / "t.csv").exists()
    with pytest.raises(ValueError, match=r"durations: .*task 2 after task 1 never finished.*at row"):
        Timings.from_array(np.array([[[np.inf, 1.0]] * 2] * 20))
    with pytest.raises(TypeError, match=r"durations must be an array of real seconds \(iterations, workers, tasks; .*"
                                        r"got an array of complex numbers"):
        Timings.from_array(np.ones((20, 2, 1)) + 1j)  # not a duration of 1 s: the imaginary part is not dropped
    with pytest.raises(TypeError, match=r"durations must be an array of real seconds .*got an array of booleans"):
        Timings.from_array(np.ones((20, 2, 1), dtype=bool))  # not 1 s either
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame"):
        timings.from_frame([1, 2])


# ------------------------------------------------------------------------------------------------- properties
@st.composite
def traces(draw):
    it, w, k = draw(st.integers(1, 6)), draw(st.integers(2, 6)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    d = rng.exponential(1.0, (it, w, k)) * draw(st.sampled_from([1e-6, 1.0, 1e4]))
    d[rng.random(d.shape) < draw(st.sampled_from([0.0, 0.2]))] = np.nan
    dead = rng.random((it, w)) < draw(st.sampled_from([0.0, 0.3]))
    first = rng.integers(0, k, (it, w))
    for i, j in zip(*np.nonzero(dead)):
        d[i, j, first[i, j]:] = np.inf
    d[0, :, 0] = rng.exponential(1.0, w)  # every worker and iteration id appears
    d[:, 0, 0] = rng.exponential(1.0, it)
    return d


SETTINGS = settings(max_examples=40, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(traces(), st.booleans())
def test_read_returns_what_write_wrote_or_refuses_too_few_samples(tmp_path, d, with_hosts):
    path = tmp_path / "t.csv"
    hosts = [f"node{w % 2}" for w in range(d.shape[1])] if with_hosts else None
    timings.write(path, d, hosts=hosts)
    finite = int(np.isfinite(d).sum())
    if finite < 3:
        with pytest.raises(ValueError, match="too few samples"):
            timings.read(path, min_samples=3)
        return
    t = timings.read(path, min_samples=3)
    assert np.array_equal(t.durations, d, equal_nan=True)
    assert t.hosts == (tuple(hosts) if hosts else None)


@SETTINGS
@given(traces(), st.sampled_from(["iteration", "worker", "task", "seconds"]), st.data())
def test_one_bad_cell_is_named_by_its_line(tmp_path, d, column, data):
    frame = Timings.from_array(d, min_samples=1).frame()
    row = data.draw(st.integers(0, len(frame) - 1))
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = data.draw(st.sampled_from(["nan", "-3", "x", "0.5"]) if column != "seconds"
                                       else st.sampled_from(["nan", "-3", "x", ""]))
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError) as e:
        timings.read(path, min_samples=1)
    msg = str(e.value)
    assert "\n" not in msg and f"column {column!r}" in msg and f"at line {row + 2}" in msg, msg
