"""Reading a user's file: its kind, size and shape checked against a budget before anything is allocated.

Every reader of a file a user names (a timing trace, a delay matrix, a run's state, a hostfile, a network profile, a
generator matrix, a manifest) goes through :func:`read_bytes` or :func:`read_text` with a :class:`Budget`, so that
no file, whatever it holds, can take more memory or time than its budget says:

* only a regular file is read: a FIFO, a device or a socket is refused before it is opened for reading (opening is
  non-blocking, and the kind is read from the open file, so that it cannot change in between);
* its size on disk is checked before a byte is read (a sparse file of 2 GB is refused at once), and a file of the
  kernel that says it is empty (``/proc/self/environ``) is read at most up to the budget;
* a compressed file (gzip, bzip2, xz, told by its first bytes, whatever its name) is decompressed in a stream that
  stops one byte past the budget (a gzip bomb is refused after reading the budget, not its expansion); zip and
  zstd files are refused (decompress them first);
* text is checked before it is parsed: no NUL byte, UTF-8, at most the budget's lines and fields on the first line.

Errors are ``ValueError`` lines that name the file, the line and what was expected, and the budget with the
constant that holds it; never what the file holds (it may be any file: ``/etc/shadow``, the environment).
:func:`where` names a line and column the same way for the parsers that find a bad value.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import os
import stat
import zlib
from dataclasses import dataclass
from typing import Optional

from gclib import checks

__all__ = ["Budget", "FileRefused", "read_bytes", "read_text", "read_npy", "read_numbers", "open_regular", "compression", "where",
           "line_of", "MIB", "INF_WORDS"]

MIB = 1 << 20
#: First bytes of the compressed formats, and whether :func:`read_bytes` decompresses them.
MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"PK\x03\x04", "zip"),
         (b"\x28\xb5\x2f\xfd", "zstd"))
STREAMS = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}


class FileRefused(ValueError):
    """A file refused by a reader: ``str()`` is the whole line (``"trace.csv: line 3 holds a NUL byte ..."``),
    :attr:`reason` the part after the file's name (for a caller that names the file its own way)."""

    def __init__(self, subject: str, reason: str, sep: str = ": "):
        super().__init__(f"{subject}{sep}{reason}")
        self.subject, self.reason, self.sep = subject, reason, sep

    def why(self) -> str:
        """The reason as a clause after another subject: ``"it is not a regular file ..."``, ``"line 3 holds
        ..."``."""
        return f"it {self.reason}" if self.sep == " " else self.reason


@dataclass(frozen=True)
class Budget:
    """The most a reader takes of a file.

    Attributes:
        what: what the file is, for messages (``"a timing trace"``). bytes: the most bytes of its content (after
        decompression). lines: the most lines (``None``: any). fields: the most comma-separated fields on its first
        line (``None``: any). constant: where the budget is set, for messages (``"gclib.timings.TRACE_BUDGET"``).
    """

    what: str
    bytes: int
    lines: Optional[int] = None
    fields: Optional[int] = None
    constant: str = ""

    def __post_init__(self):
        checks.integer("bytes", self.bytes, low=1)
        for k in ("lines", "fields"):
            if getattr(self, k) is not None:
                checks.integer(k, getattr(self, k), low=1)

    def of(self, amount: str) -> str:
        """``"the 128 MiB of a timing trace (gclib.timings.TRACE_BUDGET)"``, for ``amount`` = ``"128 MiB"``."""
        return f"the {amount} {self.what} may hold" + (f" ({self.constant})" if self.constant else "")


def _subject(path) -> str:
    return checks.short_path(str(os.fspath(path)), 120)


def open_regular(name: Optional[str], path):
    """Open ``path`` for reading as a regular file, never blocking: ``(binary file object, os.stat_result)``.

    Raises:
        ValueError naming ``name`` (or the path) and why: missing, not readable, a folder, or not a regular file
        (a FIFO, a device or a socket: reading one may block forever or never end).
    """
    text = checks.path_text(name or "path", path)
    subject = _subject(text)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(os.path.expanduser(text), flags)
    except FileNotFoundError:
        raise FileRefused(subject, "does not exist", " ") from None
    except OSError as e:
        raise FileRefused(subject, f"cannot be read: {e.strerror or type(e).__name__}", " ") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise FileRefused(subject, "is a folder, not a file", " ")
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(subject, "is not a regular file (a FIFO, a device or a socket cannot be read as one)",
                              " ")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def compression(head: bytes) -> Optional[str]:
    """The compressed format whose first bytes ``head`` are (``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zip"``,
    ``"zstd"``), or ``None``."""
    return next((kind for magic, kind in MAGIC if head.startswith(magic)), None)


