"""Exact verification in rational arithmetic (SymPy), and derivations rendered as LaTeX.

:func:`verify` proves, for one instance of a code, that every admissible received set decodes to exactly the
target (the all-ones row, or the piece-selection rows for communication-efficient codes). Random constructions
have an exact mode (integer or rational randomness, ``exact=True``) so that the check is a proof for that instance
and not a floating-point test.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Iterable, Optional

import numpy as np
import pandas as pd
import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

from gclib import checks
from gclib.codes.base import GradientCode
from gclib.codes.polynomial import assigned_points, zero_sets


def exact_matrix(code: GradientCode) -> sp.Matrix:
    """The code's encoding matrix in exact arithmetic.

    Uses ``code.B_exact`` when the construction provides it; an integer-valued float ``B`` is taken as exact
    when its entries are at most ``2**53`` in magnitude (beyond that a float is only a rounded integer, and the
    "proof" would be about a different matrix). Raises ValueError otherwise (build the code with ``exact=True`` or
    rational points).
    """
    if code.B_exact is not None:
        return sp.Matrix(code.B_exact)
    B = code.B
    if not np.iscomplexobj(B) and np.all(B == np.round(B)) and np.all(np.abs(B) <= 2.0 ** 53):
        return sp.Matrix(B.astype(np.int64).tolist())
    raise ValueError(f"code '{code.name}' has no exact form: build it with exact=True (or rational points) "
                     f"to verify it exactly")


def exact_target(code: GradientCode) -> sp.Matrix:
    return sp.Matrix(code.target.astype(np.int64).tolist())


def _dm(M: sp.Matrix) -> DomainMatrix:
    return DomainMatrix.from_Matrix(M).convert_to(QQ)


def rational(M) -> DomainMatrix:
    """``M`` (a SymPy matrix) over the rationals, as the rank tests take it; a ``DomainMatrix`` is returned as it
    is. Converting a code's matrix once, before testing many received sets, saves converting each set."""
    return M if isinstance(M, DomainMatrix) else _dm(M)


def is_decodable_exact(B, rows: Iterable[int], target) -> bool:
    """Is every row of ``target`` in the row span of ``B[rows]``? (exact rank test over the rationals; ``B`` and
    ``target`` SymPy matrices or their :func:`rational` forms)"""
    rows = list(rows)
    if not rows:
        return False
    B, target = rational(B), rational(target)
    BR = B.extract(rows, list(range(B.shape[1])))
    return BR.rank() == BR.vstack(target).rank()


def solve_exact(B: sp.Matrix, rows, target: sp.Matrix) -> Optional[sp.Matrix]:
    """Exact ``A`` with ``A * B[rows] == target`` (free parameters set to 0), or ``None`` if none exists."""
    rows = list(rows)
    BR = B.extract(rows, list(range(B.cols)))
    try:
        sol, params = BR.T.gauss_jordan_solve(target.T)
    except ValueError:
        return None
    if params.shape[0]:
        sol = sol.subs({p: 0 for p in params})
    A = sol.T
    if A * BR != target:  # pragma: no cover - guarded by gauss_jordan_solve
        return None
    return A


@dataclass
class VerifyResult:
    """Outcome of :func:`verify`."""

    scheme: str
    checked: int
    ok: bool
    failing: Optional[tuple] = None
    kind: str = "stragglers"

    def message(self) -> str:
        what = "straggler patterns" if self.kind == "stragglers" else "received message sets"
        if self.ok:
            return f"{self.scheme}: {self.checked} {what} checked; every one decodes exactly to the target"
        label = "stragglers" if self.kind == "stragglers" else "messages"
        return (f"{self.scheme}: FAILED after {self.checked} {what}: {label} {list(self.failing)} "
                f"do not decode to the target")


