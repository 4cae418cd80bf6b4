"""The one data model every scheme of gclib is written in.

A gradient code is plain data:

* the data set is split into ``n_parts`` parts; worker ``w`` computes the partial gradients of the parts
  ``order[w]``, in that order;
* each partial gradient may be cut into ``n_pieces`` pieces (communication-efficient codes); the columns of the
  encoding matrix are then indexed by ``part * n_pieces + piece``;
* the code is a list of messages: message ``j`` is sent by worker ``sender[j]`` as soon as it has computed
  ``ready[j]`` partial gradients, and it is the linear combination ``B[j] @ G`` of the stacked pieces ``G``
  (``(n_parts * n_pieces, length / n_pieces)``);
* decoding a received set ``R`` means finding ``A`` with ``A @ B[R] = target``; ``target`` is the all-ones row
  for ``n_pieces == 1`` and, for ``n_pieces = m``, the ``m`` rows selecting each piece of every part.

The exact test "is the target in the row span of ``B[R]``" (:meth:`GradientCode.is_decodable`) is the oracle.
Each family supplies a fast rule (:mod:`gclib.codes.rules`) for the simulator, and optionally a
:class:`Decoder`: its fast decoder and whatever else it knows about receiving and decoding its codes (which
messages a straggler still delivers, its evaluation points, the rank of a decodable set), as typed fields; the
tests check rules and decoders against the oracle.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Callable, Optional, Sequence

import numpy as np

from gclib import checks
from gclib.codes.conditioning import (
    COND_WARN, IllConditionedWarning, amplification_threshold, decoding_amplification, unit_roundoff,
    working_dtype)


def load_sympy():
    """SymPy, imported on first use: the codes' exact (rational) forms need it, and ``import gclib``, which loads every
    construction, would take about twice as long if they imported it at their top (``python -m
    benchmarks.bench_startup``). The one place the codes import it."""
    import sympy

    return sympy


class DecodingError(ValueError):
    """The received set of messages does not determine the gradient."""


def _as_ids(a: np.ndarray, name: str, what: str) -> np.ndarray:
    """``a`` flattened to ``int64`` ids; ValueError naming ``name`` if any entry is not an integer (floats with a
    fractional part, NaN, strings) instead of truncating it silently."""
    floats_ok = np.issubdtype(a.dtype, np.floating) and bool(np.all(np.abs(a) < 2.0 ** 63))  # NaN, inf fail
    integral = np.issubdtype(a.dtype, np.integer) or (floats_ok and bool(np.all(np.mod(a, 1) == 0)))
    if a.size and not integral:
        raise ValueError(f"{name} must be integer {what}, got {a.ravel().tolist()}")
    return a.astype(np.int64).ravel()


def reserve_code(name: str, messages, columns, *, workers, load=1, complex_: bool = False, exact: bool = False,
                 sizes: str, lower: str) -> None:
    """Refuse to build a code whose arrays would not fit the memory budget (:func:`gclib.checks.need_memory`).

    The estimate, from the sizes alone and before anything is allocated: the dense ``(messages, columns)``
    encoding matrix three times over (it is built, converted and checked), SymPy's exact matrix when ``exact``
    (about 100 bytes per entry), and the workers' computation orders (``workers * load`` part ids).
    """
    messages, columns, workers, load = (int(x) for x in (messages, columns, workers, load))  # no int64 overflow
    exact_bytes = 100 * messages * columns if exact else 0  # SymPy's exact matrix
    nbytes = matrix_bytes(messages, columns, complex_) + exact_bytes + 40 * workers * load
    checks.need_memory(name, nbytes, sizes=sizes, lower=lower)


def matrix_bytes(messages, columns, complex_: bool = False) -> int:
    """The memory of a code's dense ``(messages, columns)`` encoding matrix while it is built: three copies (it is
    built, converted and checked), of complex entries for a complex code."""
    return 3 * (16 if complex_ else 8) * int(messages) * int(columns)


@dataclass(frozen=True)
class Decoder:
    """How a family's codes are received and decoded: what the family knows beyond ``B``.

    This base class is the generic behaviour: least-squares decoding (:func:`lstsq_decode`), a straggler sends
    none of its messages, no evaluation points, the rank of a decodable set unknown. A family that knows more
    subclasses it as a frozen dataclass whose fields hold its data (typed, documented, public), and overrides
    what differs. Decoders travel inside the code to the MPI ranks, so they must pickle: module-level classes
    whose fields pickle. A decoder keeps no mutable state; a caller that decodes the same set often caches the
    coefficients itself.

    Attributes:
        points: ``(n_messages,)`` evaluation point of every message (polynomial codes), else ``None``.
        decodable_rank: the rank every decodable received set has (the number of independent rows a decode
            uses), else ``None``.
        counts_copies: ``True`` when every message received counts as such, so that two copies of one content
            decode otherwise than one (a fixed-weight sum, :class:`gclib.codes.approximate.ScaledSum`); the MPI
            master then decodes every message received instead of one copy of each content.
    """

    points = None  # class defaults, not fields: a subclass that knows them declares them as fields
    decodable_rank = None
    counts_copies = False

    def __call__(self, code: "GradientCode", idx: np.ndarray) -> np.ndarray:
        """``(n_pieces, len(idx))`` coefficients ``A`` with ``A @ B[idx] ~ target``; :class:`DecodingError` when
        the family's decoder cannot decode ``idx``."""
        return lstsq_decode(code, idx)

    def surviving(self, code: "GradientCode", stragglers: np.ndarray) -> np.ndarray:
        """Message ids received when the workers ``stragglers`` (validated ids) straggle: none of theirs."""
        return np.flatnonzero(~np.isin(code.sender, stragglers))


