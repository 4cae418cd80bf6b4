"""The registry of schemes: how the CLI, the notebooks and the runtime build a code by name.

Two tables, read from top to bottom:

* :data:`PARAMS`, every parameter a scheme can take (one command-line option each, ``--workers`` for
  ``workers``): its type, its one default, its help and its check. A parameter without a default here is left to
  the constructor: the scheme needs it unless the constructor's signature gives it a default.
* :data:`SCHEMES`, every scheme: the constructor it calls (a function of :mod:`gclib.codes`) and which of the
  constructor's arguments each of its parameters becomes, e.g. ``crc``: ``--stragglers`` is ``s`` of
  :func:`gclib.codes.crc`.

To add a scheme, write its constructor in :mod:`gclib.codes`, add a :class:`Scheme` to :data:`SCHEMES` (and a row
to :data:`PARAMS` for a parameter no scheme had before).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from gclib import checks, code_schedules, codes
from gclib.codes import approximate, lcc, mmc, partial_work
from gclib.codes.base import GradientCode
from gclib.codes.polynomial import POINTS


@dataclass(frozen=True)
class Param:
    """A scheme parameter.

    Attributes:
        type: ``int``, ``str`` or ``bool`` (a flag).
        default: the value when none is given; ``None``: no default here (see the module docstring).
        help: one line for the command line's help.
        check: the check of :mod:`gclib.checks` a value passes (on the command line and in :func:`build`), with
            its keywords ``limits``; ``None``: the constructor checks it.
    """

    type: type
    default: Any
    help: str
    check: Callable | None = None
    limits: Mapping = field(default_factory=dict)

    def checked(self, name: str, value):
        """``value`` checked (and parsed, for a comma list) by :attr:`check`."""
        return value if self.check is None else self.check(name, value, **self.limits)


def _points(name, value):
    """``--points``: one of the named sets of evaluation points (:data:`gclib.codes.polynomial.POINTS`); a library
    caller's array of points goes to the constructor, which checks it."""
    return checks.choice(name, value, POINTS) if isinstance(value, str) else value


#: Every scheme parameter, in the order of the command line's help.
PARAMS: dict[str, Param] = {
    "workers": Param(int, None, "number of workers n (K)", checks.integer, {"low": 1}),
    "stragglers": Param(int, None, "stragglers tolerated s", checks.integer, {"low": 0}),
    "seed": Param(int, 0, "seed of the random constructions", checks.integer, {"low": 0}),
    "pieces": Param(int, None, "data pieces per worker P", checks.integer, {"low": 1}),
    # The stability study (gclib.studies.reed_solomon.study, docs/codes.md) makes equispaced points (spread over the
    # workers) the
    # default: the most accurate real-valued choice; roots-of-unity are better still but cost twice the
    # communication.
    "points": Param(str, "equispaced", "evaluation points: equispaced, chebyshev, roots-of-unity (complex: messages "
                                       "cost twice)", _points),
    "exact": Param(bool, False, "build the exact (rational) form of a random construction"),
    "comm": Param(int, None, "communication reduction m (each message is 1/m of a gradient; default 1, for kadhe "
                             "--generator FILE the generator's dimension)",
                  checks.integer, {"low": 1}),
    "generator": Param(str, "gaussian", "generator of the linear code: gaussian, repetition, or a matrix file (.npy "
                                        "or text, K rows x N columns)"),
    "load": Param(int, None, "computation load r: parts per worker", checks.integer, {"low": 1}),
    "order": Param(int, None, "order m of the correlated GC-MMC design (parts per coded message)", checks.integer,
                   {"low": 1}),
    "orders": Param(str, None, "order vector of the uncorrelated GC-MMC design, comma list, e.g. 6,8,10",
                    checks.int_list, {"low": 1}),
    "clusters": Param(int, 1, "number of clusters P", checks.integer, {"low": 1}),
    "ordering": Param(str, "optimal", "optimal, cyclic or random order of the parts",
                      checks.choice, {"choices": partial_work.ORDERINGS}),
    # approximate codes
    "decoder": Param(str, "optimal", "decoding coefficients: optimal or fixed", checks.choice,
                     {"choices": approximate.DECODERS}),
}


