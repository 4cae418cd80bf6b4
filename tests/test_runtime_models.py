"""A model of the user's own, defined outside gclib and named by its import path, trained over MPI: every rank
builds it from its name; with a code, injected stragglers and a killed worker the code tolerates, the decoded
gradient is the full-batch gradient to float64's rounding; a model that cannot be imported, built, or whose gradient
has the wrong shape or is not finite is one line and exit 2 before any rank starts; one whose build raises on a
worker is one line and exit 2 too, and one that fails on a worker mid-run names the worker and the iteration.

The MPI tests (marked ``mpi``) run 4 workers for a few short iterations, as the other runtime tests do."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from gclib import codes
from gclib.cli import main
from gclib.learning import GD, load
from gclib.runtime import RunSpec, RuntimeFailure, launch
from gclib.runtime import rounds as R
from gclib.stragglers import ShiftedExponential

import model_helpers

ROOT = Path(__file__).resolve().parents[1]
MODEL = ShiftedExponential(mu=10, alpha=0.01)
RUN = ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--iterations", "6", "--time-scale", "0.02",
       "--seed", "1", "--step", "gd"]


@pytest.fixture
def usermodels(tmp_path, monkeypatch):
    """A user's module of models in its own folder (the working directory), importable from this process; the
    launcher's run directories go under the test's tmp_path."""
    folder = tmp_path / "project"
    folder.mkdir()
    name = model_helpers.user_module(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(folder)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    yield name
    model_helpers.forget(name)


def _main(args) -> int:
    """``gclib ARGS`` in this process: its exit code (argparse's own errors exit)."""
    try:
        return main(args)
    except SystemExit as e:
        return e.code


def _gclib(args, cwd, tmp_path):
    """``python -m gclib ARGS`` in ``cwd`` (the user's folder: the model's module is found there)."""
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "gclib", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=240)


@pytest.mark.mpi
@pytest.mark.timeout(240)
def test_a_numpy_model_by_name_trains_over_mpi_with_stragglers_and_a_killed_worker(usermodels):
    model = load(f"{usermodels}:linear", parts=4)
    spec = RunSpec(codes.crc(4, 1, seed=0), model, GD(0.3), MODEL, iterations=6, time_scale=0.02, seed=2,
                   kill={2: 2}, stop_timeout=3.0)
    res = launch(spec)
    assert res.ok and res.dead_workers == [2] and len(res.records) == 6
    s = res.summary()
    assert s["max_grad_error"] < 1e-9  # the decoded gradient is the full-batch gradient, every iteration
    assert all(2 not in r["workers"] for r in res.records[3:])  # decoded without the dead worker
    losses = [r["loss"] for r in res.records]
    assert losses[-1] < losses[0] and s["final_metrics"]["rmse"] == res.records[-1]["rmse"]
    assert res.spec["model_import"]["target"] == f"{usermodels}:linear" and res.spec["metrics"] == ["rmse",
                                                                                                     "test_loss"]
    # the same run on this process's model: the parameters the master stepped to
    theta = spec.theta0.copy()
    for _ in range(6):
        theta = theta - 0.3 * model.gradient(theta)
    np.testing.assert_allclose(res.theta, theta, rtol=1e-9, atol=1e-12)


@pytest.mark.mpi
@pytest.mark.timeout(240)
def test_sequential_rounds_train_a_named_model(usermodels):
    delays = 0.02 * (1 + np.random.default_rng(0).exponential(0.1, (4, 6)))
    model = load(f"{usermodels}:linear", parts=4)
    res = launch(R.sequential_spec("gc", delays, problem=model, lr=0.3, s=1, stop_timeout=3.0))
    assert res.ok and len(res.records) == 6
    errors = [r["grad_error"] for r in res.records if r["job"] is not None]
    assert errors and max(errors) < 1e-9