@dataclass(frozen=True)
class FunctionDecoder(Decoder):
    """A decoder given as a plain function ``fn(code, idx) -> A``, with the generic behaviour otherwise."""

    fn: Callable

    def __call__(self, code: "GradientCode", idx: np.ndarray) -> np.ndarray:
        return self.fn(code, idx)


@dataclass(frozen=True)
class LastMessageLost(Decoder):
    """Least-squares decoding for codes whose stragglers are partial: a straggler sends every message but its
    last one (Tandon et al.'s scheme for partial stragglers, :func:`gclib.codes.partial_stragglers`)."""

    def surviving(self, code: "GradientCode", stragglers: np.ndarray) -> np.ndarray:
        drop = [int(code.messages_of(w)[-1]) for w in stragglers]
        return np.setdiff1d(np.arange(code.n_messages), drop)


def _family_decoder(decoder, params) -> Decoder:
    """The code's :class:`Decoder` (a plain function wrapped, the generic one for ``None``), after checking that
    ``params`` hold no private keys: a family's data belongs in its decoder's fields."""
    if not isinstance(params, dict):
        raise checks.ParameterTypeError(f"params must be a dict, got {type(params).__name__}")
    private = sorted(str(k) for k in params if str(k).startswith("_"))
    if private:
        raise ValueError(f"params are public construction parameters; family data belongs in the decoder's "
                         f"fields, got private keys {private}")
    if decoder is None:
        return Decoder()
    if isinstance(decoder, Decoder):
        return decoder
    if not callable(decoder):
        raise checks.ParameterTypeError(f"decoder must be a Decoder or a function (code, received) -> A, got "
                                        f"{decoder!r}")
    return FunctionDecoder(decoder)


