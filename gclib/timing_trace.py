"""A timing trace: the measured time of every partial gradient (:class:`Timings`), its CSV written and read, and the
checks every table of task times passes (:func:`from_frame`).

One row per (iteration, worker, task), columns :data:`COLUMNS` (documented in ``docs/advise.md``, "The timing
trace"):

* ``iteration``: integer >= 0;
* ``worker``: integer >= 0;
* ``task``: integer >= 1, the position of the partial gradient in the worker's order within that iteration;
* ``seconds``: float >= 0, the duration of that task, from the start of the iteration (task 1) or the end of
  the worker's previous task (task > 1) to its end; ``inf`` when the task never finished (the worker died or never
  answered);
* ``host`` (optional, text): the machine the worker ran on. Other columns are ignored.

A missing (iteration, worker, task) row means "not observed" (e.g. the master moved on before the worker
finished): the time is censored, not infinite.

:func:`read` checks a file and returns a :class:`Timings`; every problem raises one ``ValueError`` line naming the
file, the column and the first bad line. :func:`write` writes the CSV from a ``(iterations, workers, tasks)``
array. :func:`from_frame` checks a ``pandas.DataFrame`` with the same columns, :meth:`Timings.from_array` an array.
Traces in other shapes are read by :mod:`gclib.trace_convert`; :mod:`gclib.timings` gathers both.
"""
from __future__ import annotations

import io
import math
import os
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from gclib import checks, files

#: the required columns, in the order :func:`write` writes them.
COLUMNS = ("iteration", "worker", "task", "seconds")
#: optional columns :func:`read` keeps (others are ignored).
OPTIONAL = ("host",)
#: the fewest finite task durations a trace must hold. Each fitted family has at most two parameters; a
#: 95% interval from the bootstrap or the Fisher information, and a Kolmogorov-Smirnov distance, say little below
#: a few dozen samples (the KS statistic's 5% critical value is about 1.36 / sqrt(n): 0.25 at n = 30). 30 is
#: also what a short profile gives (8 workers, 4 iterations of one task each = 32).
MIN_SAMPLES = 30
#: the most rows :func:`read` takes from a file: a larger trace is refused as soon as the row after them is read.
#: Its fits' bootstrap (:func:`gclib.fit.fit`) draws about 2 x 200 replicates of every sample, a minute or so at this
#: size on one core; a million task times describe a cluster's stragglers as well as more would.
MAX_ROWS = 1_000_000
#: the most columns a trace file's header may have: the workers of a wide trace (gclib.design_space.MAX_WORKERS), and an
#: iteration column.
MAX_COLUMNS = 10_001
#: What a trace file (CSV, tidy or wide; plain, gzip, bzip2 or xz) may hold, checked before it is parsed: its rows
#: and a header, about 134 bytes a row on average (128 MiB), and :data:`MAX_COLUMNS` columns.
TRACE_BUDGET = files.Budget("a timing trace", 128 * files.MIB, lines=MAX_ROWS + 1, fields=MAX_COLUMNS,
                            constant="gclib.timings.TRACE_BUDGET")
#: the spellings of "never finished" in the ``seconds`` column (any case); any other number too large for float64
#: is refused, not read as never.
INF_WORDS = ("inf", "+inf", "infinity", "+infinity")

_LOWEST = {"iteration": 0, "worker": 0, "task": 1}


