"""The CLI's help lists schemes, models and their parameters from the registries; `gclib list`; `gclib trace`."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from gclib import cli, reproduce as rp
from gclib.cli import options, registries
from gclib import schemes as sch
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


#: lines a subcommand's help may take (a screen): the catalogue is `gclib list`'s
HELP_LINES = {"run": 130}  # run lists every scheme parameter (one line each) beside its own options


def test_simulate_help_names_schemes_and_models_and_points_to_list(capsys):
    out = help_of("simulate", capsys=capsys)
    assert "schemes (--scheme NAME)" in out and "compute-time models (--model NAME)" in out and "`gclib list`" in out
    names = out.split("schemes (--scheme NAME):")[1]
    for name in list(sch.SCHEMES) + list(MODELS):
        assert name in names
    assert sch.SCHEMES["crc"].paper not in out  # the papers are `gclib list`'s
    assert len(out.splitlines()) <= 70


def test_verify_help_names_schemes_not_models(capsys):
    out = help_of("verify", capsys=capsys)
    assert all(name in out.split("schemes (--scheme NAME):")[1] for name in sch.SCHEMES)
    assert "compute-time models" not in out


def test_help_shows_defaults(capsys):
    out = " ".join(help_of("simulate", capsys=capsys).split()).split("options:", 1)[1]  # below the usage
    assert "--trials TRIALS iterations simulated" in out and "(default 10000)" in out
    assert "(default 10.0)" in out.split("--mu MU")[1].split("--alpha")[0]  # the model's own default
    assert "(default shifted-exp)" in out and "(default 0)" in out.split("--seed INT")[1].split("--pieces")[0]
    out = " ".join(help_of("train", capsys=capsys).split()).split("options:", 1)[1]
    assert "--workers WORKERS number of workers (default 12)" in out


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
    assert len(out.splitlines()) <= HELP_LINES.get(cmd, 80), f"`gclib {cmd} --help` does not fit a screen"
    sub = _subparsers().choices[cmd]
    scheme = sub._option_string_actions.get("--scheme")
    if scheme is not None and set(scheme.choices or sch.SCHEMES) <= set(sch.SCHEMES):
        assert "schemes (--scheme NAME)" in out and "`gclib list`" in out
        listed = " ".join(out.split("schemes (--scheme NAME):")[1].split())
        assert all(n in listed.replace(",", " ").split() for n in (scheme.choices or sch.SCHEMES))
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
