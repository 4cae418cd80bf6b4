"""The CLI's help lists schemes, models and their parameters from the registries; `gclib list`; `gclib trace`."""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys

import pytest

from gclib import cli, reproduce as rp
from gclib.cli import options, registries
from gclib import schemes as sch
from gclib.learning.optim import code_names
from gclib.stragglers import MODELS, ComputeModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def help_of(*args, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        cli.main([*args, "--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


def test_top_level_help_lists_every_scheme_model_and_parameter():
    # as a user runs it: a real process
    p = subprocess.run([sys.executable, "-m", "gclib", "--help"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for name, s in sch.SCHEMES.items():
        assert f"  {name} " in out and s.paper in out and registries.scheme_flags(s) in out
    for name, cls in MODELS.items():
        assert f"  {name} " in out
        for f, _ in options.model_fields(cls):
            assert f"--{f.replace('_', '-')} (default" in out
    for name in sch.PARAMS:
        assert f"--{name.replace('_', '-')}" in out
    for cmd in _subparsers().choices:
        assert f"\n    {cmd} " in out, f"no summary line for {cmd}"


#: lines a subcommand's help may take (about a screen, its examples included): the catalogue is `gclib list`'s
HELP_LINES = {"run": 145}  # run lists every scheme parameter (one line each) beside its own options


def test_simulate_help_names_schemes_and_models_and_points_to_list(capsys):
    out = help_of("simulate", capsys=capsys)
    assert "schemes (--scheme NAME)" in out and "compute-time models (--model NAME)" in out and "`gclib list`" in out
    names = out.split("schemes (--scheme NAME):")[1]
    for name in list(sch.SCHEMES) + list(MODELS):
        assert name in names
    assert sch.SCHEMES["crc"].paper not in out  # the papers are `gclib list`'s
    assert len(out.splitlines()) <= 95


def test_verify_help_names_schemes_not_models(capsys):
    out = help_of("verify", capsys=capsys)
    assert all(name in out.split("schemes (--scheme NAME):")[1] for name in sch.SCHEMES)
    assert "compute-time models" not in out


def test_help_shows_defaults(capsys):
    out = " ".join(help_of("simulate", capsys=capsys).split()).split("options:", 1)[1]  # below the usage
    assert "--trials N iterations simulated" in out and "(default 10000)" in out
    assert "(default 10.0)" in out.split("--mu MU")[1].split("--alpha")[0]  # the model's own default
    assert "(default shifted-exp)" in out and "(default 0)" in out.split("--seed SEED")[1].split("--pieces")[0]
    out = " ".join(help_of("train", capsys=capsys).split()).split("options:", 1)[1]
    assert "--workers K number of workers (default 12)" in out


def test_reproduce_help_lists_profiles_and_notebooks(capsys):
    out = help_of("reproduce", capsys=capsys)
    assert "profiles: " in out and "quick" in out and "--figures-dir" in out and "--out-dir" in out
    for p in rp.notebook_paths():
        assert p.stem in out


def _subparsers():
    p = cli.build_parser()
    action = next(a for a in p._actions if a.dest == "cmd")
    return action


@pytest.mark.parametrize("cmd", sorted(_subparsers().choices))
def test_every_subcommand_has_help_and_a_summary_line(cmd, capsys):
    out = help_of(cmd, capsys=capsys)
    assert "usage: gclib " + cmd in out
    summaries = {a.dest: a.help for a in _subparsers()._choices_actions}
    assert summaries.get(cmd), f"`gclib --help` shows no summary line for {cmd}"
    assert len(out.splitlines()) <= HELP_LINES.get(cmd, 95), f"`gclib {cmd} --help` does not fit a screen"
    sub = _subparsers().choices[cmd]
    scheme = sub._option_string_actions.get("--scheme")
    names = scheme.choices or (code_names() if cmd == "train" else sch.SCHEMES) if scheme is not None else None
    if names is not None and set(names) <= set(sch.SCHEMES):  # train's --scheme: the codes it can build
        assert "schemes (--scheme NAME)" in out and "`gclib list`" in out
        listed = " ".join(out.split("schemes (--scheme NAME):")[1].split())
        assert all(n in listed.replace(",", " ").split() for n in names)
    model = sub._option_string_actions.get("--model")
    if model is not None and set(model.choices or MODELS) <= set(MODELS):
        listed = " ".join(out.split("compute-time models (--model NAME):")[1].split())
        assert all(n in listed.replace(",", " ").split() for n in MODELS)


@dataclasses.dataclass
class _Weibull(ComputeModel):
    """Task time Weibull(k, lam) (a test model)."""

    k: float = 1.5
    lam_scale: float = 0.3
    per_task: bool = False
    name = "weibull-test"

    def task_draws(self, rng, shape):
        return self.lam_scale * rng.weibull(self.k, size=shape)


@pytest.fixture
def registered(monkeypatch):
    """A scheme with a new parameter and a model with new fields, registered as another engineer would."""
    monkeypatch.setitem(sch.PARAMS, "colours", sch.Param(int, 3, "test: colours per worker"))
    monkeypatch.setitem(sch.SCHEMES, "zz-test", sch.Scheme("zz-test", lambda n, c: None,
                                                           {"workers": "n", "colours": "c"},
                                                           "Doe et al., A Test Paper (2030)", "a scheme added by a test"))
    monkeypatch.setitem(MODELS, "weibull-test", _Weibull)


def test_schemes_and_models_registered_later_appear_in_help_and_list(registered, capsys):
    out = help_of("simulate", capsys=capsys)
    assert "zz-test" in out and "--colours INT" in out and "(default 3)" in out
    assert "weibull-test" in out and "--k K" in out and "--lam-scale LAM_SCALE" in out and "(default 0.3)" in out
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "zz-test" in out and "Doe et al." in out and "weibull-test" in out
    assert "--colours (default 3)" in out and "--k (default 1.5)" in out and "--lam-scale (default 0.3)" in out


def test_a_new_model_field_gets_an_option_that_reaches_the_model(registered):
    a = cli.build_parser().parse_args(["simulate", "--scheme", "crc", "--workers", "4", "--stragglers", "1",
                                       "--model", "weibull-test", "--lam-scale", "0.7"])
    m = options.model_from_args(a)
    assert isinstance(m, _Weibull) and m.lam_scale == 0.7 and m.k == 1.5  # unset: the model's own default
    a = cli.build_parser().parse_args(["simulate", "--scheme", "crc", "--workers", "4", "--stragglers", "1",
                                       "--mu", "3", "--per-task"])
    m = options.model_from_args(a)
    assert m.name == "shifted-exp" and m.mu == 3.0 and m.alpha == 0.01 and m.per_task


def test_list_prints_each_scheme_with_its_paper(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for name, s in sch.SCHEMES.items():
        i = next(i for i, ln in enumerate(lines) if ln.split()[:1] == [name])
        assert lines[i + 1].strip() == f"paper: {s.paper}"


def test_list_columns_are_aligned(registered, capsys):
    # a name longer than any before (gc-mmc-uncorrelated, zz-test) still leaves its text in the common column
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for heading in ("schemes", "compute-time models"):
        start = next(i for i, ln in enumerate(lines) if ln.startswith(heading))
        block = []
        for ln in lines[start + 1:]:
            if not ln.startswith("  "):
                break
            block.append(ln)
        firsts = {len(ln) - len(ln[2:].split(" ", 1)[1].lstrip()) for ln in block if not ln[2].isspace()}
        others = {len(ln) - len(ln.lstrip()) for ln in block if ln[2].isspace()}
        assert len(firsts) == 1 and others == firsts, (heading, firsts, others)


def test_list_json_matches_the_registries(capsys):
    assert cli.main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in data["schemes"]] == sorted(sch.SCHEMES)
    assert [m["name"] for m in data["models"]] == sorted(MODELS)
    crc = next(s for s in data["schemes"] if s["name"] == "crc")
    assert crc["paper"] == sch.SCHEMES["crc"].paper and set(crc["parameters"]) == set(sch.SCHEMES["crc"].params)
    pareto = next(m for m in data["models"] if m["name"] == "pareto")
    assert pareto["parameters"] == {"scale": 1.0, "shape": 2.0}


# ------------------------------------------------------------------------------------------------ one vocabulary
def _shown(parser, action) -> str:
    """The placeholder ``--help`` shows for an option (``N``, ``{a,b}``; ``""`` for a flag)."""
    f = parser._get_formatter()
    return f._format_args(action, f._get_default_metavar_for_optional(action)) if action.nargs != 0 else ""


def test_an_option_several_commands_take_reads_the_same_in_each():
    seen = {}
    for cmd, sub in _subparsers().choices.items():
        for action in sub._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for o in action.option_strings:
                if o.startswith("--") and o != "--help":
                    seen.setdefault(o, {})[cmd] = _shown(sub, action)
    differ = {o: by for o, by in seen.items() if len(by) > 1 and len(set(by.values())) > 1}
    assert not differ, differ
    assert {seen["--seed"][c] for c in seen["--seed"]} == {"SEED"} and set(seen["--seed"]) >= {"simulate", "advise"}
    assert set(seen["--trials"].values()) == {"N"} and set(seen["--workers"].values()) == {"K"}
    assert set(seen["--network"]) == {"simulate", "advise"} and "--latency" not in seen and "--bandwidth" not in seen
    assert "--mu" not in seen.get("--mu", {}).get("sequential", "") and "sequential" not in seen["--mu"]
    assert set(seen["--stragglers"]) >= {"simulate", "train", "sequential"}  # one concept: the s of a code


#: ``(command line with the old name, the same with the new one)``: the old names still work for a release.
RENAMED = [
    ("sequential --delays D --scheme gc --s 2", "sequential --delays D --scheme gc --stragglers 2"),
    ("sequential --delays D --scheme m-sgc --B 1 --W 2 --lambd 3 --mu 0.5",
     "sequential --delays D --scheme m-sgc --burst 1 --window 2 --window-stragglers 3 --deadline-factor 0.5"),
    ("train --algorithm gc --code frc --D 4 --max-iter 9", "train --algorithm gc --scheme frc --lazy-window 4 "
                                                           "--iterations 9"),
]


@pytest.mark.parametrize("old, new", RENAMED)
def test_an_old_option_name_still_works_and_says_its_new_name(old, new, capsys):
    a_old = cli.build_parser().parse_args(old.split())
    warned = capsys.readouterr().err
    a_new = cli.build_parser().parse_args(new.split())
    assert capsys.readouterr().err == ""
    if old.startswith("train"):
        from gclib.cli.train import renamed

        renamed(a_old)
        renamed(a_new)
    assert {k: v for k, v in vars(a_old).items() if k != "old_code"} == vars(a_new)
    for o, n in zip(old.split(), new.split()):
        if o != n and o.startswith("--"):
            assert f"gclib: warning: {o} is now {n}" in warned


def test_train_takes_the_old_scheme_as_the_algorithm_and_says_so(capsys):
    from gclib.cli.train import renamed

    a = cli.build_parser().parse_args(["train", "--scheme", "gc", "--code", "frc"])
    renamed(a)
    assert (a.algorithm, a.scheme) == ("gc", "frc")
    assert "--scheme gc is now --algorithm gc" in capsys.readouterr().err
    a = cli.build_parser().parse_args(["train", "--algorithm", "gc", "--scheme", "gd"])
    with pytest.raises(ValueError, match="--scheme names the code of --algorithm gc"):
        renamed(a)


def test_simulate_takes_the_old_latency_and_bandwidth_as_independent_delays(capsys):
    from gclib.cli.simulate import communication

    a = cli.build_parser().parse_args("simulate --scheme crc --workers 4 --stragglers 1 --latency 0.5 "
                                      "--bandwidth 4".split())
    new = cli.build_parser().parse_args("simulate --scheme crc --workers 4 --stragglers 1 --network "
                                        "latency=0.5,bandwidth=4,queue=no".split())
    assert communication(a) == communication(new) and not communication(new).queue
    assert "--latency is now --network" in capsys.readouterr().err
    assert communication(cli.build_parser().parse_args("simulate --scheme crc --network none".split())) is None


def test_help_never_breaks_a_word(capsys):
    out = help_of("advise", capsys=capsys)
    assert "latency=T,bandwidth=G[,overhead=T][,queue=no]" in " ".join(out.split())
    for cmd in ("simulate", "train", "run", "sequential"):
        words = set(help_of(cmd, capsys=capsys).split())
        assert "gc-mmc-" not in words and "SEC" not in words


def test_a_parameters_help_names_every_scheme_that_reads_it_when_it_names_any():
    for name in sch.PARAMS:
        readers = set(sch.readers(name))
        text = sch.param_help(name)
        named = {s for s in sch.SCHEMES if f"{s}," in text.split(":")[0] + "," and text.split(":")[0] != text}
        assert not named or named == readers, (name, named, readers)
    assert sch.param_help("points").startswith("rs, ye-abbe, gc-mmc-uncorrelated, hybrid: ")
