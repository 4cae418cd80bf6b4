"""The study of notebook 11: the partial-straggler scheme of Ramamoorthy, Meng and Girimaji (NeurIPS 2024, arXiv
2405.19509) as reconstructed in :mod:`gclib.codes.partial_work`, against GC (CRC, the same load), UC-MMC and correlated
GC-MMC.

* :func:`qmax_table`: ``Q_max`` of the optimal (perfect-matching), natural and random orderings, on the cyclic and
  on random ``l``-regular assignments (on the cyclic assignment the natural order already meets the bound, so the
  matching ordering matters on the others); :func:`exhaustive_table`: the optimal ordering against the minimum over
  every ordering of small cases;
* :func:`exact_checks`: every progress state of small codes, the coverage rule against the span oracle and the
  0/1 decode in exact arithmetic;
* :func:`exact_times`: exact-recovery time and communication of every scheme on the same sampled worker times
  (paired), under a latency + size / bandwidth communication model;
* :func:`approx_mse`: the error of approximate recovery at deadlines, against GC's least-squares decode of the
  messages of the workers done by then.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import sympy as sp

from gclib import checks, schemes
from gclib.codes import partial_work as R
from gclib.codes.mmc import correlated, gc_cyclic, uc_mmc
from gclib.learning import TandonAGD, make_problem
from gclib.progress import progress as _progress
from gclib.runtime.launcher import launch_series
from gclib.runtime.spec import RunSpec
from gclib.simulator import Communication, arrival_times, simulate_chunk
from gclib.stats import Estimate, paired_change
from gclib.stragglers import ShiftedExponential
from gclib.symbolic import exact_matrix, exact_target, is_decodable_exact

#: The orderings compared, in display order.
ORDERINGS = ("optimal", "cyclic", "random")
#: A least-squares error below this is round-off of an exact decode: counted as zero.
ROUNDOFF = 1e-12


# ---------------------------------------------------------------------------------------------- Q_max
def pairs(ns, loads) -> list:
    """The cases ``(n, l)`` of every ``n`` of ``ns`` and ``l`` of ``loads`` with ``2 <= l < n``."""
    return [(int(n), int(l)) for n in ns for l in loads if 2 <= l < n]


def qmax_table(ns, l: int, draws: int = 20, seed: int = 0) -> pd.DataFrame:
    """``Q_max`` of every ordering, per ``n`` of ``ns`` at load ``l`` and assignment (the cyclic one; ``draws`` random
    ``l``-regular ones).

    On the cyclic assignment the natural order ``i, i+1, ...`` (``"cyclic"``) puts every chunk at every position
    once among its holders, so it meets the bound as the matching ordering does (excess 0); on a random
    assignment the order in which the chunks are listed need not.

    Returns:
        One row per ``(assignment, n, l, ordering)``: ``q_max_mean``, ``q_max_min``, ``q_max_max`` over the draws
        (of the random assignments and the random orderings), ``bound`` (:func:`gclib.codes.partial_work.q_max_bound`),
        ``excess_mean`` (mean ``Q_max`` over the bound) and ``draws``.
    """
    draws = checks.integer("draws", draws, low=1)
    rng = checks.generator(seed)
    rows = []
    for n in ns:
        for kind in ("cyclic", "random"):
            qs = {o: [] for o in ORDERINGS}
            for _ in range(draws):
                a = R.cyclic_assignment(n, l) if kind == "cyclic" else R.random_assignment(n, l, rng)
                for o in ORDERINGS:
                    qs[o].append(R.q_max(R.make_order(a, o, rng)))
            bound = R.q_max_bound(n, l)
            for o in ORDERINGS:
                q = np.array(qs[o], dtype=float)
                rows.append({"assignment": kind, "n": n, "l": l, "ordering": o, "q_max_mean": q.mean(),
                             "q_max_min": q.min(), "q_max_max": q.max(), "bound": bound,
                             "excess_mean": q.mean() - bound, "draws": draws})
    return pd.DataFrame(rows)


def exhaustive_table(ns, loads, seed: int = 0) -> pd.DataFrame:
    """The optimal ordering against the minimum ``Q_max`` over every ordering (``(l!)^n``), per case of
    :func:`pairs`, on the cyclic assignment and one random ``l``-regular assignment.

    Returns:
        One row per case: ``assignment, n, l, orderings, exhaustive_min, optimal, natural, bound``.
    """
    rng = checks.generator(seed)
    rows = []
    for n, l in pairs(ns, loads):
        for kind in ("cyclic", "random"):
            a = R.cyclic_assignment(n, l) if kind == "cyclic" else R.random_assignment(n, l, rng)
            best, tried = R.min_q_max_exhaustive(a)
            rows.append({"assignment": kind, "n": n, "l": l, "orderings": tried, "exhaustive_min": best,
                         "optimal": R.q_max(R.optimal_order(a)), "natural": R.q_max(a),
                         "bound": R.q_max_bound(n, l)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------- exactness
def exact_checks(ns, loads, ordering: str = "optimal", seed: int = 0) -> pd.DataFrame:
    """Every progress state of ``rmg(n, l)`` per case of :func:`pairs`, in exact (rational) arithmetic.

    Returns:
        One row per case: ``states`` (``(l + 1)^n``), ``covering`` (states whose finished chunks cover all),
        ``rule_disagreements`` (states where the coverage rule, the code's fast rule and the exact span test do
        not all agree), ``exact_decodes`` (covering states whose 0/1 coefficients give ``A B_R = 1`` exactly),
        ``non_covering_decodable`` (other states that the exact rank test finds decodable: 0 expected).
    """
    rows = []
    for n, l in pairs(ns, loads):
        code = R.rmg(n, l, ordering, seed)
        B, T = exact_matrix(code), exact_target(code)
        states = R.progress_states(code.order)
        cover = disagree = ok = bad = 0
        for k in states:
            rec = R.received_of(code, k).tolist()
            c = R.covers(code.order, k)
            mask = np.zeros(code.n_messages, dtype=bool)
            mask[rec] = True
            span = bool(rec) and is_decodable_exact(B, rec, T)
            disagree += int(not (c == bool(code.rule.decodable(mask)) == span))
            if c:
                cover += 1
                A = sp.Matrix(code.decode(rec).astype(int).tolist())
                ok += int(A * B.extract(rec, list(range(n))) == T)
            else:
                bad += int(span)
        rows.append({"n": n, "l": l, "ordering": ordering, "states": len(states), "covering": cover,
                     "rule_disagreements": disagree, "exact_decodes": ok, "non_covering_decodable": bad})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------- times
def _progress_at(order, finish: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(trials, workers)`` chunks each worker has finished by ``t`` (``finish``: ``(trials, workers, l)``)."""
    return (finish <= t[:, None, None]).sum(axis=2)


