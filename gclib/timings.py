"""Timing traces: the measured time of every partial gradient, as a tidy CSV.

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

Traces in other shapes (documented in ``docs/advise.md``, "Real traces in"): :func:`convert` reads a tidy CSV with
other column names (``columns={"iteration": "step", "worker": "rank", "seconds": "duration"}``), a wide CSV (one
row per iteration, one column per worker) and a per-operation parquet trace of a training job (the schema of the
public traces of Lin et al., "Understanding Stragglers in Large Model Training Using What-if Analysis", OSDI 2025,
arXiv:2505.05713: one row per operation with ``step``, ``dp_rank``, ``stage``, ``optype``, ``mb_id``,
``duration``), and returns a :class:`Conversion`: the checked :class:`Timings` with what was kept and dropped.
:func:`check_complete` refuses a trace in which a worker is missing from a whole iteration.
"""
from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from gclib import checks, files

__all__ = ["COLUMNS", "OPTIONAL", "MIN_SAMPLES", "FORMATS", "OPS_COLUMNS", "COMPUTE_OPS", "Timings", "Conversion",
           "read", "write", "from_frame", "convert", "load", "check_complete", "shipped"]

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
#: the most columns a trace file's header may have: the workers of a wide trace (gclib.advise.MAX_WORKERS), and an
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
    import re

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
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        found = (f"found {', '.join(map(str, frame.columns)) or 'none'}" if _line is None else
                 found_columns(frame.columns, (*COLUMNS, *OPTIONAL)))
        raise ValueError(f"{source}: missing column{'s' * (len(missing) > 1)} {', '.join(map(repr, missing))} "
                         f"(a trace has columns {', '.join(COLUMNS)}, optionally host; {found})")
    if frame.empty:
        raise ValueError(f"{source}: no rows (at least {min_samples} finite task times are needed)")
    ids = {}
    for col in ("iteration", "worker", "task"):
        raw = frame[col]
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(num) | (num != np.round(num))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{source}: column {col!r} must hold integers{_value(raw.iloc[i], _line)} at "
                             f"{_where(i, _line, int(bad.sum()))}")
        low = num < _LOWEST[col]
        if low.any():
            i = int(np.flatnonzero(low)[0])
            raise ValueError(f"{source}: column {col!r} must hold integers >= {_LOWEST[col]}"
                             f"{_value(int(num[i]), _line)} at {_where(i, _line, int(low.sum()))}")
        ids[col] = num.astype(np.int64)
    raw = frame["seconds"]
    sec = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    empty = raw.isna().to_numpy()
    text = np.isnan(sec) & ~empty
    if text.any():
        i = int(np.flatnonzero(text)[0])
        if str(raw.iloc[i]).strip().lower() in ("nan", "-nan", "+nan"):
            empty, text = empty | text, np.zeros_like(text)
        elif _overflows(raw.iloc[i]):
            raise ValueError(f"{source}: column 'seconds' holds a number too large for a float at "
                             f"{_where(i, _line, int(text.sum()))} (write inf for a task that never finished)")
        else:
            raise ValueError(f"{source}: column 'seconds' must hold numbers (inf for a task that never finished)"
                             f"{_value(raw.iloc[i], _line)} at {_where(i, _line, int(text.sum()))}")
    if not pd.api.types.is_numeric_dtype(raw):  # read as text: a number beyond float64 is not "never finished"
        huge = np.isinf(sec)
        huge[huge] = [_overflows(c) for c in raw[huge]]
        if huge.any():
            i = int(np.flatnonzero(huge)[0])
            raise ValueError(f"{source}: column 'seconds' holds a number too large for a float at "
                             f"{_where(i, _line, int(huge.sum()))} (write inf for a task that never finished)")
    nan = np.isnan(sec)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise ValueError(f"{source}: column 'seconds' is empty or NaN at {_where(i, _line, int(nan.sum()))}; leave "
                         f"out the row of a task not observed, write inf for one that never finished")
    neg = sec < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{source}: column 'seconds' must hold durations >= 0{_value(sec[i], _line)} at "
                         f"{_where(i, _line, int(neg.sum()))}")
    key = pd.DataFrame(ids)
    dup = key.duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        first = int(np.flatnonzero((key == key.iloc[i]).all(axis=1).to_numpy())[0])
        what = ("an (iteration, worker, task)" if _line is not None else
                f"(iteration, worker, task) = ({ids['iteration'][i]}, {ids['worker'][i]}, {ids['task'][i]})")
        raise ValueError(f"{source}: {what} appears twice, at {_where(first, _line, 1)} and again at "
                         f"{_where(i, _line, int(dup.sum()))}")
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
    # a task cannot finish after one of the same worker and iteration that never did
    never = np.isinf(d)
    after = np.isfinite(d) & (np.cumsum(never, axis=2) > 0)
    if after.any():
        a, b, c = (int(x) for x in np.argwhere(after)[0])
        row = np.flatnonzero((it == a) & (w == b) & (ids["task"] == c + 1))[0]
        first = int(np.flatnonzero(never[a, b])[0]) + 1
        before = np.flatnonzero((it == a) & (w == b) & (ids["task"] == first))[0]
        who = ("a worker" if _line is not None else f"worker {worker_ids[b]} in iteration {iteration_ids[a]}")
        raise ValueError(f"{source}: {who} has a finite time for task {c + 1} after task {first} never finished "
                         f"(inf), at {_where(int(row), _line, 1)} (the inf at {_where(int(before), _line, 1)})")
    finite = int(np.isfinite(d).sum())
    if finite < min_samples:
        raise ValueError(f"{source}: too few samples: {finite} finite task times, at least {min_samples} are needed "
                         f"to fit a model (record more iterations or workers)")
    hosts = None
    if "host" in frame.columns:
        h = frame["host"].astype(object).where(frame["host"].notna(), "").map(str).to_numpy()
        per = pd.DataFrame({"w": w, "h": h}).drop_duplicates()
        two = per[per["w"].duplicated(keep=False)]
        if len(two):
            wb = int(two["w"].iloc[0])
            if _line is not None:  # the lines, not the host names the file holds
                rows = [int(np.flatnonzero((w == wb) & (h == name))[0]) for name in two[two["w"] == wb]["h"]]
                where = " and ".join(_where(r, _line, 1) for r in sorted(rows)[:2])
                raise ValueError(f"{source}: a worker appears on several hosts (at {where}); one worker id per "
                                 f"process")
            names = sorted(two[two["w"] == wb]["h"])
            raise ValueError(f"{source}: worker {worker_ids[wb]} appears on several hosts "
                             f"({', '.join(map(repr, names))}); one worker id per process")
        hosts = tuple(per.sort_values("w")["h"])
    return Timings(durations=d, hosts=hosts, iteration_ids=iteration_ids, worker_ids=worker_ids, source=source)


