"""The state file of a run: what ``gclib run --resume STATE`` (and ``launch(..., resume=STATE)``) needs to continue a
stopped run from its last completed iteration.

It is one JSON object: the result so far (per-iteration ``records``, ``theta``, ``summary``, ``spec``) plus

* ``format`` (:data:`FORMAT`), ``version`` (:data:`VERSION`, the layout of this file) and ``gclib_version``: a file
  of another layout or written by another version of gclib is refused, since the same arguments may not mean
  the same run there;
* ``next_iteration``: the first iteration not completed (``len(records)``);
* ``step_state``: the update's state after that iteration (for Tandon's accelerated method: ``theta``, the
  momentum point ``u``, the step count ``t``), every float stored exactly (an array as the base64 text of its
  little-endian IEEE 754 doubles, a number as ``float.hex``), so that a resumed run continues with the very
  numbers the stopped one had;
* ``args``: the command line's parameters when the run came from ``gclib run`` (``None`` from the library; then
  the caller passes the same :class:`~gclib.runtime.spec.RunSpec` again, and it is checked against ``spec``).

The injected delays are not stored: they are drawn from the seed for every iteration up front, so the resumed
run draws the same array and uses the iterations that remain.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

import numpy as np

from gclib import __version__, files

FORMAT = "gclib-run-state"
#: The layout of the file. Layout 3 added the spec's ``exchange`` and the step's fields (``step``); a change of what
#: :meth:`~gclib.runtime.spec.RunSpec.describe` writes is a new layout (and :data:`SPEC_KEYS` says which), so that
#: an older file is told apart from another run's and refused in words a user can act on.
VERSION = 3
#: The keys of a run's spec in this layout (``RunSpec.describe``), and those it may add.
SPEC_KEYS = ("label", "code", "problem", "dim", "samples", "step", "model", "iterations", "time_scale", "seed",
             "timeout", "poll", "kill", "without", "exchange")
SPEC_OPTIONAL = ("sequential",)
#: The most a state file may hold (its records and the update's state), checked before it is read.
STATE_BUDGET = files.Budget("a run's state file", 256 * files.MIB, constant="gclib.runtime.state.STATE_BUDGET")


def _version() -> str:
    return __version__


# ---------------------------------------------------------------------------------------------- step state
def pack_step_state(state: dict) -> dict:
    """The state of an update (``TandonAGD`` / ``GD``: a dict of arrays and numbers) as exact JSON: arrays as
    ``{"f64": text, "shape": [...]}`` with ``text`` the base64 of the array's little-endian doubles, integers as
    integers, floats as ``float.hex`` strings.

    The master packs the state after every iteration and the launcher parses it, while the workers start the
    next iteration on the same cores: one string per array keeps both cheap (a string per element cost each of
    them several times more)."""
    out = {}
    for k, v in state.items():
        if isinstance(v, np.ndarray) or isinstance(v, (list, tuple)):
            a = np.asarray(v, dtype="<f8")
            out[k] = {"f64": base64.b64encode(a.tobytes()).decode("ascii"), "shape": list(a.shape)}
        elif isinstance(v, (bool, np.bool_)):
            out[k] = {"bool": bool(v)}
        elif isinstance(v, (int, np.integer)):
            out[k] = int(v)
        elif isinstance(v, (float, np.floating)):
            out[k] = {"float": float(v).hex()}
        else:
            raise TypeError(f"step state entry {k!r} has type {type(v).__name__}; only arrays and numbers can be "
                            f"saved")
    return out


def unpack_step_state(packed: dict) -> dict:
    """Inverse of :func:`pack_step_state` (raises ``ValueError`` on anything else)."""
    if not isinstance(packed, dict):
        raise ValueError("step_state must be an object")
    out = {}
    for k, v in packed.items():
        if isinstance(v, bool) or not isinstance(v, (int, dict)):
            raise ValueError(f"step_state entry {k!r} is malformed")
        if isinstance(v, int):
            out[k] = v
        elif "f64" in v:
            shape = v.get("shape")
            if not isinstance(v["f64"], str) or not isinstance(shape, list):
                raise ValueError(f"step_state entry {k!r} is malformed")
            try:
                data = base64.b64decode(v["f64"], validate=True)
                out[k] = np.frombuffer(data, dtype="<f8").astype(float).reshape(shape)
            except (binascii.Error, ValueError, TypeError):
                raise ValueError(f"step_state entry {k!r} is malformed (not the base64 of {shape} doubles)") \
                    from None
        elif "float" in v:
            out[k] = float.fromhex(v["float"])
        elif "bool" in v:
            out[k] = bool(v["bool"])
        else:
            raise ValueError(f"step_state entry {k!r} is malformed")
    return out


# ---------------------------------------------------------------------------------------------- the file
def write_json(path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (a temporary file beside it, then a rename), so that a crash
    while writing leaves the previous file whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as fh:
            json.dump(obj, fh)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def state_document(result, args=None) -> dict:
    """The state file's content for a :class:`~gclib.runtime.spec.RunResult`."""
    doc = result.to_dict()
    doc.update({"format": FORMAT, "version": VERSION, "gclib_version": _version(),
                "next_iteration": (result.records[-1]["iteration"] + 1) if result.records else result.start,
                "step_state": result.step_state, "args": args})
    return doc


