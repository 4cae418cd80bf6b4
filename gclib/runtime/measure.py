"""Measured task times: the timing trace of a run (``gclib run --measure``) and profiling runs (``gclib profile``).

A *timing trace* is a tidy table, one row per observed ``(iteration, worker, task)``: ``iteration`` (int >= 0),
``worker`` (int >= 0), ``task`` (int >= 1, the position of the partial gradient in the worker's order),
``seconds`` (the task's duration: from the arrival of the parameters, or the end of the worker's previous task, to
its end; ``inf`` = never finished) and ``host`` (the worker's host name). A task that was not observed (the worker
abandoned the iteration when newer parameters arrived) has no row. See ``docs/runtime.md``, "Timing traces".

A *profile* runs uncoded iterations (:func:`profile_code`): each of ``K`` workers computes ``R`` disjoint partial
gradients (``K R`` data parts) and sends each one as soon as it is computed, and the master waits for every
message of every worker still alive, so every task of every live worker is observed.
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks

#: The columns of a timing trace, in order.
COLUMNS = ("iteration", "worker", "task", "seconds", "host")


def trace_frame(durations, hosts=None):
    """The timing trace of ``durations`` as a ``pandas.DataFrame`` with :data:`COLUMNS`.

    Args:
        durations: ``(iterations, workers, tasks)`` seconds (``nan`` = not observed: no row; ``inf`` = never).
        hosts: ``{worker: host}`` or a sequence per worker (``""`` where unknown), or ``None``.
    """
    import pandas as pd

    d = np.asarray(durations, dtype=float)
    if d.ndim != 3:
        raise ValueError(f"durations must be an (iterations, workers, tasks) array, got shape {d.shape}")
    it, w, t = np.nonzero(~np.isnan(d))
    if hosts is None:
        names = [""] * d.shape[1]
    elif isinstance(hosts, dict):
        names = [str(hosts.get(k, hosts.get(str(k), ""))) for k in range(d.shape[1])]
    else:
        names = [str(h) for h in hosts]
    return pd.DataFrame({"iteration": it.astype(int), "worker": w.astype(int), "task": (t + 1).astype(int),
                         "seconds": d[it, w, t], "host": [names[k] for k in w]}, columns=list(COLUMNS))


def write_trace(path, durations, hosts=None) -> int:
    """Write the timing trace of ``durations`` (see :func:`trace_frame`) as CSV to ``path``; returns its rows.
    ``inf`` is written as ``inf``."""
    path = checks.output_file("path", path)
    frame = trace_frame(durations, hosts)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return len(frame)


def _profile_decoder(code, idx):
    """The messages received, summed and scaled to the ``K R`` parts (exact when every part came)."""
    return np.full((1, idx.size), code.n_parts / max(idx.size, 1))


def profile_code(workers: int, tasks: int):
    """The code of a profile: ``workers`` workers, ``workers * tasks`` parts, worker ``w`` computes parts
    ``w R, ..., w R + R - 1`` in this order and sends each partial gradient alone as soon as it is computed
    (``B`` the identity, ``ready = 1, ..., R``). Every message is needed for the exact gradient."""
    from ..codes.base import GradientCode
    from ..codes.rules import threshold

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
                 kill=None, data_seed: int = 0):
    """The :class:`~gclib.runtime.spec.RunSpec` of a profile (:func:`profile_code`) on Tandon's synthetic
    logistic regression of ``samples`` x ``dim`` (each task: the gradient of ``samples / (workers * tasks)`` rows).
    ``model=None``: no injected delay, the machine's own times."""
    from ..learning import GD, make_problem
    from .spec import RunSpec

    code = profile_code(workers, tasks)
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=data_seed,
                           n_samples=checks.integer("samples", samples, low=code.n_parts,
                                                    why=f" (at least one per data part: workers x tasks = "
                                                        f"{code.n_parts})"),
                           dim=checks.integer("dim", dim, low=1))
    return RunSpec(code, problem, GD(1.0 / problem.smoothness), model, iterations=iterations,
                   time_scale=time_scale, seed=seed, timeout=timeout, kill=dict(kill or {}), label="profile",
                   wait_all=True)


def summary(durations) -> dict:
    """Counts of a timing table: observed tasks, finite ones, never-finished ones, and the median finite
    duration (seconds)."""
    d = np.asarray(durations, dtype=float)
    seen = ~np.isnan(d)
    finite = d[np.isfinite(d)]
    return {"rows": int(seen.sum()), "finite": int(finite.size), "never": int(np.isinf(d).sum()),
            "median_seconds": float(np.median(finite)) if finite.size else math.nan}