def _vectors(order, prog: np.ndarray) -> np.ndarray:
    """Vectors uploaded by the exact recovery at every trial's progress state
    (:func:`gclib.codes.partial_work.decode_plan`)."""
    out = np.empty(prog.shape[0], dtype=np.int64)
    cache = {}
    for i, k in enumerate(map(tuple, prog.tolist())):
        if k not in cache:
            cache[k] = len(R.decode_plan(order, k))
        out[i] = cache[k]
    return out


def rmg_times(code, finish: np.ndarray, comm: Communication) -> dict:
    """Per-trial exact recovery of the two-phase protocol: ``cover`` (the finished chunks cover all), ``time``
    (``cover`` plus a report's latency, the server's instructions' latency and the upload: ``latency + 1 /
    bandwidth``, or ``latency + vectors / bandwidth`` when the master takes the uploads in one at a time) and
    ``volume`` (vectors uploaded)."""
    cover = code.rule.completion(arrival_times(code, finish))
    prog = _progress_at(code.order, finish, cover)
    vec = _vectors(code.order, prog)
    upload = (vec if comm.queue else 1.0) / comm.bandwidth + comm.overhead * (vec if comm.queue else 1.0)
    return {"cover": cover, "time": cover + 3 * comm.latency + upload, "volume": vec.astype(float)}


def schemes_of(n: int, l: int, mmc_order: int, seed: int = 0) -> dict:
    """The codes compared, by label: RMG (the cyclic assignment in its natural order ``w, w+1, ...``, the order
    UC-MMC computes its chunks in, which on this assignment already meets the ``Q_max`` bound; and a random
    ordering as the contrast), GC (CRC, load ``l``), UC-MMC and correlated GC-MMC of order ``mmc_order``.

    RMG and UC-MMC thus compute the same chunks in the same order: what tells them apart is communication."""
    return {"RMG": R.rmg(n, l, "cyclic"), "RMG (random order)": R.rmg(n, l, "random", seed),
            "GC": gc_cyclic(n, l, seed=seed), "UC-MMC": uc_mmc(n, l),
            f"GC-MMC (m = {mmc_order})": correlated(n, l, mmc_order, seed=seed)}