@dataclass(frozen=True, eq=False)
class Timings:
    """A checked timing trace.

    Attributes:
        durations: ``(iterations, workers, tasks)`` float array of task durations in seconds; ``nan`` = not
            observed (censored), ``inf`` = never finished. Index ``[i, w, j - 1]`` holds task ``j`` of worker
            ``worker_ids[w]`` in iteration ``iteration_ids[i]``.
        hosts: per worker (same order as ``worker_ids``), the host name, or ``None`` when the trace has no
            ``host`` column (``""`` for a worker whose host is not given).
        iteration_ids, worker_ids: the ids found in the trace, sorted (the array's axes are compacted: an id
            absent from the trace has no slice).
        source: what the trace was read from (the file name), for messages.
    """

    durations: np.ndarray
    hosts: Optional[tuple] = None
    iteration_ids: np.ndarray = field(default=None)
    worker_ids: np.ndarray = field(default=None)
    source: str = "trace"

    @property
    def iterations(self) -> int:
        return self.durations.shape[0]

    @property
    def workers(self) -> int:
        return self.durations.shape[1]

    @property
    def tasks(self) -> int:
        return self.durations.shape[2]

    @property
    def n_finite(self) -> int:
        """How many task durations are finite (observed and finished)."""
        return int(np.isfinite(self.durations).sum())

    def finish_times(self) -> np.ndarray:
        """``(iterations, workers, tasks)``: when each task finished, from the start of the iteration (the
        cumulative sum of the durations; ``nan`` after a task not observed, ``inf`` after one that never
        finished)."""
        return np.cumsum(self.durations, axis=2)

    def frame(self) -> pd.DataFrame:
        """The tidy rows (nan cells left out), with the ids of the trace."""
        return _rows(self.durations, self.hosts, self.iteration_ids, self.worker_ids)

    @classmethod
    def from_array(cls, durations, hosts: Optional[Sequence[str]] = None, *, source: str = "durations",
                   min_samples: int = MIN_SAMPLES) -> "Timings":
        """A :class:`Timings` from a ``(iterations, workers, tasks)`` array (``nan`` = not observed, ``inf`` =
        never), checked as :func:`read` checks a file."""
        d = _array(durations, "durations")
        return from_frame(_rows(d, _hosts(hosts, d.shape[1])), source=source, min_samples=min_samples, _line=None)


def _array(durations, name) -> np.ndarray:
    d = checks.real_array(name, durations, what="real seconds (iterations, workers, tasks; nan = not observed, "
                                                "inf = never)")
    if d.ndim != 3:
        raise ValueError(f"{name} must be an (iterations, workers, tasks) array of seconds, got shape {d.shape}")
    bad = d < 0
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must hold durations >= 0 (nan = not observed, inf = never), got {d[where]} at "
                         f"index {where}")
    return d


def _hosts(hosts, workers):
    if hosts is None:
        return None
    if isinstance(hosts, str) or len(hosts) != workers:
        raise ValueError(f"hosts must be a sequence of one host name per worker ({workers}), got {hosts!r}")
    return tuple("" if h is None else str(h) for h in hosts)


def _rows(d, hosts=None, iteration_ids=None, worker_ids=None) -> pd.DataFrame:
    it, w, k = np.nonzero(~np.isnan(d))
    iteration_ids = np.arange(d.shape[0]) if iteration_ids is None else np.asarray(iteration_ids)
    worker_ids = np.arange(d.shape[1]) if worker_ids is None else np.asarray(worker_ids)
    out = pd.DataFrame({"iteration": iteration_ids[it].astype(np.int64), "worker": worker_ids[w].astype(np.int64),
                        "task": (k + 1).astype(np.int64), "seconds": d[it, w, k]})
    if hosts is not None:
        out["host"] = np.asarray(hosts, dtype=object)[w] if len(w) else np.array([], dtype=object)
    return out


