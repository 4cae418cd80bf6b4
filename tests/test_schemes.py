"""The registry of schemes: each scheme names its constructor and the constructor's argument behind each option."""
from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from gclib import codes
from gclib import schemes as sch
from gclib.cli import main


@pytest.mark.parametrize("name", sorted(sch.SCHEMES))
def test_every_parameter_is_an_argument_of_the_constructor(name):
    s = sch.SCHEMES[name]
    sig = inspect.signature(s.constructor).parameters
    assert s.constructor.__module__.startswith("gclib.codes.")
    assert set(s.args) <= set(sch.PARAMS), "a parameter without a row in PARAMS"
    assert set(s.args.values()) <= set(sig), f"{name}: not arguments of {s.constructor_name}"
    assert len(set(s.args.values())) == len(s.args)
    # every argument the constructor needs is given by a parameter
    needed = {a for a, p in sig.items() if p.default is inspect.Parameter.empty
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    assert needed <= set(s.args.values()), f"{name}: {needed - set(s.args.values())} cannot be given"
    assert set(s.required) == {p for p, a in s.args.items() if a in needed and sch.PARAMS[p].default is None}


def test_an_option_reaches_the_named_argument_of_the_constructor(monkeypatch):
    seen = {}

    def constructor(n, s, seed=0, *, exact=False):
        seen.update(n=n, s=s, seed=seed, exact=exact)
        return "code"

    monkeypatch.setitem(sch.SCHEMES, "crc", sch.Scheme("crc", constructor, sch.SCHEMES["crc"].args, "p", "h"))
    assert sch.build("crc", workers=7, stragglers=2, pieces=3) == "code"  # a key crc does not read: ignored
    assert seen == {"n": 7, "s": 2, "seed": 0, "exact": False}  # seed and exact: the table's defaults


def test_the_registry_builds_what_the_constructor_builds():
    assert np.array_equal(sch.build("crc", workers=6, stragglers=2, seed=3).B, codes.crc(6, 2, 3).B)
    a = sch.build("ye-abbe", workers=6, stragglers=1, comm=2, points="chebyshev")
    assert np.array_equal(a.B, codes.ye_abbe(6, 1, 2, "chebyshev").B)
    assert sch.build("ye-abbe", workers=6, stragglers=1).n_pieces == 1  # comm left to the constructor: m = 1
    g = sch.build("gc", workers=8, load=2, clusters=2)
    assert g.n_workers == 8 and g.rule.n_clusters == 2


def test_a_missing_parameter_without_a_default_is_named():
    with pytest.raises(ValueError, match=r"scheme 'partial' needs --pieces \(partial: data pieces per worker P\)"):
        sch.build("partial", workers=6, stragglers=1)
    with pytest.raises(ValueError, match="scheme must be one of"):
        sch.build("nope", workers=4)


def test_every_parameter_has_one_row_with_its_check():
    for name, p in sch.PARAMS.items():
        assert p.type in (int, str, bool) and p.help
        assert p.default is None or isinstance(p.default, p.type), name
        if p.check is not None and p.default is not None:
            assert p.checked(name, p.default) == p.default  # the default passes its own check
    assert sch.PARAMS["orders"].checked("orders", "2, 3") == (2, 3)
    with pytest.raises(ValueError, match="stragglers"):
        sch.PARAMS["stragglers"].checked("stragglers", -1)


def test_list_json_names_each_constructor_and_argument(capsys):
    assert main(["list", "--json"]) == 0
    data = {s["name"]: s for s in json.loads(capsys.readouterr().out)["schemes"]}
    assert data["crc"]["constructor"] == "gclib.codes.tandon.crc"
    assert data["crc"]["parameters"]["stragglers"]["argument"] == "s"
    assert data["gc-mmc-correlated"]["parameters"]["order"]["argument"] == "m"
    for name, s in data.items():
        module, _, func = s["constructor"].rpartition(".")
        assert getattr(__import__(module, fromlist=[func]), func) is sch.SCHEMES[name].constructor
