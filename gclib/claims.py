"""Claims as data: what a paper says, what we measured, the rule we judge it by, and the verdict.

Every notebook ends with a *claims table*: one row per claim, with the columns of :data:`COLUMNS`:

* ``id``: a short identifier (``"T1"``), stable across runs, so tests and text can refer to a claim;
* ``kind``: one of :data:`KINDS`, what the row tests: ``paper`` (a statement, figure or equation of the named
  paper, quoted or cited, tested in the paper's own setting: its model, parameters and scale, or the nearest we
  can build, which the ``setting`` says), ``extension`` (the paper's statement carried to a setting the paper did
  not test: other compute-time models, traces, loads or real runs; its verdict is ours, and its ``paper`` field
  says "carried beyond the paper", :data:`BEYOND`), ``reading`` (our interpretation where the paper leaves
  something open; the ``paper`` field says what it reads and how) or ``check`` (our own test of a model or of the
  software). A row credits a paper only when its kind is ``paper``; tallies count the kinds apart
  (:func:`counts_by_kind`). A statement that merely restates the computation that produced it is not a claim but
  a unit test;
* ``claim``: the claim in a few words;
* ``paper``: what the paper says, quoted briefly or cited by figure, section or equation (for a ``reading``, what
  we read into it; for a ``check``, ``"our check: ..."``);
* ``setting``: the model and parameters of our measurement;
* ``measured``: our numbers, with their 95% confidence intervals;
* ``criterion``: the rule that turns the numbers into a verdict, written in code before looking at them;
* ``verdict``: one of :data:`VERDICTS`: ``holds``, ``does not hold``, or ``inconclusive`` (the intervals overlap,
  or too few trials: a verdict the data cannot carry is never given); a ``paper`` row whose setting cannot be
  rebuilt here (a cluster, traces or data we do not have) is ``not testable here`` (:meth:`Claim.untestable`), never
  "does not hold".

The ``paper`` rows of a notebook are its *reproduction table* (:func:`reproduction`): each headline result of the
paper, the paper's setting and number, ours in that setting, and the verdict. A notebook shows it first
(:class:`ReproductionView`, filled in when the claims are judged at its end).

The claims modules (``gclib.studies.*.claims``) turn a notebook's result tables into such a table; this module holds
what they share: :class:`gclib.stats.Estimate` (a number with its interval; the intervals themselves are made in
:mod:`gclib.stats`), the verdict rules (:func:`less`, :func:`at_most`, :func:`within`, :func:`majority`, :func:`exact`, :func:`all_hold`),
:func:`ids`, :func:`row` and :func:`table`, and the renderings (:func:`markdown`, :func:`show`, :func:`counts`,
:func:`write`, :func:`read`).

Example::

    >>> from gclib import claims
    >>> a, b = claims.Estimate.mean_ci(0.27, 0.002), claims.Estimate.mean_ci(0.29, 0.002)
    >>> claims.less(a, b)
    'holds'
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from gclib import files
from gclib.stats import Z95, Estimate, proportion, wilson  # noqa: F401  (part of this module's interface)

HOLDS, FAILS, INCONCLUSIVE, NOT_TESTABLE = "holds", "does not hold", "inconclusive", "not testable here"
#: The verdicts, in display order; the rules give the first three, :meth:`Claim.untestable` the last.
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, NOT_TESTABLE)
PAPER, EXTENSION, READING, CHECK = "paper", "extension", "reading", "check"
#: The four kinds of claim, in display order.
KINDS = (PAPER, EXTENSION, READING, CHECK)
#: The words an ``extension`` row's ``paper`` field carries.
BEYOND = "carried beyond the paper"
#: The columns of a claims table, in order.
COLUMNS = ("id", "kind", "claim", "paper", "setting", "measured", "criterion", "verdict")


def _as_estimate(x) -> Estimate:
    return x if isinstance(x, Estimate) else Estimate.exact(x)


def less(a, b, factor: float = 1.0) -> str:
    """Verdict on ``a < factor * b``: holds when the whole interval of ``a`` lies below that of ``factor * b``,
    does not hold when it lies at or above it, inconclusive when they overlap (or either is unknown).

    Plain numbers are exact. With exact numbers a tie does not hold (``less(2, 2) == 'does not hold'``)."""
    a, b = _as_estimate(a), _as_estimate(b).scaled(factor)
    if not (a.known and b.known):
        return INCONCLUSIVE
    if a.hi < b.lo:
        return HOLDS
    if a.lo >= b.hi:
        return FAILS
    return INCONCLUSIVE


def at_most(a, b, factor: float = 1.0) -> str:
    """Verdict on ``a <= factor * b``: holds when ``a.hi <= factor * b.lo``, does not hold when
    ``a.lo > factor * b.hi``, inconclusive otherwise."""
    a, b = _as_estimate(a), _as_estimate(b).scaled(factor)
    if not (a.known and b.known):
        return INCONCLUSIVE
    if a.hi <= b.lo:
        return HOLDS
    if a.lo > b.hi:
        return FAILS
    return INCONCLUSIVE


def greater(a, b, factor: float = 1.0) -> str:
    """Verdict on ``a > factor * b`` (the mirror of :func:`at_most`)."""
    v = at_most(a, b, factor)
    return {HOLDS: FAILS, FAILS: HOLDS}.get(v, v)


def within(a, target: float, rel: float) -> str:
    """Verdict on ``|a - target| <= rel * |target|``: holds when the interval of ``a`` lies inside the band,
    does not hold when it lies wholly outside, inconclusive when it straddles an edge."""
    a = _as_estimate(a)
    if not a.known:
        return INCONCLUSIVE
    lo, hi = target - rel * abs(target), target + rel * abs(target)
    if lo <= a.lo and a.hi <= hi:
        return HOLDS
    if a.hi < lo or a.lo > hi:
        return FAILS
    return INCONCLUSIVE


def majority(successes: Iterable[bool]) -> str:
    """Verdict on "the claim holds in most runs" from one boolean per independent run (seed): holds when the
    Wilson interval of the fraction lies above 1/2, does not hold when it lies below, inconclusive otherwise
    (with two seeds even 2 of 2 is inconclusive). NaN entries (a run that did not finish) count as failures."""
    x = [bool(v) if v == v else False for v in successes]
    e = proportion(sum(x), len(x))
    return greater(e, 0.5)


def exact(condition: bool) -> str:
    """Verdict of an exact check (a proof, an enumeration, a closed form): holds or does not hold."""
    return HOLDS if bool(condition) else FAILS


def all_hold(verdicts: Iterable[str]) -> str:
    """Verdict on a conjunction: does not hold if any part does not, holds if every part holds, else
    inconclusive."""
    v = list(verdicts)
    bad = [x for x in v if x not in VERDICTS]
    if bad:
        raise ValueError(f"verdicts must be among {VERDICTS}, got {bad}")
    if FAILS in v:
        return FAILS
    if v and all(x == HOLDS for x in v):
        return HOLDS
    return INCONCLUSIVE


def any_holds(verdicts: Iterable[str]) -> str:
    """Verdict on a disjunction: holds if any part holds, does not hold if every part does not, else
    inconclusive."""
    v = list(verdicts)
    if HOLDS in v:
        return HOLDS
    if v and all(x == FAILS for x in v):
        return FAILS
    return INCONCLUSIVE


def ids(prefix: str, count: int) -> list:
    """Ids of ``count`` rows of one claim: ``[prefix]`` alone, else ``prefix`` with ``a``, ``b``, ... (with
    ``.1``, ``.2``, ... beyond 26 rows)."""
    if count <= 1:
        return [prefix]
    return [f"{prefix}{chr(ord('a') + i)}" if count <= 26 else f"{prefix}.{i + 1}" for i in range(count)]


def row(id: str, claim: str, *, kind: str, paper: str, setting: str, measured: str, criterion: str,
        verdict: str) -> dict:
    """One claim (see the module docstring for the fields)."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    for name, value in (("id", id), ("claim", claim), ("paper", paper), ("setting", setting),
                        ("measured", measured), ("criterion", criterion)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"claim field {name} must be a non-empty string, got {value!r}")
    out = {"id": id, "kind": kind, "claim": claim, "paper": paper, "setting": setting, "measured": measured,
           "criterion": criterion, "verdict": verdict}
    _check_kind(out)
    return out