@dataclass(frozen=True)
class Scheme:
    """A code by name.

    Attributes:
        name: the name on the command line (``--scheme NAME``).
        constructor: the function of :mod:`gclib.codes` that builds it.
        args: ``{parameter of PARAMS: the constructor's argument it becomes}``, in the order of the help.
        paper: where the scheme comes from.
        help: one line for the command line's help.
        schedule: what the simulator reads of the code (:class:`gclib.simulator.Schedule`) from the constructor's
            arguments, without its encoding matrix (:mod:`gclib.code_schedules`); ``None``: the scheme needs its code.
    """

    name: str
    constructor: Callable[..., GradientCode]
    args: Mapping[str, str]
    paper: str
    help: str
    schedule: Callable | None = None

    @property
    def params(self) -> tuple:
        """The parameters the scheme reads (names of :data:`PARAMS`)."""
        return tuple(self.args)

    @property
    def required(self) -> tuple:
        """The parameters without a default: none in :data:`PARAMS`, none in the constructor's signature."""
        sig = inspect.signature(self.constructor).parameters
        return tuple(p for p, arg in self.args.items()
                     if PARAMS[p].default is None and sig[arg].default is inspect.Parameter.empty)

    @property
    def constructor_name(self) -> str:
        """The constructor's dotted name, e.g. ``gclib.codes.repetition.crc``."""
        return f"{self.constructor.__module__}.{self.constructor.__qualname__}"

    def build(self, **kw) -> GradientCode:
        """The code from keyword parameters (see :func:`build`)."""
        return self.constructor(**self._call(kw))

    def simulable(self, **kw):
        """What the simulator needs from keyword parameters (see :func:`simulable`)."""
        call = self._call(kw)
        if self.schedule is not None:
            try:
                sch = self.schedule(**call)
            except checks.MemoryBudgetError:
                raise
            except ValueError:  # parameters the construction refuses: its own error, below
                sch = None
            if sch is not None:
                return sch
        return self.constructor(**call)

    def _call(self, kw) -> dict:
        """The constructor's keyword arguments from the scheme's parameters (checked; defaults applied)."""
        call = {}
        for p, arg in self.args.items():
            v = kw.get(p)
            if v is None:
                v = PARAMS[p].default
            if v is None:
                if p in self.required:
                    raise ValueError(f"scheme '{self.name}' needs --{p} ({param_help(p)})")
                continue  # the constructor's own default
            call[arg] = PARAMS[p].checked(p, v)
        return call


# ------------------------------------------------------------------------------------------------ schedules
def _complex(points) -> float:
    """Message length of a code on these evaluation points: complex ones (roots of unity) cost twice."""
    return 2.0 if points == "roots-of-unity" else 1.0


def _cl(build, K, r, P, name):
    return code_schedules.named(code_schedules.clustered(build, K, P, r, name), name, clusters=int(P))