def write(path, durations, hosts: Optional[Sequence[str]] = None, *, iteration_ids=None,
          worker_ids=None) -> os.PathLike:
    """Write a timing trace: one row per observed cell of ``durations`` (``(iterations, workers, tasks)``
    seconds; ``nan`` cells are left out, ``inf`` is written as ``inf``), worker ``w`` of the array being worker
    ``w`` of the file (or ``worker_ids[w]``), iteration ``i`` iteration ``i`` (or ``iteration_ids[i]``), ``hosts``
    one name per worker (an optional ``host`` column).

    The file is written whole or not at all (through a temporary file beside it). Returns the path.
    """
    d = _array(durations, "durations")
    ids = []
    for name, v, n in (("iteration_ids", iteration_ids, d.shape[0]), ("worker_ids", worker_ids, d.shape[1])):
        if v is not None:
            v = np.asarray(v)
            if v.shape != (n,) or not np.issubdtype(v.dtype, np.integer) or (v < 0).any() or len(set(v)) != n:
                raise ValueError(f"{name} must hold {n} distinct integers >= 0, got {v.tolist()!r}")
        ids.append(v)
    rows = _rows(d, _hosts(hosts, d.shape[1]), *ids)
    p = checks.output_file("path", path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    try:
        rows.to_csv(tmp, index=False)
        os.replace(tmp, p)
    except OSError as e:  # a full disk, say: the error names the file asked for
        raise OSError(e.errno, e.strerror or str(e), str(p)) from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return p


def read(path, *, min_samples: int = MIN_SAMPLES) -> Timings:
    """Read and check a timing trace CSV (columns :data:`COLUMNS`, optional ``host``).

    Raises:
        ValueError: one line naming the file and the problem (the column and the first bad line of the file,
        header = line 1): a missing file or column, a non-integer or negative id, a ``task`` below 1, a ``seconds``
        that is empty, NaN, not a number or negative, a repeated (iteration, worker, task), a finite time after a
        task of the same worker that never finished, a worker on two hosts, fewer than 2 workers, or fewer than
        ``min_samples`` finite durations.
    """
    name = os.fspath(path)
    data = files.read_text("trace", path, TRACE_BUDGET, expected=f"a CSV with columns {', '.join(COLUMNS)}")
    if data.count(b"\n") > MAX_ROWS + 1:
        raise ValueError(f"{name}: more than {MAX_ROWS:,} rows, too large a trace to fit (its bootstrap draws every "
                         f"sample hundreds of times; gclib.timings.MAX_ROWS); keep a part of its iterations")
    try:
        frame = pd.read_csv(io.BytesIO(data), dtype={"host": str, "seconds": str}, keep_default_na=True,
                            skipinitialspace=True, nrows=MAX_ROWS + 1)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name}: empty file, expected a CSV with columns {', '.join(COLUMNS)}") from None
    except pd.errors.ParserError as e:  # pandas names the line and the field counts, not the content
        raise ValueError(f"{name}: not a readable CSV ({_parser_error(e)})") from None
    if len(frame) > MAX_ROWS:
        raise ValueError(f"{name}: more than {MAX_ROWS:,} rows, too large a trace to fit (its bootstrap draws every "
                         f"sample hundreds of times; gclib.timings.MAX_ROWS); keep a part of its iterations")
    return from_frame(frame, source=name, min_samples=min_samples, _line=2)


