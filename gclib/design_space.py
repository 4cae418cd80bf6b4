"""The design space: every family of codes the searches compare, in one table, and the one generator of their
candidates.

:data:`FAMILIES` holds one :class:`Family` per family of designs. An entry says, once:

* which candidates it makes for ``K`` workers at a computation load ``r`` of a search's space (:class:`Space`),
  and their parameters (``points``);
* the scheme of :mod:`gclib.schemes` that builds them (its code with :func:`gclib.schemes.build`, its schedule
  with :func:`gclib.schemes.simulable`) and what :mod:`gclib.shared_draws` reads of them (``spec``);
* their label (``label``, a template of the parameters).

Two searches draw from the table through :func:`points`:

* ``"design"`` (:func:`gclib.design.candidates`): one load ``r``, every order of a grid and every order vector,
  the baselines at every lighter load too (the exhaustive search of notebook 05);
* ``"advise"`` (:func:`gclib.advise.candidates`): every load of a grid up to a largest one, each design once
  (a design that is another under a second name is left out: GC in one cluster is CRC, correlated GC-MMC of
  order 1 is UC-MMC, and the partial-straggler protocol is UC-MMC in one cluster unless communication is
  charged).

To add a family, add a :class:`Family` to :data:`FAMILIES`; both searches take it (``searches`` says which), the
advice after the families before it in the table (ties in its ranking keep the table's order).

The partial-straggler protocol (``rmg``, :mod:`gclib.codes.partial_work`) is a family of the advice alone, on the cyclic
assignment in its natural order (``ordering="cyclic"``; the scheme's default, ``"optimal"``, is the
perfect-matching order, which meets the same bound of ``Q_max`` in another order). Its chunks are covered exactly
when UC-MMC in one cluster decodes (the same coverage of the same draws, notebook 14); what differs is its
communication, a round trip after the coverage (a progress report, the server's instruction, one vector per
picked worker), which :func:`gclib.shared_draws.protocol` charges with the model that charges every other design's
messages. So it is a design of its own only where the advice charges communication (:attr:`Space.comm`): when
messages cost nothing its time is UC-MMC's in one cluster, and the advice, which ranks by time, then fewer
messages, would otherwise list the same design twice and let the second name win the tie on the vectors it
uploads. When it is listed (label ``rmg r=<load>``) it follows UC-MMC in one cluster, and a tie of every key of
the ranking keeps the table's order; its command runs the exchange it is charged for (``gclib run --exchange
two-phase``: :mod:`gclib.runtime.two_phase`).

Two kinds of scheme are left out. The approximate codes (``ignore``, ``expander``, ``stochastic``:
:mod:`gclib.codes.approximate`): the advice ranks exact codes by their time alone, and an approximate code buys its
time with a decoding error that time does not price (notebook 13 weighs the two). The sequential schemes
(:mod:`gclib.sequential`): they code across iterations and are judged on a delay matrix of rounds, not on one
iteration's completion time (notebooks 12 and 14); ``gclib advise --sequential`` weighs them beside the ranking
(:func:`gclib.sequential.advice`: time per gradient on the same model's task draws, with the delay they add).
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Iterable, Iterator

import numpy as np

from gclib import checks, code_schedules, schemes, shared_draws
from gclib.codes.lcc import lcc_threshold

#: The searches that draw from the table.
SEARCHES = ("design", "advise")

#: The order in which a search builds the families listed here (the order its tables have always had); the other
#: families of the search follow, in the order of :data:`FAMILIES`.
FIRST = {"design": ("gc", "uc-mmc", "rs", "frc", "lcc", "gc-mmc-correlated", "gc-mmc-uncorrelated", "hybrid")}

#: Loads and orders the advice tries one by one up to this value, then on a geometric grid of this ratio
#: (:func:`grid`).
GRID_DENSE = 16
GRID_RATIO = 1.25
#: The most workers a search lists the candidate designs for (the advice, and the advice across iterations): the
#: candidates of 10,000 workers take seconds to list, and the number of them grows with ``K``.
MAX_WORKERS = 10_000
#: Cluster counts the advice tries per load at most (spread geometrically between 1 and ``K // r``).
MAX_CLUSTER_COUNTS = 6


def grid(lo: int, hi: int) -> list:
    """The values of a load or an order the advice tries between ``lo`` and ``hi``: every one up to
    :data:`GRID_DENSE`, then a geometric grid of ratio :data:`GRID_RATIO` (rounded) that ends at ``hi``.
    Neighbouring large loads or orders give nearly the same design, and the work of a screen grows with the
    candidates: ``grid(2, 100) == [2, 3, ..., 16, 20, 25, 31, 39, 49, 61, 76, 100]``."""
    out = list(range(lo, min(hi, GRID_DENSE) + 1))
    v = float(max(lo, GRID_DENSE))
    while v * GRID_RATIO < hi:
        v *= GRID_RATIO
        k = int(round(v))
        if not out or k > out[-1]:
            out.append(k)
    if hi >= lo and (not out or out[-1] != hi):
        if out and out[-1] > GRID_DENSE and out[-1] * math.sqrt(GRID_RATIO) > hi:
            out[-1] = hi  # too close to hi to keep both
        else:
            out.append(hi)
    return out


def cluster_counts(K: int, r: int) -> list:
    """The cluster counts the advice tries at load ``r``: every one up to ``K // r`` when there are at most
    :data:`MAX_CLUSTER_COUNTS`, else that many spread geometrically between 1 and ``K // r``."""
    top = K // r
    if top <= MAX_CLUSTER_COUNTS:
        return list(range(1, top + 1))
    return sorted({int(round(v)) for v in np.geomspace(1, top, MAX_CLUSTER_COUNTS)})