def _schedules() -> dict:
    """The schedule of every scheme that has one, by name, from the constructor's arguments (the same defaults);
    ``None`` for parameters whose code is not the family's formula (Kadhe et al.'s code on another generator)."""
    cs = code_schedules
    return {
        "uncoded": lambda n: cs.uncoded(n),
        "frc": lambda n, s: cs.named(cs.frc(n, s + 1), "frc"),
        "crc": lambda n, s, seed=0, exact=False: cs.named(cs.gc(n, s + 1, "crc"), "crc"),
        "rs": lambda n, s, points="equispaced", exact=False: cs.sized(cs.gc(n, s + 1, "rs"), _complex(points), "rs"),
        "ye-abbe": lambda n, s, m=1, points="equispaced", exact=False: cs.sized(cs.ye_abbe(n, s, m), _complex(points)),
        "kadhe": lambda n, s, m=None, generator="gaussian", seed=0, exact=False: (
            cs.kadhe(n, s, 1 if m is None else m) if generator == "gaussian" else None),
        "gc": lambda K, r, P=1, seed=0, exact=False: _cl(lambda k: cs.gc(k, r), K, r, P, "gc"),
        "gc-mmc-correlated": lambda K, r, m, P=1, seed=0, exact=False: _cl(lambda k: cs.correlated(k, r, m), K,
                                                                          r, P, "gc-mmc-correlated"),
        "gc-mmc-uncorrelated": lambda K, r, orders, P=1, points="chebyshev", exact=False: cs.sized(
            _cl(lambda k: cs.uncorrelated(k, r, orders), K, r, P, "gc-mmc-uncorrelated"), _complex(points)),
        "uc-mmc": lambda K, r, P=1: _cl(lambda k: cs.uc_mmc(k, r), K, r, P, "uc-mmc"),
        "hybrid": lambda K, r, orders, points="chebyshev": cs.sized(cs.hybrid(K, r, orders), _complex(points)),
        "lcc": lambda K, r: cs.lcc(K, r),
        "rmg": lambda workers, load, ordering="optimal", seed=0: (
            cs.named(cs.correlated(workers, load, 1, "rmg"), "rmg", ordering="cyclic")
            if ordering == "cyclic" else None),
    }


TANDON = "Tandon et al., Gradient Coding (ICML 2017)"
GCMMC = "Ozfatura, Gunduz and Ulukus, Gradient Coding with Clustering and Multi-message Communication (2019)"
NS = {"workers": "n", "stragglers": "s"}  # Tandon's, Halbawi's, Ye-Abbe's and Kadhe's names
KR = {"workers": "K", "load": "r"}  # GC-MMC's and LCC's names

#: Every scheme by name.
SCHEMES: dict[str, Scheme] = {s.name: s for s in [
    Scheme("uncoded", codes.uncoded, {"workers": "n"}, TANDON + " (baseline)", "wait for every worker"),
    Scheme("ignore", codes.ignore_stragglers, NS, TANDON + " (baseline)",
           "uncoded, ignore the s slowest and rescale (approximate)"),
    Scheme("frc", codes.frc, NS, TANDON, "fractional repetition, (s+1) | n"),
    Scheme("crc", codes.crc, {**NS, "seed": "seed", "exact": "exact"}, TANDON, "cyclic repetition, random H"),
    Scheme("partial", codes.partial_stragglers, {**NS, "pieces": "pieces", "seed": "seed", "exact": "exact"},
           TANDON + " (partial stragglers)", "two messages per worker: own parts, then a CRC message"),
    # Reed-Solomon and communication-efficient codes
    Scheme("rs", codes.rs, {**NS, "points": "points", "exact": "exact"},
           "Halbawi et al., Improving Distributed GD Using Reed-Solomon Codes (ISIT 2018)",
           "Reed-Solomon (polynomial) code on the cyclic mask; any n - s decode"),
    Scheme("ye-abbe", codes.ye_abbe, {**NS, "comm": "m", "points": "points", "exact": "exact"},
           "Ye and Abbe, Communication-Computation Efficient Gradient Coding (ICML 2018), reconstructed",
           "polynomial communication-efficient code, load s + m, messages 1/m"),
    Scheme("kadhe", codes.kadhe, {**NS, "comm": "m", "generator": "generator", "seed": "seed", "exact": "exact"},
           "Kadhe, Koyluoglu and Ramchandran, Communication-Efficient GC (2020), reconstructed",
           "any linear [d, m, D] code: load d, messages 1/m, D - 1 stragglers"),
    # GC-MMC and its baselines
    Scheme("gc", mmc.clustered_gc, {**KR, "clusters": "P", "seed": "seed", "exact": "exact"},
           TANDON + " (load r, cyclic, optional clusters)",
           "plain GC (CRC) with load r in P clusters; any K_c - r + 1 workers per cluster"),
    Scheme("gc-mmc-correlated", mmc.gc_mmc_correlated,
           {**KR, "order": "m", "clusters": "P", "seed": "seed", "exact": "exact"}, GCMMC,
           "correlated GC-MMC of order m in P clusters; K_c - m + 1 distinct messages per cluster"),
    Scheme("gc-mmc-uncorrelated", mmc.gc_mmc_uncorrelated,
           {**KR, "orders": "orders", "clusters": "P", "points": "points", "exact": "exact"}, GCMMC,
           "uncorrelated GC-MMC with an order vector in P clusters; K_c l - sum(m) + 1 messages per cluster"),
    Scheme("uc-mmc", mmc.clustered_uc_mmc, {**KR, "clusters": "P"}, GCMMC + " (baseline [19])",
           "uncoded multi-message: every partial gradient sent as computed (correlated, m = 1)"),
    Scheme("hybrid", mmc.hybrid, {**KR, "orders": "orders", "points": "points"}, GCMMC + " (section III-D)",
           "clusters of r workers: uncorrelated GC-MMC below order r, the plain cluster sum at r"),
    Scheme("lcc", lcc.lcc_code, KR, "Yu et al., Lagrange Coded Computing (2019) / Li et al., PCR (baseline [4])",
           "Lagrange coded linear regression: any 2 ceil(K/r) - 1 results (threshold-rule stand-in)"),
    Scheme("rmg", partial_work.rmg, {"workers": "workers", "load": "load", "ordering": "ordering", "seed": "seed"},
           "Ramamoorthy, Meng and Girimaji, Leveraging partial stragglers within gradient coding (NeurIPS 2024), "
           "reconstructed", "partial stragglers used: chunks sent as computed, exact recovery once they cover all"),
    # approximate codes
    Scheme("expander", approximate.expander, {**NS, "load": "d", "decoder": "decoder", "seed": "seed"},
           "Raviv, Tamo, Tandon and Dimakis, GC from Cyclic MDS Codes and Expander Graphs (ICML 2018)",
           "random d-regular graph / d (d = load, default 3); least-squares or fixed decode (approximate)"),
    Scheme("stochastic", approximate.stochastic, {**NS, "load": "d", "seed": "seed"},
           "Bitar, Wootters and El Rouayheb, Stochastic Gradient Coding (JSAIT 2020), reconstructed",
           "each part on d = load workers, plain sums scaled by 1 / (d (1 - s/n)) (approximate)"),
]}


