"""The registry of schemes: how the CLI, the notebooks and the runtime build a code by name.

Each scheme declares the parameters it reads (from :data:`PARAMS`) and the paper it comes from. To add a scheme,
write its constructor in :mod:`gclib.codes` and register it here with :func:`register`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import checks, codes
from .codes.base import GradientCode

#: CLI parameters shared by schemes: name -> (type, default, help).
PARAMS: dict[str, tuple] = {
    "workers": (int, None, "number of workers n (K)"),
    "stragglers": (int, None, "stragglers tolerated s"),
    "seed": (int, 0, "seed of random constructions and of the simulation"),
    "pieces": (int, None, "partial: data pieces per worker P"),
    "points": (str, "chebyshev", "evaluation points: chebyshev, equispaced, roots-of-unity"),
    "exact": (bool, False, "build the exact (rational) form of a random construction"),
}


@dataclass(frozen=True)
class Scheme:
    name: str
    paper: str
    params: tuple
    build: Callable[..., GradientCode]
    help: str


SCHEMES: dict[str, Scheme] = {}


def register(name: str, paper: str, params: tuple, help: str):
    """Decorator: register ``build(**params) -> GradientCode`` under ``name``."""

    def deco(fn):
        SCHEMES[name] = Scheme(name, paper, tuple(params), fn, help)
        return fn

    return deco


#: The check of every numeric scheme parameter: name -> (check of :mod:`gclib.checks`, its keywords). The CLI's
#: option types and :func:`build` both use it, so a value is judged the same way on both paths; a parameter
#: registered later without an entry is checked by its constructor only.
LIMITS: dict[str, tuple] = {
    "workers": (checks.integer, {"low": 1}),
    "stragglers": (checks.integer, {"low": 0}),
    "seed": (checks.integer, {"low": 0}),
    "pieces": (checks.integer, {"low": 1}),
}


def check_param(name: str, value):
    """``value`` of scheme parameter ``name`` checked by :data:`LIMITS` (unchanged when it has no entry)."""
    if name in LIMITS:
        check, kw = LIMITS[name]
        return check(name, value, **kw)
    return value


def build(name: str, **kw) -> GradientCode:
    """Build scheme ``name`` from keyword parameters (extra keys are ignored; a missing or ``None`` parameter
    takes its default from :data:`PARAMS`, and raises if it has none; 0 is a value like any other)."""
    if name not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {name!r}")
    sch = SCHEMES[name]
    args = {}
    for p in sch.params:
        v = kw.get(p)
        if v is None:
            v = PARAMS[p][1]
        if v is None:
            raise ValueError(f"scheme '{name}' needs --{p} ({PARAMS[p][2]})")
        args[p] = check_param(p, v)
    return sch.build(**args)


TANDON = "Tandon et al., Gradient Coding (ICML 2017)"

register("uncoded", TANDON + " (baseline)", ("workers",), "wait for every worker")(
    lambda workers: codes.uncoded(workers))
register("ignore", TANDON + " (baseline)", ("workers", "stragglers"),
         "uncoded, ignore the s slowest and rescale (approximate)")(
    lambda workers, stragglers: codes.ignore_stragglers(workers, stragglers))
register("frc", TANDON, ("workers", "stragglers"), "fractional repetition, (s+1) | n")(
    lambda workers, stragglers: codes.frc(workers, stragglers))
register("crc", TANDON, ("workers", "stragglers", "seed", "exact"), "cyclic repetition, random H")(
    lambda workers, stragglers, seed, exact: codes.crc(workers, stragglers, seed, exact=exact))
register("partial", TANDON + " (partial stragglers)", ("workers", "stragglers", "pieces", "seed", "exact"),
         "two messages per worker: own parts, then a CRC message")(
    lambda workers, stragglers, pieces, seed, exact: codes.partial_stragglers(workers, stragglers, pieces, seed,
                                                                             exact=exact))

# --- Reed-Solomon and communication-efficient codes -----------------------------------------------------------
PARAMS["comm"] = (int, 0, "ye-abbe, kadhe: communication reduction m (each message is 1/m of a gradient); "
                          "0 means 1, or the generator's dimension for kadhe --generator FILE")
# The stability study (gclib.stability, docs/codes.md) makes equispaced points (spread over the workers) the
# default: the most accurate real-valued choice; roots-of-unity are better still but cost twice the communication.
PARAMS["points"] = (str, "equispaced", "rs, ye-abbe: evaluation points: equispaced, chebyshev, roots-of-unity "
                                       "(complex: messages cost twice)")
LIMITS["comm"] = (checks.integer, {"low": 0})
PARAMS["generator"] = (str, "gaussian", "kadhe: generator of the linear code: gaussian, repetition, or a matrix "
                                        "file (.npy or text, K rows x N columns)")

register("rs", "Halbawi et al., Improving Distributed GD Using Reed-Solomon Codes (ISIT 2018)",
         ("workers", "stragglers", "points", "exact"),
         "Reed-Solomon (polynomial) code on the cyclic mask; any n - s decode")(
    lambda workers, stragglers, points, exact: codes.rs(workers, stragglers, points, exact=exact))
register("ye-abbe", "Ye and Abbe, Communication-Computation Efficient Gradient Coding (ICML 2018), reconstructed",
         ("workers", "stragglers", "comm", "points", "exact"),
         "polynomial communication-efficient code, load s + m, messages 1/m")(
    lambda workers, stragglers, comm, points, exact: codes.ye_abbe(workers, stragglers, comm or 1, points,
                                                                   exact=exact))
register("kadhe", "Kadhe, Koyluoglu and Ramchandran, Communication-Efficient GC (2020), reconstructed",
         ("workers", "stragglers", "comm", "generator", "seed", "exact"),
         "any linear [d, m, D] code: load d, messages 1/m, D - 1 stragglers")(
    lambda workers, stragglers, comm, generator, seed, exact: codes.kadhe(workers, stragglers, comm or None,
                                                                          generator, seed, exact=exact))

# ------------------------------------------------------------------------------------------------------ GC-MMC
from .codes import lcc as _lcc  # noqa: E402
from .codes import mmc as _mmc  # noqa: E402

PARAMS.update({
    "load": (int, None, "computation load r: parts per worker"),
    "order": (int, None, "order m of the correlated GC-MMC design (parts per coded message)"),
    "orders": (str, None, "order vector of the uncorrelated GC-MMC design / hybrid, comma list, e.g. 6,8,10"),
    "clusters": (int, 1, "number of clusters P (GC, GC-MMC, UC-MMC)"),
})
LIMITS.update({"load": (checks.integer, {"low": 1}), "order": (checks.integer, {"low": 1}),
               "orders": (checks.int_list, {"low": 1}), "clusters": (checks.integer, {"low": 1})})
GCMMC = "Ozfatura, Gunduz and Ulukus, Gradient Coding with Clustering and Multi-message Communication (2019)"

register("gc", TANDON + " (load r, cyclic, optional clusters)", ("workers", "load", "clusters", "seed", "exact"),
         "plain GC (CRC) with load r in P clusters; any K_c - r + 1 workers per cluster")(
    lambda workers, load, clusters, seed, exact: _mmc.clustered_design(
        lambda k: _mmc.gc_cyclic(k, load, seed=seed, exact=exact), workers, clusters, load))
register("gc-mmc-correlated", GCMMC, ("workers", "load", "order", "clusters", "seed", "exact"),
         "correlated GC-MMC of order m in P clusters; K_c - m + 1 distinct messages per cluster")(
    lambda workers, load, order, clusters, seed, exact: _mmc.gc_mmc_correlated(workers, load, order, clusters,
                                                                             seed=seed, exact=exact))
register("gc-mmc-uncorrelated", GCMMC, ("workers", "load", "orders", "clusters", "points", "exact"),
         "uncorrelated GC-MMC with an order vector in P clusters; K_c l - sum(m) + 1 messages per cluster")(
    lambda workers, load, orders, clusters, points, exact: _mmc.gc_mmc_uncorrelated(
        workers, load, orders, clusters, points=points, exact=exact))
register("uc-mmc", GCMMC + " (baseline [19])", ("workers", "load", "clusters"),
         "uncoded multi-message: every partial gradient sent as computed (correlated, m = 1)")(
    lambda workers, load, clusters: _mmc.clustered_design(lambda k: _mmc.uc_mmc(k, load), workers, clusters,
                                                          load))
register("hybrid", GCMMC + " (section III-D)", ("workers", "load", "orders", "points"),
         "clusters of r workers: uncorrelated GC-MMC below order r, the plain cluster sum at r")(
    lambda workers, load, orders, points: _mmc.hybrid(workers, load, orders, points=points))
register("lcc", "Yu et al., Lagrange Coded Computing (2019) / Li et al., PCR (baseline [4])", ("workers", "load"),
         "Lagrange coded linear regression: any 2 ceil(K/r) - 1 results (threshold-rule stand-in)")(
    lambda workers, load: _lcc.lcc_code(workers, load))
