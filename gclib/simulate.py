"""The simulator and its sweeps, under the names the notebooks, the documentation and the command line use
(``from gclib.simulate import simulate, Communication, sweep``; the function :func:`simulate` is also
``gclib.simulate``, which hides this module's name on the package: its module is ``sys.modules["gclib.simulate"]``).

* :mod:`gclib.simulator`: the Monte Carlo of one iteration (completion time, messages, computation, volume) for any
  code and model, :class:`Communication`, :class:`Schedule`, :class:`SimResult`, the sizes of its chunks;
* :mod:`gclib.sweeps`: tables of the simulator over a range of parameters (:func:`sweep`, :func:`points_cost`,
  :func:`comm_efficient_sweep`) and what reads them (:func:`closed_form_z`, :func:`agreement`, :func:`best`,
  :func:`argmin_set`). They need pandas, which ``import gclib`` does not load: their names are looked up in
  :mod:`gclib.sweeps` when first asked for.
"""
from __future__ import annotations

from gclib.simulator import (  # noqa: F401  (this module's interface)
    CANDIDATE_TRIAL_BYTES, CHUNK, CHUNK_BYTES, RESULT_BYTES, Z95, Communication, Schedule, SimResult, _per_worker,
    arrival_times, chunk_bytes, chunk_trials, chunks_of, completion_tail_index, mean_ci, median_ci, paired_change,
    queued, simulate, simulate_bytes, simulate_chunk, simulate_workers, tail_index, tasks_done)

#: The names of :mod:`gclib.sweeps` this module gives.
SWEEPS = ("sweep", "points_cost", "CommSweep", "comm_efficient_sweep", "closed_form_z", "agreement", "argmin_set",
          "best")


def __getattr__(name: str):
    """A name of :data:`SWEEPS`, from :mod:`gclib.sweeps` (imported then: it loads pandas)."""
    if name in SWEEPS:
        from gclib import sweeps

        return getattr(sweeps, name)
    raise AttributeError(f"module 'gclib.simulate' has no attribute {name!r}")


def __dir__() -> list:
    return sorted([*globals(), *SWEEPS])
