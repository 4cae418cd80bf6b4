"""The training schemes of :func:`gclib.learning.optim.train` (``gclib train --algorithm NAME``): a gradient code plus
a trigger rule (:class:`LazyScheme`), built by name (:func:`make_scheme`): GD, GC on any registered code, LAG-WK,
LAG-PS, LAGC and G-LAG (Zhang and Simeone, 2021; the table of :mod:`gclib.learning.optim` says what each waits
for). :func:`decoding_weight` is LAGC's natural ``M`` of the threshold (the l1 norm of the decoding coefficients).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations, islice

import numpy as np

from gclib import checks, schemes as sch
from gclib.codes import crc, frc, uncoded
from gclib.codes.base import GradientCode
from gclib.learning import lazy

SCHEME_NAMES = ("gd", "gc", "lag-wk", "lag-ps", "lagc", "g-lag")
#: What a lazy scheme does in its first ``D`` iterations: ``"silent"`` (Chen et al.'s code: nobody uploads, the
#: server steps with its initial copies) or ``"upload"`` (every unit uploads).
WARMUPS = ("silent", "upload")


@dataclass(frozen=True, eq=False)
class LazyScheme:
    """A code plus a trigger rule.

    Attributes:
        name: display name (``"gd"``, ``"g-lag"``, ...).
        code: the gradient code (its ``n_parts`` must equal the problem's).
        trigger: ``None`` (every unit uploads every iteration), ``"wk"`` or ``"ps"``.
        D: window of past iterate differences. xi: weight per difference: a number, ``None`` (gclib's default,
            ``1/D`` for both triggers: :func:`gclib.learning.lazy.default_xi`) or ``"chen"`` (Chen et al.'s code:
            ``1/D`` worker side, ``10/D`` server side: :func:`gclib.learning.lazy.chen_xi`).
        units: ``M`` of the threshold: an integer, ``"count"`` (the number of units, i.e. message classes),
            ``"decoding-max"`` or ``"decoding-mean"`` (the largest / mean l1 norm of the decoding coefficients
            over the code's straggler patterns, see :func:`decoding_weight`). ``None`` picks ``"count"``. For
            uncoded and FRC codes all three equal LAG's ``M`` (workers, groups); for CRC they differ a lot.
        warmup: what a lazy scheme does in its first ``D`` iterations, while fewer than ``D`` iterate differences
            are known (see :data:`WARMUPS`). ``"silent"`` (the default, Chen et al.'s code): no unit computes or
            uploads; the server starts with an initial copy of every unit (``initial`` below) and steps with it,
            at no time and no computation (Chen et al.'s LAG-WK script evaluates and discards the gradients in
            these iterations; we do not charge for that); after the warm-up a unit that never uploaded is judged against that
            copy (worker side) or against ``theta^0`` as its last iterate (server side). ``"upload"``: every unit
            computes and uploads in those iterations (an earlier choice of ours).
        initial: with ``warmup="silent"``, every stored partial gradient starts as ``initial * ones(d)`` on the
            loss summed over the samples, i.e. ``initial / N * ones(d)`` on gclib's loss (divided by the ``N``
            samples); a unit's initial copy is its code row applied to these. Chen et al. start from the all-ones
            vector (``1.0``). Ignored without a trigger or with ``warmup="upload"``.
    """

    name: str
    code: GradientCode
    trigger: str | None = None
    D: int = lazy.D_DEFAULT
    xi: float | str | None = None
    units: int | str | None = None
    warmup: str = "silent"
    initial: float = 1.0

    def __post_init__(self):
        if self.trigger not in (None, "wk", "ps"):
            raise ValueError(f"trigger must be None, 'wk' or 'ps', got {self.trigger!r}")
        if self.warmup not in WARMUPS:
            raise ValueError(f"warmup must be one of {list(WARMUPS)}, got {self.warmup!r}")
        checks.real("initial", self.initial)
        checks.integer("D", self.D, low=1)
        if self.xi is not None and self.xi != "chen":
            if isinstance(self.xi, str):
                raise ValueError(f"xi must be a non-negative number, None or 'chen', got {self.xi!r}")
            checks.real("xi", self.xi, low=0)
        if not hasattr(self.code.rule, "msg_class"):
            raise ValueError(f"code '{self.code.name}' needs a threshold rule with message classes")

    @property
    def n_units(self) -> int:
        return int(self.code.rule.class_cluster.size)

    @cached_property
    def threshold_units(self) -> float:
        u = "count" if self.units is None else self.units
        if u == "count":
            return float(self.n_units)
        if u in ("decoding-max", "decoding-mean"):
            return decoding_weight(self.code, u.split("-")[1])
        if isinstance(u, str) or not (isinstance(u, (int, float, np.integer, np.floating))
                                      and not isinstance(u, bool) and 0 < u < math.inf):
            raise ValueError(f"units must be a positive number, 'count', 'decoding-max' or 'decoding-mean', "
                             f"got {u!r}")
        return float(u)

    @property
    def weight(self) -> float:
        if self.xi is None:
            return lazy.default_xi(self.trigger, self.D)
        if self.xi == "chen":
            return lazy.chen_xi(self.trigger, self.D)
        return float(self.xi)

    @property
    def exact(self) -> bool:
        """True when every iteration uses the exact full gradient (no laziness, an exact code)."""
        return self.trigger is None and self.code.exact

    def describe(self) -> dict:
        return {"scheme": self.name, "code": self.code.name, "trigger": self.trigger, "D": self.D,
                "xi": None if self.trigger is None else self.weight,
                "warmup": None if self.trigger is None else self.warmup, "units": self.n_units,
                "threshold_units": None if self.trigger is None else self.threshold_units,
                "workers": self.code.n_workers, "load": self.code.load}


#: The parameters :func:`make_scheme` gives the registered scheme behind ``gc``'s code.
CODE_PARAMS = ("workers", "stragglers", "seed")


def code_names() -> list[str]:
    """The registered schemes ``gc`` can take as its code (``code=NAME``; ``gclib train --algorithm gc --scheme
    NAME``): those built from :data:`CODE_PARAMS` alone (every other parameter they read has a default)."""
    return sorted(n for n, s in sch.SCHEMES.items() if set(s.required) <= set(CODE_PARAMS))


def make_scheme(name: str, workers: int, *, groups: int | None = None, stragglers: int | None = None,
                code: str | GradientCode | None = None, trigger: str | None = "default", seed=0,
                D: int = lazy.D_DEFAULT, xi: float | str | None = None, units=None, warmup: str = "silent",
                initial: float = 1.0) -> LazyScheme:
    """Build one of :data:`SCHEME_NAMES`.

    Args:
        workers: ``n``. groups: ``G`` for ``g-lag`` (must divide ``n``; default 4 if it divides ``n``, else 1).
        stragglers: ``s`` of the code of ``gc`` / ``lagc`` (default ``n / G - 1`` so that all coded schemes have
            the same computation load ``r = n / G``, or 1 when ``groups`` is not given and 4 does not divide n).
        code: for ``gc`` only: one of :func:`code_names` (``"crc"``, ``"frc"``, ...) or a :class:`GradientCode`
            (default ``"crc"``). trigger: override the scheme's default trigger (``None`` disables laziness).
        seed: seed of the random CRC construction. D, xi, units, warmup, initial: see :class:`LazyScheme`
            (``warmup="silent"``, Chen et al.'s warm-up, by default; ``"upload"`` for every unit uploading in
            the first ``D`` iterations).
    """
    if name not in SCHEME_NAMES:
        raise ValueError(f"scheme must be one of {list(SCHEME_NAMES)}, got {name!r}")
    if code is not None and name != "gc":
        raise ValueError(f"code is for scheme 'gc' only (scheme {name!r} has its own), got code={code!r}")
    if code is not None and not isinstance(code, GradientCode) and code not in code_names():
        raise ValueError(f"code must be a GradientCode or one of {code_names()} (the schemes built from workers, "
                         f"stragglers and seed alone), got {code!r}")
    if not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if groups is None:
        groups = 4 if workers % 4 == 0 and workers > 4 else workers
    if not isinstance(groups, (int, np.integer)) or groups < 1 or workers % groups:
        raise ValueError(f"groups must be a positive divisor of workers = {workers}, got {groups!r}")
    s = workers // groups - 1 if stragglers is None else stragglers
    defaults = {"gd": None, "gc": None, "lag-wk": "wk", "lag-ps": "ps", "lagc": "wk", "g-lag": "ps"}
    trig = defaults[name] if trigger == "default" else trigger
    if units is None and name == "lagc":
        units = "decoding-mean"  # with M = n ("count") LAGC on a random CRC diverges (docs/lazy.md)
    if name in ("gd", "lag-wk", "lag-ps"):
        c = uncoded(workers)
    elif name == "g-lag":
        c = frc(workers, workers // groups - 1)
    elif name == "lagc":
        c = crc(workers, s, seed)
    else:  # gc
        if isinstance(code, GradientCode):
            c = code
        else:
            cname = code or "crc"
            c = sch.build(cname, workers=workers, stragglers=s, seed=seed)
    return LazyScheme(name, c, trig, D, xi, units, warmup, initial)



def decoding_weight(code: GradientCode, how: str = "max", patterns: int = 500, seed=0) -> float:
    """Largest (``how="max"``) or mean l1 norm ``sum |A|`` of the decoding coefficients of ``code`` over its
    straggler patterns (all ``C(n, s)`` of them, or ``patterns`` random ones when there are more).

    The aggregated staleness error of a lazy coded scheme is ``sum_u a_u (c_u - g_u)``; LAG's ``1 / M^2`` is
    ``1 / ||a||_1^2`` for ``a = 1``, so this is the natural ``M`` of LAGC. Uncoded: ``n``; FRC: the groups.
    """
    n, s = code.n_workers, code.stragglers
    total = math.comb(n, s)
    if total <= patterns:
        pats = list(combinations(range(n), s))
    else:
        rng = np.random.default_rng(seed)
        pats = [tuple(sorted(rng.choice(n, s, replace=False))) for _ in range(patterns)]
    w = [float(np.abs(code.decode(code.surviving(S), warn=False)).sum()) for S in islice(pats, patterns)]
    if how == "max":
        return max(w)
    if how == "mean":
        return float(np.mean(w))
    raise ValueError(f"how must be 'max' or 'mean', got {how!r}")
