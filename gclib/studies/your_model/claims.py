"""Claims of notebook 15, judged from a :class:`gclib.studies.your_model.study.Study`. Every row is kind ``check``:
our own test of gclib on a network of one's own, under a real trace's delays (no paper ran this setting).

* ``C1``: the decoded gradient equals the full-batch gradient (the network's gradient over every training image in
  one pass) in every iteration of every run, to a relative error below :data:`EXACT`.
* ``C2`` (one row per advised code that tolerates a straggler): a worker killed mid-run is survived: every iteration
  finishes, the worker is recorded dead, and every decoded gradient stays exact.
* ``C3`` (one row per advised code): the code reaches the target test accuracy in less wall-clock time than uncoded,
  paired over the seeds of the delays (the same recorded workers and steps for both); a single seed gives no
  interval, hence no verdict.
* ``C4`` (one row per scheme): the runtime is faithful to the simulator: the measured mean iteration time is the
  simulator's for the same injected delays within :data:`BAND`.
"""
from __future__ import annotations

import math

import numpy as np

from gclib.claims import CHECK, INCONCLUSIVE, Claim, exact, greater, ids, table, within
from gclib.stats import Estimate

#: Largest relative error ``||decoded - full|| / ||full||`` that counts as exact in float64 (the decoders' rounding
#: is about 1e-15 of the gradient).
EXACT = 1e-9
#: How far the measured mean iteration time may be from the simulator's for the same delays (as in notebook 07).
BAND = 0.10

CLAIMS = {c.id: c for c in (
    Claim("C1", CHECK, "the decoded gradient equals the full-batch gradient in every iteration",
          "our check: a code decodes the sum of the partial gradients, which a model's parts add up to",
          f"the largest relative error ||decoded - full|| / ||full|| over every iteration of every run below "
          f"{EXACT:g}"),
    Claim("C2", CHECK, "{scheme}: a worker killed mid-run is survived",
          "our check: the runtime treats a dead worker as a straggler that never answers, which the code tolerates",
          f"every iteration finished, the killed worker recorded dead, every decoded gradient's relative error below "
          f"{EXACT:g}"),
    Claim("C3", CHECK, "{scheme} reaches test accuracy {target:g} sooner than uncoded",
          "our check of gclib advise's recommendation ({role}) for the trace, on a network of one's own over MPI",
          "uncoded's wall-clock time to the target less the code's, paired over the seeds of the delays: its 95% "
          "Student-t interval above 0 holds, below 0 does not hold; else (or one seed: no interval) inconclusive"),
    Claim("C4", CHECK, "{scheme}: the measured iteration time is the simulator's for the same delays",
          "our check: the MPI runtime adds little to the injected delays",
          f"the mean measured over the mean simulated iteration time, with the Student-t 95% interval of the mean "
          f"difference over the iterations: inside [{1 - BAND:g}, {1 + BAND:g}] holds, wholly outside does not "
          f"hold, else inconclusive"),
)}


def _setting(study) -> str:
    s = study.settings
    return (f"scikit-learn digits, MLP with {s['hidden']} hidden units ({s['framework']}), {s['workers']} workers over "
            f"MPI, gradient descent (step {s['lr']:g}), {s['iterations']} iterations; delays of trace {s['trace']} "
            f"replayed x {s['time_scale']:g} ({s['seeds']} seed{'s' if s['seeds'] != 1 else ''} of {s['workers']} "
            f"recorded workers and a first step)")


def exactness_row(study) -> dict:
    err = study.runs["grad_error"].to_numpy(dtype=float)
    worst = float(np.nanmax(err)) if err.size else math.nan
    runs = study.runs.groupby(["scheme", "seed", "kind"]).ngroups
    return CLAIMS["C1"].row(setting=_setting(study), verdict=exact(err.size > 0 and worst < EXACT),
                            measured=f"largest relative error {worst:.2g} over {err.size} iterations of {runs} runs")


def kill_rows(study) -> list:
    k = study.kills
    if k.empty:
        return [CLAIMS["C2"].row(setting=_setting(study), verdict=INCONCLUSIVE, scheme="no advised code",
                                 measured="no advised code tolerates a straggler: no run with a killed worker")]
    out = []
    for i, r in zip(ids("C2", len(k)), k.itertuples()):
        ok = (r.status == "ok" and r.finished == r.iterations and str(r.killed) in r.dead.split()
              and r.max_grad_error < EXACT)
        out.append(CLAIMS["C2"].row(
            id=i, scheme=r.scheme, verdict=exact(ok),
            setting=f"{_setting(study)}; worker {r.killed} killed at iteration {r.at}, first seed's delays",
            measured=f"{r.finished} of {r.iterations} iterations ({r.status}), dead workers [{r.dead}], largest "
                     f"relative error of the decoded gradient {r.max_grad_error:.2g}"))
    return out


def speed_rows(study) -> list:
    sv = study.savings()
    roles = dict(zip(study.schemes["scheme"], study.schemes["role"]))
    target = study.settings["target"]
    out = []
    for i, r in zip(ids("C3", len(sv)), sv.itertuples()):
        e = Estimate(r.saved, r.saved_lo, r.saved_hi, r.seeds)
        measured = (f"uncoded {r.uncoded:.3g} s, the code {r.time:.3g} s: saved {e.text('.3g')} s "
                    f"({100 * r.fraction:+.1f}% of uncoded's) over {r.seeds} paired seed{'s' if r.seeds != 1 else ''}"
                    if math.isfinite(r.saved) else "the target was not reached by both in any seed")
        out.append(CLAIMS["C3"].row(id=i, scheme=r.scheme, target=target, role=roles[r.scheme],
                                    setting=_setting(study), measured=measured, verdict=greater(e, 0.0)))
    return out


def faithful_rows(study) -> list:
    schemes = list(study.schemes["scheme"])
    out = []
    for i, sch in zip(ids("C4", len(schemes)), schemes):
        e = study.ratio(sch)
        g = study.compared()
        g = g[g["scheme"] == sch]
        out.append(CLAIMS["C4"].row(
            id=i, scheme=sch, setting=_setting(study), verdict=within(e, 1.0, BAND),
            measured=f"measured / simulated {e.text('.3f')} ({1e3 * g['time'].mean():.3g} ms against "
                     f"{1e3 * g['predicted'].mean():.3g} ms) over {e.n} iterations"))
    return out


def judge(study):
    """The claims table of notebook 15."""
    return table([exactness_row(study), *kill_rows(study), *speed_rows(study), *faithful_rows(study)])


__all__ = ["BAND", "CLAIMS", "EXACT", "judge"]