def _bad(path, why) -> ValueError:
    return ValueError(f"resume: {str(path)!r} is not a usable state file: {why}")


def load_state(path) -> dict:
    """Read and check a state file. Raises ``ValueError`` (one line naming the file and what is wrong) for a
    missing, unreadable, malformed or foreign file, or one written by another version of gclib."""
    try:  # a regular file within its budget (a FIFO, /proc/self/environ, a sparse file are refused at once)
        data = files.read_text(None, path, STATE_BUDGET, expected="a gclib run state (JSON)")
    except files.FileRefused as e:
        raise _bad(path, e.why()) from None
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise _bad(path, f"not JSON ({getattr(e, 'msg', 'malformed')} at line {getattr(e, 'lineno', '?')})") from None
    except RecursionError:
        raise _bad(path, "its JSON is nested too deeply for a state file") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(path, "it is not a gclib run state (no 'format': 'gclib-run-state')")
    _check_layout(path, doc)
    if doc.get("gclib_version") != _version():
        shown = doc.get("gclib_version") if isinstance(doc.get("gclib_version"), str) else "another version"
        raise _bad(path, f"it was written by gclib {shown[:40]!r}, this is gclib {_version()}; resume with the "
                         f"version that wrote it")
    records, nxt, spec = doc.get("records"), doc.get("next_iteration"), doc.get("spec")
    if not isinstance(records, list) or not all(isinstance(r, dict) and isinstance(r.get("iteration"), int)
                                                 for r in records):
        raise _bad(path, "'records' must be a list of iteration records")
    if not isinstance(spec, dict) or not isinstance(spec.get("iterations"), int):
        raise _bad(path, "'spec' is missing or malformed")
    if not isinstance(nxt, int) or not 0 <= nxt <= spec["iterations"]:
        shown = nxt if isinstance(nxt, int) else f"a {type(nxt).__name__}"
        raise _bad(path, f"'next_iteration' must be an integer in [0, {spec['iterations']}], got {shown}")
    if [r["iteration"] for r in records] != list(range(nxt)):
        raise _bad(path, f"the records must be those of iterations 0 to {nxt - 1} ('next_iteration' is {nxt}), got "
                         f"{len(records)} records" + (f" of iterations {records[0]['iteration']} to "
                                                      f"{records[-1]['iteration']}" if records else ""))
    if nxt > 0:  # the update's state must unpack (it stays packed in the document: RunSpec.state0 takes it so)
        try:
            unpacked = unpack_step_state(doc.get("step_state"))
        except (ValueError, TypeError, AttributeError) as e:
            raise _bad(path, str(e)) from None
        theta = unpacked.get("theta")
        if not isinstance(theta, np.ndarray) or theta.shape != (spec.get("dim"),):
            raise _bad(path, f"'step_state' has no 'theta' of the run's dimension {spec.get('dim')}")
    else:
        doc["step_state"] = None
    if doc.get("args") is not None and not isinstance(doc["args"], dict):
        raise _bad(path, "'args' must be an object")
    return doc


def _check_layout(path, doc: dict) -> None:
    """Refuse a state file of another layout, saying which and what to do; a file marked with the previous
    layout whose spec has every key of this one is of this layout (it was written before the mark changed)."""
    v = doc.get("version")
    spec = doc.get("spec")
    keys = set(spec) if isinstance(spec, dict) else set()
    current = keys >= set(SPEC_KEYS) and keys <= set(SPEC_KEYS) | set(SPEC_OPTIONAL)
    if v == VERSION or (v == VERSION - 1 and current):
        return
    if isinstance(v, int) and not isinstance(v, bool) and 0 < v < VERSION:
        raise ValueError(f"resume: {str(path)!r} was saved by an older gclib (layout {v}); rerun without --resume "
                         f"(this gclib reads layout {VERSION})")
    if isinstance(v, int) and not isinstance(v, bool) and v > VERSION:
        raise _bad(path, f"it was saved by a newer gclib (layout {v}); resume it with that version (this gclib "
                         f"reads layout {VERSION})")
    raise _bad(path, f"its layout version is not a layout number; this gclib reads layout {VERSION}")


def comparable(described: dict) -> dict:
    """What must agree between a state file's ``spec`` and the spec of the run that resumes it."""
    skip = {"state_file", "start", "kill", "timeout", "poll", "label", "without", "metrics"}
    return json.loads(json.dumps({k: v for k, v in described.items() if k not in skip}))
