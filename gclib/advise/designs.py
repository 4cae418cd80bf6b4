"""The candidate designs of the advice and the limits of its work, known before any simulation.

Candidates (:data:`FAMILIES`, drawn from the table of families of :mod:`gclib.design_space` that the design search of
:mod:`gclib.design` draws from too): uncoded; Tandon's cyclic (``crc``) and fractional (``frc``) repetition and
Reed-Solomon (``rs``) for every load ``r``; the communication-efficient codes of Ye-Abbe and Kadhe et al. (load
``s + m``, messages of ``1/m`` gradient); GC in clusters; UC-MMC; correlated and uncorrelated GC-MMC (orders and
cluster counts) and the hybrid design at every load; the partial-straggler protocol of Ramamoorthy, Meng and
Girimaji (``rmg``, one cluster, the cyclic assignment in its natural order) at every load where communication is
charged (``network``: its coverage is UC-MMC's in one cluster, its round trip after it charged by
:func:`gclib.shared_draws.protocol`, and its command runs that exchange, ``--exchange two-phase``; where messages cost
nothing it is UC-MMC in one cluster and is not listed twice); LCC
where its threshold fits (a simulator stand-in that cannot run over MPI: it is ranked but never recommended, and its
``command`` is empty).

Loads and orders are tried one by one up to :data:`gclib.design_space.GRID_DENSE` and on a geometric grid above
(:func:`gclib.design_space.grid`).
:func:`workload` says what the advice would simulate and hold, :func:`check_workload` refuses a request of hours or
beyond the memory before the work.
"""
from __future__ import annotations

import math

from gclib import checks, design_space
from gclib.codes.base import matrix_bytes
from gclib.simulator import CANDIDATE_TRIAL_BYTES, Communication
from gclib.design_space import MAX_WORKERS, Candidate, grid

#: Scheme families of :func:`candidates`, in the order they are built (ties in the ranking keep this order): those
#: of :data:`gclib.design_space.FAMILIES` that the advice takes, in the table's order.
FAMILIES = design_space.names("advise")
#: Trials per model of :func:`gclib.advise.advise` at most by default: the designs kept are simulated chunk by chunk,
#: from :data:`MIN_TRIALS` on, until every mean time is known within :data:`PRECISION` of itself (95% half-width); at
#: large ``K``, where an iteration's time varies little, a few hundred trials do.
TRIALS = 4000
MIN_TRIALS = 400
PRECISION = 0.01
#: Above this many candidates, :func:`gclib.advise.advise` screens them first (the race of :data:`SCREEN_ROUNDS`).
SCREEN_ABOVE = 80
#: Trials of each round of the screening race (cumulative: 256 in all).
SCREEN_ROUNDS = (16, 16, 32, 64, 128)
SCREEN_TRIALS = sum(SCREEN_ROUNDS)
#: The race drops a design when a paired difference exceeds the Student-t quantile of this one-sided level
#: divided by the number of candidates (Bonferroni: over a whole race, about this chance of dropping a design
#: that no other beats).
RACE_ALPHA = 0.01
#: Designs kept per model by the screen (besides those on the fronts and the fastest of each family).
SCREEN_KEEP = 16
#: Bytes a chunk of draws (:class:`gclib.shared_draws.Draws`) may take: the simulation never holds more of the
#: ``trials x workers x load`` finish times than this.
DRAW_BUDGET = 128 * 2 ** 20
#: Rows of the ranked table whose stability margin is computed, and the straggler patterns sampled for each
#: (up to ``K = 100``; above, ``STABILITY_PATTERNS * 100 / K`` and at least 10: a decode's work grows with ``K``).
STABILITY_ROWS = 5
STABILITY_PATTERNS = 100
#: The stability margin is computed only for codes whose encoding matrix (built three times over) takes at most
#: this many bytes (at ``K`` in the thousands it is not: ``digits`` is then unknown).
STABILITY_BYTES = 256 * 2 ** 20
#: The most task times :func:`gclib.advise.advise` draws in all (over every model, the race included; every design reads
#: the same draws; in the master's queue, with every message of the designs kept: see :func:`workload`): some minutes on
#: one core of a laptop. A request beyond it is refused before the work, naming what to lower.
MAX_CELLS = 2e10
#: Designs that the full trials simulate after a screening race, at most as :func:`workload` counts them (the kept ones
#: of :func:`gclib.advise.race.screen`: the fastest ``SCREEN_KEEP`` per model, the fronts and the fastest of each
#: family).
KEPT_AT_MOST = 4 * SCREEN_KEEP + len(FAMILIES)


def default_max_load(K: int) -> int:
    """The computation load the advice (:func:`gclib.advise.advise`) allows when none is given: ``ceil(sqrt(K))``,
    at least 2 and at most ``K`` (3 at ``K = 8``, 10 at ``K = 100``). Every extra part a worker holds costs
    computation in every iteration while the time it can save is bounded by the stragglers' tail; loads of a few
    parts (Fig. 1 of the GC-MMC paper: 10 of 40) capture most of the gain."""
    K = checks.integer("K", K, low=1)
    return int(min(K, max(2, math.isqrt(K - 1) + 1)))


#: The record of a candidate design (:class:`gclib.design_space.Candidate`, the design search's too), under the name the
#: advice gave it.
Design = Candidate


