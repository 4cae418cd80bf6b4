"""Which notebooks ``gclib reproduce --jobs N`` runs side by side, which alone, and in what order.

Most notebooks compute from seeded draws: their numbers do not depend on what else runs on the machine, and two of
them run at once on two cores (``--jobs 2``, what ``make reproduce`` uses). A notebook that starts MPI jobs times real
runs: it runs alone, with no other notebook beside it, so that what it measures is its own runs' time. The
``[alone]`` table of ``notebooks/profiles.toml`` names them per profile (a profile whose parameters start no MPI job
in a notebook leaves it out). The index (``00_*``) reads what the others wrote: it runs last, after all of them.

Side by side, the longest notebooks start first (their durations in the last manifest of the same profile), so
that the two cores end together.
"""
from __future__ import annotations

import datetime as _dt
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from gclib.parallel import spawn_pool

#: the key of ``profiles.toml`` that names, per profile, the notebooks that run alone (it is no profile)
ALONE = "alone"


def alone_table(data: dict, path, profiles, stems) -> dict[str, set[str]]:
    """``{profile: {notebook stems that run alone}}`` from the parsed ``profiles.toml`` (``data``).

    Raises:
        ValueError naming ``path`` when ``[alone]`` is not a table of lists of names, one per profile, or names a
        profile not in ``profiles`` or a notebook not in ``stems``.
    """
    table = data.get(ALONE, {})
    if not isinstance(table, dict):
        raise ValueError(f"profiles file {path}: [{ALONE}] must be a table of profile = [notebook names]")
    out = {}
    for profile, names in table.items():
        where = f"profiles file {path}: {ALONE}.{profile}"
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{where} must be a list of notebook names, got {names!r}"[:300])
        if profile not in profiles:
            raise ValueError(f"{where} names a profile that does not exist (have {sorted(profiles)})")
        if set(names) - set(stems):
            raise ValueError(f"{where} names notebooks that do not exist: {sorted(set(names) - set(stems))}")
        out[profile] = set(names)
    return out


def durations(manifest: dict, profile: str) -> dict[str, float]:
    """Each notebook's seconds in a run's ``manifest`` (:func:`gclib.reproduce.read_manifest`) when the run was of
    ``profile``, else ``{}``."""
    books = manifest.get("notebooks")
    if manifest.get("profile") != profile or not isinstance(books, dict):
        return {}
    return {stem: float(e.get("duration_s") or 0.0) for stem, e in books.items() if isinstance(e, dict)}


@dataclass(frozen=True)
class Stage:
    """Notebooks that may run at the same time (``side_by_side``) or one at a time."""
    paths: tuple[Path, ...]
    side_by_side: bool


def plan(paths: list[Path], alone: set[str], previous: dict[str, float] | None = None) -> list[Stage]:
    """The stages of a run: the notebooks that share the machine, longest first (by ``previous``, seconds per
    stem; the unknown ones first, by name); then each notebook of ``alone``, in order; then the index (``00_*``).

    Args:
        paths: the notebooks to run, in :func:`gclib.reproduce.notebook_paths` order.
        alone: the stems that run with nothing beside them.
        previous: each stem's duration in an earlier run of the same profile.
    """
    previous = previous or {}
    last = [p for p in paths if p.stem.startswith("00")]
    solo = [p for p in paths if p.stem in alone and p not in last]
    shared = sorted((p for p in paths if p not in last and p not in solo),
                    key=lambda p: (p.stem in previous, -previous.get(p.stem, 0.0), p.stem))
    stages = [Stage(tuple(shared), True)] if shared else []
    stages += [Stage((p,), False) for p in solo]
    stages += [Stage((p,), False) for p in last]
    return stages


def run(stages: list[Stage], jobs: int, run_one: Callable[[Path], object], done: Callable[[object], None],
        starting: Callable[[Path], None] = lambda p: None) -> None:
    """Run every stage in turn: a side-by-side stage ``jobs`` notebooks at a time, each in a process of its own
    (``run_one`` must be picklable: a module-level function or a ``functools.partial`` of one), any other in this
    process, after ``starting`` is called with it. ``done`` is called here with each result as its notebook
    ends."""
    for stage in stages:
        if stage.side_by_side and jobs > 1 and len(stage.paths) > 1:
            _side_by_side(stage.paths, jobs, run_one, done)
        else:
            for p in stage.paths:
                starting(p)
                done(run_one(p))


def _side_by_side(paths, jobs: int, run_one, done) -> None:
    with spawn_pool(min(jobs, len(paths))) as pool:
        pending = {pool.submit(run_one, p) for p in paths}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    done(f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise


def wall_seconds(entries: dict) -> tuple[float, int]:
    """The wall-clock seconds of the notebooks of a manifest (``{stem: entry}``) and the jobs of its largest run:
    that run's span, from its start to its last notebook's end, plus the time of each notebook run later on its
    own (entries without a run, from before runs were recorded, count their own time)."""
    def at(stamp: str) -> float:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()

    runs: dict[str, list] = {}
    for e in entries.values():
        runs.setdefault((e.get("run") or {}).get("started", ""), []).append(e)
    main = max((k for k in runs if k), key=lambda k: len(runs[k]), default=None)
    rest = sum(float(e.get("duration_s", 0.0)) for k, es in runs.items() if k != main for e in es)
    if main is None:
        return rest, 1
    span = max(at(e["started"]) + float(e["duration_s"]) for e in runs[main]) - at(main)
    return span + rest, int(runs[main][0]["run"].get("jobs", 1))