def patterns_to_check(code: GradientCode, *, stragglers: Optional[int] = None, messages: Optional[int] = None,
                      max_patterns: int = 200_000) -> tuple:
    """``(number of patterns, kind)`` that :func:`verify` would check (``kind``: ``"stragglers"`` or
    ``"messages"``), from the code's sizes alone: it needs no exact form, so that a request too large is refused
    before an exact code is built. ``stragglers`` and ``messages`` cannot both be given.

    Raises:
        ValueError: both given, one out of range, or more than ``max_patterns`` patterns.
    """
    if messages is not None and stragglers is not None:
        raise ValueError("give messages or stragglers, not both: a set of received messages is checked, or a "
                         "pattern of straggling workers")
    if messages is not None:
        if not checks.is_integer(messages) or not 1 <= messages <= code.n_messages:
            raise ValueError(f"messages must lie in [1, {code.n_messages}], got {messages}")
        total, kind = _ncr(code.n_messages, messages), "messages"
    else:
        n = code.n_workers
        s = code.stragglers if stragglers is None else stragglers
        if not checks.is_integer(s) or not 0 <= s < n:
            raise ValueError(f"stragglers must lie in [0, {n - 1}], got {s}")
        total, kind = _ncr(n, s), "stragglers"
    if total > max_patterns:
        raise ValueError(f"{total} patterns to check exceeds max_patterns = {max_patterns}; choose a smaller code")
    return total, kind


def verify(code: GradientCode, *, stragglers: Optional[int] = None, messages: Optional[int] = None,
           max_patterns: int = 200_000) -> VerifyResult:
    """Exhaustively check a code in exact arithmetic.

    By default every set of ``stragglers`` (default: the code's ``s``) straggling workers is removed and the
    messages of the other workers must decode. With ``messages=t``, every set of ``t`` messages must decode
    instead (threshold codes). Stops at the first failing pattern and reports it.
    """
    if not code.exact:
        raise ValueError(f"code '{code.name}' is approximate; there is no exact decoding to verify")
    total, kind = patterns_to_check(code, stragglers=stragglers, messages=messages, max_patterns=max_patterns)
    # the exact matrix, a copy of its received rows and their rank computation: about 300 bytes an entry
    checks.need_memory(f"exact verification of '{code.name}'", 300 * code.n_messages * code.B.shape[1],
                       sizes=f"{code.n_messages} messages x {code.B.shape[1]} columns", lower="workers")
    B = rational(exact_matrix(code))
    T = rational(exact_target(code))
    if kind == "messages":
        patterns = combinations(range(code.n_messages), messages)
    else:
        patterns = combinations(range(code.n_workers), code.stragglers if stragglers is None else stragglers)
    checked = 0
    for pat in patterns:
        if kind == "messages":
            rows = list(pat)
        else:
            rows = code.surviving(pat).tolist()
        checked += 1
        if not is_decodable_exact(B, rows, T):
            return VerifyResult(code.name, checked, False, tuple(int(p) for p in pat), kind)
    return VerifyResult(code.name, checked, True, None, kind)


def check_rule(code: GradientCode, sizes: Optional[Iterable[int]] = None) -> list:
    """Compare the code's fast rule with the exact oracle on every received set of the given sizes.

    Returns:
        the list of received sets (tuples of message ids) on which they disagree (empty when they agree).
    """
    B = rational(exact_matrix(code))
    T = rational(exact_target(code))
    N = code.n_messages
    sizes = range(1, N + 1) if sizes is None else sizes
    bad = []
    for t in sizes:
        for rows in combinations(range(N), t):
            mask = np.zeros(N, dtype=bool)
            mask[list(rows)] = True
            fast = bool(code.rule.decodable(mask))
            if fast != is_decodable_exact(B, rows, T):
                bad.append(rows)
    return bad