def _size(n: int) -> str:
    return checks.format_bytes(n)


def read_bytes(name: Optional[str], path, budget: Budget) -> bytes:
    """The content of a regular file, decompressed when it is gzip, bzip2 or xz, at most ``budget.bytes`` of it.

    Raises:
        ValueError: not a regular file (:func:`open_regular`); larger on disk than the budget; compressed as zip or
        zstd, or a compressed stream that does not decompress; content beyond the budget (a file of the kernel, a
        decompression). The message names the file, the budget and its constant.
    """
    fh, st = open_regular(name, path)
    subject = _subject(path)
    with fh:
        if st.st_size > budget.bytes:
            raise FileRefused(subject, f"{_size(st.st_size)} on disk, more than {budget.of(_size(budget.bytes))}")
        head = fh.read(8)
        fh.seek(0)
        kind = compression(head)
        if kind in ("zip", "zstd"):
            raise FileRefused(subject, f"a {kind} archive; decompress it first ({budget.what} is read as text, or "
                             f"as gzip, bzip2 or xz)")
        stream = STREAMS[kind](fileobj=fh) if kind == "gzip" else STREAMS[kind](fh) if kind else fh
        try:
            data = stream.read(budget.bytes + 1)
        except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError):
            raise FileRefused(subject, f"not a readable {kind or 'file'} (its compressed stream is broken or cut "
                             f"short)") from None
        finally:
            if stream is not fh:
                stream.close()
    if len(data) > budget.bytes:
        how = f"decompresses ({kind}) to" if kind else "holds"
        raise FileRefused(subject, f"{how} more than {budget.of(_size(budget.bytes))}")
    return data


def line_of(data: bytes, offset: int) -> int:
    """The line (from 1) of the byte at ``offset`` of ``data``."""
    return data.count(b"\n", 0, offset) + 1


def where(line: int, column=None) -> str:
    """``"line 3"`` or ``"line 3, column 2"``: a place in a file, never its content."""
    return f"line {line}" + (f", column {column}" if column is not None else "")


def read_text(name: Optional[str], path, budget: Budget, *, expected: str = "text") -> bytes:
    """:func:`read_bytes`, checked as text before anything parses it: no NUL byte, UTF-8, at most ``budget.lines``
    lines and ``budget.fields`` comma-separated fields on the first line. Returns the bytes (a parser reads them
    without a second copy); ``expected`` says what the file should be, in the messages (``"a CSV with columns
    ..."``).

    Raises:
        ValueError naming the file, the line and what was expected (or the budget), never the content.
    """
    data = read_bytes(name, path, budget)
    subject = _subject(path)
    nul = data.find(b"\0")
    if nul >= 0:
        raise FileRefused(subject, f"{where(line_of(data, nul))} holds a NUL byte: not text (expected {expected})")
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FileRefused(subject, f"{where(line_of(data, e.start))} is not UTF-8 text (expected "
                             f"{expected})") from None
    if budget.lines is not None:
        lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
        if lines > budget.lines:
            raise FileRefused(subject, f"more than {budget.of(f'{budget.lines:,} lines')}")
    if budget.fields is not None:
        end = data.find(b"\n")
        fields = data.count(b",", 0, len(data) if end < 0 else end) + 1
        if fields > budget.fields:
            raise FileRefused(subject, f"{where(1)} has {fields:,} fields, more than "
                             f"{budget.of(f'{budget.fields:,} columns')}")
    return data


# ------------------------------------------------------------------------------------------------ matrices
#: The spellings of an infinite number a matrix file may hold (any case); any other number beyond float64 is an
#: error, not infinity.
INF_WORDS = ("inf", "+inf", "infinity", "+infinity")


def _kind_words(dtype) -> str:
    kinds = {"b": "booleans", "c": "complex numbers", "O": "Python objects", "U": "text", "S": "bytes",
             "V": "records", "M": "dates", "m": "time spans"}
    return kinds.get(dtype.kind, f"values of type {dtype}")


