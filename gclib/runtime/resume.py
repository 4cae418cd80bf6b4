"""Continuing a saved run: the spec set to start where a state file ends (:func:`resume_spec`), without the
injected kills that fired already (:func:`kills_left`).
"""
from __future__ import annotations

import dataclasses

from gclib.runtime.spec import RunSpec
from gclib.runtime.state import comparable, load_state


def resume_spec(spec: RunSpec, state) -> tuple:
    """``spec`` set to continue the run saved in ``state`` (a path, or a document of
    :func:`gclib.runtime.state.load_state`), without the injected kills due by then (:func:`kills_left`). Returns
    ``(spec, document)``; raises ``ValueError`` when the state belongs to another run or has nothing left to do."""
    doc = state if isinstance(state, dict) else load_state(state)
    where = "" if isinstance(state, dict) else f" {str(state)!r}"
    mine, saved = comparable(spec.describe()), comparable(doc["spec"])
    if mine != saved:
        diff = sorted(k for k in set(mine) | set(saved) if mine.get(k) != saved.get(k))
        raise ValueError(f"resume: the state{where} belongs to another run (it differs in {', '.join(diff)})")
    nxt = doc["next_iteration"]
    if nxt >= spec.iterations:
        raise ValueError(f"resume: the run in {where.strip() or 'the state'} already finished its "
                         f"{spec.iterations} iterations; nothing to resume")
    kill = kills_left(spec.kill, nxt)
    if nxt == 0:
        return dataclasses.replace(spec, kill=kill), doc
    wall = doc["records"][-1].get("wall") or 0.0
    return dataclasses.replace(spec, start=nxt, state0=doc["step_state"], wall0=float(wall), kill=kill), doc


def kills_left(kill: dict, next_iteration: int) -> dict:
    """The injected kills (``RunSpec.kill``) a run resumed at ``next_iteration`` still makes: those due at a later
    iteration. A kill due at or before it is not made again: it fired (a run stopped by the kills it injected
    stops in the iteration they were due), or the run stopped in that iteration before it; injecting it again
    would stop the resumed run the same way."""
    return {w: it for w, it in kill.items() if it > next_iteration}
