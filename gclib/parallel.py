"""A long loop of independent steps over several processes, its results in the loop's order.

A study whose steps are independent given their inputs (each draw made before, each seed passed in) gives the same
numbers whichever process computes a step: :func:`ordered_map` only changes how long it takes. Use it where a
notebook runs with nothing beside it (``gclib reproduce`` runs the notebooks that start MPI jobs alone, and the second
core would idle) and leave ``processes`` at 1 elsewhere (tests run two at a time already).
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterable, Sequence

from gclib import checks
from gclib.progress import progress as _progress


def spawn_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes started fresh ("spawn", not "fork": a forked copy of a Jupyter kernel, of a
    process that holds threads or a kernel's sockets, is not safe to run)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def ordered_map(fn: Callable, items: Sequence, processes: int = 1, desc: str = "", show: bool = False,
                chunksize: int = 1) -> list:
    """``[fn(x) for x in items]``, computed in ``processes`` processes when more than one.

    Args:
        fn: a module-level function (or a ``functools.partial`` of one): the other processes import it.
        items: the steps' inputs, each picklable.
        processes: how many processes compute (1: this one, nothing started).
        desc, show: a progress bar labelled ``desc`` counts the steps done, when ``show``.
        chunksize: steps sent to a process at a time.

    Returns:
        the results, in the order of ``items``.
    """
    processes = checks.integer("processes", processes, low=1)
    items = list(items)
    if processes == 1 or len(items) < 2:
        return [fn(x) for x in _progress(items, desc, show)]
    with spawn_pool(min(processes, len(items))) as pool:
        results: Iterable = pool.map(fn, items, chunksize=checks.integer("chunksize", chunksize, low=1))
        return list(_progress(results, desc, show, total=len(items)))
