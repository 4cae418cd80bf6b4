"""From compute-time models of a cluster to a ranked recommendation of the code to run on it.

:func:`advise` builds every candidate design for ``K`` workers with computation load at most ``max_load``
(:func:`candidates`), simulates each under every model on common random numbers (every design of one model sees
the same sampled compute times, so differences and speed-ups are paired), and ranks them under the ``primary``
model. The result, :class:`Advice`, holds:

* ``ranked``: one row per design (:data:`COLUMNS`): expected iteration time with its 95% interval, the speed-up
  over uncoded with its paired 95% interval, messages and gradient-length units received per iteration, the
  computation load, the numerical-stability margin (digits of float64 left after the worst decode over sampled
  straggler patterns, for the first :data:`STABILITY_ROWS` runnable rows), how robust the design is across the
  models, whether it fits the message ``budget``, and ``command``: the ``gclib run`` options that run it;
* ``table``: every design under every model (the numbers behind the robustness columns and the figure);
* ``best``: the first row that fits the budget and can run over MPI (``None`` when none does).

Candidates (:data:`FAMILIES`): uncoded; Tandon's cyclic (``crc``) and fractional (``frc``) repetition and
Reed-Solomon (``rs``) for every load ``r``; the communication-efficient codes of Ye-Abbe and Kadhe et al. (load
``s + m``, messages of ``1/m`` gradient); GC in clusters; UC-MMC; correlated and uncorrelated GC-MMC (orders and
cluster counts) and the hybrid design at every load; LCC where its threshold fits (a simulator stand-in that
cannot run over MPI: it is ranked but never recommended, and its ``command`` is empty).

With many candidates (large ``K``) a screening pass with fewer trials (:data:`SCREEN_TRIALS`) keeps, per model,
the fastest :data:`SCREEN_KEEP` designs, the fastest of every family and the front of time against messages;
only those get the full ``trials``.
"""
from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from . import checks, scale
from .codes.conditioning import decoding_amplification, unit_roundoff
from .codes.rules import ThresholdRule, threshold
from .jsonable import jsonable
from .progress import progress as _progress
from .simulate import Schedule, arrival_times
from .stats import mean_ci, paired_change
from .stragglers import ComputeModel

#: Scheme families of :func:`candidates`, in the order they are built (ties in the ranking keep this order).
FAMILIES = ("uncoded", "crc", "frc", "rs", "ye-abbe", "kadhe", "gc", "uc-mmc", "gc-mmc-correlated",
            "gc-mmc-uncorrelated", "hybrid", "lcc")
#: Trials per model of :func:`advise` by default.
TRIALS = 4000
#: Above this many candidates, :func:`advise` screens them first with :data:`SCREEN_TRIALS` trials per model.
SCREEN_ABOVE = 80
SCREEN_TRIALS = 400
#: Designs kept per model by the screening pass (besides the fastest of each family and the message front).
SCREEN_KEEP = 30
#: Rows of the ranked table whose stability margin is computed, and the straggler patterns sampled for each.
STABILITY_ROWS = 5
STABILITY_PATTERNS = 100
#: Cluster counts tried per load at most (spread geometrically between 1 and ``K // r``).
MAX_CLUSTER_COUNTS = 6
#: Fitted models whose bootstrap goodness-of-fit test rejects them at this level are left out of the advice (their
#: tails, e.g. a Pareto fitted to exponential data, would otherwise dominate the robustness columns).
REJECT_LEVEL = 0.05
#: Rows :meth:`Advice.text` shows.
TEXT_ROWS = 8
#: The most workers :func:`advise` takes: the candidates of 10,000 workers take seconds to list, and the number of
#: them grows with ``K``.
MAX_WORKERS = 10_000
#: The most task times :func:`advise` simulates in all (over every model and candidate, screening included, see
#: :func:`workload`): some minutes on one core of a laptop. A request beyond it is refused before the work, naming
#: what to lower.
MAX_CELLS = 2e10
#: Designs that the full trials may simulate after a screening pass, at most (the kept ones of :func:`_screen`:
#: the fastest ``SCREEN_KEEP`` per model, the fastest of each family and the fronts).
KEPT_AT_MOST = 3 * SCREEN_KEEP
#: Columns of :attr:`Advice.ranked`.
COLUMNS = ["rank", "label", "scheme", "family", "load", "mean_time", "ci95_time", "speedup", "speedup_lo",
           "speedup_hi", "messages", "gradient_units", "computations", "failed", "digits", "worst_ratio",
           "best_under", "feasible", "runnable", "command"]


def default_max_load(K: int) -> int:
    """The computation load :func:`advise` allows when none is given: ``ceil(sqrt(K))``, at least 2 and at most
    ``K`` (3 at ``K = 8``, 10 at ``K = 100``). Every extra part a worker holds costs computation in every
    iteration while the time it can save is bounded by the stragglers' tail; loads of a few parts (Fig. 1 of the
    GC-MMC paper: 10 of 40) capture most of the gain."""
    K = checks.integer("K", K, low=1)
    return int(min(K, max(2, math.isqrt(K - 1) + 1)))


@dataclass(frozen=True)
class Design:
    """One candidate: its family, label, computation ``load``, the ``gclib run`` scheme and options that build
    it (``scheme`` ``None``: it cannot run over MPI), its schedule (what the simulator reads) and its real code."""

    family: str
    label: str
    load: int
    scheme: str | None
    options: dict
    schedule: Callable[[], Schedule]
    build: Callable

    @property
    def command(self) -> str:
        """The options of ``gclib run`` that run this design (empty when it cannot run)."""
        if self.scheme is None:
            return ""
        parts = ["--scheme", self.scheme]
        for k, v in self.options.items():
            parts += ["--" + k.replace("_", "-"), ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)]
        return shlex.join(parts)


def _sized(sch: Schedule, m: int, name: str) -> Schedule:
    """``sch`` with messages of ``1 / m`` gradient."""
    return Schedule(name, sch.n_workers, sch.sender, sch.ready, np.full(sch.n_messages, 1.0 / m), sch.rule,
                    sch.lengths, {**sch.info, "scheme": name, "comm": m})


def ye_abbe_schedule(K: int, s: int, m: int) -> Schedule:
    """Ye and Abbe's code (``gclib.codes.ye_abbe``): load ``s + m``, one message of ``1/m`` gradient per
    worker, any ``K - s`` decode."""
    return _sized(scale._schedule("ye-abbe", K, np.arange(K), np.full(K, s + m), threshold(K, K - s), s + m,
                                  stragglers=s), m, "ye-abbe")


