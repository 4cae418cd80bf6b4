"""The design space: one table of families (gclib.design_space) that both searches draw from."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gclib import advise, design, design_space, schemes
from gclib.codes import mmc
from gclib.simulator import Communication, Schedule

CHARGED = Communication(0.01, 7.0)


def test_every_family_of_the_table_is_a_candidate_of_the_searches_it_names():
    made = {"design": {c.family for c in design.candidates(12, 4, max_orders=2)},
            "advise": {d.family for d in advise.candidates(12, 4, network=CHARGED)}}
    for name, fam in design_space.FAMILIES.items():
        assert fam.searches and set(fam.searches) <= set(design_space.SEARCHES), name
        assert fam.scheme in schemes.SCHEMES, name
        for search in design_space.SEARCHES:
            assert (name in made[search]) == (search in fam.searches), (name, search)
            assert (name in design_space.names(search)) == (search in fam.searches), (name, search)


def test_the_orders_of_the_searches():
    assert design.FAMILIES == design_space.names("design") == (
        "gc", "uc-mmc", "rs", "frc", "lcc", "gc-mmc-correlated", "gc-mmc-uncorrelated", "hybrid")
    assert advise.FAMILIES == design_space.names("advise") == tuple(design_space.FAMILIES) == (
        "uncoded", "crc", "frc", "rs", "ye-abbe", "kadhe", "gc", "uc-mmc", "rmg", "gc-mmc-correlated",
        "gc-mmc-uncorrelated", "hybrid", "lcc")
    with pytest.raises(ValueError, match="search"):
        design_space.names("nope")


def test_a_family_added_to_the_table_is_a_candidate_of_both_searches(monkeypatch):
    table = dict(design_space.FAMILIES)
    table["rs-twin"] = replace(design_space.FAMILIES["rs"], name="rs-twin", label="rs-twin r={load}", loop=None)
    monkeypatch.setattr(design_space, "FAMILIES", table)
    d = [c for c in design.candidates(8, 2, max_orders=1) if c.family == "rs-twin"]
    a = [x for x in advise.candidates(8, 3) if x.family == "rs-twin"]
    assert [c.label for c in d] == ["rs-twin r=1", "rs-twin r=2"]
    assert [x.label for x in a] == ["rs-twin r=2", "rs-twin r=3"] and a[0].command == "--scheme rs --workers 8 " \
                                                                                      "--stragglers 1"
    assert d[-1].build().stragglers == 1 and Schedule.of(a[-1].schedule()).n_workers == 8


def test_neighbouring_families_of_one_loop_are_interleaved():
    labels = [c.label for c in design.candidates(8, 2, max_orders=1)]
    assert labels[:6] == ["gc P=1", "uc-mmc P=1", "gc P=2", "uc-mmc P=2", "gc P=3", "uc-mmc P=3"]
    assert labels[8:12] == ["rs r=1", "frc r=1", "rs r=2", "frc r=2"]
    ye = [d.label for d in advise.candidates(12, 4) if d.family in ("ye-abbe", "kadhe") and d.load == 4]
    assert ye == ["ye-abbe s=0 m=4", "kadhe s=0 m=4", "ye-abbe s=1 m=3", "kadhe s=1 m=3", "ye-abbe s=2 m=2",
                  "kadhe s=2 m=2"]


def test_a_design_is_built_by_its_scheme_from_its_parameters():
    by = {d.label: d for d in advise.candidates(12, 4)}
    unc = by["unc r=4 [2, 4] P=2"]
    assert unc.options == {"workers": 12, "load": 4, "orders": [2, 4], "clusters": 2}
    code = unc.build()  # the constructor's own points (Chebyshev), not an option of gclib run
    assert np.array_equal(code.B, mmc.gc_mmc_uncorrelated(12, 4, (2, 4), 2).B)
    assert by["uc-mmc r=4 P=1"].options == {"workers": 12, "load": 4}  # one cluster: the default, left out
    assert by["lcc r=4"].scheme is None and by["lcc r=4"].options == {}
    assert by["crc r=3"].options == {"workers": 12, "stragglers": 2}
    for d in (unc, by["crc r=3"], by["kadhe s=1 m=3"]):
        a, b = Schedule.of(d.schedule()), Schedule.of(d.build())
        assert np.array_equal(a.sender, b.sender) and np.array_equal(a.ready, b.ready)


def test_labels_name_a_missing_parameter():
    with pytest.raises(ValueError, match="a gc-mmc-correlated design needs the parameter 'order'"):
        design.label("gc-mmc-correlated", clusters=2)
    with pytest.raises(ValueError, match="family must be one of"):
        design.label("crc", load=2)  # a family of the advice only
    assert design_space.FAMILIES["hybrid"].label_of({"orders": (1, 3)}, 3) == "hybrid r=3 [1, 3]"


def test_a_family_leaves_a_search_by_its_searches_alone(monkeypatch):
    table = dict(design_space.FAMILIES)
    table["lcc"] = replace(design_space.FAMILIES["lcc"], searches=("advise",))
    monkeypatch.setattr(design_space, "FAMILIES", table)
    assert "lcc" not in design_space.names("design") and "lcc" in design_space.names("advise")
    assert not [c for c in design.candidates(8, 2, max_orders=1) if c.family == "lcc"]


def test_the_partial_straggler_protocol_is_a_design_of_its_own_only_where_messages_cost_time():
    free = advise.candidates(12, 4)
    assert [d.label for d in free] == [d.label for d in advise.candidates(12, 4, network=Communication())]
    assert "rmg" not in {d.family for d in free}  # UC-MMC in one cluster under a second name: listed once
    charged = advise.candidates(12, 4, network=CHARGED)
    assert [d.label for d in charged if d.family != "rmg"] == [d.label for d in free]  # nothing else moves
    labels = [d.label for d in charged]
    rmg = [d for d in charged if d.family == "rmg"]
    assert [d.label for d in rmg] == ["rmg r=2", "rmg r=3", "rmg r=4"]
    for d in rmg:  # right after UC-MMC in one cluster, at its load
        assert labels[labels.index(d.label) - 1] == f"uc-mmc r={d.load} P=1"
        assert d.options == {"workers": 12, "load": d.load, "ordering": "cyclic"}
        assert d.command == f"--scheme rmg --workers 12 --load {d.load} --ordering cyclic --exchange two-phase"
        assert d.spec.protocol == "rmg" and d.spec.blocks == (12,) and d.spec.columns == tuple(range(1, d.load + 1))
        code = d.build()
        assert code.name == "rmg" and code.params["ordering"] == "cyclic"
        a, b = Schedule.of(d.schedule()), Schedule.of(code)
        assert np.array_equal(a.sender, b.sender) and np.array_equal(a.ready, b.ready)
    assert not [c for c in design.candidates(12, 4, max_orders=1) if c.family == "rmg"]  # the advice's alone
    with pytest.raises(TypeError, match="network must be a gclib.simulator.Communication"):
        advise.candidates(12, 4, network="fast")
