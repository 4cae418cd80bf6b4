"""Each paper judged in its own setting: the committed claims tables keep the papers' results (kind ``paper``) apart
from our extensions, readings and checks, and the notebooks of the papers open with their reproduction table."""
import json
from pathlib import Path

import pytest

from gclib import claims

ROOT = Path(__file__).resolve().parents[1]
#: The notebooks that reproduce papers and open with a reproduction table.
PAPERS = ("01_gradient_coding", "02_reed_solomon", "03_communication_efficient", "04_gc_mmc", "05_mmc_design",
          "06_lazy_aggregation", "11_partial_stragglers", "12_sequential", "13_approximate")


def _table(nb: str):
    return claims.read(claims.path(nb, ROOT / "figures")).set_index("id")


@pytest.mark.parametrize("nb", PAPERS)
def test_the_notebook_opens_with_its_reproduction_table_and_fills_it_with_its_claims(nb):
    cells = json.loads((ROOT / "notebooks" / f"{nb}.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    view = next(i for i, s in enumerate(code) if "claims.ReproductionView()" in s)
    judged = next(i for i, s in enumerate(code) if "claims.write(" in s)
    assert view <= 3, "the reproduction table comes right after the parameters, their check and the imports"
    assert "reproduction.update(" in code[judged]


def test_every_committed_claims_table_uses_the_four_kinds():
    for p in sorted((ROOT / "figures").glob("[0-9][0-9]_claims.csv")):
        t = claims.read(p)
        assert set(t["kind"]) <= set(claims.KINDS), p.name
        assert (t[t["verdict"] == claims.NOT_TESTABLE]["kind"] == claims.PAPER).all(), p.name


def test_statements_outside_the_papers_settings_are_extensions():
    t = _table("01_gradient_coding")
    assert set(t.loc[["T4a", "T4b", "T4c", "T4d", "T6a", "T6b"], "kind"]) == {claims.EXTENSION}
    assert set(t.loc[["EC2a", "EC2b"], "verdict"]) == {claims.NOT_TESTABLE}
    t = _table("03_communication_efficient")
    assert set(t.loc[["T1", "T2", "T3", "T4"], "kind"]) == {claims.EXTENSION}
    t = _table("04_gc_mmc")
    b = t[t.index.str.match(r"F\d+b")]
    assert len(b) and set(b["kind"]) <= {claims.EXTENSION, claims.CHECK} and t.at["X1", "kind"] == claims.CHECK
    t = _table("05_mmc_design")
    assert set(t[t.index.str.startswith("X")]["kind"]) == {claims.CHECK}
    assert (t[t["setting"].str.startswith("Pareto") & t.index.str.startswith("F")]["kind"] == claims.EXTENSION).all()
    t = _table("06_lazy_aggregation")
    paper = t[t["kind"] == claims.PAPER]
    assert not paper.index.str.contains(":sexp").any() and not paper.index.str.startswith("F").any()
    assert set(t.loc[["SU-ps:p1.5", "SC-ps:exp"], "kind"]) == {claims.READING}
    # LAG's and GD's uploads do not depend on the compute times: one measurement, not ten seeds
    assert "deterministic: identical in every seed" in t.at["LU-wk:p1.5", "measured"]
    fixed = t[t["measured"].str.contains("deterministic")]
    assert not fixed["measured"].str.contains("holds in").any()
    t = _table("07_mpi_runs")
    assert set(t[t.index.str.match(r"M1[abde]$|M4")]["kind"]) == {claims.EXTENSION}


def test_the_sequential_headline_is_the_authors_simulation_and_the_lambda_run_is_not_testable():
    t = _table("12_sequential")
    assert list(t[t["kind"] == claims.PAPER].index) == ["P1", "P2", "P3"]
    assert t.at["P3", "verdict"] == claims.NOT_TESTABLE
    assert (t[t.index.str.startswith("E1")]["kind"] == claims.EXTENSION).all()


def test_restatements_of_a_computation_are_not_claims():
    assert not any(i.startswith(("B1", "B2")) for i in _table("10_real_traces").index)
    assert "A7" not in _table("13_approximate").index and "C2" not in _table("12_sequential").index
    assert not any(i.endswith("a") and i.startswith("Q") for i in _table("14_head_to_head").index)
    t = _table("11_partial_stragglers")
    assert "P4" not in t.index and t.at["R0", "kind"] == claims.READING
