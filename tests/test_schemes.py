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
    assert data["crc"]["constructor"] == "gclib.codes.repetition.crc"
    assert data["crc"]["parameters"]["stragglers"]["argument"] == "s"
    assert data["gc-mmc-correlated"]["parameters"]["order"]["argument"] == "m"
    for name, s in data.items():
        module, _, func = s["constructor"].rpartition(".")
        assert getattr(__import__(module, fromlist=[func]), func) is sch.SCHEMES[name].constructor


SCHEDULED = [("uncoded", {"workers": 7}), ("frc", {"workers": 8, "stragglers": 1}),
             ("crc", {"workers": 7, "stragglers": 2}), ("rs", {"workers": 7, "stragglers": 2}),
             ("rs", {"workers": 6, "stragglers": 1, "points": "roots-of-unity"}),
             ("ye-abbe", {"workers": 7, "stragglers": 1, "comm": 2}),
             ("kadhe", {"workers": 8, "stragglers": 2, "comm": 2}),
             ("gc", {"workers": 9, "load": 3, "clusters": 2}), ("gc", {"workers": 8, "load": 2}),
             ("uc-mmc", {"workers": 10, "load": 3, "clusters": 3}),
             ("gc-mmc-correlated", {"workers": 10, "load": 4, "order": 2, "clusters": 2}),
             ("gc-mmc-uncorrelated", {"workers": 9, "load": 3, "orders": "1,3", "clusters": 2}),
             ("gc-mmc-uncorrelated", {"workers": 8, "load": 3, "orders": "2,3", "points": "roots-of-unity"}),
             ("hybrid", {"workers": 9, "load": 3, "orders": "1,3"}), ("lcc", {"workers": 10, "load": 3})]


@pytest.mark.parametrize("name,kw", SCHEDULED)
def test_the_schedule_simulates_as_the_code(name, kw):
    """The simulator reads the same of a scheme's schedule as of its code: the same numbers for the same seed,
    under eq. 5, per task and with communication delays (the master's queue included)."""
    from gclib.simulator import Communication, Schedule, simulate
    from gclib.stragglers import Pareto, ShiftedExponential

    s = sch.simulable(name, **kw)
    assert isinstance(s, Schedule) and s.name == name
    code = sch.build(name, **kw)
    assert s.n_workers == code.n_workers and s.load == code.load and s.n_messages == code.n_messages
    assert s.stragglers == code.stragglers  # what the completion time's tail index reads
    assert np.allclose(s.size, code.size)
    for model in (ShiftedExponential(10, 0.01), Pareto(0.05, 1.5, per_task=True)):
        for comm in (None, Communication(0.01, 5.0), Communication(0.01, 50.0, overhead=0.002, queue=True)):
            a = simulate(s, model, 400, seed=3, comm=comm)
            b = simulate(code, model, 400, seed=3, comm=comm)
            for key in ("time", "messages", "cluster_messages", "computations"):
                assert np.array_equal(getattr(a, key), getattr(b, key)), (name, key, comm)
            assert np.allclose(a.volume, b.volume)


def test_a_scheme_without_a_schedule_builds_its_code():
    from gclib.codes.base import GradientCode

    assert isinstance(sch.simulable("partial", workers=8, stragglers=1, pieces=3), GradientCode)
    assert isinstance(sch.simulable("kadhe", workers=12, stragglers=2, comm=2, generator="repetition"), GradientCode)
    # parameters the construction refuses: its own error, not the schedule's
    with pytest.raises(ValueError, match="stragglers must be at most 4"):
        sch.simulable("crc", workers=5, stragglers=5)


def test_cli_simulate_on_schedules_equals_the_dense_path(capsys):
    """`gclib simulate` runs the schedule; its numbers are those of the code with its matrix, same seed."""
    from gclib.simulator import simulate
    from gclib.stragglers import ShiftedExponential

    for name, kw in SCHEDULED:
        args = ["simulate", "--scheme", name, "--trials", "300", "--seed", "2", "--json", "--mu", "10",
                "--alpha", "0.01"]
        for k, v in kw.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        assert main(args) == 0
        out = json.loads(capsys.readouterr().out)
        kw2 = {**kw, "seed": 2}
        ref = simulate(sch.build(name, **kw2), ShiftedExponential(10, 0.01), 300, seed=2).summary()
        for key in ("mean_time", "ci95_time", "mean_messages", "mean_cluster_messages", "mean_computations",
                    "failed", "trials"):
            assert out[key] == ref[key], (name, key)
        assert out["mean_volume"] == pytest.approx(ref["mean_volume"])
        for key in ("workers", "load", "stragglers", "parts", "pieces"):
            assert out["code"][key] == ref["code"][key], (name, key)


def test_cli_simulate_on_a_schedule_says_when_a_mean_is_infinite(capsys):
    """Under a Pareto of shape 0.8, FRC tolerating 2 stragglers has a completion time of tail index 2.4 (a mean and
    a variance), uncoded one of 0.8 (no mean): the schedule carries what the code tolerates."""
    base = ["simulate", "--trials", "200", "--model", "pareto", "--scale", "0.05", "--shape", "0.8"]
    assert main(base + ["--scheme", "frc", "--workers", "9", "--stragglers", "2"]) == 0
    out = capsys.readouterr().out
    assert "mean time infinite" not in out and "+/-" in out
    assert main(base + ["--scheme", "uncoded", "--workers", "9"]) == 0
    assert "mean time infinite (the completion time's tail index is 0.8" in capsys.readouterr().out


def test_a_schedule_too_large_is_refused_before_it_is_built(capsys, monkeypatch):
    monkeypatch.setenv("GCLIB_MEMORY_LIMIT", "200M")
    code = main(["simulate", "--scheme", "uc-mmc", "--workers", "10000", "--load", "5000", "--trials", "10"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "the schedule of 'uc-mmc'" in err[0] and "50,000,000 messages" in err[0]


def test_build_refuses_an_unknown_scheme_naming_the_known_ones():
    with pytest.raises(ValueError) as e:
        sch.build("nope", workers=4)
    assert all(repr(n) in str(e.value) for n in sch.SCHEMES)
    with pytest.raises(ValueError) as e:
        sch.simulable("nope", workers=4)
    assert all(repr(n) in str(e.value) for n in sch.SCHEMES)