# ---------------------------------------------------------------------------------------- real traces in
#: The formats :func:`convert` reads; ``auto`` tells them apart by the file's first bytes and header.
FORMATS = ("auto", "csv", "wide", "ops")
#: The columns a per-operation trace must have (``stage`` and ``rank`` are used when present).
OPS_COLUMNS = ("step", "dp_rank", "optype", "mb_id", "duration")
#: The operations that make a microbatch's task time: its forward and its backward compute.
COMPUTE_OPS = ("forward-compute", "backward-compute")
#: How the pipeline stages of a data-parallel replica add up to its task time (:func:`convert`'s ``stages``).
STAGE_RULES = ("sum", "max")
#: Where the shipped public traces are, relative to the repository (see its README.md).
SHIPPED_DIR = "data/straggler-analysis"
_KEYS = (*COLUMNS, "host")


@dataclass(frozen=True, eq=False)
class Conversion:
    """A trace read from another shape by :func:`convert`.

    Attributes:
        timings: the checked :class:`Timings` (its ids are the file's: steps, ranks, column names that are
            integers). format: ``csv``, ``wide`` or ``ops``. source: the file.
        rows: rows (or cells, for a wide CSV) read; kept: how many of them make the task times.
        dropped: what was left out, ``{what: rows}``. workers: worker id -> the file's name of that worker (the
            column of a wide CSV, the ``dp_rank`` of an operation trace). notes: sentences saying how the task
            times were made.
    """

    timings: Timings
    format: str
    source: str
    rows: int
    kept: int
    dropped: dict = field(default_factory=dict)
    workers: dict = field(default_factory=dict)
    notes: tuple = ()

    def text(self) -> str:
        """What the conversion read, kept and dropped, for a person."""
        t = self.timings
        lines = [f"{self.source} ({self.format}): {t.iterations} iterations x {t.workers} workers x {t.tasks} tasks, "
                 f"{t.n_finite} task times; {self.kept} of {self.rows} "
                 f"{'cells' if self.format == 'wide' else 'rows'} kept"]
        lines += [f"  {n}" for n in self.notes]
        for what, n in self.dropped.items():
            lines.append(f"  dropped: {what}: {n}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        t = self.timings
        return {"source": self.source, "format": self.format, "iterations": t.iterations, "workers": t.workers,
                "tasks": t.tasks, "task_times": t.n_finite, "rows": self.rows, "kept": self.kept,
                "dropped": dict(self.dropped), "workers_named": {str(k): v for k, v in self.workers.items()},
                "notes": list(self.notes)}

    def write(self, path) -> os.PathLike:
        """Write the trace as a timing-trace CSV (:func:`write`), keeping the file's ids."""
        t = self.timings
        return write(path, t.durations, t.hosts, iteration_ids=t.iteration_ids, worker_ids=t.worker_ids)


def parse_columns(text) -> dict:
    """``"iteration=step,worker=rank,seconds=duration"`` -> ``{"iteration": "step", ...}``: which column of the
    file holds each column of a trace (:data:`COLUMNS` and ``host``)."""
    if isinstance(text, dict):
        pairs = list(text.items())
    else:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"columns must be NAME=COLUMN pairs separated by commas (e.g. iteration=step,"
                             f"worker=rank,seconds=duration), got {text!r}")
        pairs = []
        for part in text.split(","):
            name, eq, col = part.partition("=")
            if not eq or not name.strip() or not col.strip():
                raise ValueError(f"columns must be NAME=COLUMN pairs separated by commas, got {part!r} in {text!r}")
            pairs.append((name.strip(), col.strip()))
    out = {}
    for name, col in pairs:
        if name not in _KEYS:
            raise ValueError(f"columns names a trace column {name!r}; a trace's columns are {', '.join(_KEYS)}")
        if name in out:
            raise ValueError(f"columns gives {name!r} twice")
        if not isinstance(col, str) or not col:
            raise ValueError(f"columns[{name!r}] must be a column name, got {col!r}")
        out[name] = col
    cols = list(out.values())
    twice = sorted({c for c in cols if cols.count(c) > 1})
    if twice:
        raise ValueError(f"columns maps two trace columns to the same file column {twice[0]!r}")
    return out


