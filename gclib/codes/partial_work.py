"""Gradient coding that uses the partial work of stragglers, reconstructed after Ramamoorthy, Meng and Girimaji,
"Leveraging partial stragglers within gradient coding" (NeurIPS 2024, arXiv 2405.19509).

Only the paper's abstract and a public summary were available; what follows is our reconstruction of it
(``docs/papers.md`` says what is read from where).

* **Assignment.** ``N = n`` chunks (parts), worker ``i`` holds ``l`` of them and every chunk is held by ``l``
  workers: an ``l``-regular bipartite worker-chunk graph. The default is the cyclic one (worker ``i`` holds
  ``i, ..., i + l - 1`` mod ``n``); any ``l``-regular assignment is accepted (:func:`check_assignment`).
* **Ordering.** Worker ``i`` computes its chunks in a fixed order (a permutation of its ``l`` chunks) and reports
  its progress after each one (a few bytes).
* **Exact recovery.** Once the finished chunks cover all ``N``, the server picks, for every chunk, one worker
  that finished it (:func:`decode_plan`) and tells each picked worker which of its finished chunks to add; each
  picked worker uploads one vector, the 0/1 sum of its picked chunks, and the server adds them. No matrix is
  inverted: the decode is exact in floating point up to the rounding of the sums.
* **Approximate recovery** at a deadline: the chunks nobody has finished are missing and the sum of the covered
  chunks is the estimate (not rescaled: for zero-mean chunk gradients of equal variance, the least-squares
  choice; :func:`coverage_mse`).
* **Ordering quality.** ``Q_max`` (:func:`q_max`): the worst case, over the interleavings of the workers, of
  the chunk computations the whole cluster has performed when every chunk has been processed at least once.
  A chunk ``c`` stays uncovered while every holder ``i`` of ``c`` is at most at position ``pos_i(c)`` (0-based)
  of its order; the others may be done. So ``Q_max = 1 + max_c [sum_{i holds c} pos_i(c) + sum_{i not} l]``.
  Averaged over the chunks, the first sum is ``l (l - 1) / 2`` (every worker puts one chunk at each position),
  hence ``Q_max >= 1 + (n - l) l + l (l - 1) / 2`` (:func:`q_max_bound`), with equality iff every chunk's
  positions sum to ``l (l - 1) / 2``. An ``l``-regular bipartite graph is the union of ``l`` perfect matchings
  (Koenig); putting matching ``j`` at position ``j`` (:func:`optimal_order`) puts every chunk at every position
  exactly once, which meets the bound, in polynomial time.

In the one data model (:mod:`gclib.codes.base`) the scheme is a code whose messages are the chunk gradients
themselves (unit rows): worker ``w``'s ``j``-th message is its ``j``-th chunk, ready after ``j + 1`` chunks, so
that :meth:`GradientCode.is_decodable` is the oracle, the fast rule is coverage (one message of every chunk), and
the simulator and the MPI runtime run it unchanged. By default the MPI run sends every chunk's gradient as it is
computed (as UC-MMC does); with ``RunSpec.exchange = "two-phase"`` (``gclib run --exchange two-phase``) it runs the
two-phase exchange itself (progress reports, the master's picks, then one vector per picked worker;
:mod:`gclib.runtime.two_phase`), whose communication at a progress state :func:`protocol_cost` counts.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations, product
from math import factorial

import numpy as np

from gclib import checks
from gclib.codes.base import DecodingError, Decoder, GradientCode, reserve_code
from gclib.codes.rules import ThresholdRule
from gclib.codes.repetition import cyclic_support

#: The orderings :func:`rmg` knows.
ORDERINGS = ("optimal", "cyclic", "random")


# ---------------------------------------------------------------------------------------------- assignments
def cyclic_assignment(n: int, l: int) -> list:
    """Worker ``i`` holds chunks ``i, i+1, ..., i+l-1`` (mod ``n``), listed in that (natural) order."""
    n = checks.integer("workers", n, low=1)
    l = checks.integer("load", l, low=1, high=n, why=f" for {n} workers")
    return cyclic_support(n, l - 1)


def check_assignment(assignment, n_parts: int | None = None) -> tuple:
    """An ``l``-regular worker-chunk assignment as a tuple of tuples; ValueError unless every worker holds ``l``
    distinct chunks of ``[0, N)`` (``N`` = ``n_parts``, default the number of workers) and every chunk is held by
    ``l`` workers."""
    try:
        rows = [tuple(int(c) for c in a) for a in assignment]
    except (TypeError, ValueError):
        raise checks.ParameterTypeError(f"assignment must list the chunk ids of every worker, got {assignment!r}") \
            from None
    if not rows:
        raise ValueError("assignment must list at least one worker")
    N = len(rows) if n_parts is None else checks.integer("n_parts", n_parts, low=1)
    l = len(rows[0])
    for i, a in enumerate(rows):
        if len(a) != l or len(set(a)) != l:
            raise ValueError(f"assignment[{i}] must hold {l} distinct chunks (every worker the same load), got {a}")
        if min(a) < 0 or max(a) >= N:
            raise ValueError(f"assignment[{i}] must hold chunk ids in [0, {N}), got {a}")
    deg = np.bincount([c for a in rows for c in a], minlength=N)
    if not np.all(deg == deg[0]):
        raise ValueError(f"assignment must give every chunk to the same number of workers, got {deg.tolist()}")
    return tuple(rows)


def random_assignment(n: int, l: int, seed=0, tries: int = 10_000) -> list:
    """A random ``l``-regular assignment of ``n`` chunks to ``n`` workers: ``l`` random permutations whose
    matchings share no edge (drawn again until they do not), each worker's chunks listed in sorted order."""
    n = checks.integer("workers", n, low=1)
    l = checks.integer("load", l, low=1, high=n, why=f" for {n} workers")
    rng = checks.generator(seed)
    for _ in range(tries):
        perms = [rng.permutation(n) for _ in range(l)]
        rows = [sorted(int(p[i]) for p in perms) for i in range(n)]
        if all(len(set(r)) == l for r in rows):
            return [tuple(r) for r in rows]
    raise ValueError(f"no {l}-regular assignment of {n} chunks found in {tries} draws; use the cyclic one")


