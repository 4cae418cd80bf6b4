"""Resuming a stopped run, in one place: its state file (what it holds, written and read back and checked:
:func:`write_state`, :func:`load_state`; where a run leaves it: :func:`save_state`), the spec that continues it where
the file ends (:func:`resume_spec`, :func:`continued`) without the injected kills that fired already
(:func:`kills_left`), and the checks of the command line a state file keeps for ``gclib run --resume``
(:func:`saved_args`).

The state file of a run is what ``gclib run --resume STATE`` (and ``launch(..., resume=STATE)``) needs to continue a
stopped run from its last completed iteration. It is one JSON object: the result so far (per-iteration ``records``,
``theta``, ``summary``, ``spec``) plus

* ``format`` (:data:`FORMAT`), ``version`` (:data:`VERSION`, the layout of this file) and ``gclib_version``: a file
  of another layout or written by another version of gclib is refused, since the same arguments may not mean
  the same run there;
* ``next_iteration``: the first iteration not completed (``len(records)``);
* ``step_state``: the update's state after that iteration (for Tandon's accelerated method: ``theta``, the
  momentum point ``u``, the step count ``t``), every float stored exactly
  (:func:`gclib.runtime.protocol.pack_step_state`), so that a resumed run continues with the very numbers the
  stopped one had;
* ``args``: the command line's parameters when the run came from ``gclib run`` (``None`` from the library; then
  the caller passes the same :class:`~gclib.runtime.spec.RunSpec` again, and it is checked against ``spec``).

The injected delays are not stored: they are drawn from the seed for every iteration up front, so the resumed
run draws the same array and uses the iterations that remain. The master's side of a resume is the update's state
it starts from (``RunSpec.state0``, unpacked by :func:`gclib.runtime.protocol.unpack_step_state`).
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from gclib import __version__, files
from gclib.runtime.preflight import os_reason
from gclib.runtime.protocol import unpack_step_state

FORMAT = "gclib-run-state"
#: The layout of the file. Layout 3 added the spec's ``exchange`` and the step's fields (``step``) (its files written
#: before the A/B switch left the runtime also hold the spec's ``without``, ignored); a change of what
#: :meth:`~gclib.runtime.spec.RunSpec.describe` writes is a new layout (and :data:`SPEC_KEYS` says which), so that
#: an older file is told apart from another run's and refused in words a user can act on.
VERSION = 3
#: The keys of a run's spec in this layout (``RunSpec.describe``), and those it may add.
SPEC_KEYS = ("label", "code", "problem", "dim", "samples", "step", "model", "iterations", "time_scale", "seed",
             "timeout", "poll", "kill", "exchange")
SPEC_OPTIONAL = ("sequential",)
#: The most a state file may hold (its records and the update's state), checked before it is read.
STATE_BUDGET = files.Budget("a run's state file", 256 * files.MIB, constant="gclib.runtime.resume.STATE_BUDGET")


def _version() -> str:
    return __version__


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
    """The state file's content for a :class:`~gclib.runtime.result.RunResult`."""
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
    skip = {"state_file", "start", "kill", "timeout", "poll", "label", "metrics",
            "without"}  # (the A/B switch the spec had before: in files of layout 3 written then, ignored)
    return json.loads(json.dumps({k: v for k, v in described.items() if k not in skip}))


def write_state(result, path, args=None) -> None:
    """Write the state file of ``result`` (a :class:`~gclib.runtime.result.RunResult`) to ``path``, atomically;
    ``args``: the command line's parameters, if any (:func:`state_document`)."""
    write_json(path, state_document(result, args))


def save_state(result, path, run_dir, args=None) -> None:
    """Write ``result``'s state file to ``path`` (:func:`write_state`); when that fails, to the run directory
    ``run_dir``, saying so in the result's error."""
    try:
        write_state(result, path, args)
        result.spec["state_file"] = str(path)
    except OSError as e:  # the state cannot be written where asked: keep it in the run directory
        fallback = Path(run_dir) / "state.json"
        write_state(result, fallback, args)
        result.spec["state_file"] = str(fallback)
        result.error = (result.error + "; " if result.error else "") + (
            f"could not write the state to {str(path)!r} ({os_reason(e)}), wrote {str(fallback)!r}")


# ---------------------------------------------------------------------------------------------- the run that continues
def resume_spec(spec, state) -> tuple:
    """``spec`` (a :class:`~gclib.runtime.spec.RunSpec`) set to continue the run saved in ``state`` (a path, or a
    document of :func:`load_state`), without the injected kills due by then (:func:`kills_left`). Returns ``(spec,
    document)``; raises ``ValueError`` when the state belongs to another run or has nothing left to do."""
    doc = state if isinstance(state, dict) else load_state(state)
    where = "" if isinstance(state, dict) else f" {str(state)!r}"
    mine, saved = comparable(spec.describe()), comparable(doc["spec"])
    if mine != saved:
        diff = sorted(k for k in set(mine) | set(saved) if mine.get(k) != saved.get(k))
        raise ValueError(f"resume: the state{where} belongs to another run (it differs in {', '.join(diff)})")
    _unfinished(doc, where.strip() or "the state")
    nxt = doc["next_iteration"]
    kill = kills_left(spec.kill, nxt)
    if nxt == 0:
        return dataclasses.replace(spec, kill=kill), doc
    wall = doc["records"][-1].get("wall") or 0.0
    return dataclasses.replace(spec, start=nxt, state0=doc["step_state"], wall0=float(wall), kill=kill), doc


def continued(spec, state) -> tuple:
    """What :func:`gclib.runtime.launch` needs of a resume: ``(spec, (records, tasks))``, the spec set to continue
    the run saved in ``state`` (:func:`resume_spec`) and what that run did before: the records of its completed
    iterations and its workers' task reports."""
    spec, doc = resume_spec(spec, state)
    return spec, (doc["records"][:spec.start], doc.get("tasks") or [])


def kills_left(kill: dict, next_iteration: int) -> dict:
    """The injected kills (``RunSpec.kill``) a run resumed at ``next_iteration`` still makes: those due at a later
    iteration. A kill due at or before it is not made again: it fired (a run stopped by the kills it injected
    stops in the iteration they were due), or the run stopped in that iteration before it; injecting it again
    would stop the resumed run the same way."""
    return {w: it for w, it in kill.items() if it > next_iteration}


def _unfinished(doc: dict, shown: str) -> None:
    """Refuse a state whose run did all its iterations (``shown``: how messages name the state)."""
    iterations = doc["spec"]["iterations"]
    if doc["next_iteration"] >= iterations:
        raise ValueError(f"resume: the run in {shown} already finished its {iterations} iterations; nothing to "
                         f"resume")


# ---------------------------------------------------------------------------------------------- gclib run --resume
def saved_args(doc: dict, path, known) -> dict:
    """The command line's parameters kept in the state file ``doc`` (read from ``path`` by :func:`load_state`),
    checked for ``gclib run --resume``: the run has iterations left, the file holds a command line (a run started
    from the library resumes with ``launch(spec, resume=...)``), and every parameter in it is one of ``known`` (the
    command's own). Raises ``ValueError`` saying which."""
    _unfinished(doc, repr(str(path)))
    if doc.get("args") is None:
        raise ValueError(f"resume: {str(path)!r} was written by a library run (no command line in it); resume it "
                         f"with gclib.runtime.launch(spec, resume=...) and the same RunSpec")
    unknown = sorted(k for k in doc["args"] if k not in known)
    if unknown:
        shown = ", ".join(repr(k[:40]) for k in unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise _bad(path, f"'args' holds what is not a parameter of gclib run: {shown}")
    return doc["args"]
