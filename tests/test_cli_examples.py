"""Every example in every command's ``--help`` runs as written and exits 0: in a folder that holds the repository's
``data/`` and ``figures/`` and the small files the examples' help describes (a delay matrix, a tidy and a wide
CSV). Examples that launch MPI or a notebook carry the ``mpi`` and ``notebooks`` marks."""
from __future__ import annotations

import importlib
import shlex
from pathlib import Path

import numpy as np
import pytest

from gclib import cli

ROOT = Path(__file__).resolve().parents[1]


def _examples() -> list:
    """``(command name, example command line)`` of every command module's ``EXAMPLES``."""
    out = []
    for name in cli.COMMANDS:
        module = importlib.import_module(f"gclib.cli.{name}")
        out += [(module.NAME, line) for line, _ in module.EXAMPLES]
    return out


def _marks(line: str) -> list:
    words = shlex.split(line)
    if words[1] in ("run", "profile") or "--mpi" in words:
        return [pytest.mark.mpi]
    if words[1] == "reproduce":
        return [pytest.mark.notebooks]
    return []


def _files(folder: Path) -> None:
    """The repository's data and figures, and the files the examples name (as their help describes them)."""
    (folder / "data").symlink_to(ROOT / "data")
    (folder / "figures").symlink_to(ROOT / "figures")
    rng = np.random.default_rng(0)
    # seconds, a row per worker and a column per round: short rounds, so that the example over MPI is quick
    np.savetxt(folder / "delays.csv", 0.005 + rng.exponential(0.002, (6, 12)), delimiter=",")
    times = 0.1 + rng.exponential(0.02, (12, 4))  # 12 iterations of 4 workers
    (folder / "log.csv").write_text("step,rank,duration\n" + "".join(
        f"{i},{w},{times[i, w]:.6f}\n" for i in range(12) for w in range(4)))
    (folder / "wide.csv").write_text("iteration,0,1,2,3\n" + "".join(
        f"{i}," + ",".join(f"{x:.6f}" for x in times[i]) + "\n" for i in range(12)))


@pytest.mark.parametrize("command, line", [pytest.param(c, line, marks=_marks(line), id=line)
                                           for c, line in _examples()])
def test_every_example_runs(command, line, tmp_path, monkeypatch, capsys):
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    words = shlex.split(line)
    assert words[:2] == ["gclib", command]
    code = cli.main(words[1:])
    out, err = capsys.readouterr()
    assert code == 0, f"{line}\n{err}"
    assert out.strip(), f"{line} printed nothing"
    assert "is now" not in err, f"{line} uses an old option name: {err}"


@pytest.mark.parametrize("name", cli.COMMANDS)
def test_every_command_shows_its_examples_in_its_help(name, capsys):
    module = importlib.import_module(f"gclib.cli.{name}")
    assert module.EXAMPLES, f"gclib {module.NAME} has no examples"
    with pytest.raises(SystemExit) as e:
        cli.main([module.NAME, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "\nexamples:\n" in out
    for line, what in module.EXAMPLES:
        assert f"\n  {line}\n" in out and " ".join(what.split()[:4]) in " ".join(out.split())