# ---------------------------------------------------------------------------------------------- orderings
def _augment(adj: list, owner: list, root: int) -> bool:
    """One augmenting-path search from worker ``root`` (depth first, chunks tried in increasing order), with an
    explicit stack instead of recursion; on success ``owner`` (chunk -> worker) is updated along the path."""
    seen = set()
    stack = [[root, sorted(adj[root]), 0]]  # worker, its chunks, index of the chunk tried next
    while stack:
        frame = stack[-1]
        w, chunks, i = frame
        while i < len(chunks) and chunks[i] in seen:
            i += 1
        if i == len(chunks):  # no augmenting path through w: back to the worker that reached it
            stack.pop()
            if stack:
                stack[-1][2] += 1
            continue
        frame[2] = i
        c = chunks[i]
        seen.add(c)
        if owner[c] < 0:  # a free chunk: every worker on the stack takes the chunk it tried
            for fw, fchunks, fi in stack:
                owner[fchunks[fi]] = fw
            return True
        stack.append([owner[c], sorted(adj[owner[c]]), 0])
    return False


def _perfect_matching(adj: list, n: int) -> list:
    """A perfect matching of the bipartite graph ``adj`` (worker -> set of chunks), by augmenting paths (Kuhn,
    iterative: no recursion limit for large ``n``); returns ``match[w]`` the chunk of worker ``w``. A regular
    bipartite graph always has one (Hall)."""
    owner = [-1] * n  # chunk -> worker
    for w in range(n):
        if not _augment(adj, owner, w):  # pragma: no cover - impossible for a regular bipartite graph
            raise ValueError("the assignment has no perfect matching (it is not regular)")
    match = [-1] * n
    for c, w in enumerate(owner):
        match[w] = c
    return match