def check_complete(t: Timings) -> Timings:
    """``t`` when every worker has a task time (finite or ``inf``) in every iteration; else ValueError naming the
    first worker and iteration missing, and how many more. A worker's identity (:mod:`gclib.effects`) can only be
    kept across iterations it took part in: leave out the iterations it missed."""
    seen = ~np.isnan(t.durations).all(axis=2)
    if seen.all():
        return t
    miss = np.argwhere(~seen)
    i, w = (int(v) for v in miss[0])
    iters = len(np.unique(miss[:, 0]))
    more = f" (and {len(miss) - 1} more worker-iterations, in {iters} iterations)" if len(miss) > 1 else ""
    raise ValueError(f"{t.source}: worker {t.worker_ids[w]} is missing from iteration {t.iteration_ids[i]} (no task "
                     f"time){more}; every worker needs a time in every iteration (leave out the iterations a worker "
                     f"missed)")


def load(path, *, min_samples: int = MIN_SAMPLES) -> Timings:
    """A timing-trace CSV (:func:`read`), or a per-operation parquet trace converted with the defaults of
    :func:`convert` (what ``gclib advise --trace`` reads)."""
    fh, _ = files.open_regular("trace", path)
    with fh:
        parquet = fh.read(4) == b"PAR1"
    if parquet:
        return convert(path, "ops", min_samples=min_samples).timings
    return read(path, min_samples=min_samples)