def _parser_error(e) -> str:
    """What pandas says of a CSV it cannot read, when it says where (a line and field counts), else only that:
    some of its messages quote the text."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if m:
        return f"line {m.group(2)} has {m.group(3)} fields, expected {m.group(1)}"
    m = re.search(r"(?:line|row) (\d+)", text)
    return f"malformed near line {m.group(1)}" if m else "malformed CSV (an unclosed quote, or a bad delimiter)"


def found_columns(found, known) -> str:
    """What a file's header holds, said without quoting it: the columns gclib knows among ``found`` (``known``),
    and how many others (their names are the file's content: any file's first line, ``/etc/shadow``'s say)."""
    found = [str(c) for c in found]
    mine = [c for c in found if c in known]
    others = len(found) - len(mine)
    if not mine:
        return (f"its first line is not the header of a timing trace ({len(found)} column{'s' * (len(found) != 1)}, "
                f"none of them a trace's)")
    return (f"found {', '.join(mine)}" + (f" and {others} other column{'s' * (others != 1)}" if others else ""))


def _value(v, line):
    """A cell as it is shown in a message: ``", got VALUE"`` for a table or an array given in Python (a plain
    Python value, not a numpy scalar); nothing for a file (``line`` not ``None``): an error names the file, the
    column and the line, never what the file holds beyond its header."""
    if line is not None:
        return ""
    return f", got {repr(v.item() if isinstance(v, np.generic) else v)}"


def _overflows(cell) -> bool:
    """A cell that is a number, written out, beyond the float64 range (not one of :data:`INF_WORDS`)."""
    text = str(cell).strip()
    try:
        return math.isinf(float(text)) and text.lower().lstrip("+-") not in INF_WORDS
    except (ValueError, OverflowError):
        return False


def _where(index, line, n_bad) -> str:
    at = f"line {index + line}" if line is not None else f"row {index}"
    return at + (f" (and {n_bad - 1} more)" if n_bad > 1 else "")


def from_frame(frame: pd.DataFrame, *, source: str = "trace", min_samples: int = MIN_SAMPLES,
               _line: Optional[int] = None) -> Timings:
    """Check a table with the columns of a trace and return a :class:`Timings` (see :func:`read`; rows are named
    by their position, from 0)."""
    if not isinstance(frame, pd.DataFrame):
        raise checks.ParameterTypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    min_samples = checks.integer("min_samples", min_samples, low=1)
    frame = frame.reset_index(drop=True)
    _check_columns(frame, source, min_samples, _line)
    ids = {col: _ids(frame[col], col, source, _line) for col in ("iteration", "worker", "task")}
    sec = _seconds(frame["seconds"], source, _line)
    _check_unique(ids, source, _line)
    iteration_ids, it = np.unique(ids["iteration"], return_inverse=True)
    worker_ids, w = np.unique(ids["worker"], return_inverse=True)
    if len(worker_ids) < 2:
        raise ValueError(f"{source}: a trace needs at least 2 workers, got {len(worker_ids)}")
    n_tasks = int(ids["task"].max())
    if len(iteration_ids) * len(worker_ids) * n_tasks > 50_000_000:
        raise ValueError(f"{source}: {len(iteration_ids)} iterations x {len(worker_ids)} workers x {n_tasks} tasks "
                         f"is too large a trace (at most 50 million cells)")
    d = np.full((len(iteration_ids), len(worker_ids), n_tasks), np.nan)
    d[it, w, ids["task"] - 1] = sec
    _check_never(d, it, w, ids["task"], iteration_ids, worker_ids, source, _line)
    finite = int(np.isfinite(d).sum())
    if finite < min_samples:
        raise ValueError(f"{source}: too few samples: {finite} finite task times, at least {min_samples} are needed "
                         f"to fit a model (record more iterations or workers)")
    hosts = _host_names(frame, w, worker_ids, source, _line) if "host" in frame.columns else None
    return Timings(durations=d, hosts=hosts, iteration_ids=iteration_ids, worker_ids=worker_ids, source=source)


def _check_columns(frame, source, min_samples, line) -> None:
    """Refuse a table without the columns of a trace, or without rows."""
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        found = (f"found {', '.join(map(str, frame.columns)) or 'none'}" if line is None else
                 found_columns(frame.columns, (*COLUMNS, *OPTIONAL)))
        raise ValueError(f"{source}: missing column{'s' * (len(missing) > 1)} {', '.join(map(repr, missing))} "
                         f"(a trace has columns {', '.join(COLUMNS)}, optionally host; {found})")
    if frame.empty:
        raise ValueError(f"{source}: no rows (at least {min_samples} finite task times are needed)")


def _ids(raw, col, source, line) -> np.ndarray:
    """The ids of column ``col`` (``iteration``, ``worker`` or ``task``) as ``int64``: integers at least their
    lowest value (0, or 1 for a task)."""
    num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(num) | (num != np.round(num))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{source}: column {col!r} must hold integers{_value(raw.iloc[i], line)} at "
                         f"{_where(i, line, int(bad.sum()))}")
    low = num < _LOWEST[col]
    if low.any():
        i = int(np.flatnonzero(low)[0])
        raise ValueError(f"{source}: column {col!r} must hold integers >= {_LOWEST[col]}"
                         f"{_value(int(num[i]), line)} at {_where(i, line, int(low.sum()))}")
    return num.astype(np.int64)