def optimal_order(assignment) -> list:
    """An ordering that minimizes :func:`q_max`: the ``l``-regular worker-chunk graph split into ``l`` perfect
    matchings (one found, removed, the rest is ``(l-1)``-regular, and so on); worker ``i`` computes its chunk of
    matching ``j`` at position ``j``. Every chunk is then at every position exactly once among its holders."""
    rows = check_assignment(assignment)
    n = len(rows)
    if len(set().union(*map(set, rows))) != n:
        raise ValueError("optimal_order needs as many chunks as workers (N = n)")
    adj = [set(a) for a in rows]
    order = [[] for _ in range(n)]
    for _ in range(len(rows[0])):
        match = _perfect_matching(adj, n)
        for w, c in enumerate(match):
            order[w].append(c)
            adj[w].discard(c)
    return [tuple(o) for o in order]


def make_order(assignment, ordering: str = "optimal", seed=0) -> list:
    """The computation order of every worker: ``"optimal"`` (:func:`optimal_order`), ``"cyclic"`` (the order the
    assignment lists, for the cyclic assignment ``i, i+1, ...``) or ``"random"`` (a random permutation per worker,
    from ``seed``)."""
    rows = check_assignment(assignment)
    checks.choice("ordering", ordering, ORDERINGS)
    if ordering == "optimal":
        return optimal_order(rows)
    if ordering == "cyclic":
        return [tuple(a) for a in rows]
    rng = checks.generator(seed)
    return [tuple(int(c) for c in rng.permutation(np.array(a))) for a in rows]


def positions(order, n_parts: int | None = None) -> np.ndarray:
    """``(n_workers, N)`` 0-based position of each chunk in each worker's order; ``-1`` where not held."""
    rows = check_assignment(order, n_parts)
    N = len(rows) if n_parts is None else n_parts
    pos = np.full((len(rows), N), -1, dtype=np.int64)
    for w, o in enumerate(rows):
        pos[w, list(o)] = np.arange(len(o))
    return pos


def q_max(order, n_parts: int | None = None) -> int:
    """Worst-case chunk computations of the cluster until every chunk is processed at least once (see the
    module docstring): ``1 + max_c [sum_{i holds c} pos_i(c) + sum_{i does not} len(order_i)]``."""
    pos = positions(order, n_parts)
    lengths = np.array([len(o) for o in order])
    held = pos >= 0
    per_chunk = np.where(held, pos, lengths[:, None]).sum(axis=0)
    return int(1 + per_chunk.max())


def q_max_bound(n: int, l: int) -> int:
    """The lower bound of :func:`q_max` over orderings of an ``l``-regular assignment with ``N = n``:
    ``1 + (n - l) l + l (l - 1) / 2`` (met by :func:`optimal_order`)."""
    n = checks.integer("workers", n, low=1)
    l = checks.integer("load", l, low=1, high=n)
    return 1 + (n - l) * l + l * (l - 1) // 2


def min_q_max_exhaustive(assignment, n_parts: int | None = None, limit: int = 2_000_000) -> tuple:
    """``(min Q_max, orderings tried)`` over every ordering of ``assignment`` (``(l!)^n`` of them; small cases,
    at most ``limit``): the per-chunk sums of :func:`q_max` for every combination of the workers' permutations,
    built worker by worker."""
    rows = check_assignment(assignment, n_parts)
    N = len(rows) if n_parts is None else n_parts
    l = len(rows[0])
    total = factorial(l) ** len(rows)
    if total > limit:
        raise ValueError(f"{total} orderings exceed limit = {limit}; choose fewer workers or a lower load")
    sums = np.zeros((1, N), dtype=np.int64)
    for a in rows:
        opts = np.full((factorial(l), N), l, dtype=np.int64)
        for i, perm in enumerate(permutations(a)):
            opts[i, list(perm)] = np.arange(l)
        sums = (sums[:, None, :] + opts[None, :, :]).reshape(-1, N)
    return int(1 + sums.max(axis=1).min()), int(sums.shape[0])


