"""Sequential gradient coding: coding across iterations with a decoding delay, replayed on a delay matrix.

Krishnan, Ebrahimi and Khisti, "Sequential Gradient Coding For Straggler Mitigation" (ICLR 2023, arXiv:2211.13802)
let gradient ``t`` start in round ``t`` and be due by round ``t + T``, so a round's lost work can be made up in a
later round. Their two schemes, and the baselines, are simulated here the way the authors judged them: by replaying
a *delay matrix* ``delays[i, r]``, worker ``i``'s seconds in round ``r`` (``(workers, rounds)``).

The round rule shared by every coded scheme. Round ``r``'s deadline is ``(1 + mu)`` times its fastest worker's time;
the workers slower than that are its stragglers. When the stragglers fit the scheme's straggler model, their work
of the round is lost and the round lasts ``min(deadline, slowest)``; otherwise the master waits for every worker
(nothing is lost, the round lasts its slowest time and counts as *waited*). The run time is the sum of the rounds.
A worker that never answers in a round (a dead one) has delay ``inf``: a scheme whose model absorbs it goes on; one
that must wait for it never finishes (run time ``inf``).

Schemes (registered beside every other scheme in :data:`gclib.schemes.SEQUENTIAL`; their names :data:`SCHEMES`),
each with its normalized load (the fraction of one gradient's data a worker processes in a round, :func:`load`) and
delay ``T`` (:func:`delay`); ``jobs`` gradients take ``jobs + T`` rounds:

* ``no-coding``: every worker its ``1/n`` share, the master waits for all; ``T = 0``;
* ``no-wait``: the master never waits (and decodes nothing): the lower baseline; ``T = 0``;
* ``gc``: gradient coding with parameter ``s`` in every round on its own (load ``(s + 1)/n``, ``T = 0``);
* ``sr-sgc`` ``(B, W, lambd)``: GC with ``s = ceil(B lambd / (W - 1 + B))`` plus selective repetition: when ``v > s``
  workers missed job ``r - B`` in round ``r - B``, ``v - s`` of them (the lowest-indexed) redo it in round ``r``
  instead of job ``r``; job ``t`` decodes from ``n - s`` results of rounds ``t`` and ``t + B``; ``T = B``; in the
  last ``B`` rounds a round whose job ``r - B`` already decodes is skipped at no cost. ``B`` divides ``W - 1``;
* ``m-sgc`` ``(B, W, lambd)``: every job is cut into ``W - 1 + B`` minitasks per worker, handled on a diagonal
  (minitask ``m`` of job ``j`` in round ``j + m``): the first ``W - 1`` are uncoded pieces, the last ``B`` are
  GC-coded groups. A worker does a coded group only when it has delivered all its ``W - 1`` uncoded pieces of the
  job; otherwise it redoes an uncoded piece it lost. Job ``j`` decodes when every worker has delivered its ``W - 1``
  pieces and each coded group has ``n - lambd`` results; ``T = W - 2 + B``; ``1 <= B <= W - 1``.

The straggler model of both SGC schemes, checked in each round (:func:`sr_sgc`, :func:`m_sgc`): the ``(B, W,
lambd)``-bursty model, read on the stragglers *recorded* in past rounds (a waited round records none): *spatial*,
the workers that straggled in the last ``W - 1`` rounds and now number at most ``lambd``; *temporal*, a worker
straggling now did not straggle in rounds ``r - W + 1 .. r - B`` (a burst lasts at most ``B`` rounds in a window).
SR-SGC leaves out of both tests a past round that plain GC absorbed (every worker on that round's own job and at
most ``s`` stragglers); M-SGC has no GC layer in every round and leaves none out.

Conventions (:data:`CONVENTIONS`): ``"paper"`` follows the paper's definitions; ``"simulator"`` the authors' public
simulator (GitHub mamaj/Sequential-Gradient-Coding-2), where they differ:

* GC(s) tolerates ``s`` stragglers in the paper (``<= s``); the simulator accepts a round only with fewer than
  ``s`` (``< s``), so its GC(s) pays the load of ``s`` and tolerates ``s - 1``;
* no-wait: the paper's lower bound lasts ``min(deadline, slowest)`` per round; the simulator charges the deadline
  even when every worker was faster.

The rest is the same in both, read from the simulator (the paper is silent or agrees): the deadline rule, SR-SGC's
lowest-indexed repeaters, the exemption of GC-absorbed rounds in SR-SGC only (the asymmetry follows each scheme's
design), the tail (SR-SGC may skip its last ``B`` rounds; M-SGC cannot, since a job decodes only after its last
coded minitask in round ``j + T``, and its ``T`` tail rounds are charged in full).

Loads and delay matrices: :func:`linear_shift` is the authors' load model (a probe matrix measured at ``base_load``,
shifted by ``(load - base_load) * base_comp`` seconds for every worker); :func:`proportional` is gclib's compute-time
models' (``gclib.stragglers``, one draw per worker and round: a worker's time is ``overhead + load * n * X``).
:func:`sweep` replays every candidate of :func:`candidates` on a probe and :func:`best` picks the fastest.
:func:`read_delays` reads a delay matrix from a ``.npy`` or CSV file (``gclib sequential`` replays one from the
command line); notebook ``12_sequential`` (:mod:`gclib.studies.sequential`) judges the schemes on held-out rounds.

This module is the front door: the replay and the round-by-round state live in :mod:`gclib.sequential_replay`, the
load models, the sweep and the advice in :mod:`gclib.sequential_sweep`; every name of theirs is importable from here.
"""
from __future__ import annotations