def shipped(root=None) -> dict:
    """The public traces shipped with the repository (``data/straggler-analysis``, see its README.md): ``{name:
    path}`` (``AR``, ``SE``, ``ST``), sorted by name; empty when the folder is absent (an installed package)."""
    base = (Path(__file__).resolve().parent.parent if root is None else Path(root)) / SHIPPED_DIR
    return {p.stem.split("-", 1)[1]: p for p in sorted(base.glob("trace-*.parquet"))}


def convert(path, format: str = "auto", *, columns=None, stages: str | None = None, min_samples: int = MIN_SAMPLES,
            complete: bool = True) -> Conversion:
    """Read a trace in another shape (see ``docs/advise.md``, "Real traces in") as a :class:`Conversion`.

    Args:
        path: the file. format: one of :data:`FORMATS`: ``csv`` (one row per task, or per (iteration, worker)),
            ``wide`` (one row per iteration, one column per worker), ``ops`` (a per-operation parquet trace);
            ``auto``: ``ops`` for a parquet file, ``csv`` for a CSV whose header has the ``worker`` and ``seconds``
            columns (after ``columns``), ``wide`` for one whose columns, but an ``iteration`` one, are integers.
        columns: which file column holds each trace column (:func:`parse_columns`; ``csv``; ``wide``: only
            ``iteration``). stages: ``ops`` only: how a replica's pipeline stages add up (:data:`STAGE_RULES`;
            default ``sum``); refused for a CSV.
        min_samples: as :func:`read`. complete: refuse a worker missing from a whole iteration
            (:func:`check_complete`).
    Raises:
        ValueError: one line naming the file and what is wrong (an unknown format, a column that is not there, a
        bad value and its line, a worker missing from a whole iteration, pyarrow missing for a parquet file).
    """
    fmt = checks.choice("format", format, FORMATS)
    if stages is not None:
        stages = checks.choice("stages", stages, STAGE_RULES)
    cols = {} if columns is None else parse_columns(columns)
    name = os.fspath(path)
    fh, _ = files.open_regular("trace", path)
    with fh:
        is_parquet = fh.read(4) == b"PAR1"
    if fmt == "auto":
        fmt = "ops" if is_parquet else "auto"
    if stages is not None and fmt not in ("ops", "auto"):
        raise ValueError(f"{name}: stages applies to a per-operation trace only, and this one is read as format "
                         f"{fmt}")
    if fmt == "ops":
        if cols:
            raise ValueError(f"{name}: columns does not apply to a per-operation trace (its columns are "
                             f"{', '.join(OPS_COLUMNS)}, stage)")
        conv = _read_ops(path, name, stages or "sum", min_samples)
    elif is_parquet:
        raise ValueError(f"{name}: a parquet file, not a CSV: read it with format ops")
    else:
        data = files.read_text("trace", path, TRACE_BUDGET, expected="a CSV trace")
        if fmt == "auto":
            fmt = _sniff_csv(name, data[:4096], cols)
        if stages is not None:
            raise ValueError(f"{name}: stages applies to a per-operation trace only, and this one is read as format "
                             f"{fmt}")
        conv = (_read_wide if fmt == "wide" else _read_long)(data, name, cols, min_samples)
    if complete:
        check_complete(conv.timings)
    return conv


def _sniff_csv(name, head: bytes, cols: dict) -> str:
    unknown = (f"{name}: unknown format: not a parquet file, nor a CSV with columns "
               f"{cols.get('worker', 'worker')} and {cols.get('seconds', 'seconds')} (a tidy trace) or with integer "
               f"column names (a wide trace, one column per worker); give the format (csv, wide or ops) and "
               f"the columns")
    text = head.decode("utf-8", errors="replace")  # (the whole file is checked as UTF-8 text already)
    if not text.strip():
        raise ValueError(unknown)
    header = [c.strip().strip('"') for c in text.splitlines()[0].split(",")]
    if "worker" in cols or "seconds" in cols or (cols.get("worker", "worker") in header
                                                 and cols.get("seconds", "seconds") in header):
        return "csv"  # columns naming a worker or a seconds column: a tidy trace (missing ones are named then)
    it = cols.get("iteration", "iteration")
    rest = [c for c in header if c != it]
    if len(rest) >= 2 and all(c.isdigit() for c in rest):
        return "wide"
    raise ValueError(unknown)