for _name, _schedule in _schedules().items():
    SCHEMES[_name] = replace(SCHEMES[_name], schedule=_schedule)


#: A parameter's help names the schemes that read it when they are at most this many (a parameter of most
#: schemes, ``--workers`` or ``--stragglers``, is listed per scheme by ``gclib list``).
NAMED_READERS = 5


def readers(param: str) -> tuple:
    """The schemes that read ``param`` (names of :data:`SCHEMES`, in its order)."""
    return tuple(n for n, s in SCHEMES.items() if param in s.params)


def param_help(param: str) -> str:
    """The help of parameter ``param``, after the names of every scheme that reads it when they are few (at most
    :data:`NAMED_READERS`), e.g. ``rs, ye-abbe, gc-mmc-uncorrelated, hybrid: evaluation points: ...``."""
    who = readers(param)
    text = PARAMS[param].help
    return f"{', '.join(who)}: {text}" if who and len(who) <= NAMED_READERS else text


def simulable(name: str, **kw):
    """What the simulator needs of scheme ``name``, from keyword parameters as :func:`build` takes them: its
    :class:`gclib.simulator.Schedule` where :mod:`gclib.code_schedules` has the family's formulas (GC, CRC, RS, FRC,
    uncoded, LCC, UC-MMC, correlated and uncorrelated GC-MMC and their clusterings, the hybrid, Ye-Abbe's and
    Kadhe et al.'s Gaussian codes), which needs memory in proportion to the messages only; else the code itself
    (:func:`build`, refused up front when its matrix would not fit). Parameters the construction refuses raise
    its own error. The simulator gives the same numbers for either."""
    if name not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {name!r}")
    return SCHEMES[name].simulable(**kw)


