"""Checking arguments: the one set of checks behind the library's entry points and the command line.

Every public constructor and entry point checks its arguments with these helpers before it allocates or starts
anything, and the command line builds its option types from the same helpers (:func:`option`), so that a check is
written once and the two say the same thing:

* :func:`integer`, :func:`real`, :func:`choice`, :func:`text`, :func:`items`, :func:`int_list`, :func:`generator`,
  :func:`finite_array`, :func:`real_array`: a value of the right type and range, or a :class:`ValueError` naming the argument, the
  value and what is allowed (a value of the wrong type raises :class:`ParameterTypeError`, a ``TypeError`` that is also a ``ValueError``);
* :func:`seconds`: a positive, finite number of seconds (timeouts, delays);
* :func:`input_path`, :func:`output_dir`, :func:`output_file`: a path to read, a folder or a file that can be
  written (existing, or creatable), checked before anything runs (nothing is created);
* :func:`need_memory`: the memory a request would allocate, estimated from its sizes by the caller, against a
  budget (:func:`memory_budget`): half of the memory the machine has available, or ``GCLIB_MEMORY_LIMIT``.
  A request above it is refused with one line naming the sizes, the estimate and what to lower.

On the command line these errors become one line ``gclib: error: ...`` and exit code 2; an option's own check
names the option (``argument --workers: must be a positive integer, got '0'``), and so does a check that needs
other options (:func:`option_check`: ``argument --persistent: must be an integer in [0, 4] ...``).
"""
from __future__ import annotations

import argparse
import math
import numbers
import os
import re
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["ParameterTypeError", "integer", "real", "seconds", "choice", "text", "items", "int_list", "generator",
           "finite_array", "real_array", "path_text", "input_path", "output_dir", "output_file", "available_memory", "memory_budget", "need_memory",
           "format_bytes", "option", "option_check", "MEMORY_ENV", "MEMORY_FRACTION", "MemoryBudgetError"]


class ParameterTypeError(TypeError, ValueError):
    """An argument of the wrong type. A ``TypeError``, and a ``ValueError`` too, so that code catching
    ``ValueError`` for a bad argument (the command line does) catches it as well."""


class MemoryBudgetError(ValueError):
    """A request refused by :func:`need_memory`: it would not fit the memory budget. A ``ValueError`` (the command
    line reports it in one line, exit 2), told apart from a bad parameter where that matters."""


def is_integer(v) -> bool:
    """An integer (Python's or NumPy's), not a bool: what :func:`integer` accepts before its bounds."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_real(v) -> bool:
    """A real number (NaN and infinities included), not a bool: what :func:`real` accepts before its bounds."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _int_words(low, high) -> str:
    if low is not None and high is not None:
        return f"an integer in [{low}, {high}]"
    if low == 1:
        return "a positive integer"
    if low == 0:
        return "a non-negative integer"
    if low is not None:
        return f"an integer >= {low}"
    if high is not None:
        return f"an integer <= {high}"
    return "an integer"


def _real_words(low, high, above, below, finite, unit="") -> str:
    fin = "finite " if finite else ""
    number = f"number of {unit}" if unit else "number"
    if above == 0 and low is high is below is None:
        words = f"a positive {fin}{number}"
    elif low == 0 and above is high is below is None:
        words = f"a non-negative {fin}{number}"
    else:
        parts = [f"{op} {b:g}" for op, b in ((">=", low), (">", above), ("<=", high), ("<", below)) if b is not None]
        words = f"a {fin}{number}" + (" " + " and ".join(parts) if parts else "")
    return words + (" (inf allowed)" if not finite else "")


def must_be(name) -> str:
    """``"NAME must be"``, or ``"must be"`` for an option's check (argparse names the option)."""
    return f"{name} must be" if name else "must be"


def _fail(name, value, allowed, why="", cls=ValueError):
    return cls(f"{must_be(name)} {allowed}{why}, got {value!r}")


def integer(name: str, value, *, low=None, high=None, why: str = "") -> int:
    """``value`` as a Python ``int`` when it is an integer (not a bool, not a float) in ``[low, high]``.

    Raises:
        ParameterTypeError: not an integer. ValueError: out of range. Both name ``name`` and what is allowed
        (``why`` is appended to the allowed range, e.g. ``" (at most workers - 1)"``).
    """
    allowed = _int_words(low, high)
    if not is_integer(value):
        raise _fail(name, value, allowed, why, ParameterTypeError)
    if (low is not None and value < low) or (high is not None and value > high):
        raise _fail(name, value, allowed, why)
    return int(value)


