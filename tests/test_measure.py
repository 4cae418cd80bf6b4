"""Measured task times: the timing trace of ``gclib run --measure`` and ``gclib profile`` (real MPI runs, marked
``mpi``), and the tables behind them (no MPI)."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gclib.runtime import sample_finish
from gclib.runtime.measure import host_names, profile_code, write_trace
from gclib.timings import COLUMNS, OPTIONAL, Timings
from gclib.runtime.result import RunResult
from gclib.stragglers import make_model

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _temporary_run_dirs_in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def _gclib(*args, timeout=90, tmp_path=None):
    env = None
    if tmp_path is not None:
        import os

        env = dict(os.environ, TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "gclib", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


# ---------------------------------------------------------------------------------------------- no MPI
def test_trace_frame_has_one_row_per_observed_task(tmp_path):
    d = np.full((2, 2, 3), np.nan)
    d[0, 0] = [0.1, 0.2, 0.3]
    d[0, 1, :1] = [0.5]  # abandoned after its first task
    d[1, 1] = math.inf  # dead
    f = Timings.from_array(d, host_names({0: "a", 1: "b"}, 2), min_samples=1).frame()
    assert list(f.columns) == [*COLUMNS, *OPTIONAL]
    assert len(f) == 3 + 1 + 3
    assert f[(f.iteration == 0) & (f.worker == 1)].task.tolist() == [1]
    assert np.isinf(f[f.iteration == 1].seconds).all() and set(f[f.iteration == 1].host) == {"b"}
    path = tmp_path / "t.csv"
    assert write_trace(path, d, ["a", "b"]) == 7
    back = pd.read_csv(path)
    assert list(back.columns) == [*COLUMNS, *OPTIONAL] and np.isinf(back.seconds).sum() == 3
    np.testing.assert_allclose(back.seconds[:3], [0.1, 0.2, 0.3])


def test_task_durations_from_reports_and_deaths():
    rec = [{"iteration": i} for i in range(3)]
    tasks = [[0, 0, [0.1, 0.3]], [1, 0, [0.2]], [0, 1, [0.1, None]], [0, 2, [0.2, 0.4]]]
    res = RunResult(records=rec, theta=np.zeros(1), spec={"code": {"workers": 2, "load": 2}, "kill": {"1": 1}},
                    dead_workers=[1], tasks=tasks)
    d = res.task_durations()
    np.testing.assert_allclose(d[0, 0], [0.1, 0.2])
    assert d[0, 1, 0] == pytest.approx(0.2) and np.isnan(d[0, 1, 1])  # abandoned: not observed
    assert d[1, 0, 0] == pytest.approx(0.1) and np.isinf(d[1, 0, 1])  # "never" (None in JSON) stays never
    assert np.isinf(d[1:, 1]).all()  # killed at iteration 1


def test_profile_code_sends_every_partial_gradient_alone():
    code = profile_code(3, 2)
    assert code.n_parts == 6 and code.load == 2 and code.n_messages == 6
    assert [tuple(o) for o in code.order] == [(0, 1), (2, 3), (4, 5)]
    assert code.ready.tolist() == [1, 2, 1, 2, 1, 2]


@pytest.mark.parametrize("args, says", [
    (["--workers", "3"], "--out"),
    (["--workers", "3", "--out", "X", "--kill", "5:0"], "--kill"),
    (["--workers", "3", "--out", "X", "--mu", "2"], "--mu"),
    (["--workers", "3", "--tasks", "2", "--out", "X", "--samples", "4"], "--samples"),
    (["--workers", "0", "--out", "X"], "--workers"),
    (["--workers", "3", "--out", "X", "--model", "pareto", "--mu", "2"], "--mu"),
])
def test_profile_rejects_bad_options_in_one_line(args, says, tmp_path):
    out = _gclib("profile", *[a.replace("X", str(tmp_path / "t.csv")) for a in args], tmp_path=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("gclib: error: ") and len(out.stderr.strip().splitlines()) == 1
    assert says in out.stderr
    assert not (tmp_path / "t.csv").exists()


# ---------------------------------------------------------------------------------------------- MPI
@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_profile_records_at_least_the_injected_delays_and_a_killed_worker_as_inf(tmp_path):
    K, R, N, scale, seed = 3, 2, 4, 0.02, 5
    path = tmp_path / "p.csv"
    out = _gclib("profile", "--workers", K, "--tasks", R, "--iterations", N, "--samples", 600, "--dim", 10,
                 "--model", "shifted-exp", "--mu", 2, "--alpha", 0.5, "--per-task", "--time-scale", scale,
                 "--seed", seed, "--kill", "1:2", "--out", path, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "timing trace" in out.stdout and "iter    3" in out.stdout
    f = pd.read_csv(path)
    assert list(f.columns) == [*COLUMNS, *OPTIONAL]
    assert len(f) == N * K * R  # every task of every worker observed (the master waits for all), the dead as inf
    assert not f.duplicated(["iteration", "worker", "task"]).any()
    dead = f.worker == 1
    assert np.isinf(f[dead & (f.iteration >= 2)].seconds).all()
    assert np.isfinite(f[~(dead & (f.iteration >= 2))].seconds).all()
    # the recorded finish times against the injected ones: never earlier, and not far later (a loose bound)
    injected = sample_finish(make_model("shifted-exp", mu=2, alpha=0.5, per_task=True), N, K, R, seed) * scale
    live = f[np.isfinite(f.seconds)].sort_values(["iteration", "worker", "task"])
    for (it, w), g in live.groupby(["iteration", "worker"]):
        finish = np.cumsum(g.seconds.to_numpy())
        assert (finish >= injected[it, w, :len(finish)] - 1e-9).all(), (it, w, finish, injected[it, w])
        assert (finish <= injected[it, w, :len(finish)] + 0.5).all(), (it, w, finish, injected[it, w])
    assert (f.host.astype(str).str.len() > 0).all()


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_run_measure_writes_one_row_per_reported_task(tmp_path):
    path = tmp_path / "sub" / "m.csv"
    out = _gclib("run", "--scheme", "crc", "--workers", 4, "--stragglers", 1, "--samples", 400, "--dim", 10,
                 "--iterations", 3, "--time-scale", 0.01, "--seed", 1, "--json", "--measure", path,
                 tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    f = pd.read_csv(path)
    assert list(f.columns) == [*COLUMNS, *OPTIONAL]
    reports = [t for t in doc["tasks"] if t[1] < 3]
    assert len(f) == sum(len(t[2]) for t in reports) > 0
    assert set(f.iteration) <= {0, 1, 2} and f.task.between(1, 2).all()
    assert (f.seconds >= 0).all() and np.isfinite(f.seconds).all()
    # every worker that got an iteration's parameters and was not interrupted reports both its tasks
    assert f.groupby(["iteration", "worker"]).task.max().max() == 2


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_profile_measures_what_a_message_costs_beside_the_trace(tmp_path):
    """After its iterations a profile times round trips and floods of messages of every size over MPI (the
    runtime's own sends), fits the latency, the master's time per message and the bandwidth, and writes them
    beside the trace, where gclib advise finds them."""
    from gclib import message_cost
    from gclib.runtime.message_probe import FLOOD, FLOODS, PINGS

    K, dim = 3, 40
    path = tmp_path / "p.csv"
    out = _gclib("profile", "--workers", K, "--tasks", 2, "--iterations", 3, "--samples", 60, "--dim", dim,
                 "--out", path, "--quiet", tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "network: latency" in out.stdout
    prof = message_cost.read(message_cost.beside(path))
    sizes = message_cost.sizes_for(dim)
    assert prof.gradient_bytes == 8 * dim and prof.workers == K and len(prof.hosts) == K
    assert sorted({r[0] for r in prof.ping}) == [8 * s for s in sizes]
    assert len(prof.ping) == len(sizes) * K * PINGS and len(prof.flood) == len(sizes) * FLOODS
    assert all(r[1] == K * FLOOD and 0 < r[2] <= r[3] for r in prof.flood)
    assert all(r[2] > 0 for r in prof.ping)
    assert prof.latency >= 0 and prof.overhead >= 0 and prof.bandwidth > 0
    assert prof == message_cost.fit({"ping": prof.ping, "flood": prof.flood, "workers": K}, 8 * dim, prof.hosts)


def test_profile_without_network_asks_for_none():
    from gclib.cli import options
    from gclib.cli.profile import add_arguments, spec_from_args
    from gclib.message_cost import sizes_for

    p = options.Parser(prog="gclib profile")
    add_arguments(p)
    a = p.parse_args(["--workers", "2", "--out", "x.csv", "--samples", "40", "--dim", "3"])
    assert spec_from_args(a).network == sizes_for(3)
    a = p.parse_args(["--workers", "2", "--out", "x.csv", "--samples", "40", "--no-network"])
    assert spec_from_args(a).network == ()