def build(name: str, **kw) -> GradientCode:
    """Build scheme ``name`` from keyword parameters named as in :data:`PARAMS` (keys the scheme does not read are
    ignored; a missing or ``None`` parameter takes its default, and raises if it has none; 0 is a value like any
    other)."""
    if name not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {name!r}")
    return SCHEMES[name].build(**kw)


# ------------------------------------------------------------------------------------------------ sequential
@dataclass(frozen=True)
class SequentialScheme:
    """A scheme that codes across iterations (:mod:`gclib.sequential`): a gradient may be due some rounds after
    it starts; replayed on a delay matrix of workers by rounds, or run round by round over MPI.

    Attributes:
        name: the name on the command line (``gclib sequential --scheme NAME``).
        params: its parameters, named as in Krishnan et al.'s paper (``s``; ``B``, ``W``, ``lambd``).
        help: one line for ``gclib list``.
        stragglers: the straggler tolerance ``s`` of the code of its coded tasks, from its (checked) parameters; 0
            for a scheme whose tasks are uncoded, ``None`` for one that runs no code (no wait decodes nothing).
        windows: the ``(B, W)`` pairs a sweep tries up to a largest delay ``D`` and window ``W_top``, in the
            sweep's order; ``None`` for a scheme without them.
        count_windows: how many pairs :attr:`windows` lists, counted without listing them.
    """

    name: str
    params: tuple
    help: str
    stragglers: Callable[..., int] | None
    windows: Callable[[int, int], list] | None = None
    count_windows: Callable[[int, int], int] | None = None

    def code(self, workers: int, seed=0, **params) -> GradientCode:
        """The code of its coded tasks for ``workers`` workers, built by :func:`build`: cyclic repetition
        (``crc``) tolerating :attr:`stragglers` of ``params``, uncoded when that is 0."""
        if self.stragglers is None:
            raise ValueError(f"sequential scheme {self.name!r} runs no code (it decodes nothing)")
        s = self.stragglers(**params)
        return build("uncoded", workers=workers) if s == 0 else build("crc", workers=workers, stragglers=s, seed=seed)


def sr_sgc_stragglers(B: int, W: int, lambd: int) -> int:
    """SR-SGC's per-round GC parameter ``s = ceil(B lambd / (W - 1 + B))``."""
    return -(-B * lambd // (W - 1 + B))


KRISHNAN = "(Krishnan et al., ICLR 2023)"

#: Every sequential scheme by name, in the order of ``gclib list``.
SEQUENTIAL: dict[str, SequentialScheme] = {s.name: s for s in [
    SequentialScheme("no-coding", (), "uncoded: every worker its 1/n share, the master waits for all workers in every "
                                      "round", lambda: 0),
    SequentialScheme("no-wait", (), "lower baseline: every round lasts its deadline (or its slowest worker when "
                                    "sooner), nothing decoded", None),
    SequentialScheme("gc", ("s",), "gradient coding GC(s) in every round on its own: load (s+1)/n, delay T = 0",
                     lambda s: s),
    SequentialScheme("sr-sgc", ("B", "W", "lambd"),
                     "sequential GC with selective repetition (B, W, lambd): GC(ceil(B lambd/(W-1+B))) and redo of "
                     f"lost tasks B rounds later; T = B {KRISHNAN}", sr_sgc_stragglers,
                     lambda D, W_top: [(B, W) for B in range(1, D + 1) for W in range(B + 1, W_top + 1, B)],
                     lambda D, W_top: sum(len(range(B + 1, W_top + 1, B)) for B in range(1, D + 1))),
    SequentialScheme("m-sgc", ("B", "W", "lambd"),
                     "multiplexed sequential GC (B, W, lambd): W-1 uncoded and B coded minitasks per job on a "
                     f"diagonal, T = W-2+B {KRISHNAN}", lambda B, W, lambd: lambd,
                     lambda D, W_top: [(B, W) for W in range(2, D + 2) for B in range(1, W) if W - 1 + B <= D],
                     lambda D, W_top: sum(max(0, min(W - 1, D - W + 1)) for W in range(2, D + 2))),
]}
