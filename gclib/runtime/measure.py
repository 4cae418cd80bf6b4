"""Measured task times: the timing trace of a run (``gclib run --measure``) and profiling runs (``gclib profile``).

A *timing trace* is a tidy table, one row per observed ``(iteration, worker, task)``, in the format of
:mod:`gclib.timings` (which reads, checks and writes it), here with the ``host`` of every worker. A task that was
not observed (the worker abandoned the iteration when it was decoded or newer parameters arrived) has no row. See
``docs/runtime.md``, "Timing traces".

A *profile* runs uncoded iterations (:func:`profile_code`): each of ``K`` workers computes ``R`` disjoint partial
gradients (``K R`` data parts) and sends each one as soon as it is computed, and the master waits for every
message of every worker still alive, so every task of every live worker is observed.
"""
from __future__ import annotations

import math

import numpy as np

from gclib import checks, timings
from gclib.codes.base import GradientCode
from gclib.codes.rules import threshold
from gclib.learning import GD, make_problem
from gclib.runtime.spec import RunSpec


def host_names(hosts, workers: int) -> list:
    """One host name per worker (``""`` where unknown) from ``{worker: host}`` (keys as integers or, from a saved
    state, as text), a sequence per worker, or ``None``."""
    if hosts is None:
        return [""] * workers
    if isinstance(hosts, dict):
        return [str(hosts.get(k, hosts.get(str(k), ""))) for k in range(workers)]
    return [str(h) for h in hosts]


def write_trace(path, durations, hosts=None) -> int:
    """Write the timing trace of ``durations`` (``(iterations, workers, tasks)`` seconds; ``nan`` = not observed:
    no row; ``inf`` = never) to ``path`` with :func:`gclib.timings.write`, with a ``host`` column from ``hosts``
    (see :func:`host_names`); returns its rows."""
    d = np.asarray(durations, dtype=float)
    names = host_names(hosts, d.shape[1]) if d.ndim == 3 else None  # another shape: timings.write says so
    timings.write(path, d, names)
    return int(np.count_nonzero(~np.isnan(d)))


def _profile_decoder(code, idx):
    """The messages received, summed and scaled to the ``K R`` parts (exact when every part came)."""
    return np.full((1, idx.size), code.n_parts / max(idx.size, 1))


def profile_code(workers: int, tasks: int):
    """The code of a profile: ``workers`` workers, ``workers * tasks`` parts, worker ``w`` computes parts
    ``w R, ..., w R + R - 1`` in this order and sends each partial gradient alone as soon as it is computed
    (``B`` the identity, ``ready = 1, ..., R``). Every message is needed for the exact gradient."""
    K = checks.integer("workers", workers, low=1)
    R = checks.integer("tasks", tasks, low=1)
    n = K * R
    return GradientCode(name="profile", n_workers=K, n_parts=n, order=[tuple(range(w * R, (w + 1) * R))
                                                                        for w in range(K)],
                        B=np.eye(n), sender=np.repeat(np.arange(K), R), ready=np.tile(np.arange(1, R + 1), K),
                        rule=threshold(n, n), stragglers=0, exact=False, decoder=_profile_decoder,
                        params={"workers": K, "tasks": R})


#: Default size of a profile's data set (Tandon's synthetic logistic regression): samples and features.
PROFILE_SAMPLES = 20000
PROFILE_DIM = 100


def profile_spec(workers: int, tasks: int, iterations: int, *, samples: int = PROFILE_SAMPLES,
                 dim: int = PROFILE_DIM, model=None, time_scale: float = 0.05, seed: int = 0, timeout: float = 30.0,
                 kill=None, data_seed: int = 0, network=()):
    """The :class:`~gclib.runtime.spec.RunSpec` of a profile (:func:`profile_code`) on Tandon's synthetic
    logistic regression of ``samples`` x ``dim`` (each task: the gradient of ``samples / (workers * tasks)`` rows).
    ``model=None``: no injected delay, the machine's own times. ``network``: message sizes (floats) whose cost
    the master measures after the last iteration (:mod:`gclib.runtime.message_probe`;
    ``gclib.message_cost.sizes_for(dim)`` is what ``gclib profile`` asks)."""
    code = profile_code(workers, tasks)
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=data_seed,
                           n_samples=checks.integer("samples", samples, low=code.n_parts,
                                                    why=f" (at least one per data part: workers x tasks = "
                                                        f"{code.n_parts})"),
                           dim=checks.integer("dim", dim, low=1))
    return RunSpec(code, problem, GD(1.0 / problem.smoothness), model, iterations=iterations,
                   time_scale=time_scale, seed=seed, timeout=timeout, kill=dict(kill or {}), label="profile",
                   wait_all=True, network=tuple(network))


def summary(durations) -> dict:
    """Counts of a timing table: observed tasks, finite ones, never-finished ones, and the median finite
    duration (seconds)."""
    d = np.asarray(durations, dtype=float)
    seen = ~np.isnan(d)
    finite = d[np.isfinite(d)]
    return {"rows": int(seen.sum()), "finite": int(finite.size), "never": int(np.isinf(d).sum()),
            "median_seconds": float(np.median(finite)) if finite.size else math.nan}