def kadhe_schedule(K: int, s: int, m: int) -> Schedule:
    """Kadhe et al.'s code with a Gaussian (MDS) generator (``gclib.codes.kadhe``): groups of ``d = s + m``
    workers (``d | K``), one message of ``1/m`` gradient per worker, any ``m`` of each group decode."""
    d = s + m
    if K % d:
        raise ValueError(f"kadhe needs the load d = s + m = {d} to divide K = {K}")
    rule = ThresholdRule(np.arange(K), np.arange(K) // d, np.full(K // d, m))
    return _sized(scale._schedule("kadhe", K, np.arange(K), np.full(K, d), rule, d, stragglers=s), m, "kadhe")


def _cluster_counts(K: int, r: int) -> list:
    top = K // r
    if top <= MAX_CLUSTER_COUNTS:
        return list(range(1, top + 1))
    return sorted({int(round(v)) for v in np.geomspace(1, top, MAX_CLUSTER_COUNTS)})


def candidates(K: int, max_load: int | None = None, *, max_orders: int = 2) -> list:
    """Every design :func:`advise` compares (see the module docstring), as :class:`Design`.

    Args:
        K: workers. max_load: the largest computation load (default :func:`default_max_load`).
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
    """
    from . import codes
    from .codes import lcc as _lcc
    from .codes import mmc

    K = checks.integer("K", K, low=2)
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    max_orders = checks.integer("max_orders", max_orders, low=1)
    out = [Design("uncoded", "uncoded", 1, "uncoded", {"workers": K}, lambda: scale.uncoded(K),
                  lambda: codes.uncoded(K))]
    for r in range(2, R + 1):
        s = r - 1
        out.append(Design("crc", f"crc r={r}", r, "crc", {"workers": K, "stragglers": s},
                          lambda r=r: scale.gc(K, r), lambda s=s: codes.crc(K, s)))
        if K % r == 0:
            out.append(Design("frc", f"frc r={r}", r, "frc", {"workers": K, "stragglers": s},
                              lambda r=r: scale.frc(K, r), lambda s=s: codes.frc(K, s)))
        out.append(Design("rs", f"rs r={r}", r, "rs", {"workers": K, "stragglers": s},
                          lambda r=r: scale.gc(K, r), lambda s=s: codes.rs(K, s)))
        for s in range(0, r - 1):
            m = r - s
            out.append(Design("ye-abbe", f"ye-abbe s={s} m={m}", r, "ye-abbe",
                              {"workers": K, "stragglers": s, "comm": m},
                              lambda s=s, m=m: ye_abbe_schedule(K, s, m), lambda s=s, m=m: codes.ye_abbe(K, s, m)))
            if K % r == 0:
                out.append(Design("kadhe", f"kadhe s={s} m={m}", r, "kadhe",
                                  {"workers": K, "stragglers": s, "comm": m},
                                  lambda s=s, m=m: kadhe_schedule(K, s, m), lambda s=s, m=m: codes.kadhe(K, s, m)))
        Ps = _cluster_counts(K, r)
        kr = {"workers": K, "load": r}
        for P in Ps:
            cl = {"clusters": P} if P > 1 else {}
            if P > 1:  # one cluster is crc
                out.append(Design("gc", f"gc r={r} P={P}", r, "gc", {**kr, **cl},
                                  lambda r=r, P=P: scale.clustered(lambda k: scale.gc(k, r), K, P, r),
                                  lambda r=r, P=P: mmc.clustered_gc(K, r, P)))
            out.append(Design("uc-mmc", f"uc-mmc r={r} P={P}", r, "uc-mmc", {**kr, **cl},
                              lambda r=r, P=P: scale.clustered(lambda k: scale.uc_mmc(k, r), K, P, r),
                              lambda r=r, P=P: mmc.clustered_uc_mmc(K, r, P)))
            for m in range(2, r):  # m = 1 is UC-MMC, m = r plain GC
                out.append(Design("gc-mmc-correlated", f"corr r={r} m={m} P={P}", r, "gc-mmc-correlated",
                                  {**kr, "order": m, **cl},
                                  lambda r=r, m=m, P=P: scale.clustered(lambda k: scale.correlated(k, r, m), K, P, r),
                                  lambda r=r, m=m, P=P: mmc.gc_mmc_correlated(K, r, m, P)))
            for n in range(2, max_orders + 1):  # one order is plain GC (at r) or a lighter load
                for o in combinations(range(1, r + 1), n):
                    if o[-1] != r:  # the largest order below r is the same design at a lower load
                        continue
                    out.append(Design("gc-mmc-uncorrelated", f"unc r={r} {list(o)} P={P}", r,
                                      "gc-mmc-uncorrelated", {**kr, "orders": list(o), **cl},
                                      lambda r=r, o=o, P=P: scale.clustered(lambda k: scale.uncorrelated(k, r, o),
                                                                            K, P, r),
                                      lambda r=r, o=o, P=P: mmc.gc_mmc_uncorrelated(K, r, o, P)))
        if K % r == 0 and r < K:
            for n in range(1, max_orders):
                for below in combinations(range(1, r), n):
                    o = tuple(below) + (r,)
                    out.append(Design("hybrid", f"hybrid r={r} {list(o)}", r, "hybrid", {**kr, "orders": list(o)},
                                      lambda r=r, o=o: Schedule.of(mmc.hybrid(K, r, o)),
                                      lambda r=r, o=o: mmc.hybrid(K, r, o)))
        try:
            sch = scale.lcc(K, r)
        except ValueError:
            continue
        out.append(Design("lcc", f"lcc r={r}", int(sch.load), None, {}, lambda r=r: scale.lcc(K, r),
                          lambda r=r: _lcc.lcc_code(K, r)))
    return out


# ---------------------------------------------------------------------------------------------- evaluation
def _stats(results: list, labels: list) -> pd.DataFrame:
    """Per design under one model: means and intervals from the per-trial results (:func:`design.evaluate_trials`);
    a design that fails to decode in some trial has an infinite expected time."""
    rows = []
    base = results[0]["time"]  # uncoded is the first design
    for lab, res in zip(labels, results):
        t = res["time"]
        done = np.isfinite(t)
        failed = int((~done).sum())
        m, c = mean_ci(t)
        if failed:
            m, c = math.inf, math.nan
        if failed or not np.isfinite(base).all():  # an expected time is infinite: no interval
            unc = math.inf if not np.isfinite(base).all() else 1.0
            sp = math.nan if failed and math.isinf(unc) else (0.0 if failed else math.inf)
            slo = shi = math.nan
        else:
            ch, lo, hi, _ = paired_change(base, t)
            sp, slo, shi = ch + 1, lo + 1, hi + 1
        rows.append({"label": lab, "mean_time": m, "ci95_time": c, "speedup": sp, "speedup_lo": slo,
                     "speedup_hi": shi, "messages": float(res["messages"][done].mean()) if done.any() else math.nan,
                     "gradient_units": float(res["volume"][done].mean()) if done.any() else math.nan,
                     "computations": float(res["computations"][done].mean()) if done.any() else math.nan,
                     "failed": failed / t.size})
    out = pd.DataFrame(rows)
    # best under this model, and the designs statistically tied with it (paired interval of the ratio holds 1)
    finite = np.isfinite(out["mean_time"].to_numpy())
    tied = np.zeros(len(out), dtype=bool)
    if finite.any():
        b = int(np.nanargmin(np.where(finite, out["mean_time"], np.inf)))
        for i, res in enumerate(results):
            if finite[i]:
                _, lo, _, _ = paired_change(res["time"], results[b]["time"])
                tied[i] = i == b or not lo > 0
        best = float(out["mean_time"].iloc[b])
        out["ratio"] = out["mean_time"] / best
    else:
        out["ratio"] = math.nan
    out["tied"] = tied
    return out


def workload(K: int, max_load: int | None = None, trials: int = TRIALS, models: int = 1) -> dict:
    """What :func:`advise` would simulate for ``K`` workers, loads up to ``max_load``, ``trials`` trials and
    ``models`` models, known before the work: ``{"candidates", "cells", "bytes"}``: the candidate designs, an upper
    bound on the task times simulated (every candidate screened with :data:`SCREEN_TRIALS` trials when there are
    more than :data:`SCREEN_ABOVE`, then at most :data:`KEPT_AT_MOST` with ``trials``; each trial draws ``K x
    load`` task times), and the bytes of the per-trial results kept at once."""
    from .design import TRIAL_KEYS

    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (advise lists every candidate design for K workers)")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    trials = checks.integer("trials", trials, low=2)
    loads = sorted((d.load for d in candidates(K, R)), reverse=True)
    if len(loads) > SCREEN_ABOVE:
        per_model = SCREEN_TRIALS * K * sum(loads) + trials * K * sum(loads[:KEPT_AT_MOST])
        stored = max(SCREEN_TRIALS * len(loads), trials * min(len(loads), KEPT_AT_MOST))
    else:
        per_model = trials * K * sum(loads)
        stored = trials * len(loads)
    return {"candidates": len(loads), "cells": float(models) * per_model,
            "bytes": 8.0 * len(TRIAL_KEYS) * stored}


def check_workload(K: int, max_load: int | None = None, trials: int = TRIALS, models: int = 1) -> dict:
    """:func:`workload`, refused (``ValueError`` naming what to lower) beyond :data:`MAX_CELLS` task times or the
    memory budget of :func:`gclib.checks.need_memory`."""
    w = workload(K, max_load, trials, models)
    sizes = (f"{K} workers, {w['candidates']} candidate designs (loads up to "
             f"{default_max_load(K) if max_load is None else max_load}), trials = {trials}, {models} "
             f"model{'s' * (models != 1)}")
    if w["cells"] > MAX_CELLS:
        raise ValueError(f"advise of {sizes} would simulate about {w['cells']:.2g} task times, more than "
                         f"{MAX_CELLS:.0g} (hours of work); lower the workers, the largest load (--max-load) or "
                         f"the trials (--trials)")
    checks.need_memory("advise", w["bytes"], sizes=sizes, lower="trials (--trials) or the largest load (--max-load)")
    return w


def _evaluate(designs, schedules, models, K, trials, seed, progress):
    """``{model name: per-design stats}`` of every design under every model (the same seed for every model)."""
    from .design import TRIAL_KEYS, evaluate_trials

    labels = [d.label for d in designs]
    out = {}
    for name, model in models.items():
        res = evaluate_trials(schedules, model, K, trials, seed, progress=progress, keys=TRIAL_KEYS)
        out[name] = _stats(res, labels)
    return out


def _front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both ``x`` and ``y`` (both minimized), sorted by ``x``."""
    keep, best = [], math.inf
    for i in np.lexsort((y, x)):
        if np.isfinite(y[i]) and y[i] < best:
            keep.append(int(i))
            best = y[i]
    return np.array(keep, dtype=np.int64)


def _screen(designs, schedules, models, K, seed, progress) -> list:
    """Indices of the designs kept by the screening pass (see the module docstring); uncoded stays first."""
    stats = _evaluate(designs, schedules, models, K, SCREEN_TRIALS, seed + 1, progress)
    fam = np.array([d.family for d in designs])
    keep = {0}
    for df in stats.values():
        t = df["mean_time"].to_numpy()
        order = np.argsort(t, kind="stable")
        keep.update(int(i) for i in order[:SCREEN_KEEP] if np.isfinite(t[i]))
        for f in FAMILIES:
            idx = np.flatnonzero((fam == f) & np.isfinite(t))
            if idx.size:
                keep.add(int(idx[np.argmin(t[idx])]))
        keep.update(int(i) for i in _front(df["messages"].to_numpy(), t))
        keep.update(int(i) for i in _front(df["gradient_units"].to_numpy(), t))
    return sorted(keep)


# ---------------------------------------------------------------------------------------------- stability
def stability_margin(code, model: ComputeModel, patterns: int = STABILITY_PATTERNS, seed=0) -> dict:
    """Digits of float64 left after the worst decode of ``code`` over ``patterns`` iterations sampled from
    ``model``: in each, the messages received when the code completes are decoded (``code.try_decode``) and
    the decode's error amplification ``kappa`` (:func:`gclib.codes.conditioning.decoding_amplification`) taken;
    the margin is ``-log10(u * max kappa)``, ``u`` the unit roundoff of float64 (about 15.95 digits at
    ``kappa = 1``; negative: nothing left).

    Returns:
        ``{"digits", "worst_amplification", "patterns", "distinct"}`` (``distinct``: distinct received sets);
        ``digits`` NaN when no sampled iteration completes or the decoder refuses a set.
    """
    patterns = checks.integer("patterns", patterns, low=1)
    sch = Schedule.of(code)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    finish = model.sample(rng, patterns, code.n_workers, sch.load)
    arr = arrival_times(sch, finish)
    t = sch.rule.cluster_times(arr).max(axis=1)
    got = (arr <= t[:, None]) & np.isfinite(t)[:, None]
    sets = {tuple(np.flatnonzero(g)) for g in got[np.isfinite(t)]}
    worst = -math.inf
    for idx in sets:
        idx = np.array(idx, dtype=np.int64)
        A = code.try_decode(idx)
        if A is None:
            worst = math.inf
            break
        with np.errstate(all="ignore"):
            worst = max(worst, decoding_amplification(code.B[idx], A, code.target))
    if not sets or not math.isfinite(worst) or worst <= 0:
        digits = math.nan if (not sets or math.isinf(worst)) else -math.log10(unit_roundoff(np.float64))
    else:
        digits = -math.log10(unit_roundoff(np.float64) * worst)
    return {"digits": digits, "worst_amplification": worst if sets else math.nan, "patterns": int(patterns),
            "distinct": len(sets)}


# ---------------------------------------------------------------------------------------------- the advice
@dataclass
class Advice:
    """The outcome of :func:`advise`.

    Attributes:
        ranked: one row per design (:data:`COLUMNS`), best first under ``primary``: designs within the budget
            before the others, then by expected time (a design that fails to decode in some trial last), fewer
            messages, lower load.
        table: one row per design and model: ``model, label, family, load, mean_time, ci95_time, speedup,
            speedup_lo, speedup_hi, messages, gradient_units, computations, failed, ratio`` (to the model's best)
            and ``tied`` (best or statistically tied with it).
        best: the recommended row (a dict), ``None`` when no runnable design fits the budget.
        settings: ``K, max_load, budget, trials, seed, primary, models`` (their descriptions), ``candidates``,
            ``screened`` (designs given the full trials), ``stability_rows``, ``stability_patterns``.
    """

    ranked: pd.DataFrame
    table: pd.DataFrame
    best: dict | None
    settings: dict = field(default_factory=dict)

    def sentence(self) -> str:
        """One sentence naming the recommendation and its saving, with the model and the intervals."""
        s = self.settings
        if self.best is None:
            why = f" within a budget of {s['budget']:g} messages per iteration" if s.get("budget") else ""
            return f"No design that runs over MPI completes{why} under '{s['primary']}'."
        b = self.best
        sp = b["speedup"]
        if math.isfinite(sp):
            save = (f"{sp:.3g}x the speed of uncoded (95% CI {b['speedup_lo']:.3g}-{b['speedup_hi']:.3g}), "
                    f"saving {100 * (1 - 1 / sp):.1f}% of the iteration time")
        else:
            save = "where uncoded never completes (a worker never answers)"
        return (f"Recommended: {b['label']} (gclib run {b['command']}): expected iteration time "
                f"{b['mean_time']:.4g} +/- {b['ci95_time']:.2g} under '{s['primary']}', {save}; "
                f"{b['messages']:.3g} messages and {b['gradient_units']:.3g} gradients received per iteration, "
                f"best or tied under {b['best_under']} of {len(s['models'])} models.")

    def text(self, rows: int = TEXT_ROWS) -> str:
        """A short table of the first ``rows`` designs and the recommendation, for a person."""
        s = self.settings
        head = (f"gclib advise: K = {s['K']} workers, load <= {s['max_load']}, {s['screened']} of {s['candidates']} "
                f"designs simulated with {s['trials']} trials under each of {len(s['models'])} models; ranked under "
                f"'{s['primary']}' (times in the models' unit: seconds for a measured trace)")
        if s.get("budget") is not None:
            head += f"; budget {s['budget']:g} messages per iteration"
        d = self.ranked.head(rows)
        fmt = lambda v, f: "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, f)  # noqa: E731
        lines = [head, ""]
        cols = [("#", 2), ("design", 26), ("time (95% CI)", 20), ("speed-up (95% CI)", 20), ("msgs", 7),
                ("grads", 6), ("load", 4), ("digits", 6), ("worst", 6), ("best", 5), ("fits", 4)]
        lines.append("  ".join(n.ljust(w) for n, w in cols))
        for r in d.itertuples():
            time = f"{fmt(r.mean_time, '.4g')} +/- {fmt(r.ci95_time, '.2g')}"
            sp = f"{fmt(r.speedup, '.3g')} ({fmt(r.speedup_lo, '.3g')}-{fmt(r.speedup_hi, '.3g')})"
            vals = [str(r.rank), r.label, time, sp, fmt(r.messages, '.4g'), fmt(r.gradient_units, '.3g'),
                    str(r.load), fmt(r.digits, '.1f'), fmt(r.worst_ratio, '.3g'), f"{r.best_under}/{len(s['models'])}",
                    "yes" if r.feasible else "no"]
            lines.append("  ".join(v.ljust(w) for v, (_, w) in zip(vals, cols)))
        lines += ["", f"digits: float64 digits left after the worst decode over {s['stability_patterns']} sampled "
                      f"iterations (first {s['stability_rows']} runnable rows); worst: largest ratio of its time to "
                      f"the best design's over the models; best: models under which it is best or tied.",
                  self.sentence()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready: ``settings``, ``ranked`` (rows), ``best``, ``recommendation`` (:meth:`sentence`) and
        ``models`` (every design under every model)."""
        return jsonable({"settings": self.settings, "best": self.best, "recommendation": self.sentence(),
                         "ranked": self.ranked.to_dict(orient="records"),
                         "models": self.table.to_dict(orient="records")})

    def to_json(self) -> str:
        """:meth:`to_dict` as one line of JSON."""
        return json.dumps(self.to_dict())

    def plot(self, path=None):
        """The front of expected time against communication per model, beside every design: messages per
        iteration (left) and gradient-length units per iteration (right); the recommendation circled. Writes
        ``path`` (PNG) when given, and returns the figure."""
        from matplotlib.ticker import NullFormatter, ScalarFormatter

        from .plotting import DOUBLE, plt

        t = self.table
        models = list(dict.fromkeys(t["model"]))
        fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 4.2), sharey=True)
        markers = "osD^vP*X<>"
        for ax, x, xl in zip(axes, ("messages", "gradient_units"),
                             ("messages received per iteration", "gradients received per iteration")):
            for i, name in enumerate(models):
                g = t[(t["model"] == name) & np.isfinite(t["mean_time"])]
                pts = ax.scatter(g[x], g["mean_time"], s=8, alpha=0.25, marker=markers[i % len(markers)])
                f = g.iloc[_front(g[x].to_numpy(), g["mean_time"].to_numpy())]
                ax.plot(f[x], f["mean_time"], marker=markers[i % len(markers)], ms=4, lw=1.2,
                        color=pts.get_facecolor()[0][:3], label=name)
            if self.best is not None:
                b = t[(t["model"] == self.settings["primary"]) & (t["label"] == self.best["label"])]
                ax.scatter(b[x], b["mean_time"], s=120, facecolors="none", edgecolors="k", lw=1.5,
                           label=f"recommended: {self.best['label']}" if ax is axes[0] else None, zorder=5)
            ax.set_xlabel(xl)
            xs = t[x][np.isfinite(t["mean_time"]) & (t[x] > 0)]
            if len(xs) and xs.max() > 20 * xs.min():
                ax.set_xscale("log")
            ys = t["mean_time"][np.isfinite(t["mean_time"]) & (t["mean_time"] > 0)]
            if len(ys) and ys.max() > 20 * ys.min():
                ax.set_yscale("log")
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_major_formatter(ScalarFormatter())
                axis.set_minor_formatter(NullFormatter())
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel(f"expected iteration time\n({self.settings.get('unit', 'model time units')})")
        fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="lower center",
                   ncol=min(4, len(models) + 1), frameon=False)
        fig.suptitle(f"Designs for K = {self.settings['K']} workers: time against communication (front per model)",
                     fontsize=9)
        fig.tight_layout(rect=(0, 0.06 + 0.04 * ((len(models) + 1) // 4), 1, 1))
        if path is not None:
            fig.savefig(path, bbox_inches="tight", metadata={"Software": None})
        return fig


def advise(models: Mapping[str, ComputeModel], K: int, *, max_load: int | None = None, budget: float | None = None,
           trials: int = TRIALS, seed=0, primary: str | None = None, progress: bool = False,
           max_orders: int = 2) -> Advice:
    """Rank every candidate design (:func:`candidates`) for ``K`` workers under compute-time ``models``.

    Args:
        models: ``{name: ComputeModel}`` (e.g. ``gclib.fit.fit(trace).models()``), at least one.
        K: workers. max_load: largest computation load (default :func:`default_max_load`).
        budget: largest mean number of messages received per iteration (under ``primary``); ``None``: no limit.
        trials: simulated iterations per model (and per design, on common random numbers).
        seed: seed of the sampled times (the same for every model). primary: the model that ranks (default
            ``"replay"`` when present, else the first). progress: progress bars on stderr.
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
    Returns:
        :class:`Advice`.
    """
    if not isinstance(models, Mapping) or not models:
        raise ValueError(f"models must be a non-empty mapping of names to compute-time models, got {models!r}")
    for name, m in models.items():
        if not isinstance(m, ComputeModel):
            raise checks.ParameterTypeError(f"models[{name!r}] must be a gclib.stragglers.ComputeModel, got "
                                            f"{type(m).__name__}")
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (advise lists every candidate design for K workers)")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    if budget is not None:
        budget = checks.real("budget", budget, above=0)
    trials = checks.integer("trials", trials, low=2)
    check_workload(K, R, trials, len(models))  # before the work: a request of hours is refused
    seed = checks.integer("seed", seed, low=0)
    if primary is None:
        primary = "replay" if "replay" in models else next(iter(models))
    elif primary not in models:
        raise ValueError(f"primary must be one of the models {list(models)}, got {primary!r}")
    designs = candidates(K, R, max_orders=max_orders)
    schedules = [d.schedule() for d in _progress(designs, "build", progress)]
    n_all = len(designs)
    if n_all > SCREEN_ABOVE:
        keep = _screen(designs, schedules, models, K, seed, progress)
        designs = [designs[i] for i in keep]
        schedules = [schedules[i] for i in keep]
    stats = _evaluate(designs, schedules, models, K, trials, seed, progress)
    frames = []
    for name, df in stats.items():
        frames.append(df.assign(model=name, family=[d.family for d in designs], load=[d.load for d in designs]))
    table = pd.concat(frames, ignore_index=True)[["model", "label", "family", "load", "mean_time", "ci95_time",
                                                  "speedup", "speedup_lo", "speedup_hi", "messages",
                                                  "gradient_units", "computations", "failed", "ratio", "tied"]]
    p = stats[primary].copy()
    p["family"] = [d.family for d in designs]
    p["scheme"] = [d.scheme or "" for d in designs]
    p["load"] = [d.load for d in designs]
    p["command"] = [d.command for d in designs]
    p["runnable"] = [d.scheme is not None for d in designs]
    p["worst_ratio"] = np.max(np.vstack([df["ratio"].to_numpy() for df in stats.values()]), axis=0)
    p["best_under"] = np.sum(np.vstack([df["tied"].to_numpy() for df in stats.values()]), axis=0)
    p["feasible"] = True if budget is None else (p["messages"] <= budget) & np.isfinite(p["mean_time"])
    p["_family"] = [FAMILIES.index(d.family) for d in designs]
    p["_infeasible"] = ~p["feasible"].astype(bool)
    p = p.sort_values(["_infeasible", "mean_time", "messages", "load", "_family"], kind="stable")
    p = p.reset_index(drop=True)
    p["rank"] = np.arange(1, len(p) + 1)
    p["digits"] = math.nan
    by_label = {d.label: d for d in designs}
    done = 0
    for i in p.index:
        if done >= STABILITY_ROWS:
            break
        d = by_label[p.at[i, "label"]]
        if d.scheme is None or not math.isfinite(p.at[i, "mean_time"]):
            continue
        p.at[i, "digits"] = stability_margin(d.build(), models[primary], STABILITY_PATTERNS, seed)["digits"]
        done += 1
    ranked = p[COLUMNS]
    ok = ranked[ranked["feasible"].astype(bool) & ranked["runnable"] & np.isfinite(ranked["mean_time"])]
    best = None if ok.empty else jsonable(ok.iloc[0].to_dict())
    if best is not None:  # keep the numbers finite-typed for the sentence
        best = {k: (math.nan if v is None and k in ("digits", "speedup_lo", "speedup_hi", "ci95_time") else v)
                for k, v in best.items()}
        best["speedup"] = float(ok.iloc[0]["speedup"])
    settings = {"K": K, "max_load": R, "budget": budget, "trials": trials, "seed": seed, "primary": primary,
                "models": {n: m.describe() for n, m in models.items()}, "candidates": n_all,
                "screened": len(designs), "stability_rows": STABILITY_ROWS,
                "stability_patterns": STABILITY_PATTERNS}
    return Advice(ranked, table, best, settings)


# ------------------------------------------------------------------------------------------- from a trace
#: The targets of :func:`backtest`: the largest relative error of the prediction on the fitted iterations (uncoded
#: and the advised design), on the held-out ones (the advised design), and the largest regret.
TARGETS = {"in_sample": 0.05, "held_out": 0.07, "regret": 0.03}
#: The fewest iterations each part of a back-test holds.
MIN_PART = 5


@dataclass
class TraceAdvice:
    """The outcome of :func:`from_trace`.

    Attributes:
        advice: the :class:`Advice`, ranked under ``primary``. report: the fits (:func:`gclib.fit.fit`).
        split: :func:`gclib.effects.split` of the trace (``None`` when the trace cannot have it). support: the
            goodness of fit of every model on the trace's whole iterations (:func:`gclib.effects.support`; empty
            when the trace cannot be judged). primary: the model the advice ranks under; reason: why (a sentence).
        left_out: the fits the bootstrap KS test rejects (left out of the advice unless ``all_models``).
        skipped: models the trace cannot have, ``{name: why}``. reliance: how much of the recommendation's
            speed-up rests on the slowest worker (:func:`reliance`; ``None`` when not computed).
    """

    advice: Advice
    report: object
    split: object
    support: pd.DataFrame
    primary: str
    reason: str
    left_out: list
    skipped: dict
    reliance: dict | None = None

    def text(self) -> str:
        """The variance split, the models judged on whole iterations, then the advice with the model it ranks
        under and why, and the slowest worker's share in the speed-up."""
        lines = []
        if self.split is not None:
            s = self.split.slowest
            lines.append(f"variance of the log paces (pace: a worker's mean task time in an iteration; 95% bootstrap "
                         f"intervals over iterations and workers): {self.split.text()}; worker {s['worker']} is the "
                         f"slowest on average ({s['ratio']:.3g}x the median worker's pace) and in "
                         f"{100 * s['share']:.0f}% of the iterations")
        if len(self.support):
            lines.append("models judged on whole iterations (mean k-th fastest pace, k = 1 .. workers; bootstrap "
                         "p-value; slowest: the model's mean slowest pace against the trace's):")
            for r in self.support.itertuples():
                if r.note:
                    lines.append(f"  {r.model:24s} not judged: {r.note}")
                else:
                    lines.append(f"  {r.model:24s} p {r.p_value:<6.3g} slowest {100 * r.slowest_error:+.1f}%  "
                                 f"{'supported' if r.supported else 'not supported'}")
        for n, why in self.skipped.items():
            lines.append(f"  {n:24s} not fitted: {why}")
        lines += ["", self.advice.text(), f"Ranked under {self.reason}."]
        if self.reliance is not None:
            lines.append(reliance_text(self.reliance))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = self.advice.to_dict()
        out.update(jsonable({"primary_reason": self.reason, "support": self.support.to_dict(orient="records"),
                             "variance_split": None if self.split is None else {
                                 "parts": self.split.table().to_dict(orient="records"),
                                 "slowest": self.split.slowest},
                             "not_fitted": self.skipped, "reliance": self.reliance}))
        return out


def _order(report) -> list:
    """The preference order of :func:`gclib.effects.choose`: the models that keep a trace, then the fits, the
    best first and the others by AIC."""
    from .effects import PREFERENCE

    fits = sorted(report.fits, key=lambda f: (f.name != report.best.name, f.aic)) if report.fits else []
    return list(PREFERENCE) + [f.name for f in fits]


def from_trace(t, K: int | None = None, *, seed=0, bootstrap: int = 200, trials: int = TRIALS,
               max_load: int | None = None, budget: float | None = None, all_models: bool = False,
               progress: bool = False) -> TraceAdvice:
    """Fit every model to a trace and advise under the best supported one.

    The fits of :func:`gclib.fit.fit` (those the bootstrap KS test does not reject, or all with ``all_models``),
    the replay of independent rows, and the models that keep worker identity and whole iterations
    (:func:`gclib.effects.models`) are judged on the trace's whole iterations (:func:`gclib.effects.support`); the
    advice (:func:`advise`, every model that simulates ``K`` workers) ranks under the first supported one of
    :func:`gclib.effects.choose`'s order. When the ranking model keeps the trace's workers, :func:`reliance` says
    how much of the recommendation's speed-up rests on the slowest worker.

    Args:
        t: a :class:`gclib.timings.Timings`. K: workers to advise (default: the trace's). seed: the fits'
            bootstrap, the tests and the simulation. bootstrap: replicates of the fits and of the tests.
            trials, max_load, budget, progress: as :func:`advise`.
    """
    from . import effects, fit
    from .timings import Timings

    if not isinstance(t, Timings):
        raise checks.ParameterTypeError(f"t must be a gclib.timings.Timings, got {type(t).__name__}")
    K = t.workers if K is None else checks.integer("K", K, low=2)
    seed = checks.integer("seed", seed, low=0)
    report = fit.fit(t, seed=seed, bootstrap=bootstrap)
    level = None if all_models else REJECT_LEVEL
    left_out = [] if level is None else report.rejected(level)
    extra, skipped = effects.models(t)
    judged = {**report.models(), **extra}
    split, sup = None, pd.DataFrame(columns=["model", "distance", "p_value", "supported", "slowest_model",
                                             "slowest_trace", "slowest_error", "fastest_error", "note"])
    try:
        split = effects.split(t, bootstrap=bootstrap, seed=seed)
        sup = effects.support(judged, t, bootstrap=max(bootstrap, 1), seed=seed)
        primary, reason = effects.choose(sup, judged, K, order=_order(report))
    except ValueError as e:  # a trace with workers missing from iterations, or that never answered
        primary = "replay"
        reason = f"'replay': the trace's whole iterations cannot be judged ({e})"
    models = {n: m for n, m in {**report.models(level=level), **extra}.items() if effects.can_simulate(m, K)}
    if primary not in models:
        models[primary] = judged[primary]
    adv = advise(models, K, max_load=max_load, budget=budget, trials=trials, seed=seed, primary=primary,
                 progress=progress)
    adv.settings["primary_reason"] = reason
    adv.settings["unit"] = "s"  # a measured trace's times are seconds
    rel = None
    if primary in extra and adv.best is not None and K == t.workers:
        rel = reliance(t, adv.best["label"], primary, max_load=adv.settings["max_load"], trials=trials, seed=seed)
    return TraceAdvice(adv, report, split, sup, primary, reason, left_out, skipped, rel)


def _design_times(labels, model, K, R, trials, seed) -> dict:
    """``{label: mean time}`` of the designs of ``candidates(K, R)`` named by ``labels`` under ``model`` (common
    random numbers)."""
    from .design import evaluate_trials

    by = {d.label: d for d in candidates(K, R)}
    res = evaluate_trials([by[lab].schedule() for lab in labels], model, K, trials, seed, keys=("time",))
    return {lab: float(np.mean(r["time"])) for lab, r in zip(labels, res)}


def reliance(t, label: str, model_name: str, *, max_load: int | None = None, trials: int = TRIALS,
             seed=0) -> dict:
    """How much of a design's predicted speed-up over uncoded rests on the trace's slowest worker: the speed-up
    under ``model_name`` (``"replay by iteration"`` or ``"worker effects"``) fitted to the trace, and fitted to the
    trace with that worker's pace brought to the median worker's (:func:`gclib.effects.without_slowest`).

    Returns:
        ``worker, share_slowest`` (fraction of iterations it is the slowest), ``ratio`` (its mean pace over the
        median worker's), ``speedup``, ``speedup_without``, ``share``: ``(speedup - speedup_without) / (speedup -
        1)``, the part of the saving that rests on it (NaN without a saving).
    """
    from .effects import IterationReplay, WorkerEffects, slowest_worker, without_slowest

    cls = {"replay by iteration": IterationReplay, "worker effects": WorkerEffects}
    if model_name not in cls:
        raise ValueError(f"model_name must be one of {sorted(cls)}, got {model_name!r}")
    d = t.durations
    K = d.shape[1]
    R = default_max_load(K) if max_load is None else max_load
    s = slowest_worker(t)
    out = {"worker": s["worker"], "share_slowest": s["share"], "ratio": s["ratio"]}
    for key, dd in (("speedup", d), ("speedup_without", without_slowest(t))):
        times = _design_times(["uncoded", label], cls[model_name](dd), K, R, trials, seed)
        out[key] = times["uncoded"] / times[label]
    sp, sw = out["speedup"], out["speedup_without"]
    out["share"] = (sp - sw) / (sp - 1) if sp > 1 and math.isfinite(sp) else math.nan
    return out


def reliance_text(r: dict) -> str:
    """One sentence from :func:`reliance`."""
    if math.isnan(r["share"]):
        return (f"No predicted saving over uncoded; with worker {r['worker']} (the slowest in "
                f"{100 * r['share_slowest']:.0f}% of iterations, {r['ratio']:.3g}x the median pace) at the median "
                f"pace, the speed-up would be {r['speedup_without']:.3g}.")
    return (f"{100 * r['share']:.0f}% of the predicted saving rests on worker {r['worker']} (the slowest in "
            f"{100 * r['share_slowest']:.0f}% of iterations, {r['ratio']:.3g}x the median worker's pace): the "
            f"speed-up {r['speedup']:.3g} would be {r['speedup_without']:.3g} with that worker at the median pace.")


class _InOrder(ComputeModel):
    """Recorded iterations in their order, one per trial, continuing across calls: the iterations themselves,
    replayed with every worker kept, for the observed times of :func:`observed`."""

    per_task = True
    name = "recorded"

    def __init__(self, rows: np.ndarray):
        self.rows = rows
        self.next = 0

    def sample(self, rng, trials, workers, n_tasks):
        idx = (self.next + np.arange(trials)) % len(self.rows)
        self.next += trials
        return np.cumsum(self.rows[idx][:, :, :n_tasks], axis=2)

    def describe(self):
        return {"model": "recorded", "shape": list(self.rows.shape)}


def observed(durations, K: int | None = None, max_load: int | None = None, *, max_orders: int = 2) -> pd.DataFrame:
    """The mean iteration time of every candidate design on recorded iterations, each iteration once, every worker
    keeping its recorded task times (worker ``w`` of the trace is worker ``w`` of the code; tasks beyond the record
    at the row's pace: :func:`gclib.stragglers.filled`).

    Args:
        durations: ``(iterations, workers, tasks)`` with every worker observed in every iteration.
    Returns:
        one row per design of :func:`candidates`: ``label, family, load, runnable, mean_time, messages``.
    """
    from .design import evaluate_trials
    from .stragglers import filled, whole_rows

    d = whole_rows(durations, "the observed times")
    I, W, _ = d.shape
    K = W if K is None else K
    if K != W:
        raise ValueError(f"K must be the trace's {W} workers (every worker keeps its own times), got {K}")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    designs = candidates(K, R, max_orders=max_orders)
    schedules = [x.schedule() for x in designs]
    rows = filled(d, max(s.load for s in schedules))
    res = evaluate_trials(schedules, _InOrder(rows), K, I, 0, keys=("time", "messages"))
    out = []
    for x, r in zip(designs, res):
        t = r["time"]
        out.append({"label": x.label, "family": x.family, "load": x.load, "runnable": x.scheme is not None,
                    "mean_time": float(t.mean()) if np.isfinite(t).all() else math.inf,
                    "messages": float(r["messages"].mean())})
    return pd.DataFrame(out)


@dataclass
class Backtest:
    """The outcome of :func:`backtest`.

    Attributes:
        rows: uncoded and the top designs under the ranking model: ``role, label, predicted, ci95, observed_fit,
            observed_held, error_fit, error_held`` (errors: predicted / observed - 1).
        by_model: one row per model the advice simulated: its own recommendation and the same numbers for uncoded
            and for it, its regret on the held-out part, and whether it ranks the advice (``primary``).
        fit: the :class:`TraceAdvice` of the fitted part. observed_fit, observed_held: :func:`observed` of each
            part. drift: the slowest worker of the fitted part, its mean pace in each part and their ratio - 1
            (``drift``), the median of every worker's (``median_drift``). regret: the advised design's held-out
            time over the held-out best runnable design's, - 1 (``best_held``: that design). targets: name ->
            ``{value, limit, met}``. warnings: a sentence per target missed. settings: the split and the options.
    """

    rows: pd.DataFrame
    by_model: pd.DataFrame
    fit: TraceAdvice
    observed_fit: pd.DataFrame
    observed_held: pd.DataFrame
    drift: dict
    regret: float
    best_held: str
    targets: dict
    warnings: list
    settings: dict

    def text(self) -> str:
        s = self.settings
        lines = [f"back-test of gclib advise on {s['source']}: fitted on the first {s['fit_iterations']} of "
                 f"{s['iterations']} iterations, held out the last {s['held_iterations']}; K = {s['K']} workers, "
                 f"each keeping its recorded times on both parts; ranked under '{self.fit.primary}'", "",
                 f"{'role':9s} {'design':24s} {'predicted':>10s} {'fit part':>9s} {'error':>7s} {'held out':>9s} "
                 f"{'error':>7s}"]
        for r in self.rows.itertuples():
            lines.append(f"{r.role:9s} {r.label:24s} {r.predicted:10.4g} {r.observed_fit:9.4g} "
                         f"{100 * r.error_fit:+6.1f}% {r.observed_held:9.4g} {100 * r.error_held:+6.1f}%")
        d = self.drift
        lines += ["", f"regret: the advised design is {100 * self.regret:.1f}% slower than the held-out best "
                      f"({self.best_held}) on the held-out part",
                  f"drift: worker {d['worker']}, the slowest of the fitted part, ran at {d['pace_fit']:.4g} s per "
                  f"task there and {d['pace_held']:.4g} held out ({100 * d['drift']:+.1f}%; the median worker "
                  f"{100 * d['median_drift']:+.1f}%): no model fitted on the first part can know it",
                  "", "every model's own recommendation (errors held out; regret on the held-out part):"]
        for r in self.by_model.itertuples():
            mark = " <- ranks the advice" if r.primary else ""
            lines.append(f"  {r.model:24s} {r.advised:24s} uncoded {100 * r.uncoded_error_held:+6.1f}%  advised "
                         f"{100 * r.advised_error_held:+6.1f}%  regret {100 * r.regret:.1f}%{mark}")
        if self.fit.reliance is not None:
            lines.append(reliance_text(self.fit.reliance))
        lines.append("")
        lines += [f"warning: {w}" for w in self.warnings] or ["every target met: in sample within "
                                                             f"{TARGETS['in_sample']:.0%}, held out within "
                                                             f"{TARGETS['held_out']:.0%}, regret under "
                                                             f"{TARGETS['regret']:.0%}"]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return jsonable({"settings": self.settings, "rows": self.rows.to_dict(orient="records"),
                         "by_model": self.by_model.to_dict(orient="records"), "drift": self.drift,
                         "regret": self.regret, "best_held": self.best_held, "targets": self.targets,
                         "warnings": self.warnings, "reliance": self.fit.reliance, "advice": self.fit.to_dict()})


def _part(t, sl, what):
    from .timings import Timings

    return Timings(durations=t.durations[sl], hosts=t.hosts, iteration_ids=t.iteration_ids[sl],
                   worker_ids=t.worker_ids, source=f"{t.source} ({what})")


def backtest(t, holdout: float = 0.5, *, seed=0, bootstrap: int = 200, trials: int = TRIALS,
             max_load: int | None = None, budget: float | None = None, top: int = 3, all_models: bool = False,
             progress: bool = False) -> Backtest:
    """Fit on the first iterations of a trace, advise, and check the advice on the held-out rest.

    The last ``round(holdout * iterations)`` iterations are held out; :func:`from_trace` fits and advises on the
    others for ``K`` = the trace's workers. Every candidate design is then replayed on each part with every worker
    keeping its recorded times (:func:`observed`). Reported: the predicted and observed mean iteration time of
    uncoded and of the ``top`` designs with their errors on both parts; every model's own recommendation with its
    errors and regret; the regret of the advice (how much slower the advised design is than the best runnable
    design on the held-out part); the drift of the slowest worker's pace between the parts. A target of
    :data:`TARGETS` that is missed gives a warning. Nothing is fitted or tuned on the held-out part.

    Args:
        t: a :class:`gclib.timings.Timings`, every worker observed in every iteration. holdout: the fraction held
            out, in (0, 1). Others as :func:`from_trace`.
    Raises:
        ValueError: a worker missing from an iteration; fewer iterations than :data:`MIN_PART` in either part
        (the message says how many the trace needs).
    """
    from .timings import MIN_SAMPLES, Timings, check_complete
    from .effects import paces, slowest_worker

    if not isinstance(t, Timings):
        raise checks.ParameterTypeError(f"t must be a gclib.timings.Timings, got {type(t).__name__}")
    holdout = checks.real("holdout", holdout, above=0, below=1)
    top = checks.integer("top", top, low=1)
    check_complete(t)
    I = t.iterations
    n_held = int(round(holdout * I))
    n_fit = I - n_held
    if n_fit < MIN_PART or n_held < MIN_PART:
        need = MIN_PART
        while not (need - int(round(holdout * need)) >= MIN_PART and int(round(holdout * need)) >= MIN_PART):
            need += 1
        raise ValueError(f"{t.source}: a back-test with holdout {holdout:g} needs at least {need} iterations (at "
                         f"least {MIN_PART} to fit and {MIN_PART} held out), the trace has {I} ({n_fit} to fit, "
                         f"{n_held} held out)")
    first, second = _part(t, slice(0, n_fit), "fitted part"), _part(t, slice(n_fit, I), "held-out part")
    if first.n_finite < MIN_SAMPLES:
        raise ValueError(f"{t.source}: the fitted part holds {first.n_finite} finite task times, at least "
                         f"{MIN_SAMPLES} are needed to fit; hold out less or record more")
    K = t.workers
    fa = from_trace(first, K, seed=seed, bootstrap=bootstrap, trials=trials, max_load=max_load, budget=budget,
                    all_models=all_models, progress=progress)
    adv = fa.advice
    R = adv.settings["max_load"]
    of = observed(first.durations, K, R).set_index("label")
    oh = observed(second.durations, K, R).set_index("label")
    ok = oh["runnable"] & np.isfinite(oh["mean_time"])
    if budget is not None:
        ok &= oh["messages"] <= budget
    best_held = str(oh[ok]["mean_time"].idxmin())
    rows = []
    ranked = adv.ranked[adv.ranked["runnable"] & adv.ranked["feasible"].astype(bool)
                        & np.isfinite(adv.ranked["mean_time"])]
    picks = [("uncoded", "uncoded")] + [("advised" if i == 0 else f"top {i + 1}", lab)
                                        for i, lab in enumerate(ranked["label"].head(top))]
    by_label = adv.ranked.set_index("label")
    for role, lab in picks:
        p = float(by_label.at[lab, "mean_time"])
        rows.append({"role": role, "label": lab, "predicted": p, "ci95": float(by_label.at[lab, "ci95_time"]),
                     "observed_fit": float(of.at[lab, "mean_time"]), "observed_held": float(oh.at[lab, "mean_time"]),
                     "error_fit": p / float(of.at[lab, "mean_time"]) - 1,
                     "error_held": p / float(oh.at[lab, "mean_time"]) - 1})
    rows = pd.DataFrame(rows)
    best_time = float(oh.at[best_held, "mean_time"])
    advised = adv.best["label"] if adv.best is not None else None
    regret = float(oh.at[advised, "mean_time"]) / best_time - 1 if advised is not None else math.nan
    per = []
    for name, g in adv.table.groupby("model", sort=False):
        g = g.set_index("label")
        run = [lab for lab in g.index if oh.at[lab, "runnable"] and np.isfinite(g.at[lab, "mean_time"])
               and (budget is None or g.at[lab, "messages"] <= budget)]
        if not run:
            continue
        own = min(run, key=lambda lab: g.at[lab, "mean_time"])
        pu, pa = float(g.at["uncoded", "mean_time"]), float(g.at[own, "mean_time"])
        per.append({"model": name, "primary": name == fa.primary, "advised": own, "uncoded_predicted": pu,
                    "uncoded_error_fit": pu / float(of.at["uncoded", "mean_time"]) - 1,
                    "uncoded_error_held": pu / float(oh.at["uncoded", "mean_time"]) - 1,
                    "advised_predicted": pa, "advised_error_fit": pa / float(of.at[own, "mean_time"]) - 1,
                    "advised_error_held": pa / float(oh.at[own, "mean_time"]) - 1,
                    "regret": float(oh.at[own, "mean_time"]) / best_time - 1})
    by_model = pd.DataFrame(per)
    s = slowest_worker(first)
    pf, ph = paces(first).mean(axis=0), paces(second).mean(axis=0)
    drift = {"worker": s["worker"], "pace_fit": float(pf[s["index"]]), "pace_held": float(ph[s["index"]]),
             "drift": float(ph[s["index"]] / pf[s["index"]] - 1), "median_drift": float(np.median(ph / pf - 1)),
             "share_slowest_fit": s["share"]}
    unc, adv_row = rows.iloc[0], rows.iloc[1] if len(rows) > 1 else None
    targets = {
        "uncoded in sample": {"value": float(unc["error_fit"]), "limit": TARGETS["in_sample"]},
        "advised in sample": {"value": float(adv_row["error_fit"]) if adv_row is not None else math.nan,
                              "limit": TARGETS["in_sample"]},
        "advised held out": {"value": float(adv_row["error_held"]) if adv_row is not None else math.nan,
                             "limit": TARGETS["held_out"]},
        "regret": {"value": regret, "limit": TARGETS["regret"]},
    }
    warnings = []
    what = {"uncoded in sample": "on the fitted iterations, uncoded's predicted mean iteration time misses theirs by",
            "advised in sample": "on the fitted iterations, the advised design's predicted time misses theirs by",
            "advised held out": "on the held-out iterations, the advised design's predicted time misses theirs by",
            "regret": "the advised design is"}
    for name, v in targets.items():
        v["met"] = bool(v["value"] < v["limit"]) if name == "regret" else bool(abs(v["value"]) <= v["limit"])
        if not v["met"]:
            tail = (f"slower than the held-out best ({best_held}); the target is under {v['limit']:.0%}"
                    if name == "regret" else f"(the target is within {v['limit']:.0%})")
            num = f"{100 * v['value']:.1f}%" if name == "regret" else f"{100 * v['value']:+.1f}%"
            warnings.append(f"{what[name]} {num} {tail}")
    if not targets["advised held out"]["met"] or abs(float(unc["error_held"])) > TARGETS["held_out"]:
        warnings.append(f"uncoded's held-out error {100 * float(unc['error_held']):+.1f}% stands beside the slowest "
                        f"worker's drift of {100 * drift['drift']:+.1f}% between the parts")
    settings = {"source": t.source, "iterations": I, "fit_iterations": n_fit, "held_iterations": n_held,
                "holdout": holdout, "K": K, "seed": seed, "trials": trials, "bootstrap": bootstrap,
                "max_load": R, "budget": budget, "primary": fa.primary, "primary_reason": fa.reason,
                "fit_ids": [int(first.iteration_ids[0]), int(first.iteration_ids[-1])],
                "held_ids": [int(second.iteration_ids[0]), int(second.iteration_ids[-1])]}
    return Backtest(rows, by_model, fa, of.reset_index(), oh.reset_index(), drift, regret, best_held, targets,
                    warnings, settings)