def real(name: str, value, *, low=None, high=None, above=None, below=None, finite: bool = True,
         why: str = "", unit: str = "") -> float:
    """``value`` as a ``float`` when it is a real number (not a bool) within the bounds: ``low`` / ``high``
    inclusive, ``above`` / ``below`` exclusive. NaN is always refused, infinities unless ``finite=False``.
    ``unit`` names what the number counts in the message (``"a positive finite number of seconds"``).

    Raises:
        ParameterTypeError: not a real number. ValueError: NaN, infinite or out of range.
    """
    allowed = _real_words(low, high, above, below, finite, unit)
    if not is_real(value):
        raise _fail(name, value, allowed, why, ParameterTypeError)
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the float range
        raise _fail(name, value, allowed, why) from None
    if math.isnan(v) or (finite and math.isinf(v)):
        raise _fail(name, value, allowed, why)
    if ((low is not None and v < low) or (high is not None and v > high) or (above is not None and v <= above)
            or (below is not None and v >= below)):
        raise _fail(name, value, allowed, why)
    return v


def seconds(name: str, value) -> float:
    """A duration: a positive, finite number of seconds (``real(..., above=0, unit="seconds")``)."""
    return real(name, value, above=0, unit="seconds")


def choice(name: str, value, choices):
    """``value`` when it is one of ``choices``; ValueError listing them otherwise."""
    try:
        ok = value in choices
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{must_be(name)} one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def text(name: str, value, *, choices=None) -> str:
    """``value`` when it is a non-empty string (and one of ``choices`` when they are given).

    Raises:
        ParameterTypeError: not a string. ValueError: empty, or not one of ``choices``.
    """
    if not isinstance(value, str):
        raise _fail(name, value, "a string", cls=ParameterTypeError)
    if not value:
        raise _fail(name, value, "a non-empty string")
    return value if choices is None else choice(name, value, choices)


def items(name: str, value, check, *, min_len: int = 1, max_len: int | None = None, distinct: bool = False,
          **kw) -> tuple:
    """A list or tuple of ``min_len`` to ``max_len`` items, each passing ``check(f"{name}[i]", item, **kw)``
    (:func:`integer`, :func:`real`, :func:`choice`, ...); ``distinct`` refuses an item given twice. A string is
    not a list here (:func:`int_list` reads comma lists).

    Raises:
        ParameterTypeError: not a list or tuple. ValueError: too short or too long, a repeated item, or the first
        bad item's error (naming it ``name[i]``).
    """
    if not isinstance(value, (list, tuple)):
        raise _fail(name, value, "a list", cls=ParameterTypeError)
    if len(value) < min_len or (max_len is not None and len(value) > max_len):
        size = f"at least {min_len}" if max_len is None else (
            f"exactly {min_len}" if max_len == min_len else f"{min_len} to {max_len}")
        raise _fail(name, value, f"a list of {size} item{'' if (max_len or min_len) == 1 else 's'}")
    out = tuple(check(f"{name}[{i}]", v, **kw) for i, v in enumerate(value))
    if distinct:
        for i, v in enumerate(out):
            if v in out[:i]:
                raise _fail(name, value, "a list of distinct items", f" ({v!r} is given twice)")
    return out


def int_list(name: str, value, *, low=None, high=None, min_len: int = 1, distinct: bool = False,
             why: str = "") -> tuple:
    """A list of integers from a comma list (``"6,8,10"``, spaces allowed) or a sequence; an empty item
    (``"6,,8"``, a trailing comma, a list of blanks) is refused, not dropped. ``distinct`` refuses an integer
    given twice; ``why`` is appended to an item's allowed range.

    Raises:
        ValueError naming ``name`` (the item is named ``name[i]``, or ``item i`` for an option's check).
    """
    given = value
    if isinstance(value, str):
        items = value.split(",")
        out = []
        for i, item in enumerate(items):
            text = item.strip()
            if not text:
                raise ValueError(f"{must_be(name)} a comma-separated list of integers without empty items, got "
                                 f"{value!r} (item {i} is empty)")
            try:
                out.append(int(text))
            except ValueError:
                raise ValueError(f"{must_be(name)} a comma-separated list of integers, got {value!r} (item {i} "
                                 f"is {text!r})") from None
        value = out
    try:
        seq = list(value)
    except TypeError:
        raise ParameterTypeError(f"{must_be(name)} a list of integers or a comma-separated string, got "
                                 f"{value!r}") from None
    if len(seq) < min_len:
        plural = "s" if min_len != 1 else ""
        raise ValueError(f"{name + ' ' if name else ''}must list at least {min_len} integer{plural}, got {value!r}")
    out = tuple(integer(f"{name}[{i}]" if name else f"item {i}", v, low=low, high=high, why=why)
                for i, v in enumerate(seq))
    if distinct:
        seen = set()
        for v in out:
            if v in seen:
                raise ValueError(f"{must_be(name)} a list of distinct integers, got {given!r} ({v} is given twice)")
            seen.add(v)
    return out


