"""The registry of schemes: how the CLI, the notebooks and the runtime build a code by name.

Each scheme declares the parameters it reads (from :data:`PARAMS`) and the paper it comes from. To add a scheme,
write its constructor in :mod:`gclib.codes` and register it here with :func:`register`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import codes
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


def build(name: str, **kw) -> GradientCode:
    """Build scheme ``name`` from keyword parameters (extra keys are ignored; missing required ones raise)."""
    if name not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {name!r}")
    sch = SCHEMES[name]
    args = {}
    for p in sch.params:
        v = kw.get(p, PARAMS[p][1])
        if v is None:
            raise ValueError(f"scheme '{name}' needs --{p} ({PARAMS[p][2]})")
        args[p] = v
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

# --- issue 3: Reed-Solomon and communication-efficient codes -------------------------------------------------
PARAMS["comm"] = (int, 0, "ye-abbe, kadhe: communication reduction m (each message is 1/m of a gradient); "
                          "0 means 1, or the generator's dimension for kadhe --generator FILE")
# The stability study (gclib.stability, docs/codes.md) makes equispaced points (spread over the workers) the
# default: the most accurate real-valued choice; roots-of-unity are better still but cost twice the communication.
PARAMS["points"] = (str, "equispaced", "rs, ye-abbe: evaluation points: equispaced, chebyshev, roots-of-unity "
                                       "(complex: messages cost twice)")
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
