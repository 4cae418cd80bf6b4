"""The guide docs/your_model.md runs as written: each framework's example, saved under the name its first line
gives and run with ``python`` in a folder of its own, trains over MPI with a killed worker and decodes exactly; its
command line does the same for the PyTorch model. The JAX example skips, saying so, where JAX is not installed."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "your_model.md"
LINE = re.compile(r"^(\d+) iterations, dead workers \[(\d+)\], test accuracy ([0-9.]+), largest decoding error "
                  r"(\S+)$", re.M)


def _examples() -> dict:
    """``{file name: source}`` of the guide's Python blocks (each opens with ``# NAME.py: ...``)."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    return {re.match(r"# (\S+\.py):", b).group(1): b for b in blocks}


def _command() -> list:
    """The guide's ``gclib run`` command line, as words."""
    (block,) = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), flags=re.S)
    return shlex.split(block.replace("\\\n", " "))


def _env(tmp_path):
    return dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))


def _run_example(name, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / name).write_text(_examples()[name])
    p = subprocess.run([sys.executable, name], cwd=folder, env=_env(tmp_path), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    iterations, dead, acc, err = LINE.search(p.stdout).groups()
    return int(iterations), int(dead), float(acc), float(err)


def test_the_guide_has_one_example_per_framework():
    assert sorted(_examples()) == ["mymodel_jax.py", "mymodel_numpy.py", "mymodel_torch.py"]
    for name, src in _examples().items():
        assert 25 <= len(src.strip().splitlines()) <= 45, f"{name}: about 30 lines"
        compile(src, name, "exec")
    assert _command()[:2] == ["gclib", "run"] and "mymodel_torch:mlp" in _command()


@pytest.mark.mpi
@pytest.mark.timeout(400)
@pytest.mark.parametrize("name, killed", [("mymodel_torch.py", 3), ("mymodel_numpy.py", 1)])
def test_the_examples_train_over_mpi_past_a_killed_worker_and_decode_exactly(name, killed, tmp_path):
    iterations, dead, acc, err = _run_example(name, tmp_path)
    assert iterations == 30 and dead == killed and err < 1e-9 and 0.5 < acc <= 1.0


@pytest.mark.mpi
@pytest.mark.timeout(400)
def test_the_jax_example_trains_over_mpi_where_jax_is_installed(tmp_path):
    pytest.importorskip("jax", reason="JAX is not installed (pip install jax): the guide's JAX example is not run")
    iterations, dead, acc, err = _run_example("mymodel_jax.py", tmp_path)
    assert iterations == 30 and dead == 2 and err < 1e-9 and 0.5 < acc <= 1.0


@pytest.mark.mpi
@pytest.mark.timeout(400)
def test_the_guides_command_line_trains_the_pytorch_model(tmp_path):
    """The guide's command as written, with ``--state`` beside it to read what the run did: the model named with
    its arguments, exact decoding past the killed worker, the model's own metrics in every record."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "mymodel_torch.py").write_text(_examples()["mymodel_torch.py"])
    p = subprocess.run([sys.executable, "-m", "gclib", *_command()[1:], "--state", "state.json"], cwd=folder,
                       env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "crc: 30 iterations" in p.stdout and "note: worker processes died: 3" in p.stdout
    assert re.search(r"  accuracy 0\.\d+", p.stdout.splitlines()[-3])  # the last iteration's line shows it
    state = json.loads((folder / "state.json").read_text())
    assert state["spec"]["model_import"] == {"target": "mymodel_torch:mlp", "kwargs": {"hidden": 32, "parts": 4}}
    assert state["spec"]["dim"] == 64 * 32 + 32 + 32 * 10 + 10  # the guide's network's parameters
    records = state["records"]
    assert len(records) == 30 and max(r["grad_error"] for r in records) < 1e-9
    assert all(3 not in r["workers"] for r in records[11:])  # decoded without the dead worker
    assert {"accuracy", "test_loss"} <= set(records[-1]) and 0 <= records[-1]["accuracy"] <= 1