@dataclass(frozen=True, eq=False)
class GradientCode:
    """A gradient code as data (see the module docstring).

    Attributes:
        name: scheme name, e.g. ``"crc"``.
        n_workers: number of workers ``n``.
        n_parts: number of data parts ``k``.
        order: per worker, the tuple of parts it computes, in computation order.
        B: ``(n_messages, n_parts * n_pieces)`` encoding matrix (float or complex).
        sender: ``(n_messages,)`` worker sending each message.
        ready: ``(n_messages,)`` partial gradients the sender must have computed before sending.
        rule: fast decodability rule over the messages.
        stragglers: worst-case number of stragglers tolerated (``s``).
        n_pieces: pieces per partial gradient (``m``; 1 for plain codes).
        exact: ``False`` for approximate schemes (ignore-stragglers), whose decode is not exact.
        size: ``(n_messages,)`` size of each message in gradient-length units (``1 / n_pieces``, twice that for
            complex messages).
        decoder: the family's :class:`Decoder` (a plain function ``decoder(code, received) -> A`` is wrapped in
            a :class:`FunctionDecoder`); the generic :class:`Decoder` (least squares) when not given.
        B_exact: optional exact (SymPy) encoding matrix, for exact verification.
        params: the construction parameters, for display and reproduction only: nothing reads them to decide
            how the code behaves (that is the decoder's business).
    """

    name: str
    n_workers: int
    n_parts: int
    order: tuple
    B: np.ndarray
    sender: np.ndarray
    ready: np.ndarray
    rule: Any
    stragglers: int
    n_pieces: int = 1
    exact: bool = True
    size: Optional[np.ndarray] = None
    decoder: Optional[Callable] = None  # a Decoder after construction
    B_exact: Any = None
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        n_workers = checks.integer("n_workers", self.n_workers, low=1)
        n_parts = checks.integer("n_parts", self.n_parts, low=1)
        n_pieces = checks.integer("n_pieces", self.n_pieces, low=1)
        checks.integer("stragglers", self.stragglers, low=0)
        B = checks.finite_array("B", self.B)
        if B.ndim != 2 or B.shape[1] != n_parts * n_pieces:
            raise ValueError(f"B must have shape (n_messages, n_parts * n_pieces) = (*, "
                             f"{n_parts * n_pieces}), got {B.shape}")
        try:
            order = list(self.order)
        except TypeError:
            raise checks.ParameterTypeError(f"order must list the parts of every worker, got {self.order!r}") \
                from None
        if len(order) != n_workers:
            raise ValueError(f"order must list {n_workers} workers, got {len(order)}")
        for w, o in enumerate(order):
            ids = _as_ids(np.asarray(list(o)), f"order[{w}]", "part ids")
            if ids.size and (ids.min() < 0 or ids.max() >= n_parts):
                raise ValueError(f"order[{w}] must hold part ids in [0, {n_parts}), got {ids.tolist()}")
            if np.unique(ids).size != ids.size:
                raise ValueError(f"order[{w}] must hold distinct part ids, got {ids.tolist()}")
            order[w] = tuple(ids.tolist())
        order = tuple(order)
        sender = _as_ids(np.asarray(self.sender), "sender", "worker ids")
        ready = _as_ids(np.asarray(self.ready), "ready", "counts of partial gradients")
        n_msg = B.shape[0]
        if sender.shape != (n_msg,) or ready.shape != (n_msg,):
            raise ValueError("sender and ready need one entry per message (row of B)")
        if n_msg and (sender.min() < 0 or sender.max() >= n_workers):
            raise ValueError(f"sender ids must lie in [0, {n_workers})")
        for j in range(n_msg):
            w = sender[j]
            if not 1 <= ready[j] <= len(order[w]):
                raise ValueError(f"message {j}: ready = {ready[j]} must lie in [1, {len(order[w])}] "
                                 f"(worker {w} computes {len(order[w])} parts)")
            # A message may only combine parts its sender has computed by then.
            done = set(order[w][: ready[j]])
            cols = np.flatnonzero(np.abs(B[j]) > 0) // n_pieces
            extra = set(cols.tolist()) - done
            if extra:
                raise ValueError(f"message {j} of worker {w} uses parts {sorted(extra)} not computed after "
                                 f"{ready[j]} steps (order {order[w]})")
        size = (np.full(n_msg, (2.0 if np.iscomplexobj(B) else 1.0) / self.n_pieces)
                if self.size is None else np.asarray(self.size, dtype=float))
        if size.shape != (n_msg,) or not np.all(np.isfinite(size) & (size >= 0)):
            raise ValueError(f"size must hold one non-negative message size per message ({n_msg}), got "
                             f"{np.asarray(size).tolist()}")
        for attr, v in (("n_workers", n_workers), ("n_parts", n_parts), ("n_pieces", n_pieces)):
            object.__setattr__(self, attr, v)
        object.__setattr__(self, "B", B)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "sender", sender)
        object.__setattr__(self, "ready", ready)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "decoder", _family_decoder(self.decoder, self.params))

    # ------------------------------------------------------------------ structure
    @property
    def n_messages(self) -> int:
        return int(self.B.shape[0])

    @property
    def load(self) -> int:
        """Computation load: the largest number of parts a worker computes."""
        return max(len(o) for o in self.order)

    @property
    def target(self) -> np.ndarray:
        """``(n_pieces, n_parts * n_pieces)``: row ``u`` sums piece ``u`` over all parts."""
        m = self.n_pieces
        return np.tile(np.eye(m), (1, self.n_parts))

    def messages_of(self, worker: int) -> np.ndarray:
        """Indices of the messages sent by ``worker``, in order of readiness."""
        idx = np.flatnonzero(self.sender == worker)
        return idx[np.argsort(self.ready[idx], kind="stable")]

    def worker_messages(self, workers: Sequence[int]) -> np.ndarray:
        """All message indices sent by the given workers."""
        workers = self._check_workers(workers)
        return np.flatnonzero(np.isin(self.sender, workers))

    def surviving(self, stragglers) -> np.ndarray:
        """Message ids received, in increasing order, when the workers ``stragglers`` straggle: the family's
        decoder says which (:meth:`Decoder.surviving`: none of theirs, or all but their last message for codes
        whose stragglers are partial)."""
        stragglers = np.unique(self._check_workers(stragglers))
        return self.decoder.surviving(self, stragglers).astype(np.int64)

    def _check_workers(self, workers) -> np.ndarray:
        workers = _as_ids(np.asarray(list(workers)), "workers", "worker ids")
        if workers.size and (workers.min() < 0 or workers.max() >= self.n_workers):
            raise ValueError(f"workers must lie in [0, {self.n_workers}), got {workers.tolist()}")
        return workers

    def _check_received(self, received) -> np.ndarray:
        received = np.asarray(received)
        if received.dtype == bool:
            if received.shape != (self.n_messages,):
                raise ValueError(f"a received mask needs {self.n_messages} entries, got {received.shape}")
            return np.flatnonzero(received)
        received = _as_ids(received, "received", f"message ids or a bool mask for code '{self.name}'")
        if received.size and (received.min() < 0 or received.max() >= self.n_messages):
            raise ValueError(f"received message ids must lie in [0, {self.n_messages}) for code "
                             f"'{self.name}', got {sorted(set(received.tolist()))}")
        if np.unique(received).size != received.size:
            raise ValueError("received message ids must be distinct")
        return received

    # ------------------------------------------------------------------ decoding
    def is_decodable(self, received, tol: float = 1e-9) -> bool:
        """Exact-in-spirit span test: is the target in the row span of ``B[received]``?

        Uses the SVD with a relative tolerance; :func:`gclib.symbolic.is_decodable_exact` is the exact version.
        """
        idx = self._check_received(received)
        if idx.size == 0:
            return False
        BR = self.B[idx]
        # Project the target onto the row space of BR and look at the residual.
        u, sv, vh = np.linalg.svd(BR, full_matrices=False)
        rank = int(np.sum(sv > tol * max(1.0, sv[0])))
        V = vh[:rank].conj().T
        T = self.target
        resid = T - (T @ V) @ V.conj().T
        return bool(np.linalg.norm(resid) <= 1e-7 * np.linalg.norm(T))

    def decode(self, received, *, check: bool = True, warn: bool = True, dtype=None) -> np.ndarray:
        """Decoding coefficients for a received set.

        Args:
            received: message indices (or a ``(n_messages,)`` bool mask).
            check: raise :class:`DecodingError` when the coefficients do not reproduce the target.
            warn: warn with :class:`IllConditionedWarning` when the decode's error amplification exceeds
                :func:`amplification_threshold` of the working precision.
            dtype: the precision of the messages the coefficients will be applied to (a NumPy dtype, or the
                messages themselves): float32, float64, complex64, complex128. Default: that of ``B`` (float64,
                complex128 for complex codes). A float32 decode warns about 23,000 times sooner than a float64
                one (:func:`amplification_threshold`).
        Returns:
            ``A``: ``(n_pieces, len(received))`` with ``A @ B[received] == target`` (approximately for
            approximate schemes), columns in the order of ``received`` (sorted when a mask is given).
        Raises:
            DecodingError: the set does not determine the gradient.
        """
        idx = self._check_received(received)
        work = working_dtype(dtype, self.B)
        A = self.decoder(self, idx)
        # The amplification is only needed for the warning or the error hint: computed lazily, so that
        # decode(..., warn=False) on the runtime's hot path does not pay for it.
        def amplification() -> float:
            return decoding_amplification(self.B[idx], A, self.target) if idx.size else np.inf

        if check and self.exact:
            resid = np.abs(A @ self.B[idx] - self.target).max() if idx.size else np.inf
            if not resid <= 1e-6 * max(1.0, np.abs(A).max()):
                c = amplification()
                hint = (f"; its condition number {c:.2e} exceeds {COND_WARN:.0e}, so the set may decode in "
                        f"exact arithmetic but not in floating point" if idx.size and c > COND_WARN else "")
                raise DecodingError(f"messages {idx.tolist()} of code '{self.name}' do not determine the "
                                    f"gradient (residual {resid:.2e}){hint}")
        if warn and idx.size:
            c = amplification()
            limit = amplification_threshold(work)
            if c > limit:
                u = unit_roundoff(work)
                warnings.warn(f"decoding system of '{self.name}' has condition number {c:.2e} (error "
                              f"amplification, see decoding_amplification), above {limit:.2g} for {work}; the "
                              f"decoded gradient may be inaccurate (relative error up to about {c * u:.1e} in "
                              f"{work}, unit roundoff {u:.1e})", IllConditionedWarning, stacklevel=2)
        return A

    def try_decode(self, received) -> Optional[np.ndarray]:
        """The decoder's coefficients for ``received``, unchecked and silent (the measures of
        :mod:`gclib.codes.conditioning` judge them); ``None`` when the family's decoder refuses the set
        (:class:`DecodingError`) or LAPACK fails."""
        try:
            return self.decode(received, check=False, warn=False)
        except (DecodingError, np.linalg.LinAlgError):
            return None

    def decode_workers(self, workers, **kw) -> np.ndarray:
        """Decode from every message of the given workers; returns ``A`` over :meth:`worker_messages`."""
        return self.decode(self.worker_messages(workers), **kw)

    def pieces(self, partial_gradients: np.ndarray) -> np.ndarray:
        """``(n_parts * n_pieces, ceil(length / n_pieces))``: the partial gradients ``(n_parts, length)`` stacked
        piecewise (:func:`split_pieces`), the ``G`` that ``B`` multiplies; :meth:`combine` undoes it."""
        return split_pieces(partial_gradients, self.n_pieces)

    def encode(self, partial_gradients: np.ndarray) -> np.ndarray:
        """All messages for the given partial gradients.

        Args:
            partial_gradients: ``(n_parts, length)``.
        Returns:
            ``(n_messages, ceil(length / n_pieces))`` messages (``G`` stacked by :func:`split_pieces`).
        """
        return self.B @ self.pieces(partial_gradients)

    def combine(self, A: np.ndarray, messages: np.ndarray, length: int) -> np.ndarray:
        """Decoded gradient ``(length,)`` from coefficients ``A`` and the received messages."""
        pieces = A @ messages
        if np.iscomplexobj(pieces):
            pieces = pieces.real
        return pieces.reshape(-1)[:length]

    def summary(self) -> dict:
        """A small dict describing the code (for tables and JSON)."""
        return {"scheme": self.name, "workers": self.n_workers, "parts": self.n_parts,
                "pieces": self.n_pieces, "messages": self.n_messages, "load": self.load,
                "stragglers": self.stragglers, "exact": self.exact,
                **self.params}