def exact_checks(codes) -> pd.DataFrame:
    """:func:`verify` and :func:`check_rule` of every code of ``{case label: code}`` (exact codes only).

    Returns:
        ``pandas.DataFrame`` with ``case, scheme, n, s, m, load, message size, patterns`` (straggler patterns
        checked), ``verified`` (every one decodes exactly) and ``rule_disagreements`` (received sets on which the
        fast rule and the exact oracle disagree), one row per code.
    """
    rows = []
    for label, code in codes.items():
        res = verify(code)
        rows.append({"case": label, "scheme": code.name, "n": code.n_workers, "s": code.stragglers,
                     "m": code.n_pieces, "load": code.load, "message size": float(code.size[0]),
                     "patterns": res.checked, "verified": bool(res.ok),
                     "rule_disagreements": len(check_rule(code))})
    return pd.DataFrame(rows)


def rs_derivation(code: GradientCode) -> str:
    """The derivation of an exact RS code (:func:`gclib.codes.rs` with ``exact=True``) as Markdown: its points,
    mask, column polynomials and ``B``; the exact decoding vector when workers ``0 .. s-1`` straggle, with the
    check ``a B_F``; and the fast decoder's vector for the same set in floating point."""
    if code.B_exact is None or "h" not in code.params:
        raise ValueError(f"code must be an exact RS code (rs(..., exact=True)), got '{code.name}'")
    n, s = code.n_workers, code.stragglers
    _, alpha = assigned_points(n, code.params["points"], code.params["assign"], exact=True)
    mask = np.zeros((n, code.n_parts), dtype=int)
    for i, parts in enumerate(code.order):
        mask[i, list(parts)] = 1
    roots, h = zero_sets(mask)
    x = sp.Symbol("x")
    polys = [sp.Mul(*[(x - alpha[int(t)]) for t in r]) for r in roots]
    F = code.surviving(range(s)).tolist()
    A = solve_exact(code.B_exact, F, sp.ones(1, code.n_parts))
    check = A * code.B_exact.extract(F, list(range(code.n_parts)))
    fast = code.decode(F)
    return "\n\n".join([
        f"Points $\\alpha = {sp.latex(sp.Matrix([alpha]))}$, $h = {h}$. Mask (rows: workers, columns: parts):",
        f"$$M = {latex(sp.Matrix(mask))}$$",
        "Column polynomials: " + ", ".join(f"$p_{{{j}}}(x) = {sp.latex(p)}$" for j, p in enumerate(polys)),
        f"$$B = \\left[p_j(\\alpha_i)\\right]_{{ij}} = {latex(code.B_exact)}$$",
        f"Stragglers $\\{{0, \\dots, {s - 1}\\}}$: received $F = {F}$, exact decoding vector $a = {latex(A)}$, "
        f"and $a B_F = {latex(check)}$; the fast decoder (divided differences) returns "
        f"$a = {latex(np.round(fast, 6))}$ in floating point."])


def comm_efficient_derivation(ye_abbe_code: GradientCode, kadhe_code: GradientCode) -> str:
    """Markdown of the exact forms of a Ye-Abbe code (its points and ``B``) and of a Kadhe et al. code (its
    generator ``G``, read off the first group's columns of part 0), both built with ``exact=True``."""
    ya, kd = ye_abbe_code, kadhe_code
    if ya.B_exact is None or kd.B_exact is None:
        raise ValueError("both codes must be built with exact=True")
    p = ya.params
    _, beta = assigned_points(ya.n_workers, p["points"], p["assign"], exact=True)
    m, d = kd.n_pieces, kd.load
    G = sp.Matrix(m, d, lambda u, t: kd.B_exact[t, u])  # workers 0 .. d-1 form group 0 and all hold part 0
    return "\n\n".join([
        f"Ye-Abbe (reconstructed), $n = {ya.n_workers}, s = {ya.stragglers}, m = {ya.n_pieces}$, points "
        f"${sp.latex(sp.Matrix([beta]))}$:",
        f"$$B = {latex(ya.B_exact)}$$",
        f"Kadhe et al. (reconstructed), Gaussian generator rounded to rationals, $G = {latex(G)}$; worker $t$ of a "
        f"group sends column $t$ of $G$ applied to the pieces of the group's partial sum."])