def generator(seed, name: str = "seed") -> np.random.Generator:
    """A ``numpy.random.Generator`` from a seed (a non-negative integer) or a generator (returned as is).

    Raises:
        ParameterTypeError / ValueError naming ``name``.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if not is_integer(seed):
        raise ParameterTypeError(f"{name} must be a non-negative integer or a numpy.random.Generator, got "
                                 f"{seed!r}")
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def finite_array(name: str, value, *, ndim: int | None = None, complex_ok: bool = True) -> np.ndarray:
    """``value`` as a float (or complex) array whose entries are all finite numbers.

    Raises:
        ParameterTypeError: entries that are not numbers (strings, objects). ValueError: NaN or infinite entries,
        the wrong number of dimensions, or complex entries when ``complex_ok`` is False. The message names the
        first bad entry.
    """
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:  # ragged nested lists
        raise ParameterTypeError(f"{name} must be an array of numbers, got {value!r} ({e})") from None
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.number)):
        kind = "real" if not complex_ok else "real or complex"
        raise ParameterTypeError(f"{name} must hold {kind} numbers, got an array of {a.dtype}")
    if np.iscomplexobj(a) and not complex_ok:
        raise ValueError(f"{name} must hold real numbers, got complex ones")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-dimensional array, got shape {a.shape}")
    if not np.iscomplexobj(a):
        a = a.astype(float)
    bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        pos = where[0] if len(where) == 1 else where
        raise ValueError(f"{name} must hold finite numbers, got {a[where]} at index {pos}")
    return a


def real_array(name: str, value, *, what: str = "real numbers") -> np.ndarray:
    """``value`` as a float array when it holds real numbers (integers or floats; NaN and infinities are the
    caller's to judge): booleans, complex numbers, text and objects that are not numbers are refused, never
    converted (``float`` reads ``True`` as 1 and drops an imaginary part without a word).

    Raises:
        ParameterTypeError naming ``name``, ``what`` it must hold and what it holds.
    """
    try:
        a = np.asarray(value)
    except (ValueError, TypeError):  # ragged nested lists
        raise ParameterTypeError(f"{name} must be an array of {what}, got a ragged {type(value).__name__}") from None
    kind = a.dtype.kind
    if kind == "O" and all(is_real(x) for x in a.flat):
        kind = "f"
    if kind not in "iuf":
        held = {"b": "booleans", "c": "complex numbers", "U": "text", "S": "bytes"}.get(kind, f"{a.dtype} values")
        raise ParameterTypeError(f"{name} must be an array of {what}, got an array of {held}")
    return a.astype(float)


# ------------------------------------------------------------------------------------------------------ paths
def path_text(name: str, value) -> str:
    """A path given as text: a non-empty string without NUL characters (not checked on disk)."""
    if not isinstance(value, (str, os.PathLike)):
        raise ParameterTypeError(f"{must_be(name)} a path, got {value!r}")
    text = os.fspath(value)
    if not str(text).strip():
        raise ValueError(f"{must_be(name)} a path, got an empty string")
    if "\0" in str(text):
        raise ValueError(f"{must_be(name)} a path without NUL characters, got {text!r}")
    return text


def input_path(name: str, path, *, kind: str = "dir", must_exist: bool = False) -> Path:
    """A path to read from: non-empty, usable by the file system (a name too long is refused), and, when it
    exists, a folder (``kind="dir"``) or a regular file (``kind="file"``: a FIFO, a device or a socket is refused,
    since reading one may block forever or never end); ``must_exist`` refuses a missing one.

    Returns:
        the path. Raises: ValueError naming ``name``, the path and the reason.
    """
    text = path_text(name, path)
    subject = _shown(name, text)
    p = Path(text).expanduser()
    try:
        exists = p.exists()
        is_dir = p.is_dir()
        is_file = p.is_file()
    except OSError as e:
        raise ValueError(f"{subject} cannot be used: {e.strerror or e}") from None
    if not exists:
        if must_exist:
            raise ValueError(f"{subject} does not exist")
        return p
    if kind == "dir" and not is_dir:
        raise ValueError(f"{subject} is not a folder")
    if kind == "file" and is_dir:
        raise ValueError(f"{subject} is a folder, not a file")
    if kind == "file" and not is_file:
        raise ValueError(f"{subject} is not a regular file (a FIFO, a device or a socket cannot be read as one)")
    return p


def short_path(text: str, limit: int = 100) -> str:
    """``text`` (a path) in at most ``limit`` characters for a message: a longer path keeps its start and its last
    component (the file's own name, itself cut to half the limit) around ``...``."""
    if len(text) <= limit:
        return text
    tail = os.path.basename(text.rstrip("/")) or text[-limit // 2:]
    tail = tail[-(limit // 2):]
    return text[:limit - len(tail) - 4] + ".../" + tail


def _shown(name, text) -> str:
    """How a path is named in a message: ``name 'path'`` (a long path shortened by :func:`short_path`)."""
    shown = short_path(text)
    return f"{name} {shown!r}" if name else repr(shown)


def _writable(name: str, path, kind: str) -> Path:
    """The check behind :func:`output_dir` (``kind="dir"``) and :func:`output_file` (``kind="file"``)."""
    text = path_text(name, path)
    subject = _shown(name, text)
    p = Path(text).expanduser().absolute()
    missing = []
    here = p
    while True:
        try:
            exists = here.exists()
        except OSError as e:  # a name too long, ...
            raise ValueError(f"{subject} cannot be used: {e.strerror or e}") from None
        if exists or here.parent == here:
            break
        missing.append(here.name)
        here = here.parent
    if here == p and kind == "dir" and not here.is_dir():
        raise ValueError(f"{subject} is a file")
    if here == p and kind == "file":
        if here.is_dir():
            raise ValueError(f"{subject} is a folder, not a file")
        if not here.is_file():  # a device or a FIFO: it would be replaced by a file, or block
            raise ValueError(f"{subject} is not a regular file (a device or a FIFO cannot be written as one)")
        if not os.access(here, os.W_OK):
            raise ValueError(f"{subject} is not writable")
        here = here.parent  # a file is replaced through its folder
    elif not here.is_dir():
        what = "be a folder" if kind == "dir" else "be created"
        raise ValueError(f"{subject} cannot {what}: {str(here)!r} is a file")
    try:
        name_max = os.pathconf(here, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    for part in missing:
        if len(os.fsencode(part)) > name_max:
            raise ValueError(f"{subject} cannot be created: the name {part[:20]!r}... is longer than {name_max} "
                             f"bytes")
    try:
        probe = tempfile.mkdtemp(prefix=".gclib-write-test-", dir=here)
        os.rmdir(probe)
    except OSError as e:
        what = ("is not writable" if kind == "dir" and not missing else
                f"cannot be written in {str(here)!r}" if not missing else f"cannot be created in {str(here)!r}")
        raise ValueError(f"{subject} {what}: {e.strerror or e}") from None
    return p


def output_dir(name: str, path) -> Path:
    """Check, before anything runs, that ``path`` is a folder that exists and can be written, or can be created.

    Nothing is left behind: the nearest existing ancestor must be a writable folder (tested by creating and
    removing a temporary folder in it, which also catches read-only file systems and root's permissions), no part
    of the path may be an existing file, and every name must fit the file system's limit.

    Returns:
        the path, absolute. Raises: ValueError naming ``name``, the path and the reason.
    """
    return _writable(name, path, "dir")


def output_file(name: str, path) -> Path:
    """Check, before anything runs, that a file can be written at ``path``: an existing one is a writable file
    (not a folder) in a writable folder (it is replaced through a temporary file beside it), a missing one has a
    folder that exists or can be created (as :func:`output_dir` checks it). Nothing is created.

    Returns:
        the path, absolute. Raises: ValueError naming ``name``, the path and the reason.
    """
    return _writable(name, path, "file")


# ----------------------------------------------------------------------------------------------------- memory
#: environment variable overriding the memory budget: a size in bytes, optionally with a suffix K, M, G or T
#: (powers of 1024), or ``none`` for no limit.
MEMORY_ENV = "GCLIB_MEMORY_LIMIT"
#: fraction of the available memory a single request may take.
MEMORY_FRACTION = 0.5
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation: ``MemAvailable`` of ``/proc/meminfo`` (Linux: free memory
    plus the page cache that can be dropped), else the free physical pages of ``os.sysconf``; ``None`` when
    neither is known."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def _parse_size(text: str) -> int | None:
    """Bytes of a size such as ``8G``, ``512MiB`` or ``1000000``; ``None`` for ``none``."""
    t = text.strip().upper()
    if t == "NONE":
        return None
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:E[+-]?[0-9]+)?)\s*([KMGT]?)(?:I?B)?", t)
    v = float(m.group(1)) if m else math.nan
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{MEMORY_ENV} must be a positive size such as 8G, 512M or 1000000 (bytes), or 'none', "
                         f"got {text!r}")
    return int(v * _UNITS[m.group(2)])


def memory_budget() -> tuple[int | None, str]:
    """``(bytes, how it was set)``: ``GCLIB_MEMORY_LIMIT`` when set, else :data:`MEMORY_FRACTION` of
    :func:`available_memory` (``None``: no limit known)."""
    env = os.environ.get(MEMORY_ENV)
    if env is not None and env.strip():
        return _parse_size(env), f"set by {MEMORY_ENV}"
    avail = available_memory()
    if avail is None:
        return None, "no limit: available memory unknown"
    return int(MEMORY_FRACTION * avail), (f"{MEMORY_FRACTION:.0%} of the {format_bytes(avail)} available; "
                                         f"{MEMORY_ENV} overrides it")


def format_bytes(n) -> str:
    """``1536`` -> ``'1.5 KiB'``; beyond 1024 EiB in powers of ten of bytes (``'8e+40 B'``)."""
    n = float(n)
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        n /= 1024
        if n < 1024:
            return f"{n:.3g} {unit}"
    return f"{n * 1024.0 ** 6:.2g} B"


def need_memory(what: str, nbytes, *, sizes: str, lower: str) -> None:
    """Refuse a request whose estimated memory ``nbytes`` exceeds the budget (:func:`memory_budget`).

    Args:
        what: the request, e.g. ``"crc"`` or ``"simulate"``. nbytes: its estimate (an int or float; Python
            integers of any size are fine). sizes: the sizes it was estimated from, e.g. ``"workers = 200000"``.
        lower: what the caller can lower, e.g. ``"workers"``.
    Raises:
        MemoryBudgetError: one line with the sizes, the estimate, the budget and what to lower.
    """
    budget, how = memory_budget()
    if budget is None or nbytes <= budget:
        return
    raise MemoryBudgetError(f"{what} with {sizes} needs about {format_bytes(nbytes)} of memory, more than the budget "
                            f"of {format_bytes(budget)} ({how}); lower {lower}")


# ------------------------------------------------------------------------------------------------ command line
def option(check, parse=None, **kw):
    """An ``argparse`` ``type=`` function built from a check: it parses the text (``parse``; by default an
    ``int`` for :func:`integer`, a ``float`` for :func:`real`, kept as text otherwise) and applies
    ``check(None, value, **kw)``, so that argparse reports ``argument --NAME: must be ..., got '...'`` (one line,
    exit 2)."""
    parse = parse or {integer: int, real: float, seconds: float}.get(check, str)

    def convert(text):
        try:
            value = parse(text)
        except ValueError:
            value = text
        try:
            return check(None, value, **kw)
        except ValueError as e:  # ParameterTypeError too
            raise argparse.ArgumentTypeError(str(e).replace(f"got {value!r}", f"got {text!r}")) from None

    convert.__name__ = getattr(check, "__name__", "value")
    return convert


def option_check(flag: str, check, value, *, subject: str | None = None, **kw):
    """The check of an option's value that needs other options (the code's number of workers, the run's
    iterations), made after parsing: ``check(subject, value, **kw)``, its error prefixed as argparse prefixes an
    option's own (``argument --persistent: must be an integer in [0, 4] ..., got 9``; with ``subject="a
    worker"``: ``argument --kill: a worker must be ...``)."""
    try:
        return check(subject, value, **kw)
    except ValueError as e:  # ParameterTypeError too
        raise type(e)(f"argument {flag}: {e}") from None