import numpy as np

from gclib import files
from gclib.schemes import SEQUENTIAL
from gclib.sequential_replay import (  # noqa: F401  (this module's interface)
    CONVENTIONS, GC_TASK, GROUP, MU, PIECE, GCRounds, MSGCRounds, NoCodingRounds, Result, Rounds, SRSGCRounds,
    _delays, _matrix, check_params, delay, label, load, replay, rounds_of, run, sr_sgc_s, step, stragglers)
from gclib.sequential_sweep import (  # noqa: F401  (this module's interface)
    ADVISED, MAX_CANDIDATES, MAX_REPLAY_WORK, MAX_WORKERS, REPLAY_OVERHEAD, advice, best, candidates, check_advice,
    check_work, count_candidates, linear_shift, proportional, sweep, task_delays)

#: The schemes, by name (:data:`gclib.schemes.SEQUENTIAL`).
SCHEMES = tuple(SEQUENTIAL)


# ------------------------------------------------------------------------------------------------ files
#: The most entries (workers x rounds) of a delay matrix read from a file (80 MB of doubles), and what its CSV may
#: take on disk.
MAX_DELAY_CELLS = 10_000_000
DELAYS_BUDGET = files.Budget("a delay matrix", 256 * files.MIB, constant="gclib.sequential.DELAYS_BUDGET")


def read_delays(path, *, transpose: bool = False) -> np.ndarray:
    """A delay matrix from a file: ``.npy`` (a 2-D array of integers or reals) or a CSV of numbers without a header
    (a row per worker, a column per round; ``transpose``: a row per round; plain, gzip, bzip2 or xz). Returns
    ``(workers, rounds)`` seconds. The file's size and shape are checked against :data:`MAX_DELAY_CELLS` and
    :data:`DELAYS_BUDGET` before it is parsed (:mod:`gclib.files`).

    Raises:
        ValueError: one line naming the file, and the line and column where it is not a delay matrix (not 2-D, not
        numbers, booleans or complex numbers, negative, NaN, a number too large for a float), never its content.
    """
    name = str(path)
    if name.lower().endswith(".npy"):
        d = files.read_npy("delays", path, max_cells=MAX_DELAY_CELLS, what="a delay matrix",
                           constant="gclib.sequential.MAX_DELAY_CELLS")
    else:
        d = files.read_numbers("delays", path, DELAYS_BUDGET, max_cells=MAX_DELAY_CELLS, what="a delay matrix")
    try:
        d = _delays(d)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    return d.T if transpose else d