#: How the master takes the uploads in: every message on its own (independent delays) or one at a time.
UPLOADS = {"in parallel": False, "one at a time": True}


def exact_times(n: int, l: int, models: dict, *, trials: int, mmc_order: int, latency: float, bandwidth: float,
                seed: int = 0, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exact-recovery time and communication of every scheme of :func:`schemes_of` on the same sampled worker
    times (trial ``i`` of every scheme sees the same chunk finish times), per compute-time model and per way the
    master takes uploads in (:data:`UPLOADS`: independent delays, or the master's queue of
    :class:`gclib.simulator.Communication`).

    Returns:
        ``(table, per_trial)``: ``table`` one row per ``(uploads, model, scheme)`` with ``mean_time, ci95_time,
        mean_volume, ci95_volume`` (vectors received by the decode) and ``speedup`` = mean time of the scheme /
        mean time of RMG with its paired 95% interval (``speedup_lo, speedup_hi``); ``per_trial`` the times
        (``uploads, model, trial`` and one column per scheme).
    """
    n = checks.integer("workers", n, low=2)
    l = checks.integer("load", l, low=1, high=n)
    trials = checks.integer("trials", trials, low=2)
    codes = schemes_of(n, l, mmc_order, seed)
    rows, per = [], []
    for mi, (name, model) in enumerate(_progress(list(models.items()), "models", show=progress)):
        finish = model.sample(np.random.default_rng([seed, mi]), trials, n, l)
        for uploads, queue in UPLOADS.items():
            comm = Communication(latency=latency, bandwidth=bandwidth, queue=queue)
            t, vol = {}, {}
            for label, code in codes.items():
                out = rmg_times(code, finish, comm) if code.name == "rmg" else simulate_chunk(code, finish, comm)
                t[label], vol[label] = np.asarray(out["time"], float), np.asarray(out["volume"], float)
            for label in codes:
                e, v = Estimate.of(t[label]), Estimate.of(vol[label])
                ch, lo, hi, _ = paired_change(t[label], t["RMG"])
                rows.append({"uploads": uploads, "model": name, "scheme": label, "mean_time": e.value,
                             "ci95_time": e.hi - e.value, "mean_volume": v.value, "ci95_volume": v.hi - v.value,
                             "speedup": 1 + ch, "speedup_lo": 1 + lo, "speedup_hi": 1 + hi, "trials": trials})
            per.append(pd.DataFrame({"uploads": uploads, "model": name, "trial": np.arange(trials), **t}))
    return pd.DataFrame(rows), pd.concat(per, ignore_index=True)


# ---------------------------------------------------------------------------------------------- approximate
def approx_mse(n: int, l: int, models: dict, *, fractions, trials: int, mmc_order: int, seed: int = 0
               ) -> pd.DataFrame:
    """Approximate recovery at deadlines: normalized error ``|a B_R - 1|^2 / N`` of each scheme's estimate from
    what it has received by the deadline (communication free), on the same sampled worker times, per
    compute-time model.

    The deadlines are ``fractions`` of GC's mean exact-recovery time on these draws. RMG and UC-MMC: the sum of
    the covered chunks, not rescaled (:func:`gclib.codes.partial_work.coverage_mse`); GC and GC-MMC: the least-squares
    decode of the messages received (:func:`gclib.codes.partial_work.lstsq_mse`; an error below :data:`ROUNDOFF` is 0).

    Returns:
        One row per ``(model, fraction, scheme)``: ``deadline, mean_mse, lo, hi`` (95% interval over trials),
        ``exact_share`` (trials with zero error), ``ratio_to_rmg`` (mean error over RMG's on the same draws) with
        its paired 95% interval ``ratio_lo, ratio_hi`` (:func:`gclib.stats.paired_change`; ``inf`` and NaN when
        RMG's error is 0 in every trial: no ratio is measured then).
    """
    trials = checks.integer("trials", trials, low=2)
    codes = {k: v for k, v in schemes_of(n, l, mmc_order, seed).items() if k != "RMG (random order)"}
    rows = []
    for mi, (name, model) in enumerate(models.items()):
        finish = model.sample(np.random.default_rng([seed, 99, mi]), trials, n, l)
        arrivals = {label: arrival_times(code, finish) for label, code in codes.items()}
        gc_time = float(np.mean(codes["GC"].rule.completion(arrivals["GC"])))
        for f in fractions:
            T = float(f) * gc_time
            res = {label: _errors(code, arrivals[label] <= T) for label, code in codes.items()}
            for label, err in res.items():
                e = Estimate.of(err)
                if res["RMG"].mean() > 0:
                    ch, lo, hi, _ = paired_change(err, res["RMG"])
                    ratio, r_lo, r_hi = 1 + ch, 1 + lo, 1 + hi
                else:
                    ratio, r_lo, r_hi = np.inf, np.nan, np.nan
                rows.append({"model": name, "fraction": float(f), "deadline": T, "scheme": label,
                             "mean_mse": e.value, "lo": e.lo, "hi": e.hi, "exact_share": float(np.mean(err == 0)),
                             "ratio_to_rmg": ratio, "ratio_lo": r_lo, "ratio_hi": r_hi, "trials": trials})
    return pd.DataFrame(rows)


def _errors(code, got: np.ndarray) -> np.ndarray:
    """Per trial, the normalized error of ``code``'s estimate from the messages ``got`` (``(trials,
    n_messages)`` bool): coverage for unit-row codes, least squares for the others."""
    n = code.n_parts
    unit = code.name in ("rmg", "uc-mmc")
    out = np.empty(got.shape[0])
    cache = {}
    for i in range(got.shape[0]):
        idx = np.flatnonzero(got[i])
        key = idx.tobytes()
        if key not in cache:
            if unit:
                cache[key] = 1.0 - np.unique(code.B[idx].argmax(axis=1)).size / n if idx.size else 1.0
            else:
                e = R.lstsq_mse(code.B[idx], n)
                cache[key] = 0.0 if e < ROUNDOFF else e  # an exact decode up to round-off
        out[i] = cache[key]
    return out


# ---------------------------------------------------------------------------------------------- over MPI
#: The runtime's two exchanges of the partial-straggler code (:attr:`gclib.runtime.spec.RunSpec.exchange`).
EXCHANGES = ("messages", "two-phase")


def mpi_exchanges(n: int = 8, l: int = 3, *, iterations: int = 30, mu: float = 10.0, alpha: float = 0.01,
                  time_scale: float = 0.05, seed: int = 0, job_timeout: float = 180.0) -> pd.DataFrame:
    """``rmg(n, l)`` (the cyclic order) run over MPI with each exchange of :data:`EXCHANGES` on the same injected
    delays (a shifted exponential of rate ``mu`` and shift ``alpha`` per chunk, ``time_scale`` seconds a unit, the
    same seed): every chunk's gradient sent as it is computed, or the protocol's progress reports, the master's
    picks and one summed vector per picked worker. One row per exchange and iteration: the measured ``time``, the
    simulator's coverage time ``predicted`` (where the one data model decodes), the full-size ``vectors`` received
    (the messages that decoded, or the picked workers' sums), the progress ``reports`` and the ``grad_error``."""
    n = checks.integer("n", n, low=2)
    l = checks.integer("l", l, low=1, high=n)
    code = schemes.build("rmg", workers=n, load=l, ordering="cyclic")
    problem = make_problem("tandon-logistic", parts=n, seed=seed, n_samples=100 * n, dim=10)
    iterations = checks.integer("iterations", iterations, low=2)
    specs = [RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(mu=mu, alpha=alpha),
                     iterations=iterations, seed=seed, time_scale=time_scale, timeout=10.0, exchange=exchange)
             for exchange in EXCHANGES]
    rows = []
    for exchange, res in zip(EXCHANGES, launch_series(specs, job_timeout=job_timeout)):  # (one job)
        for r in res.records:
            rows.append({"exchange": exchange, "iteration": r["iteration"], "time": r["time"],
                         "predicted": r["predicted"], "vectors": r.get("vectors", r["messages"]),
                         "reports": r.get("reports", 0), "grad_error": r["grad_error"]})
    return pd.DataFrame(rows)