def _check_kind(r) -> None:
    """Raise ``ValueError`` where a row's kind and its text or verdict disagree: an ``extension`` must say it is
    :data:`BEYOND` the paper; only a ``paper`` row can be :data:`NOT_TESTABLE`."""
    if r["kind"] == EXTENSION and BEYOND not in r["paper"]:
        raise ValueError(f"claim {r['id']}: an extension's paper field must say '{BEYOND}', got {r['paper']!r}")
    if r["verdict"] == NOT_TESTABLE and r["kind"] != PAPER:
        raise ValueError(f"claim {r['id']}: only a paper row can be '{NOT_TESTABLE}', this one is {r['kind']!r}")


def beyond(paper: str, why: str) -> str:
    """The ``paper`` field of an ``extension`` row: what the paper says, then why this setting is not the paper's
    (``"...; carried beyond the paper: the paper ran on EC2, this is a compute-time model"``)."""
    return f"{paper}; {BEYOND}: {why}"


#: The criterion of a paper's claim whose setting cannot be rebuilt here (:meth:`Claim.untestable`).
NOT_REBUILT = "needs the paper's own setting, which cannot be rebuilt here"


def untestable(id: str, claim: str, *, paper: str, missing: str, setting: str) -> dict:
    """The row of a ``paper`` claim not in a table of :class:`Claim` entries (see :meth:`Claim.untestable`)."""
    return Claim(id, PAPER, claim, paper, NOT_REBUILT).untestable(setting=setting, missing=missing)