@dataclass(frozen=True)
class Space:
    """What a search tries.

    Attributes:
        search: ``"design"`` (exhaustive at one load) or ``"advise"`` (each design once, over a grid of loads).
        K: workers.
        loads: the computation loads the search runs over, in order (the design search: its one load; the
            advice: 1, for uncoded, then :func:`grid` up to its largest load).
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
        order_grid: the design search's orders (default ``1..r``); the advice's are :func:`grid` per load.
        clusters: the design search's cluster counts (default every valid one); the advice's are
            :func:`cluster_counts` per load.
        baselines: the design search's baselines (GC, UC-MMC, RS, FRC, LCC) included.
        comm: the advice charges communication (the partial-straggler protocol is a design of its own only then:
            see the module docstring).
    """

    search: str
    K: int
    loads: tuple
    max_orders: int
    order_grid: tuple | None = None
    clusters: tuple | None = None
    baselines: bool = True
    comm: bool = False

    @property
    def exhaustive(self) -> bool:
        """The design search: every order of the grid, every lighter load of the baselines, and designs that
        another family also holds (correlated GC-MMC of order 1 beside UC-MMC) kept."""
        return self.search == "design"

    def coded(self, r: int) -> bool:
        """Whether coded designs are made at load ``r`` (the advice makes uncoded alone at load 1)."""
        return self.exhaustive or r >= 2

    def orders(self, r: int) -> list:
        """The orders allowed at load ``r`` (the design search's grid; the advice's ``grid(1, r)``)."""
        if self.exhaustive:
            return sorted(set(range(1, r + 1) if self.order_grid is None else self.order_grid))
        return grid(1, r)

    def cluster_counts(self, r: int) -> list:
        """The cluster counts tried at load ``r``."""
        if not self.exhaustive:
            return cluster_counts(self.K, r)
        return list(range(1, self.K // r + 1)) if self.clusters is None else sorted(set(self.clusters))


@dataclass(frozen=True)
class Candidate:
    """One candidate design, the one record of every list of them: the design search's
    (:func:`gclib.design.candidates`), the advice's (:func:`gclib.advise.candidates`, each made of a :class:`Point`
    by :meth:`Point.candidate`) and a study's own.

    Attributes:
        family: its family's name (a scheme's). label: its label. params: the parameters its label shows.
        build: its code (``build()``). schedule: what the simulator reads of it without its encoding matrix
            (``schedule()``; ``None``: read from the code).
        load: its computation load. scheme, options: the scheme and the options of ``gclib run`` that build it
            (``scheme`` ``None``: it cannot run over MPI, or no list of the advice made it). spec: what
            :mod:`gclib.shared_draws` reads of it. run: the options of ``gclib run`` beyond the scheme's that run it as
            the advice charges it (the partial-straggler protocol's two-phase exchange).
    """

    family: str
    label: str
    params: dict
    build: Callable
    schedule: Callable | None = None
    load: int | None = None
    scheme: str | None = None
    options: dict = field(default_factory=dict)
    spec: shared_draws.Spec | None = None
    run: dict = field(default_factory=dict)

    @property
    def command(self) -> str:
        """The options of ``gclib run`` that run this design (empty when it cannot run): the scheme's, then the
        runtime's (``run``: how the design is run, e.g. the two-phase exchange the advice charges the
        partial-straggler protocol for)."""
        if self.scheme is None:
            return ""
        parts = ["--scheme", self.scheme]
        for k, v in {**self.options, **self.run}.items():
            parts += ["--" + k.replace("_", "-"), ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)]
        return shlex.join(parts)


@dataclass(frozen=True)
class Point:
    """One candidate of a search: its ``family`` (a :class:`Family`), the search's load ``r`` at which it was made,
    its computation ``load`` (the partial gradients a worker computes) and its parameters (``params``: those the
    label shows, named as in :data:`gclib.schemes.PARAMS`)."""

    family: "Family"
    space: Space
    r: int
    load: int
    params: dict

    @property
    def label(self) -> str:
        """Its label: the family's template, the load shown where the search runs over loads (the advice)."""
        return self.family.label_of(self.params, None if self.space.exhaustive else self.r)

    @property
    def parameters(self) -> dict:
        """The parameters of :func:`gclib.schemes.build` that build it, in the order of
        :data:`gclib.schemes.PARAMS`, those at their default left out (the options of ``gclib run``)."""
        return self.family.parameters(self.space.K, self.r, self.params)

    def build(self):
        """Its code (:func:`gclib.schemes.build`)."""
        return schemes.build(self.family.scheme, **self.parameters, **self.family.fixed)

    def schedule(self):
        """What the simulator reads of it (:func:`gclib.schemes.simulable`), without its encoding matrix."""
        return schemes.simulable(self.family.scheme, **self.parameters, **self.family.fixed)

    def spec(self) -> shared_draws.Spec:
        """What :mod:`gclib.shared_draws` reads of it."""
        return self.family.spec(self.space.K, self.r, self.load, self.params)

    def candidate(self, *, advice: bool = False) -> Candidate:
        """Its :class:`Candidate`: with ``advice``, what the advice reads of it too (its load, the scheme and the
        options of ``gclib run`` that run it when its family runs over MPI, and its :meth:`spec`)."""
        f = self.family
        if not advice:
            return Candidate(f.name, self.label, self.params, self.build, self.schedule)
        return Candidate(f.name, self.label, self.params, self.build, self.schedule, load=self.load,
                         scheme=f.scheme if f.runnable else None, options=self.parameters if f.runnable else {},
                         spec=self.spec(), run=dict(f.run) if f.runnable else {})


@dataclass(frozen=True)
class Family:
    """A family of designs.

    Attributes:
        name: the family's name (in the searches' tables; the name of its scheme).
        scheme: the scheme of :data:`gclib.schemes.SCHEMES` that builds it.
        points: ``points(space, r)``: its candidates at load ``r`` of ``space``, as ``(key, load, params)``:
            ``key`` the value of its ``loop`` (below), ``load`` its computation load, ``params`` its parameters.
        label: the template of its label (:meth:`str.format` of the parameters; ``{r}`` is ``" r=<load>"``
            where the search runs over loads, else empty).
        spec: ``spec(K, r, load, params)``: what :mod:`gclib.shared_draws` reads of a candidate.
        loop: what its candidates run over (``"load"``, ``"comm"``, ``"clusters"``) when the next or previous
            family of a search runs over the same: their candidates are then interleaved, value by value of
            ``key`` (e.g. GC and UC-MMC cluster count by cluster count); ``None``: never interleaved.
        runnable: whether ``gclib run`` can run it over MPI (LCC is a simulator stand-in).
        baseline: a baseline of the design search (left out with ``baselines=False``).
        fixed: parameters of its constructor the builds always pass (not options of ``gclib run``).
        searches: the searches that include it (:data:`SEARCHES`).
        run: options of ``gclib run`` beyond the scheme's parameters that run it as the searches charge it (the
            partial-straggler protocol's ``{"exchange": "two-phase"}``).
    """

    name: str
    scheme: str
    points: Callable[[Space, int], Iterable[tuple]]
    label: str
    spec: Callable[[int, int, int, dict], shared_draws.Spec]
    loop: str | None = None
    runnable: bool = True
    baseline: bool = False
    fixed: dict = field(default_factory=dict)
    searches: tuple = SEARCHES
    run: dict = field(default_factory=dict)

    def label_of(self, params: dict, r: int | None = None) -> str:
        """The label of a design of the family (``r``: the search's load, shown where the search runs over loads;
        ``None``: not shown)."""
        p = {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in params.items()}
        try:
            return self.label.format(r="" if r is None else f" r={r}", **p)
        except KeyError as e:
            raise ValueError(f"a {self.name} design needs the parameter {e.args[0]!r}, got {sorted(params)}") \
                from None

    def parameters(self, K: int, r: int, params: dict) -> dict:
        """The parameters of its scheme for a design at load ``r`` with ``params``: ``workers``, ``load`` (the
        design's or ``r``), ``stragglers`` (one less than the load, unless given) and ``params``, those the scheme
        reads, in the order of :data:`gclib.schemes.PARAMS`, those at their default left out."""
        load = params.get("load", r)
        given = {"workers": K, "load": load, "stragglers": load - 1, **params}
        args = schemes.SCHEMES[self.scheme].args
        return {p: list(given[p]) if isinstance(given[p], tuple) else given[p] for p, spec in schemes.PARAMS.items()
                if p in args and p in given and given[p] != spec.default}


# ------------------------------------------------------------------------------------------------ the families
def _uncoded(sp, r):
    if r == 1 and not sp.exhaustive:
        yield 1, 1, {}


def _tandon(divides: bool):
    """The points of CRC, RS (``divides`` False) and FRC (the load must divide ``K``): the design search tries
    every load up to its own, the advice its current one."""
    def points(sp, r):
        if not sp.coded(r):
            return
        for rr in (range(1, r + 1) if sp.exhaustive else [r]):
            if not divides or sp.K % rr == 0:
                yield rr, rr, {"load": rr}
    return points


def _comm_efficient(divides: bool):
    """The points of Ye-Abbe's (``divides`` False) and Kadhe et al.'s codes at load ``r = s + m``: every ``m``
    of the grid from ``r`` down (``s`` up)."""
    def points(sp, r):
        if not sp.coded(r) or (divides and sp.K % r):
            return
        for m in reversed(grid(2, r)):
            yield r - m, r, {"stragglers": r - m, "comm": m}
    return points


def _gc(sp, r):
    if sp.coded(r):
        for P in sp.cluster_counts(r):
            if P > 1 or sp.exhaustive:  # the advice's one cluster is CRC
                yield P, r, {"clusters": P}


def _uc_mmc(sp, r):
    if sp.coded(r):
        for P in sp.cluster_counts(r):
            yield P, r, {"clusters": P}


def _rmg(sp, r):
    # one cluster, the natural order of the cyclic assignment; a design of its own only where messages cost time
    if sp.comm and sp.coded(r) and not sp.exhaustive:
        yield 1, r, {"ordering": "cyclic"}


def _correlated(sp, r):
    # the advice leaves out m = 1 (UC-MMC) and m = r (plain GC)
    orders = sp.orders(r) if sp.exhaustive else grid(2, r - 1)
    for P in sp.cluster_counts(r):
        for m in orders:
            yield P, r, {"order": m, "clusters": P}


def _vectors(sp, r, every: bool) -> list:
    """Order vectors at load ``r``. ``every``: every vector of ``1 .. max_orders`` orders of the grid (the design
    search's uncorrelated design). Else vectors that end at ``r``: in the design search, ``0 .. max_orders - 1``
    orders of the grid below ``r`` before it (the hybrid); in the advice, ``1 .. max_orders - 1`` (one order is
    plain GC or a lighter load, and a largest order below ``r`` the same design at a lower load)."""
    if every:
        return [o for n in range(1, sp.max_orders + 1) for o in combinations(sp.orders(r), n)]
    below = [m for m in sp.orders(r) if m < r] if sp.exhaustive else grid(1, r - 1)
    return [tuple(b) + (r,) for n in range(0 if sp.exhaustive else 1, sp.max_orders) for b in combinations(below, n)]


def _uncorrelated(sp, r):
    vectors = _vectors(sp, r, every=sp.exhaustive)
    for P in sp.cluster_counts(r):
        for o in vectors:
            yield P, r, {"orders": list(o), "clusters": P}


def _hybrid(sp, r):
    if sp.K % r or (not sp.exhaustive and r >= sp.K):
        return
    for o in _vectors(sp, r, every=False):
        yield None, r, {"orders": list(o), "clusters": sp.K // r}


def _lcc(sp, r):
    try:
        sch = code_schedules.lcc(sp.K, r)
    except ValueError:  # too few workers for its threshold
        return
    yield None, int(sch.load), {}


def _lcc_spec(K, r, load, p):
    return shared_draws.single(K, load, lcc_threshold(-(-K // r)))


CHEBYSHEV = {"points": "chebyshev"}  # the constructors' own default, not the registry's

#: Every family, in the order the advice builds them (ties in its ranking keep this order).
FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("uncoded", "uncoded", _uncoded, "uncoded", lambda K, r, load, p: shared_draws.single(K, 1, K), loop="load",
           searches=("advise",)),
    Family("crc", "crc", _tandon(False), "crc r={load}", lambda K, r, load, p: shared_draws.gc(K, load), loop="load",
           searches=("advise",)),
    Family("frc", "frc", _tandon(True), "frc r={load}",
           lambda K, r, load, p: shared_draws.single(K, load, 1, groups=load), loop="load", baseline=True),
    Family("rs", "rs", _tandon(False), "rs r={load}", lambda K, r, load, p: shared_draws.gc(K, load), loop="load",
           baseline=True),
    Family("ye-abbe", "ye-abbe", _comm_efficient(False), "ye-abbe s={stragglers} m={comm}",
           lambda K, r, load, p: shared_draws.single(K, load, K - p["stragglers"], size=1 / p["comm"]), loop="comm",
           searches=("advise",)),
    Family("kadhe", "kadhe", _comm_efficient(True), "kadhe s={stragglers} m={comm}",
           lambda K, r, load, p: shared_draws.single(K, load, p["comm"], groups=load, size=1 / p["comm"]), loop="comm",
           searches=("advise",)),
    Family("gc", "gc", _gc, "gc{r} P={clusters}", lambda K, r, load, p: shared_draws.gc(K, r, p["clusters"]),
           loop="clusters", baseline=True),
    Family("uc-mmc", "uc-mmc", _uc_mmc, "uc-mmc{r} P={clusters}",
           lambda K, r, load, p: shared_draws.correlated(K, r, 1, p["clusters"]), loop="clusters", baseline=True),
    Family("rmg", "rmg", _rmg, "rmg{r}", lambda K, r, load, p: shared_draws.rmg(K, load), loop="clusters",
           searches=("advise",), run={"exchange": "two-phase"}),
    Family("gc-mmc-correlated", "gc-mmc-correlated", _correlated, "corr{r} m={order} P={clusters}",
           lambda K, r, load, p: shared_draws.correlated(K, r, p["order"], p["clusters"]), loop="clusters"),
    Family("gc-mmc-uncorrelated", "gc-mmc-uncorrelated", _uncorrelated, "unc{r} {orders} P={clusters}",
           lambda K, r, load, p: shared_draws.uncorrelated(K, r, p["orders"], p["clusters"]), loop="clusters",
           fixed=CHEBYSHEV),
    Family("hybrid", "hybrid", _hybrid, "hybrid{r} {orders}",
           lambda K, r, load, p: shared_draws.hybrid(K, r, p["orders"]), fixed=CHEBYSHEV),
    Family("lcc", "lcc", _lcc, "lcc{r}", _lcc_spec, runnable=False, baseline=True),
]}


def names(search: str) -> tuple:
    """The families of ``search``, in the order it builds them (:data:`FIRST`, then the table's order)."""
    checks.choice("search", search, SEARCHES)
    first = [n for n in FIRST.get(search, ()) if n in FAMILIES and search in FAMILIES[n].searches]
    rest = [n for n, f in FAMILIES.items() if search in f.searches and n not in first]
    return tuple(first + rest)


def _groups(families: list) -> list:
    """``families`` in runs of neighbours that share a ``loop`` (a family without one alone)."""
    out = []
    for f in families:
        if out and f.loop is not None and out[-1][-1].loop == f.loop:
            out[-1].append(f)
        else:
            out.append([f])
    return out


def points(space: Space) -> Iterator[Point]:
    """Every candidate of ``space``, load by load of ``space.loads``, family by family in the search's order
    (:func:`names`), the candidates of neighbouring families of one ``loop`` interleaved value by value."""
    fams = [FAMILIES[n] for n in names(space.search)]
    fams = [f for f in fams if space.baselines or not f.baseline]
    groups = _groups(fams)
    for r in space.loads:
        for group in groups:
            made = [((key, i), load, params) for i, f in enumerate(group) for key, load, params in f.points(space, r)]
            if len(group) > 1:
                made.sort(key=lambda x: x[0])  # stable: a family's candidates of one key keep their order
            for (_, i), load, params in made:
                yield Point(group[i], space, r, load, params)