def candidates(K: int, max_load: int | None = None, *, max_orders: int = 2, network=None) -> list:
    """Every design the advice compares (see the module docstring), as :class:`gclib.design_space.Candidate`, drawn from
    the table of families (:func:`gclib.design_space.points` on an ``"advise"`` space: uncoded at load 1, then every
    load of :func:`gclib.design_space.grid` up to ``max_load``).

    Args:
        K: workers. max_load: the largest computation load (default :func:`default_max_load`).
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
        network: the :class:`gclib.simulator.Communication` the advice charges (``None`` or free: messages cost
            nothing, and the partial-straggler protocol, then UC-MMC in one cluster, is not listed).
    """
    K = checks.integer("K", K, low=2)
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    max_orders = checks.integer("max_orders", max_orders, low=1)
    if network is not None and not isinstance(network, Communication):
        raise checks.ParameterTypeError(f"network must be a gclib.simulator.Communication or None, got "
                                        f"{type(network).__name__}")
    sp = design_space.Space("advise", K, (1, *grid(2, R)), max_orders, comm=network is not None and not network.free)
    return [p.candidate(advice=True) for p in design_space.points(sp)]


def stability_patterns(K: int) -> int:
    """Straggler patterns the stability margin samples for ``K`` workers (see :data:`STABILITY_PATTERNS`)."""
    return int(STABILITY_PATTERNS if K <= 100 else max(10, STABILITY_PATTERNS * 100 // K))


def code_bytes(d: Candidate) -> int:
    """What building the real code of ``d`` takes: its dense encoding matrix (messages x parts x pieces, float64)
    three times over (:func:`gclib.codes.base.matrix_bytes`, as :func:`gclib.codes.base.reserve_code` counts it)."""
    s = d.spec
    pieces = max(1, int(round(1 / s.size)))
    return matrix_bytes(s.workers * len(s.columns), s.workers * pieces)


def _advise_bytes(K: int, R: int, n: int, trials: int, race: bool) -> int:
    """Memory the advice needs at most: a chunk of draws, the race's per-trial times, messages and units of
    every candidate (``8`` bytes each, four arrays), and the full simulation's results of the designs kept."""
    keep = KEPT_AT_MOST if race else n
    race_bytes = CANDIDATE_TRIAL_BYTES * n * SCREEN_TRIALS if race else 0
    return DRAW_BUDGET + race_bytes + CANDIDATE_TRIAL_BYTES * keep * trials + 2 * 8 * K * R * 4


def workload(K: int, max_load: int | None = None, trials: int | None = None, models: int = 1, *,
             queue: bool = False, screen: bool | None = None, designs: list | None = None) -> dict:
    """What the advice (:func:`gclib.advise.advise`) would simulate for ``K`` workers, loads up to ``max_load``,
    ``trials`` trials (``None``: the default's most, :data:`TRIALS`) and ``models`` models, known before the work:
    ``{"candidates", "cells", "bytes"}``: the candidate designs; an upper bound on the task times drawn (every design
    reads the same draws, ``K x load`` per trial: the race's :data:`SCREEN_TRIALS` when there are more than
    :data:`SCREEN_ABOVE` candidates, then ``trials``), with, in the master's queue (``queue``), every message of the
    designs kept (at most :data:`KEPT_AT_MOST`, each simulated from its schedule); and the bytes held at once
    (:func:`_advise_bytes`). ``screen``, ``designs``: as :func:`gclib.advise.advise` (``designs``: the candidates, when
    listed already)."""
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (advise lists every candidate design for K workers)")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    most = TRIALS if trials is None else checks.integer("trials", trials, low=2)
    designs = candidates(K, R) if designs is None else designs
    n = len(designs)
    race = n > SCREEN_ABOVE if screen is None else bool(screen)
    per_model = ((SCREEN_TRIALS if race else 0) + most) * K * R
    if queue:
        loads = sorted((d.load for d in designs), reverse=True)
        per_model += most * K * sum(loads[:KEPT_AT_MOST] if race else loads)
    return {"candidates": n, "cells": float(models) * per_model, "bytes": _advise_bytes(K, R, n, most, race)}


def check_workload(K: int, max_load: int | None = None, trials: int | None = None, models: int = 1, *,
                   queue: bool = False, screen: bool | None = None, designs: list | None = None) -> dict:
    """:func:`workload`, refused (``ValueError`` naming what to lower) beyond :data:`MAX_CELLS` task times or the
    memory budget of :func:`gclib.checks.need_memory`."""
    w = workload(K, max_load, trials, models, queue=queue, screen=screen, designs=designs)
    sizes = (f"{K} workers, {w['candidates']} candidate designs (loads up to "
             f"{default_max_load(K) if max_load is None else max_load}), trials = "
             f"{TRIALS if trials is None else trials}, {models} model{'s' * (models != 1)}")
    if w["cells"] > MAX_CELLS:
        raise ValueError(f"advise of {sizes} would simulate about {w['cells']:.2g} task times, more than "
                         f"{MAX_CELLS:.0g} (hours of work); lower the workers, the largest load (--max-load) or "
                         f"the trials (--trials)")
    checks.need_memory("advise", w["bytes"], sizes=sizes, lower="trials (--trials) or the largest load (--max-load)")
    return w