@dataclass(frozen=True)
class Claim:
    """A claim as data: what is claimed, by whom, and the rule it is judged by, fixed before anything is measured
    (a notebook's claims module lists them in a table beside the short functions that measure them).

    ``claim``, ``paper`` and ``criterion`` may hold ``{name}`` fields that :meth:`row` fills in (a trace's name,
    a threshold), so one entry serves every row of a claim.
    """

    id: str
    kind: str
    claim: str
    paper: str
    criterion: str

    def row(self, *, setting: str, measured: str, verdict: str, id: str | None = None, carried: str | None = None,
            **fields) -> dict:
        """This claim measured: a row of the claims table (:func:`row`), with ``id`` in place of the entry's (the
        rows of one claim over models or traces) and ``fields`` filled into its texts.

        ``carried``: why this measurement is not in the paper's setting (another model, scale or source), or None
        when it is. A ``paper`` entry measured so becomes an ``extension`` row whose paper field says so
        (:func:`beyond`, ``carried`` taken as plain text, never filled); an entry of another kind is unchanged."""
        text = {k: getattr(self, k).format(**fields) if fields else getattr(self, k)
                for k in ("claim", "paper", "criterion")}
        kind = self.kind
        if carried is not None and kind == PAPER:
            kind, text["paper"] = EXTENSION, beyond(text["paper"], carried)
        return row(id or self.id, text["claim"], kind=kind, paper=text["paper"], setting=setting,
                   measured=measured, criterion=text["criterion"], verdict=verdict)

    def untestable(self, *, setting: str, missing: str) -> dict:
        """This claim's row when its setting cannot be rebuilt here: the paper's setting (``setting``) and what we
        lack to test it (``missing``). Its verdict is :data:`NOT_TESTABLE`, never "does not hold"."""
        return row(self.id, self.claim, kind=self.kind, paper=self.paper, setting=setting,
                   measured=f"not measured: {missing}", criterion=self.criterion, verdict=NOT_TESTABLE)