def _read_csv(data: bytes, name, *, cells: bool = False) -> pd.DataFrame:
    """The table of a CSV's bytes (checked by :func:`gclib.files.read_text`), every cell as text; ``cells``: refuse
    a table of more than :data:`MAX_ROWS` cells (rows x columns, a wide trace's task times) before it is parsed."""
    if cells:
        end = data.find(b"\n")
        columns = data.count(b",", 0, len(data) if end < 0 else end) + 1
        rows = max(data.count(b"\n") - (1 if data.endswith(b"\n") else 0), 0)
        if rows * max(columns - 1, 1) > MAX_ROWS:
            raise ValueError(f"{name}: {rows:,} rows x {columns - 1:,} worker columns, more than the {MAX_ROWS:,} "
                             f"task times of a trace (gclib.timings.MAX_ROWS); keep a part of its iterations")
    try:
        return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name}: empty file") from None
    except pd.errors.ParserError as e:
        raise ValueError(f"{name}: not a readable CSV ({_parser_error(e)})") from None


def _missing(name, wanted: dict, found, what: str) -> None:
    absent = [(k, v) for k, v in wanted.items() if v not in found]
    if absent:
        k, v = absent[0]
        via = f" (the {k} column given by columns)" if k != v else ""
        known = {*wanted.values(), *_KEYS, *OPS_COLUMNS, "stage", "rank"}
        raise ValueError(f"{name}: missing column {v!r}{via}; {what}; {found_columns(found, known)}")


def _read_long(data, name, cols, min_samples) -> Conversion:
    frame = _read_csv(data, name)
    wanted = {k: cols.get(k, k) for k in ("iteration", "worker", "seconds")}
    if "task" in cols:
        wanted["task"] = cols["task"]
    if "host" in cols:
        wanted["host"] = cols["host"]
    _missing(name, wanted, list(frame.columns), "a tidy trace has one row per task with columns iteration, worker, "
             "seconds and optionally task and host")
    mapped = set(wanted.values())
    keep = {v: k for k, v in wanted.items()}
    if "task" not in wanted and "task" in frame.columns and "task" not in mapped:
        keep["task"] = "task"
    if "host" not in wanted and "host" in frame.columns and "host" not in mapped:
        keep["host"] = "host"
    out = frame[list(keep)].rename(columns=keep)
    out = out.replace("", np.nan)
    notes = [f"column {v!r} read as {k}" for k, v in wanted.items() if k != v]
    if "task" not in out.columns:
        out["task"] = out.groupby(["iteration", "worker"], sort=False, dropna=False).cumcount() + 1
        notes.append("no task column: a worker's rows in an iteration are its tasks 1, 2, ... in the order of the file")
    t = from_frame(out, source=name, min_samples=min_samples, _line=2)
    dropped = {f"column {c!r}": len(frame) for c in frame.columns if c not in keep}
    return Conversion(t, "csv", name, len(frame), len(frame), dropped, {}, tuple(notes))