def split_pieces(partial_gradients: np.ndarray, n_pieces: int) -> np.ndarray:
    """Stack partial gradients piecewise.

    Args:
        partial_gradients: ``(n_parts, length)``.
    Returns:
        ``(n_parts * n_pieces, ceil(length / n_pieces))``; row ``part * n_pieces + u`` is piece ``u`` of that
        part, zero-padded at the end.
    """
    g = np.asarray(partial_gradients)
    k, length = g.shape
    width = -(-length // n_pieces)
    pad = width * n_pieces - length
    if pad:
        g = np.concatenate([g, np.zeros((k, pad), dtype=g.dtype)], axis=1)
    return g.reshape(k * n_pieces, width)


def lstsq_decode(code: GradientCode, idx: np.ndarray) -> np.ndarray:
    """Generic decoder: least-squares (minimum norm) ``A`` with ``A @ B[idx] = target``."""
    if idx.size == 0:
        raise DecodingError(f"no messages received for code '{code.name}'")
    BR = code.B[idx]
    X, *_ = np.linalg.lstsq(BR.T, code.target.T.astype(BR.dtype), rcond=None)
    A = X.T
    if not np.iscomplexobj(code.B):
        A = A.real
    return A


def straggler_patterns(n: int, s: int):
    """All ``C(n, s)`` straggler sets, as tuples, in lexicographic order."""
    return combinations(range(n), s)


def check_ns(n, s, *, s_max=None, name_n="workers", name_s="stragglers") -> tuple[int, int]:
    """Validate the usual ``(n, s)`` pair; raise ValueError (a ParameterTypeError for a non-integer) naming the
    parameter. Returns ``(n, s)`` as Python integers (NumPy integers would overflow in size arithmetic)."""
    n = checks.integer(name_n, n, low=1)
    s = checks.integer(name_s, s, low=0)
    hi = n - 1 if s_max is None else s_max
    if s > hi:
        raise ValueError(f"{name_s} must be at most {hi} for {n} {name_n}, got {s}")
    return n, s