# ---------------------------------------------------------------------------------------------- recovery
def finished(order, progress) -> list:
    """The chunks each worker has finished: the first ``progress[w]`` of ``order[w]``."""
    return [tuple(o[: int(k)]) for o, k in zip(order, progress)]


def covers(order, progress, n_parts: int | None = None) -> bool:
    """The fast rule: the finished chunks cover every chunk."""
    N = len(order) if n_parts is None else n_parts
    done = set()
    for o, k in zip(order, progress):
        done.update(o[: int(k)])
    return len(done) == N


def decode_plan(order, progress, n_parts: int | None = None) -> dict:
    """The server's picks for exact recovery: ``{worker: chunks it adds}``, every chunk exactly once, each from a
    worker that finished it. Greedy set cover: the worker with the most finished chunks not yet picked goes first
    (ties: lowest id), so few workers upload. DecodingError when the finished chunks miss a chunk."""
    N = len(order) if n_parts is None else n_parts
    fin = finished(order, progress)
    done = [set(f) for f in fin]
    left = set(range(N))
    plan = {}
    while left:
        gain = [len(d & left) for d in done]
        w = int(np.argmax(gain))
        if gain[w] == 0:
            raise DecodingError(f"chunks {sorted(left)} are finished by no worker: no exact recovery yet")
        plan[w] = tuple(c for c in fin[w] if c in left)  # (only chunks it finished)
        left -= done[w]
    return dict(sorted(plan.items()))


@dataclass(frozen=True)
class ProtocolCost:
    """The communication of one exact recovery by the two-phase protocol.

    Attributes:
        vectors: gradient-sized vectors uploaded (one per picked worker).
        reports: progress reports (one small integer per chunk finished by the time of recovery).
        instructions: scalars the server sends (each picked worker: the chunk ids it adds, at most ``l``).
    """

    vectors: int
    reports: int
    instructions: int


def protocol_cost(order, progress, n_parts: int | None = None) -> ProtocolCost:
    """The communication of the exact recovery at this progress state (:class:`ProtocolCost`)."""
    plan = decode_plan(order, progress, n_parts)
    return ProtocolCost(vectors=len(plan), reports=int(sum(int(k) for k in progress)),
                        instructions=int(sum(len(v) for v in plan.values())))


def coverage_mse(order, progress, n_parts: int | None = None) -> float:
    """Normalized error ``|a B_R - 1|^2 / N`` of the approximate recovery (the sum of the covered chunks): the
    fraction of chunks nobody has finished. For chunk gradients that are independent, zero-mean and of unit
    variance it is the expected squared error of the estimate, divided by ``N``."""
    N = len(order) if n_parts is None else n_parts
    done = set()
    for f in finished(order, progress):
        done.update(f)
    return (N - len(done)) / N


def lstsq_mse(B_R: np.ndarray, n_parts: int) -> float:
    """Normalized error ``min_a |a B_R - 1|^2 / N`` of the least-squares decode of the received rows ``B_R``
    (``(rows, N)``; no row: 1)."""
    B_R = np.asarray(B_R, dtype=float)
    ones = np.ones(n_parts)
    if B_R.shape[0] == 0:
        return 1.0
    a, *_ = np.linalg.lstsq(B_R.T, ones, rcond=None)
    r = a @ B_R - ones
    return float(r @ r) / n_parts


