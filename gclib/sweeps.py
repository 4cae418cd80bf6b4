"""Sweeps of the simulator: tables of Monte Carlo results over a range of parameters, beside the closed forms.

* :func:`sweep`: several schemes over a parameter range (e.g. the stragglers ``s``), under one compute-time model or
  several, every point on the same seed, with the closed form (:func:`gclib.theory.expected_time`) beside the Monte
  Carlo mean; :func:`closed_form_z`, :func:`agreement`, :func:`best` and :func:`argmin_set` read such a table;
* :func:`points_cost`: what each choice of evaluation points of an RS code costs;
* :func:`comm_efficient_sweep`: the iteration time of the communication-efficient codes against ``m``
  (:class:`CommSweep`).

The notebooks import them from here, and the simulator itself from :mod:`gclib.simulator`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gclib import checks
from gclib.codes import crc, kadhe, rs, uncoded, ye_abbe
from gclib.progress import progress as _progress
from gclib.simulator import RESULT_BYTES, Communication, simulate, simulate_bytes
from gclib.stats import Z95, paired_change
from gclib.stragglers import ComputeModel
from gclib.theory import expected_time


def sweep(builders: dict, values, model, trials: int = 10_000, seed=0, *,
          comm: Communication | None = None, progress: bool = False):
    """Simulate several schemes over a parameter range, under one compute-time model or several.

    Args:
        builders: ``{scheme label: f(value) -> GradientCode}``; a builder raising ValueError (e.g. FRC where
            ``s + 1`` does not divide ``n``) skips that point.
        values: the parameter values (e.g. numbers of stragglers).
        model: a compute-time model, or ``{model label: model}`` for several; every point of every model uses
            the same ``seed`` (common random numbers across schemes).
    Returns:
        ``pandas.DataFrame`` with one row per (scheme, value), models in the order given: ``scheme, value,
        mean_time, ci95_time, mean_messages, ci95_messages, mean_cluster_messages, mean_computations,
        mean_volume, failed, closed_form_time``, led by a ``model`` column (the label) when ``model`` is a dict.
    """
    trials = checks.integer("trials", trials, low=1)
    checks.need_memory("sweep", RESULT_BYTES * trials, sizes=f"trials = {trials}", lower="trials")
    if not isinstance(seed, np.random.Generator):
        checks.generator(seed, "seed")
    if isinstance(model, dict):
        if not model:
            raise ValueError("model must be a compute-time model or a non-empty dict of them, got {}")
        frames = [sweep(builders, values, m, trials, seed, comm=comm, progress=progress).assign(model=label)
                  for label, m in model.items()]
        df = pd.concat(frames, ignore_index=True)
        return df[["model"] + [c for c in df.columns if c != "model"]]
    rows = []
    items = [(name, v) for name in builders for v in values]
    codes = {}  # every point built first, so that a sweep too large for memory is refused before it runs
    for name, v in items:
        try:
            codes[(name, v)] = builders[name](v)
        except ValueError:
            continue
    if codes:
        big = max(codes.values(), key=lambda c: simulate_bytes(c, trials, model))
        checks.need_memory("sweep", simulate_bytes(big, trials, model) + sum(c.B.nbytes for c in codes.values()),
                           sizes=f"trials = {trials}, {len(codes)} points, the largest '{big.name}' with "
                                 f"{big.n_workers} workers, load {big.load}, {big.n_messages} messages",
                           lower="trials or the largest point")
    it = _progress(items, "sweep", progress)
    for name, v in it:
        if (name, v) not in codes:
            continue
        code = codes[(name, v)]
        s = simulate(code, model, trials, seed, comm=comm).summary()
        rows.append({"scheme": name, "value": v, "mean_time": s["mean_time"], "ci95_time": s["ci95_time"],
                     "mean_messages": s["mean_messages"], "ci95_messages": s["ci95_messages"],
                     "mean_cluster_messages": s["mean_cluster_messages"],
                     "mean_computations": s["mean_computations"], "mean_volume": s["mean_volume"],
                     "failed": s["failed"], "closed_form_time": expected_time(code, model, comm)})
    return pd.DataFrame(rows)


def points_cost(n: int, s: int, model: ComputeModel, *, comm: Communication | None = None, trials: int = 10_000,
                seed=0, points=("equispaced", "chebyshev", "roots-of-unity")):
    """What each choice of evaluation points of an RS code costs: one simulation per family (same seed).

    Returns:
        ``pandas.DataFrame`` with ``points, message size, messages, volume, volume ci95, mean time, ci95``
        (means per iteration; volume in gradient lengths).
    """
    rows = []
    for p in points:
        c = rs(n, s, p)
        r = simulate(c, model, trials=trials, seed=seed, comm=comm).summary()
        rows.append({"points": p, "message size": float(c.size[0]), "messages": r["mean_messages"],
                     "volume": r["mean_volume"], "volume ci95": r["ci95_volume"], "mean time": r["mean_time"],
                     "ci95": r["ci95_time"]})
    return pd.DataFrame(rows)


@dataclass
class CommSweep:
    """Result of :func:`comm_efficient_sweep`.

    ``table``: one row per simulated (scheme, m): ``scheme, m, load, mean_time, ci95_time, mean_volume,
    mean_messages, ci95_messages``. ``skipped``: ``scheme, m, reason`` of the values of ``m`` a construction
    refused. ``changes``: every ordered pair of rows of ``table``, ``scheme_a, m_a, scheme_b, m_b, change, lo,
    hi`` - the relative change of the mean time of ``a`` against ``b`` with its paired 95% interval
    (:func:`paired_change`; all schemes share the seed, so trial ``i`` sees the same worker speeds).
    """

    table: pd.DataFrame
    skipped: pd.DataFrame
    changes: pd.DataFrame


def comm_efficient_sweep(n: int, s: int, ms, model: ComputeModel, *, comm: Communication | None = None,
                         trials: int = 10_000, seed=0, progress: bool = False) -> CommSweep:
    """Iteration time against ``m`` of Ye-Abbe's and Kadhe et al.'s (Gaussian) codes, with CRC and uncoded
    (``m = 1``) as baselines, all with the same seed. A value of ``m`` a construction refuses (Ye-Abbe needs
    ``s + m <= n``, Kadhe ``(s + m) | n``) is listed in ``skipped``. See :class:`CommSweep`."""
    jobs, skipped = [], []
    builders = (("ye-abbe", lambda m: ye_abbe(n, s, m)), ("kadhe", lambda m: kadhe(n, s, m, "gaussian", seed)))
    for name, build in builders:
        for m in ms:
            try:
                jobs.append((name, m, build(m)))
            except ValueError as e:
                skipped.append({"scheme": name, "m": m, "reason": str(e)})
    jobs += [("crc", 1, crc(n, s, seed)), ("uncoded", 1, uncoded(n))]
    jobs = _progress(jobs, "iteration time", progress)
    rows, times = [], []
    for name, m, c in jobs:
        res = simulate(c, model, trials=trials, seed=seed, comm=comm)
        r = res.summary()
        rows.append({"scheme": name, "m": m, "load": c.load, "mean_time": r["mean_time"],
                     "ci95_time": r["ci95_time"], "mean_volume": r["mean_volume"], "mean_messages": r["mean_messages"],
                     "ci95_messages": r["ci95_messages"]})
        times.append(res.time)
    changes = []
    for i, ra in enumerate(rows):
        for j, rb in enumerate(rows):
            if i != j:
                c, lo, hi, _ = paired_change(times[i], times[j])
                changes.append({"scheme_a": ra["scheme"], "m_a": ra["m"], "scheme_b": rb["scheme"],
                                "m_b": rb["m"], "change": c, "lo": lo, "hi": hi})
    return CommSweep(pd.DataFrame(rows), pd.DataFrame(skipped, columns=["scheme", "m", "reason"]),
                     pd.DataFrame(changes))


def closed_form_z(df):
    """Gap between the Monte Carlo mean and the closed form of each point of a :func:`sweep` table, in standard
    errors: ``z = (mean_time - closed_form_time) / (ci95_time / Z95)``.

    Args:
        df: a :func:`sweep` table (``mean_time``, ``ci95_time``, ``closed_form_time``).
    Returns:
        a copy of ``df`` with a ``z`` column (NaN where there is no closed form or no interval; 0 where the
        interval has zero width and the mean equals the closed form exactly).
    """
    out = df.copy()
    gap = out["mean_time"] - out["closed_form_time"]
    se = out["ci95_time"] / Z95
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where((se == 0) & (gap == 0), 0.0, gap / se)
    out["z"] = pd.Series(z, index=out.index).replace([np.inf, -np.inf], np.nan)
    return out


def agreement(df):
    """Largest ``|z|`` (see :func:`closed_form_z`) per model and scheme of a :func:`sweep` table.

    Returns:
        ``pandas.DataFrame`` with one row per (model, scheme) (per scheme when there is no ``model`` column):
        ``max_abs_z`` and ``points`` (the points with a closed form).
    """
    z = closed_form_z(df)
    keys = [k for k in ("model", "scheme") if k in z.columns]
    z["abs_z"] = z["z"].abs()
    g = z.groupby(keys, sort=False)
    return g.agg(max_abs_z=("abs_z", "max"), points=("z", "count")).reset_index()


def argmin_set(values, times, rtol: float = 1e-9) -> list:
    """The values whose time is within a relative ``rtol`` of the smallest finite time (exact ties of a closed
    form survive rounding), in the order given; empty when no time is finite."""
    v = list(values)
    t = np.asarray(times, dtype=float)
    if len(v) != t.size:
        raise ValueError(f"values and times must have the same length, got {len(v)} and {t.size}")
    ok = np.isfinite(t)
    if not ok.any():
        return []
    m = t[ok].min()
    return [x for x, y, f in zip(v, t, ok) if f and y <= m + rtol * abs(m)]


def best(df):
    """The value (e.g. the number of stragglers) with the smallest Monte Carlo mean time, per model and scheme
    of a :func:`sweep` table, beside the values that minimize the closed form.

    Returns:
        ``pandas.DataFrame``, one row per (model, scheme): ``best_value, mean_time, ci95_time`` (the smallest
        Monte Carlo mean; neighbouring values may be within its interval) and ``closed_form_best`` (every value
        at the closed form's minimum, comma-separated: exact ties are listed; empty without closed forms).
    """
    keys = [k for k in ("model", "scheme") if k in df.columns]
    rows = []
    for key, g in df.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        i = g["mean_time"].idxmin()
        arg = argmin_set(g["value"], g["closed_form_time"])
        rows.append({**dict(zip(keys, key)), "best_value": g.at[i, "value"], "mean_time": g.at[i, "mean_time"],
                     "ci95_time": g.at[i, "ci95_time"], "closed_form_best": ", ".join(str(x) for x in arg)})
    return pd.DataFrame(rows)
