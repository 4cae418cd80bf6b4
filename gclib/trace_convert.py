"""Timing traces in other shapes (documented in ``docs/advise.md``, "Real traces in"), converted to a checked
:class:`~gclib.timing_trace.Timings`.

:func:`convert` reads a tidy CSV with other column names (``columns={"iteration": "step", "worker": "rank",
"seconds": "duration"}``), a wide CSV (one row per iteration, one column per worker) and a per-operation parquet
trace of a training job (the schema of the public traces of Lin et al., "Understanding Stragglers in Large Model
Training Using What-if Analysis", OSDI 2025, arXiv:2505.05713: one row per operation with ``step``, ``dp_rank``,
``stage``, ``optype``, ``mb_id``, ``duration``), and returns a :class:`Conversion`: the checked trace with what was
kept and dropped. :func:`load` reads either a timing-trace CSV or a per-operation trace (what ``gclib advise
--trace`` reads); :func:`check_complete` refuses a trace in which a worker is missing from a whole iteration;
:func:`shipped` lists the public traces the repository ships. Reading parquet needs pyarrow (``gclib[traces]``).
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gclib import checks, files
from gclib.timing_trace import (COLUMNS, MAX_ROWS, MIN_SAMPLES, TRACE_BUDGET, Timings, _parser_error, _where,
                                found_columns, from_frame, read, write)

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
    first worker and iteration missing, and how many more. A worker's identity (:mod:`gclib.correlated_paces`) can only
    be kept across iterations it took part in: leave out the iterations it missed."""
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
    iters, note = _wide_iterations(frame, it, name)
    notes = [note]
    if all(str(c).isdigit() for c in workers):
        ids = [int(c) for c in workers]
        notes.append("worker ids from the column names")
    else:
        ids = list(range(len(workers)))
        notes.append("workers numbered 0, 1, ... in the order of the columns")
    long, cells = _wide_cells(frame, dict(zip(ids, workers)), iters, name)
    dup = pd.Series(iters).duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise ValueError(f"{name}: iteration {iters[i]} appears twice, again at line {i + 2}")
    t = from_frame(long, source=name, min_samples=min_samples)
    named = {} if all(str(c).isdigit() for c in workers) else dict(zip(ids, map(str, workers)))
    notes.append("one task per (iteration, worker): a cell is that worker's time for the iteration")
    return Conversion(t, "wide", name, cells, len(long), {"empty cells (not observed)": cells - len(long)}, named,
                      tuple(notes))


def _wide_iterations(frame, it: str, name) -> tuple[np.ndarray, str]:
    """The iteration of every row of a wide trace (its column ``it``, or the rows' order without one) and a note
    saying which."""
    if it not in frame.columns:
        return (np.arange(len(frame), dtype=np.int64),
                "no iteration column: the rows are iterations 0, 1, ... in the order of the file")
    num = pd.to_numeric(frame[it], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(num) | (num != np.round(num)) | (num < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: column {it!r} must hold iteration numbers (integers >= 0) at "
                         f"{_where(i, 2, int(bad.sum()))}")
    return num.astype(np.int64), f"iterations from column {it!r}"


def _wide_cells(frame, workers: dict, iters: np.ndarray, name) -> tuple[pd.DataFrame, int]:
    """The tidy rows of a wide trace's cells (``workers``: worker id -> its column), the empty ones left out (not
    observed), and how many cells were read."""
    rows = []
    cells = 0
    for wid, c in workers.items():
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
    return pd.concat(rows, ignore_index=True), cells


#: The most operations (rows) of a per-operation parquet trace, and the most bytes its columns that are read take
#: once decompressed (what its metadata says, checked before a page is read). The public traces of Lin et al.
#: hold about 120,000 operations (1.3 MB).
OPS_MAX_ROWS = 5_000_000
OPS_MAX_BYTES = 512 * files.MIB


def _pyarrow(name):
    """pyarrow and its parquet module; ValueError naming the extra that installs them when they are not installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(f"{name}: reading a parquet trace needs pyarrow (pip install 'gclib[traces]')") from None
    return pa, pq


def _ops_metadata(path, name, pa, pq):
    """The metadata of a parquet trace (a regular file within :data:`OPS_MAX_BYTES` on disk), read before its data."""
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
    frame = _ops_frame(path, name)
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
    tidy, notes = _microbatch_times(c, stages, dropped)
    t = from_frame(tidy, source=name, min_samples=min_samples)
    workers = {int(w): f"dp_rank {int(w)}" for w in t.worker_ids}
    return Conversion(t, "ops", name, n, int(with_mb.sum()), dropped, workers, notes)


def _ops_frame(path, name) -> pd.DataFrame:
    """The columns of a per-operation parquet trace that :func:`convert` reads, its metadata checked first."""
    pa, pq = _pyarrow(name)
    meta = _ops_metadata(path, name, pa, pq)
    found = list(meta.schema.names)
    _missing(name, {c: c for c in OPS_COLUMNS}, found, "a per-operation trace has one row per operation with "
             f"columns {', '.join(OPS_COLUMNS)} and optionally stage and rank")
    use = [c for c in (*OPS_COLUMNS, "stage", "rank") if c in found]
    _ops_budget(name, meta, use)
    try:
        return pq.read_table(os.fspath(path), columns=use).to_pandas()
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"{name}: not a readable parquet file (pyarrow: {type(e).__name__})") from None


def _microbatch_times(c: pd.DataFrame, stages: str, dropped: dict) -> tuple[pd.DataFrame, tuple]:
    """The tidy task times of the compute operations ``c`` (``step, dp, stage, rank, mb, d``): a microbatch's
    compute summed over a rank's operations, the slowest rank of a stage, the stages added up by ``stages``; a
    microbatch missing a stage is left out (counted in ``dropped``). Returns the rows and the notes saying so."""
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
    notes = ("iteration = step, worker = dp_rank (a data-parallel replica), task = microbatch mb_id + 1",
             f"seconds = the microbatch's forward + backward compute, summed over a rank's model chunks, the slowest "
             f"of the ranks recorded for a stage ({ranks} at most), {'summed' if stages == 'sum' else 'the slowest'} "
             f"over the replica's pipeline stages ({S} at most)",
             "not kept: start times (so the idle time, the pipeline's bubbles and the waits at synchronisation), "
             "communication, gradient reduction and optimizer operations")
    return tidy, notes