# ---------------------------------------------------------------------------------------------- the code
@dataclass(frozen=True)
class CoverDecoder(Decoder):
    """The 0/1 decode of :func:`rmg`: every chunk taken once from a received copy of it (:func:`decode_plan` on
    the received messages), no inversion. Attributes: ``chunk``: ``(n_messages,)`` the chunk of every message."""

    chunk: tuple = ()

    def __call__(self, code: GradientCode, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        per_worker = {}
        for j in idx.tolist():
            per_worker.setdefault(int(code.sender[j]), []).append(j)
        workers = sorted(per_worker)
        got = [tuple(self.chunk[j] for j in per_worker[w]) for w in workers]
        plan = decode_plan(got, [len(g) for g in got], code.n_parts)
        use = set()
        for wi, chunks in plan.items():
            msgs = per_worker[workers[wi]]
            use.update(m for m in msgs if self.chunk[m] in chunks)
        return np.array([[1.0 if j in use else 0.0 for j in idx.tolist()]])


def coverage_rule(chunk, n_parts: int) -> ThresholdRule:
    """The fast rule: messages of one chunk are one class, and all ``n_parts`` classes are needed, in one cluster
    (the rule of UC-MMC's schedule, :func:`gclib.code_schedules.correlated` with order 1)."""
    chunk = np.asarray(chunk, dtype=np.int64)
    return ThresholdRule(chunk, np.zeros(n_parts, dtype=np.int64), np.array([n_parts]))


def rmg(workers: int, load: int, ordering: str = "optimal", seed=0, assignment=None) -> GradientCode:
    """The reconstructed scheme of Ramamoorthy, Meng and Girimaji as a code (see the module docstring).

    Args:
        workers: ``n`` workers and ``N = n`` chunks. load: ``l`` chunks per worker, ``1 <= l <= n``.
        ordering: ``"optimal"``, ``"cyclic"`` or ``"random"`` (:func:`make_order`). seed: of a random ordering.
        assignment: an ``l``-regular assignment (default: the cyclic one).
    Returns:
        A code with ``n l`` unit-row messages (row ``w l + j``: worker ``w``'s ``j``-th chunk, ready after
        ``j + 1`` chunks), the coverage rule (:func:`coverage_rule`), ``s = l - 1``, the 0/1 :class:`CoverDecoder`.
    """
    n = checks.integer("workers", workers, low=1)
    l = checks.integer("load", load, low=1, high=n, why=f" for {n} workers")
    checks.choice("ordering", ordering, ORDERINGS)
    reserve_code("rmg", n * l, n, workers=n, load=l, sizes=f"workers = {n}, load = {l}", lower="workers or load")
    rows = cyclic_assignment(n, l) if assignment is None else check_assignment(assignment, n)
    if len(rows) != n or len(rows[0]) != l:
        raise ValueError(f"assignment must list {n} workers of {l} chunks, got {len(rows)} of {len(rows[0])}")
    order = make_order(rows, ordering, seed)
    chunk = np.array([c for o in order for c in o], dtype=np.int64)
    B = np.zeros((n * l, n))
    B[np.arange(n * l), chunk] = 1.0
    return GradientCode(name="rmg", n_workers=n, n_parts=n, order=tuple(order), B=B,
                        sender=np.repeat(np.arange(n), l), ready=np.tile(np.arange(1, l + 1), n),
                        rule=coverage_rule(chunk, n), stragglers=l - 1, decoder=CoverDecoder(tuple(chunk.tolist())),
                        params={"workers": n, "load": l, "ordering": ordering, "seed": int(seed) if
                                checks.is_integer(seed) else None, "q_max": q_max(order, n)})


def progress_states(order) -> list:
    """Every progress state (chunks done per worker) of ``order``: ``prod (l_i + 1)`` tuples."""
    return list(product(*[range(len(o) + 1) for o in order]))


def received_of(code: GradientCode, progress) -> np.ndarray:
    """The message ids of ``code`` (from :func:`rmg`) received at a progress state: the first ``progress[w]`` of
    every worker's."""
    return np.flatnonzero(code.ready <= np.asarray(progress)[code.sender])