def table(rows: Sequence[dict]) -> pd.DataFrame:
    """A claims table from :func:`row` dicts: the columns of :data:`COLUMNS`, ids unique, verdicts valid."""
    df = pd.DataFrame(list(rows), columns=list(COLUMNS))
    check(df)
    return df.reset_index(drop=True)


def check(df: pd.DataFrame) -> pd.DataFrame:
    """Raise ``ValueError`` unless ``df`` is a claims table (the columns of :data:`COLUMNS`, unique ids, every
    verdict one of :data:`VERDICTS`, no empty field); return it."""
    if list(df.columns) != list(COLUMNS):
        raise ValueError(f"a claims table has the columns {list(COLUMNS)}, got {list(df.columns)}")
    if df["id"].duplicated().any():
        raise ValueError(f"claim ids must be unique, repeated: {sorted(set(df['id'][df['id'].duplicated()]))}")
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"verdicts must be among {VERDICTS}, got {bad}")
    bad = sorted(set(df["kind"]) - set(KINDS))
    if bad:
        raise ValueError(f"kinds must be among {KINDS}, got {bad}")
    empty = [c for c in COLUMNS if df[c].isna().any() or (df[c].astype(str).str.strip() == "").any()]
    if empty:
        raise ValueError(f"claims table has empty fields in columns {empty}")
    for _, r in df.iterrows():
        _check_kind(r)
    return df


def counts(df: pd.DataFrame) -> dict:
    """``{verdict: number of claims}`` for every verdict (zeros included)."""
    vc = df["verdict"].value_counts()
    return {v: int(vc.get(v, 0)) for v in VERDICTS}


def counts_by_kind(df: pd.DataFrame) -> dict:
    """``{kind: {verdict: number of claims}}`` for every kind of :data:`KINDS` (zeros included)."""
    return {k: counts(df[df["kind"] == k]) for k in KINDS}


def count_text(c: dict) -> str:
    """``"5 claims: 3 hold, 1 does not hold, 1 inconclusive"`` from :func:`counts` (``", 1 not testable here"``
    added where a row is)."""
    total = sum(c.values())
    parts = [f"{c[HOLDS]} hold{'s' if c[HOLDS] == 1 else ''}", f"{c[FAILS]} {'does' if c[FAILS] == 1 else 'do'} "
             f"not hold", f"{c[INCONCLUSIVE]} inconclusive"]
    if c.get(NOT_TESTABLE):
        parts.append(f"{c[NOT_TESTABLE]} not testable here")
    return f"{total} claim{'s' if total != 1 else ''}: " + ", ".join(parts)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def kind_text(df: pd.DataFrame) -> str:
    """``"paper: 4 claims: 3 hold, ...; reading: ...; check: ..."``, the counts of each kind apart (kinds without
    a row left out)."""
    by = counts_by_kind(df)
    return "; ".join(f"{k}: {count_text(c)}" for k, c in by.items() if sum(c.values()))


def markdown(df: pd.DataFrame, columns: Sequence[str] = ("id", "kind", "claim", "paper", "measured", "criterion",
                                                          "verdict")) -> str:
    """The claims table as Markdown, verdicts in bold, headed by the counts of each verdict per kind."""
    check(df)
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "".join("| " + " | ".join(f"**{_cell(r[c])}**" if c == "verdict" else _cell(r[c]) for c in columns)
                   + " |\n" for _, r in df.iterrows())
    return f"{kind_text(df)}.\n\n" + head + body


def show(df: pd.DataFrame):
    """An IPython Markdown display of :func:`markdown` (for a notebook's last cell)."""
    return _markdown(markdown(df))


def _markdown(text: str):
    """IPython's Markdown display of ``text`` (IPython, which notebooks have, is imported here: gclib does not
    depend on it)."""
    from IPython.display import Markdown

    return Markdown(text)