def _read_wide(data, name, cols, min_samples) -> Conversion:
    other = sorted(set(cols) - {"iteration"})
    if other:
        raise ValueError(f"{name}: columns of a wide trace names only its iteration column (every other column is a "
                         f"worker), got {', '.join(other)}")
    frame = _read_csv(data, name, cells=True)
    it = cols.get("iteration", "iteration")
    if "iteration" in cols:
        _missing(name, {"iteration": it}, list(frame.columns), "a wide trace has one row per iteration and one "
                 "column per worker")
    workers = [c for c in frame.columns if c != it]
    if len(workers) < 2:
        raise ValueError(f"{name}: a wide trace needs a column per worker, at least 2, got {len(workers)} (line 1, "
                         f"the header, names the workers)")
    notes = []
    if it in frame.columns:
        raw = frame[it]
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(num) | (num != np.round(num)) | (num < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}: column {it!r} must hold iteration numbers (integers >= 0) at "
                             f"{_where(i, 2, int(bad.sum()))}")
        iters = num.astype(np.int64)
        notes.append(f"iterations from column {it!r}")
    else:
        iters = np.arange(len(frame), dtype=np.int64)
        notes.append("no iteration column: the rows are iterations 0, 1, ... in the order of the file")
    if all(str(c).isdigit() for c in workers):
        ids = [int(c) for c in workers]
        notes.append("worker ids from the column names")
    else:
        ids = list(range(len(workers)))
        notes.append("workers numbered 0, 1, ... in the order of the columns")
    rows = []
    cells = 0
    for wid, c in zip(ids, workers):
        raw = frame[c].str.strip()
        sec = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        empty = (raw == "").to_numpy() | raw.str.lower().isin(["nan", "-nan", "+nan"]).to_numpy()
        text = np.isnan(sec) & ~empty
        if text.any():
            i = int(np.flatnonzero(text)[0])
            raise ValueError(f"{name}: column {c!r} must hold seconds (empty: not observed, inf: never finished) at "
                             f"{_where(i, 2, int(text.sum()))}")
        neg = sec < 0
        if neg.any():
            i = int(np.flatnonzero(neg)[0])
            raise ValueError(f"{name}: column {c!r} must hold durations >= 0 at {_where(i, 2, int(neg.sum()))}")
        cells += len(sec)
        ok = ~np.isnan(sec)
        rows.append(pd.DataFrame({"iteration": iters[ok], "worker": wid, "task": 1, "seconds": sec[ok]}))
    long = pd.concat(rows, ignore_index=True)
    dup = pd.Series(iters).duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise ValueError(f"{name}: iteration {iters[i]} appears twice, again at line {i + 2}")
    t = from_frame(long, source=name, min_samples=min_samples)
    named = {} if all(str(c).isdigit() for c in workers) else dict(zip(ids, map(str, workers)))
    notes.append("one task per (iteration, worker): a cell is that worker's time for the iteration")
    return Conversion(t, "wide", name, cells, len(long), {"empty cells (not observed)": cells - len(long)}, named,
                      tuple(notes))


#: The most operations (rows) of a per-operation parquet trace, and the most bytes its columns that are read take
#: once decompressed (what its metadata says, checked before a page is read). The public traces of Lin et al.
#: hold about 120,000 operations (1.3 MB).
OPS_MAX_ROWS = 5_000_000
OPS_MAX_BYTES = 512 * files.MIB