@pytest.mark.parametrize("target, says", [
    ("{m}_absent:linear", "argument --model: model {m}_absent:linear: its module {m}_absent cannot be imported: "
                          "ModuleNotFoundError"),
    ("{m}:nothing", "argument --model: model {m}:nothing: module '{m}' has no attribute 'nothing'"),
    ("{m}:raises", "argument --model: model {m}:raises(parts=4) raised RuntimeError while it was built"),
    ("{m}:wrong_shape", "the gradient of part 0 at the initial parameters has shape (5,), not (4,)"),
    ("{m}:nan_gradient", "the gradient of part 0 at the initial parameters is not finite (4 of its 4 entries are "
                         "nan or inf)"),
    ("{m}.py", "argument --model: must be a compute-time model (exp, pareto, shifted-exp) or your model as "
               "MODULE:FUNCTION, got '{m}.py'"),
])
def test_a_bad_model_is_one_line_and_exit_2_before_any_rank_starts(usermodels, tmp_path, capsys, target, says):
    rc = _main(RUN + ["--model", target.format(m=usermodels), "--lr", "0.1"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gclib: error: ") and says.format(m=usermodels) in err, err
    assert not list(tmp_path.glob("gclib-run-*"))  # nothing was started


@pytest.mark.parametrize("extra, says", [
    (["--samples", "100"], "argument --samples: describes a built-in problem; your model"),
    (["--model-args", "x"], "argument --model-args: model arguments must be NAME=VALUE items"),
    (["--compute-model", "pareto", "--mu", "3"], "argument --mu: model 'pareto' does not take it"),
    ([], "argument --lr: lr must be given for model"),
])
def test_options_that_do_not_go_with_a_model_of_ones_own_are_refused(usermodels, capsys, extra, says):
    args = RUN + ["--model", f"{usermodels}:linear"] + extra
    rc = _main(args if "--lr" in args or not extra else args + ["--lr", "0.1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and says in err, err
    rc = _main(RUN + ["--compute-model", "pareto"])  # --compute-model without a model of one's own
    assert rc == 2 and "argument --compute-model: goes with your model" in capsys.readouterr().err


@pytest.mark.mpi
@pytest.mark.timeout(240)
def test_a_model_whose_build_raises_on_a_worker_is_one_line_and_exit_2(usermodels, tmp_path):
    p = _gclib(RUN + ["--model", f"{usermodels}:raises_on_rank", "--lr", "0.1"], Path.cwd(), tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(
        f"gclib: error: worker 1 could not build the model: model {usermodels}:raises_on_rank(parts=4) raised "
        f"RuntimeError while it was built: the data set is not on this host"), p.stderr


@pytest.mark.mpi
@pytest.mark.timeout(240)
def test_a_model_that_fails_on_a_worker_mid_run_names_the_worker_and_the_iteration(usermodels, tmp_path):
    # worker 1 (MPI rank 2) computes its warm-up gradient, then raises at the first part it computes in a run
    p = _gclib(RUN + ["--model", f"{usermodels}:fails_later", "--model-args", "after=1", "--lr", "0.1"], Path.cwd(),
               tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stderr.count("\n") == 1 and "gclib: error: worker 1 failed in iteration " in p.stderr
    assert "FloatingPointError: overflow in part" in p.stderr and "gclib run --resume" in p.stderr
    # the library says the same, with what ran kept: the command line's run (its injected delays too; without
    # them the other three workers may end all six iterations before a starved worker 1 computes a part)
    with pytest.raises(RuntimeFailure, match=r"worker 1 failed in iteration \d+: FloatingPointError") as e:
        launch(RunSpec(codes.crc(4, 1, seed=0), load(f"{usermodels}:fails_later", parts=4, after=1), GD(0.1), MODEL,
                       iterations=6, time_scale=0.02, seed=1, stop_timeout=3.0))
    assert e.value.result.status == "error" and e.value.result.run_dir is not None


@pytest.mark.mpi
@pytest.mark.timeout(300)
def test_a_stopped_run_of_a_named_model_resumes_from_its_state_file(usermodels, tmp_path):
    """Uncoded with a worker killed at iteration 3 stops there (the state is saved); the resumed run builds the
    model again from its name and arguments, on every rank, and finishes without the kill."""
    state = tmp_path / "state.json"
    args = ["run", "--scheme", "uncoded", "--workers", "4", "--iterations", "8", "--time-scale", "0.01", "--step",
            "gd", "--lr", "0.3", "--timeout", "2", "--kill", "1:3", "--model", f"{usermodels}:linear", "--model-args",
            "rows=100, seed=3", "--state", str(state)]
    stopped = _gclib(args, Path.cwd(), tmp_path)
    assert stopped.returncode == 1 and "continue with: gclib run --resume" in stopped.stderr, stopped.stderr
    resumed = _gclib(["run", "--resume", str(state), "--json"], Path.cwd(), tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["summary"]["iterations"] == 8 and doc["summary"]["max_grad_error"] < 1e-9
    assert doc["spec"]["model_import"]["kwargs"] == {"parts": 4, "rows": 100, "seed": 3}
