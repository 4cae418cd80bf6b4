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
    assert main(["simulate", "--scheme", scheme, "--workers", "8", "--stragglers", "1", "--trials", "500",
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


def test_list_names_papers(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "crc" in out and "Tandon" in out