def _seconds(raw, source, line) -> np.ndarray:
    """The ``seconds`` column as floats: numbers >= 0 or ``inf`` (never finished); an empty cell, NaN, text or a
    number too large for a float refused."""
    sec = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    empty = raw.isna().to_numpy()
    text = np.isnan(sec) & ~empty
    if text.any():
        i = int(np.flatnonzero(text)[0])
        if str(raw.iloc[i]).strip().lower() in ("nan", "-nan", "+nan"):
            empty, text = empty | text, np.zeros_like(text)
        elif _overflows(raw.iloc[i]):
            raise ValueError(f"{source}: column 'seconds' holds a number too large for a float at "
                             f"{_where(i, line, int(text.sum()))} (write inf for a task that never finished)")
        else:
            raise ValueError(f"{source}: column 'seconds' must hold numbers (inf for a task that never finished)"
                             f"{_value(raw.iloc[i], line)} at {_where(i, line, int(text.sum()))}")
    if not pd.api.types.is_numeric_dtype(raw):  # read as text: a number beyond float64 is not "never finished"
        huge = np.isinf(sec)
        huge[huge] = [_overflows(c) for c in raw[huge]]
        if huge.any():
            i = int(np.flatnonzero(huge)[0])
            raise ValueError(f"{source}: column 'seconds' holds a number too large for a float at "
                             f"{_where(i, line, int(huge.sum()))} (write inf for a task that never finished)")
    nan = np.isnan(sec)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise ValueError(f"{source}: column 'seconds' is empty or NaN at {_where(i, line, int(nan.sum()))}; leave "
                         f"out the row of a task not observed, write inf for one that never finished")
    neg = sec < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{source}: column 'seconds' must hold durations >= 0{_value(sec[i], line)} at "
                         f"{_where(i, line, int(neg.sum()))}")
    return sec


def _check_unique(ids: dict, source, line) -> None:
    """Refuse an (iteration, worker, task) given twice."""
    key = pd.DataFrame(ids)
    dup = key.duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        first = int(np.flatnonzero((key == key.iloc[i]).all(axis=1).to_numpy())[0])
        what = ("an (iteration, worker, task)" if line is not None else
                f"(iteration, worker, task) = ({ids['iteration'][i]}, {ids['worker'][i]}, {ids['task'][i]})")
        raise ValueError(f"{source}: {what} appears twice, at {_where(first, line, 1)} and again at "
                         f"{_where(i, line, int(dup.sum()))}")


def _check_never(d, it, w, task, iteration_ids, worker_ids, source, line) -> None:
    """Refuse a task that finished after one of the same worker and iteration that never did (``d``: the
    ``(iterations, workers, tasks)`` array; ``it``, ``w``, ``task``: each row's place in it)."""
    never = np.isinf(d)
    after = np.isfinite(d) & (np.cumsum(never, axis=2) > 0)
    if after.any():
        a, b, c = (int(x) for x in np.argwhere(after)[0])
        row = np.flatnonzero((it == a) & (w == b) & (task == c + 1))[0]
        first = int(np.flatnonzero(never[a, b])[0]) + 1
        before = np.flatnonzero((it == a) & (w == b) & (task == first))[0]
        who = ("a worker" if line is not None else f"worker {worker_ids[b]} in iteration {iteration_ids[a]}")
        raise ValueError(f"{source}: {who} has a finite time for task {c + 1} after task {first} never finished "
                         f"(inf), at {_where(int(row), line, 1)} (the inf at {_where(int(before), line, 1)})")


def _host_names(frame, w, worker_ids, source, line) -> tuple:
    """The host of every worker (``""`` where none is given), in the order of ``worker_ids``; a worker on two
    hosts refused (``w``: each row's worker index)."""
    h = frame["host"].astype(object).where(frame["host"].notna(), "").map(str).to_numpy()
    per = pd.DataFrame({"w": w, "h": h}).drop_duplicates()
    two = per[per["w"].duplicated(keep=False)]
    if len(two):
        wb = int(two["w"].iloc[0])
        if line is not None:  # the lines, not the host names the file holds
            rows = [int(np.flatnonzero((w == wb) & (h == name))[0]) for name in two[two["w"] == wb]["h"]]
            where = " and ".join(_where(r, line, 1) for r in sorted(rows)[:2])
            raise ValueError(f"{source}: a worker appears on several hosts (at {where}); one worker id per "
                             f"process")
        names = sorted(two[two["w"] == wb]["h"])
        raise ValueError(f"{source}: worker {worker_ids[wb]} appears on several hosts "
                         f"({', '.join(map(repr, names))}); one worker id per process")
    return tuple(per.sort_values("w")["h"])
