"""The command line: JSON output, exit codes, one-line errors."""
import json
import os
import subprocess
import sys

import pytest

from gclib.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "gclib", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_simulate_json_has_the_documented_keys():
    p = run("simulate", "--scheme", "frc", "--workers", "40", "--stragglers", "9", "--model", "shifted-exp",
            "--mu", "10", "--alpha", "0.01", "--trials", "20000", "--seed", "1", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for key in ("scheme", "mean_time", "ci95_time", "mean_messages", "mean_computations", "trials", "seed",
                "mean_volume", "mean_cluster_messages"):
        assert key in out
    assert out["scheme"] == "frc" and out["trials"] == 20000 and out["seed"] == 1
    assert 0.2 < out["mean_time"] < 0.5


@pytest.mark.parametrize("scheme", ["uncoded", "ignore", "frc", "crc"])
def test_simulate_in_process(scheme, capsys):
    s = [] if scheme == "uncoded" else ["--stragglers", "1"]  # uncoded tolerates none: it takes no --stragglers
    assert main(["simulate", "--scheme", scheme, "--workers", "8", *s, "--trials", "500",
                 "--json", "--model", "pareto", "--shape", "1.5"]) == 0
    assert json.loads(capsys.readouterr().out)["scheme"] == scheme


def test_verify_exit_codes(capsys):
    assert main(["verify", "--scheme", "crc", "--workers", "7", "--stragglers", "3", "--seed", "2"]) == 0
    assert "35 straggler patterns checked" in capsys.readouterr().out
    assert main(["verify", "--scheme", "crc", "--workers", "6", "--stragglers", "1", "--drop", "2"]) == 1
    assert "FAILED" in capsys.readouterr().out


@pytest.mark.parametrize("args,needle", [
    (["simulate", "--scheme", "crc", "--workers", "5", "--stragglers", "5"], "stragglers must be at most 4"),
    (["simulate", "--scheme", "frc", "--workers", "10", "--stragglers", "3"], "divisible"),
    (["simulate", "--scheme", "crc", "--workers", "5"], "needs --stragglers"),
    (["simulate", "--scheme", "crc", "--workers", "5", "--stragglers", "1", "--mu", "-1"], "--mu: must be"),
    (["simulate", "--scheme", "nope", "--workers", "5"], "invalid choice"),
    (["simulate", "--scheme", "crc", "--workers", "5", "--stragglers", "1", "--trials", "0"], "trials"),
])
def test_bad_arguments_one_line_exit_2(args, needle):
    p = run(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gclib: error:") and needle in lines[0], p.stderr


@pytest.mark.parametrize("args,needle", [
    (["simulate", "--scheme", "crc", "--workers", "8", "--stragglers", "1", "--load", "5"],
     "argument --load: scheme 'crc' does not take it (crc takes --workers, --stragglers, --seed, --exact"),
    (["simulate", "--scheme", "uncoded", "--workers", "8", "--stragglers", "1", "--points", "chebyshev"],
     "argument --stragglers, --points: scheme 'uncoded' does not take them (uncoded takes --workers"),
    (["simulate", "--scheme", "crc", "--workers", "8", "--stragglers", "1", "--model", "pareto", "--mu", "3"],
     "argument --mu: model 'pareto' does not take it (pareto takes --scale, --shape"),
    (["verify", "--scheme", "frc", "--workers", "4", "--stragglers", "1", "--exact"],
     "argument --exact: scheme 'frc' does not take it"),
    (["train", "--algorithm", "lag-wk", "--model", "exp", "--shape", "2"], "argument --shape: model 'exp'"),
    (["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--order", "2"],
     "argument --order: scheme 'crc'"),
])
def test_options_the_scheme_or_model_does_not_take_are_refused(args, needle, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gclib: error: ") and needle in err[0], err


def test_options_not_given_keep_the_scheme_and_model_defaults(capsys):
    # --seed (default 0) is every scheme's (it seeds the simulation); --points at the table's default is the same
    # code as not given; a model option at the model's default is the same model
    base = ["simulate", "--scheme", "rs", "--workers", "6", "--stragglers", "2", "--trials", "200", "--json"]
    outs = []
    for extra in ([], ["--points", "equispaced", "--seed", "0", "--mu", "10", "--alpha", "0.01"]):
        assert main(base + extra) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[0]["model"]["mu"] == 10.0
    assert main(["simulate", "--scheme", "uncoded", "--workers", "4", "--seed", "3", "--trials", "50"]) == 0


def test_plain_simulate_names_the_model_and_its_parameters(capsys):
    assert main(["simulate", "--scheme", "crc", "--workers", "8", "--stragglers", "1", "--trials", "100",
                 "--model", "pareto", "--shape", "1.5", "--persistent", "2"]) == 0
    out = capsys.readouterr().out
    assert "crc under pareto (scale 1, shape 1.5, one draw per worker), 2 random workers per trial never answer" \
        in out and "mean time" in out and "(100 trials, " in out
    assert main(["simulate", "--scheme", "frc", "--workers", "4", "--stragglers", "1", "--trials", "100",
                 "--per-task"]) == 0
    assert "frc under shifted-exp (mu 10, alpha 0.01, one draw per partial gradient)" in capsys.readouterr().out


def test_list_names_papers(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "crc" in out and "Tandon" in out


@pytest.mark.parametrize("module, package, extra", [("sklearn", "scikit-learn", "data"),
                                                    ("pyarrow.parquet", "pyarrow", "traces"),
                                                    ("mpi4py", "mpi4py", "mpi")])
def test_a_missing_optional_package_names_its_extra(monkeypatch, capsys, module, package, extra):
    """``gclib train --problem breast-cancer`` without scikit-learn, and the like: one line naming the extra."""
    import gclib.cli as cli

    def missing(a):
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda only=None: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv=None: type("A", (), {"fn": staticmethod(missing)})())
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # the package by the name pip installs (scikit-learn, not its module's name)
    assert len(err) == 1 and f"pip install 'gclib[{extra}]'" in err[0] and f"optional package {package}," in err[0]


def test_a_missing_module_that_is_no_extra_is_a_bug_and_raises(monkeypatch):
    import gclib.cli as cli

    def missing(a):
        raise ModuleNotFoundError("No module named 'gclib.nothing'", name="gclib.nothing")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda only=None: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv=None: type("A", (), {"fn": staticmethod(missing)})())
    with pytest.raises(ModuleNotFoundError):
        cli.main(["list"])


def test_every_extra_named_for_a_missing_package_exists():
    import tomllib
    from pathlib import Path

    import gclib.cli as cli

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert set(cli.EXTRAS.values()) <= set(extras)