#: The columns of a reproduction table and their headings.
REPRODUCTION = {"id": "id", "claim": "result", "paper": "the paper says", "setting": "setting (ours, or what the "
                "paper's needs)", "measured": "ours", "verdict": "verdict"}


def reproduction(df: pd.DataFrame) -> pd.DataFrame:
    """The reproduction table of a claims table: its ``paper`` rows (each headline result judged in the paper's
    setting, or not testable here), with the columns of :data:`REPRODUCTION`."""
    check(df)
    return df[df["kind"] == PAPER][list(REPRODUCTION)].reset_index(drop=True)


def reproduction_markdown(df: pd.DataFrame) -> str:
    """:func:`reproduction` as Markdown, verdicts in bold, headed by its counts and by how many rows of the other
    kinds the claims table holds (extensions, readings and checks are not the paper's results)."""
    rep = reproduction(df)
    others = {k: int((df["kind"] == k).sum()) for k in KINDS if k != PAPER}
    rest = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in others.items() if n)
    head = (f"**Reproduction table**: the paper's results in the paper's setting, {count_text(counts(rep))}"
            + (f" (the claims table at the end also holds {rest})" if rest else "") + ".\n\n")
    if rep.empty:
        return head + "No result of the paper is judged in its own setting here.\n"
    cols = list(REPRODUCTION)
    lines = ["| " + " | ".join(REPRODUCTION[c] for c in cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(f"**{_cell(r[c])}**" if c == "verdict" else _cell(r[c]) for c in cols) + " |"
              for _, r in rep.iterrows()]
    return head + "\n".join(lines) + "\n"


class ReproductionView:
    """The reproduction table shown at the top of a notebook and filled in at its end: the first cell displays a
    placeholder with a display id; :meth:`update` replaces it by :func:`reproduction_markdown` of the claims table
    (in JupyterLab and in the notebook papermill writes alike)."""

    def __init__(self):
        from IPython.display import display

        self._handle = display(_markdown("*The reproduction table appears here once the claims are judged, at the "
                                        "end of the notebook.*"), display_id=True)

    def update(self, df: pd.DataFrame) -> None:
        """Show the reproduction table of the claims table ``df`` in place of the placeholder."""
        if self._handle is not None:
            self._handle.update(_markdown(reproduction_markdown(df)))


def path(notebook: str, figures_dir) -> Path:
    """``figures_dir / "NN_claims.csv"`` for a notebook stem or number (``"01_gradient_coding"`` or ``"01"``)."""
    prefix = str(notebook)[:2]
    if not (len(prefix) == 2 and prefix.isdigit()):
        raise ValueError(f"notebook must start with its two-digit number, got {notebook!r}")
    return Path(figures_dir) / f"{prefix}_claims.csv"


def write(df: pd.DataFrame, notebook: str, figures_dir) -> Path:
    """Write the claims table of ``notebook`` to ``figures_dir/NN_claims.csv`` (checked; fixed line endings)."""
    check(df)
    p = path(notebook, figures_dir)
    p.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(p, index=False, lineterminator="\n")
    return p


#: The most a claims table may hold, checked before it is read.
CLAIMS_BUDGET = files.Budget("a claims table", 16 * files.MIB, constant="gclib.claims.CLAIMS_BUDGET")


def read(p) -> pd.DataFrame:
    """Read and check a claims CSV written by :func:`write` (within :data:`CLAIMS_BUDGET`; a file that is not one is
    refused naming the file, not quoting it)."""
    data = files.read_text(None, p, CLAIMS_BUDGET, expected="a claims table (CSV)")
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        raise ValueError(f"{p}: not a claims table (not a readable CSV)") from None
    if list(df.columns) != list(COLUMNS):
        raise ValueError(f"{p}: a claims table has the columns {list(COLUMNS)}; line 1 (its header) does not name "
                         f"them in that order")
    return check(df)