def read_npy(name: Optional[str], path, *, max_cells: int, what: str, constant: str = "",
             as_float: bool = True) -> "np.ndarray":
    """A real matrix from a ``.npy`` file, its header checked before its data is read: format 1.0 or 2.0, a 2-D
    array of integers or reals (booleans, complex numbers, objects and text are refused, not converted), at most
    ``max_cells`` entries, and exactly the bytes its header announces. Returns a float array (``as_float``), else
    the array as stored.

    Raises:
        ValueError naming the file, what its header says and what was expected (``what``, e.g. ``"a delay matrix"``).
    """
    import numpy as np

    fh, st = open_regular(name, path)
    subject = _subject(path)
    with fh:
        if st.st_size > max_cells * 16 + 65536:
            raise FileRefused(subject, f"{_size(st.st_size)} on disk, more than {what} of {max_cells:,} entries "
                             f"may take" + (f" ({constant})" if constant else ""))
        try:
            version = np.lib.format.read_magic(fh)
            read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
            if version not in read:
                raise ValueError
            shape, fortran, dtype = read[version](fh)
        except (ValueError, OSError, EOFError, SyntaxError):
            raise FileRefused(subject, f"not a .npy file numpy 1.0 or 2.0 format reads (its header is not one); "
                             f"expected {what}") from None
        if dtype.kind not in "iuf" or dtype.hasobject:
            raise FileRefused(subject, f"holds {_kind_words(dtype)}; expected {what} of real numbers (integers or "
                             f"floats)")
        if len(shape) != 2:
            raise FileRefused(subject, f"holds a {len(shape)}-dimensional array of shape {shape}; expected {what} "
                             f"(2-dimensional)")
        cells = int(np.prod(shape, dtype=object))
        if cells > max_cells:
            raise FileRefused(subject, f"{shape[0]:,} x {shape[1]:,} entries, more than the {max_cells:,} {what} "
                             f"may hold" + (f" ({constant})" if constant else ""))
        if cells * dtype.itemsize != st.st_size - fh.tell():
            raise FileRefused(subject, f"its header announces {shape[0]:,} x {shape[1]:,} entries of "
                             f"{dtype.itemsize} bytes, but the file holds {st.st_size - fh.tell():,} bytes of data "
                             f"(cut short or padded)")
        fh.seek(0)
        a = np.lib.format.read_array(fh, allow_pickle=False)
    return np.asarray(a, dtype=float) if as_float else a


def read_numbers(name: Optional[str], path, budget: Budget, *, max_cells: int, what: str) -> "np.ndarray":
    """A matrix from a CSV of numbers without a header (comma-separated; blank lines and lines starting with ``#``
    are skipped), read within ``budget`` (:func:`read_text`) and at most ``max_cells`` entries. ``inf`` (any case,
    :data:`INF_WORDS`) is infinity; a number too large for a float is refused, as is a cell that is not a number.
    Returns a float array ``(lines, columns)``.

    Raises:
        ValueError naming the file, the line and the column, and what was expected; never the cell.
    """
    import numpy as np

    data = read_text(name, path, budget, expected=f"{what}: a CSV of numbers without a header")
    subject = _subject(path)
    first = _first_line(data)
    if first is None:
        raise FileRefused(subject, f"no numbers; expected {what}: a CSV of numbers without a header")
    lines, width = data.count(b"\n") + 1, first.count(b",") + 1
    if lines * width > max_cells:  # counted on the bytes, before a copy is made
        raise FileRefused(subject, f"{lines:,} lines x {width:,} columns, more than the {max_cells:,} entries "
                         f"{what} may hold" + (f" ({budget.constant})" if budget.constant else ""))
    text = data.decode("utf-8")
    del data
    try:  # numpy's parser first (fast); its errors quote the cell, so the scan below says where instead
        out = np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2, dtype=float, comments=None)
    except ValueError:
        out = None
    if out is None or np.isinf(out).any():
        out = _scan(subject, text, width, what)
    return out


def _first_line(data: bytes) -> Optional[bytes]:
    """The first line of ``data`` that is neither blank nor a ``#`` comment, or ``None``."""
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end]
        if line.strip() and not line.lstrip().startswith(b"#"):
            return line
        pos = end + 1
    return None


def _scan(subject: str, text: str, width: int, what: str) -> "np.ndarray":
    """The numbers of a CSV line by line, or a ValueError naming the first line and column that is not one (or is
    a number too large for a float), never what it holds."""
    import numpy as np

    rows = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.split(",")
        if len(cells) != width:
            raise FileRefused(subject, f"{where(no)} has {len(cells)} columns, the first line of numbers {width}; "
                             f"expected {what}: the same number of columns on every line")
        for col, c in enumerate(cells, 1):
            try:
                v = float(c)
            except ValueError:
                raise FileRefused(subject, f"{where(no, col)} is not a number; expected {what}: a CSV of numbers "
                                 f"without a header (inf for never)") from None
            if math.isinf(v) and c.strip().lower().lstrip("-") not in INF_WORDS:
                raise FileRefused(subject, f"{where(no, col)} holds a number too large for a float; write inf for "
                                 f"an infinite one")
        rows.append([float(c) for c in cells])
    return np.array(rows, dtype=float)