def decoding_matrix(code: GradientCode) -> tuple[sp.Matrix, list]:
    """Tandon's ``A``: one row per straggler pattern (``C(n, s)`` rows, ``n`` columns, zero on the stragglers).

    Only for one-message-per-worker codes with ``n_pieces == 1``. Returns ``(A, patterns)``.
    """
    if code.n_messages != code.n_workers or code.n_pieces != 1:
        raise ValueError("decoding_matrix needs one message per worker and n_pieces == 1")
    B = exact_matrix(code)
    T = exact_target(code)
    n, s = code.n_workers, code.stragglers
    rows, pats = [], []
    for pat in combinations(range(n), s):
        msg = code.surviving(pat).tolist()
        a = solve_exact(B, msg, T)
        if a is None:
            raise ValueError(f"stragglers {list(pat)} do not decode")
        row = [sp.Integer(0)] * n
        for pos, j in enumerate(msg):
            row[int(code.sender[j])] = a[0, pos]
        rows.append(row)
        pats.append(pat)
    return sp.Matrix(rows), pats


def derivation(codes, rows: Optional[int] = None, product: bool = False) -> str:
    """Markdown with one display-math block per code: its exact ``B`` and Tandon's decoding matrix ``A``
    (:func:`decoding_matrix`; its first ``rows`` rows when given) and, with ``product``, ``A B``.

    Args:
        codes: one code or a list of them (one message per worker, ``n_pieces == 1``).
    """
    codes = [codes] if isinstance(codes, GradientCode) else list(codes)
    blocks = []
    for code in codes:
        A, pats = decoding_matrix(code)
        B = exact_matrix(code)
        shown = A if rows is None or rows >= A.rows else A[:rows, :]
        label = r"\mathrm{" + code.name + "}"
        a_label = f"A_{{{label}}}" if rows is None or rows >= A.rows else (
            f"A_{{{label}}}" + r"\ (\text{first " + f"{rows} of {len(pats)} rows" + "})")
        tex = f"B_{{{label}}} = {latex(B)}" + r",\quad " + f"{a_label} = {latex(shown)}"
        if product:
            tex += r",\quad AB = " + latex(A * B)
        blocks.append(f"$$ {tex} $$")
    return "\n\n".join(blocks)


def verification(codes, reference: Optional[dict] = None):
    """Exact verification of several codes as a table.

    Args:
        codes: one code or a list of exact codes.
        reference: optional ``{code name: A}``: a published decoding matrix (numpy or SymPy) that
            :func:`decoding_matrix` must reproduce entry for entry.
    Returns:
        ``pandas.DataFrame``, one row per code: ``code, n, s, patterns, verified`` (every pattern of ``s``
        stragglers decodes exactly, :func:`verify`), ``reference`` (``"matches"``, ``"differs"`` or ``"none"``)
        and ``message``.
    """
    codes = [codes] if isinstance(codes, GradientCode) else list(codes)
    reference = reference or {}
    rows = []
    for code in codes:
        v = verify(code)
        ref = "none"
        if code.name in reference:
            A, _ = decoding_matrix(code)
            want = reference[code.name]
            if isinstance(want, sp.MatrixBase):  # exact against exact
                same = A.shape == want.shape and A == want
            else:  # a float reference: the exact A rounded to float64 must equal it entry for entry
                want = np.asarray(want, dtype=float)
                same = A.shape == want.shape and np.array_equal(np.array(A.tolist(), dtype=float), want)
            ref = "matches" if same else "differs"
        rows.append({"code": code.name, "n": code.n_workers, "s": code.stragglers, "patterns": v.checked,
                     "verified": bool(v.ok), "reference": ref, "message": v.message()})
    return pd.DataFrame(rows)


def latex(M) -> str:
    """LaTeX of a matrix (SymPy or numpy), rationals kept as fractions."""
    if isinstance(M, np.ndarray):
        M = sp.Matrix(M.tolist())
    return sp.latex(sp.Matrix(M), mat_delim="[")


def _ncr(n, k):
    return comb(n, k)