def _ops_metadata(path, name):
    """The metadata of a parquet trace (a regular file within :data:`OPS_MAX_BYTES` on disk), read before its data."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fh, st = files.open_regular("trace", path)
    fh.close()
    if st.st_size > OPS_MAX_BYTES:
        raise ValueError(f"{name}: {checks.format_bytes(st.st_size)} on disk, more than the "
                         f"{checks.format_bytes(OPS_MAX_BYTES)} a per-operation trace may hold "
                         f"(gclib.timings.OPS_MAX_BYTES)")
    try:
        return pq.ParquetFile(os.fspath(path)).metadata
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"{name}: not a readable parquet file (pyarrow: {type(e).__name__})") from None


def _ops_budget(name, meta, use) -> None:
    """Refuse a parquet trace whose metadata says it holds more than :data:`OPS_MAX_ROWS` rows, or whose columns
    ``use`` take more than :data:`OPS_MAX_BYTES` decompressed."""
    if meta.num_rows > OPS_MAX_ROWS:
        raise ValueError(f"{name}: {meta.num_rows:,} operations, more than the {OPS_MAX_ROWS:,} a per-operation trace "
                         f"may hold (gclib.timings.OPS_MAX_ROWS); keep a part of its steps")
    names = list(meta.schema.names)
    idx = [names.index(c) for c in use]
    size = sum(meta.row_group(g).column(i).total_uncompressed_size for g in range(meta.num_row_groups) for i in idx)
    if size > OPS_MAX_BYTES:
        raise ValueError(f"{name}: its columns take {checks.format_bytes(size)} decompressed, more than the "
                         f"{checks.format_bytes(OPS_MAX_BYTES)} a per-operation trace may hold "
                         f"(gclib.timings.OPS_MAX_BYTES)")


def _read_ops(path, name, stages, min_samples) -> Conversion:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(f"{name}: reading a parquet trace needs pyarrow (pip install 'gclib[traces]')") from None
    import pyarrow as pa

    p = os.fspath(path)
    meta = _ops_metadata(path, name)
    found = list(meta.schema.names)
    _missing(name, {c: c for c in OPS_COLUMNS}, found, "a per-operation trace has one row per operation with "
             f"columns {', '.join(OPS_COLUMNS)} and optionally stage and rank")
    use = [c for c in (*OPS_COLUMNS, "stage", "rank") if c in found]
    _ops_budget(name, meta, use)
    try:
        frame = pq.read_table(p, columns=use).to_pandas()
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"{name}: not a readable parquet file (pyarrow: {type(e).__name__})") from None
    n = len(frame)
    op = frame["optype"].astype(str)
    for col in ("step", "dp_rank", "mb_id", *(c for c in ("stage", "rank") if c in frame.columns)):
        v = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(v) | (v != np.round(v)) | ((v < 0) & (col != "mb_id"))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}: column {col!r} must hold integers{'' if col == 'mb_id' else ' >= 0'} at row {i}")
    dur = pd.to_numeric(frame["duration"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    compute = op.isin(COMPUTE_OPS).to_numpy()
    with_mb = compute & (frame["mb_id"].to_numpy() >= 0)
    bad = with_mb & ~(np.isfinite(dur) & (dur >= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: column 'duration' must hold finite durations >= 0 for the compute operations, at "
                         f"row {i}")
    if not with_mb.any():
        raise ValueError(f"{name}: no {' or '.join(COMPUTE_OPS)} operation with a microbatch id (mb_id >= 0): "
                         f"nothing to make task times of")
    dropped = {f"operation {k}": int(v) for k, v in op[~compute].value_counts().sort_index().items() if v}
    if (compute & ~with_mb).any():
        dropped["compute operations without a microbatch (mb_id < 0)"] = int((compute & ~with_mb).sum())
    c = pd.DataFrame({"step": frame["step"].to_numpy()[with_mb].astype(np.int64),
                      "dp": frame["dp_rank"].to_numpy()[with_mb].astype(np.int64),
                      "stage": (frame["stage"].to_numpy()[with_mb].astype(np.int64) if "stage" in frame.columns
                                else 0),
                      "rank": frame["rank"].to_numpy()[with_mb].astype(np.int64) if "rank" in frame.columns else 0,
                      "mb": frame["mb_id"].to_numpy()[with_mb].astype(np.int64), "d": dur[with_mb]})
    per_rank = c.groupby(["step", "dp", "stage", "rank", "mb"])["d"].sum()
    per_stage = per_rank.groupby(level=["step", "dp", "stage", "mb"]).max().reset_index()
    n_stages = per_stage.groupby(["step", "dp"])["stage"].transform("nunique")
    have = per_stage.groupby(["step", "dp", "mb"])["stage"].transform("nunique")
    partial = have < n_stages
    if partial.any():
        dropped["microbatch times missing a pipeline stage (left out: not observed)"] = int(
            per_stage[partial].groupby(["step", "dp", "mb"]).ngroups)
    whole = per_stage[~partial]
    agg = whole.groupby(["step", "dp", "mb"])["d"].agg(stages).reset_index()
    ranks = int(per_rank.groupby(level=["step", "dp", "stage", "mb"]).size().max())
    S = int(per_stage.groupby(["step", "dp"])["stage"].nunique().max())
    tidy = pd.DataFrame({"iteration": agg["step"], "worker": agg["dp"], "task": agg["mb"] + 1, "seconds": agg["d"]})
    t = from_frame(tidy, source=name, min_samples=min_samples)
    notes = (f"iteration = step, worker = dp_rank (a data-parallel replica), task = microbatch mb_id + 1",
             f"seconds = the microbatch's forward + backward compute, summed over a rank's model chunks, the slowest "
             f"of the ranks recorded for a stage ({ranks} at most), {'summed' if stages == 'sum' else 'the slowest'} "
             f"over the replica's pipeline stages ({S} at most)",
             "not kept: start times (so the idle time, the pipeline's bubbles and the waits at synchronisation), "
             "communication, gradient reduction and optimizer operations")
    workers = {int(w): f"dp_rank {int(w)}" for w in t.worker_ids}
    return Conversion(t, "ops", name, n, int(with_mb.sum()), dropped, workers, notes)
