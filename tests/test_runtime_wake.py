"""The wake-up channels between the master and the workers: their set-up, its refusals, and runs without them."""
from __future__ import annotations

import json
import socket
import tempfile
import threading

import numpy as np
import pytest

from gclib import schemes
from gclib.codes.mmc import uc_mmc
from gclib.learning import TandonAGD, make_problem
from gclib.runtime import RunSpec, launch
from gclib.runtime import wake
from gclib.stragglers import ShiftedExponential


@pytest.fixture(autouse=True)
def _temporary_run_dirs_in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv(wake.ENV, raising=False)


def _connect_in_thread(offer, w):
    out = {}
    t = threading.Thread(target=lambda: out.update(zip(("sock", "why"), wake.connect(offer, w))))
    t.start()
    return t, out


def _set_up(listener, offer, w):
    t, out = _connect_in_thread(offer, w)
    for _ in range(50):
        listener.accept(0.1)
        if not t.is_alive():
            break
    t.join(10)
    return out


def test_a_worker_connects_with_the_token_and_bytes_wake_both_ways():
    lis = wake.Listener(3)
    assert lis.server is not None, lis.why
    offer = lis.offer()
    info = json.loads(offer)
    assert info["port"] > 0 and len(info["token"]) == 32
    assert info["addrs"] == wake.local_addresses()
    out = _set_up(lis, offer, 2)
    sock = out["sock"]
    assert sock is not None, out["why"]
    assert list(lis.conns) == [2]
    conn = lis.conns[2]
    assert wake.drain(conn) == 0  # nothing yet, and no blocking
    assert wake.notify(sock) and wake.notify(sock)
    assert wake.wait([conn], 5.0) == [conn]
    got = 0
    while got < 2 and wake.wait([conn], 5.0):
        got += wake.drain(conn)
    assert got == 2
    assert wake.notify(conn) and wake.wait([sock], 5.0) == [sock] and wake.drain(sock) == 1
    sock.close()
    assert wake.wait([conn], 5.0) == [conn] and wake.drain(conn) == -1  # the worker's side closed
    conn.close()
    lis.close_server()


def test_a_wrong_token_a_wrong_worker_or_no_listener_make_no_channel():
    lis = wake.Listener(2)
    offer = json.loads(lis.offer())
    bad = dict(offer, token="0" * 32)
    out = _set_up(lis, json.dumps(bad).encode(), 1)
    assert out["sock"] is None and "refused the token" in out["why"]
    out = _set_up(lis, lis.offer(), 5)  # there are 2 workers
    assert out["sock"] is None and lis.conns == {}
    port = lis.server.getsockname()[1]
    lis.close_server()
    sock, why = wake.connect(json.dumps(dict(offer, addrs=["127.0.0.1"], port=port)).encode(), 0)
    assert sock is None and why.startswith("no address of the master reachable (127.0.0.1: ")
    sock, why = wake.connect(b"{}", 0)
    assert sock is None and "offered no wake-up channel" in why


def test_the_environment_turns_the_channels_off(monkeypatch):
    monkeypatch.setenv(wake.ENV, "off")
    assert not wake.enabled()
    lis = wake.Listener(4)
    assert lis.server is None and lis.offer() == b"{}" and "turned off" in lis.why
    assert wake.enabled({wake.ENV: "on"}) and wake.enabled({})


def test_local_addresses_put_loopback_last():
    addrs = wake.local_addresses()
    assert addrs, "this host has no IPv4 address"
    loop = [a.startswith("127.") for a in addrs]
    assert loop == sorted(loop)
    assert all(socket.inet_aton(a) for a in addrs)


# ---------------------------------------------------------------------------------------------- MPI runs
def _run(code, run_dir, iterations=3):
    problem = make_problem("tandon-logistic", parts=code.n_parts, seed=0, n_samples=400, dim=11)
    spec = RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(mu=10, alpha=0.01),
                   iterations=iterations, seed=3, time_scale=0.01, timeout=5.0, stop_timeout=3.0)
    res = launch(spec, job_timeout=60, run_dir=run_dir)
    log = (run_dir / "stderr.txt").read_text()
    return res, log


@pytest.mark.mpi
@pytest.mark.timeout(120)
@pytest.mark.parametrize("setting", ["on", "off"])
def test_runs_decode_exactly_with_and_without_wake_up_channels(tmp_path, monkeypatch, setting):
    if setting == "off":
        monkeypatch.setenv(wake.ENV, "off")
    for name, code in {"crc": schemes.build("crc", workers=4, stragglers=1), "multimessage": uc_mmc(4, 2)}.items():
        res, log = _run(code, tmp_path / name)
        assert res.ok, (name, res.error)
        assert max(r["grad_error"] for r in res.records) < 1e-9, name
        assert res.messages_sent == res.messages_received == sum(r["messages"] for r in res.records) + res.drained
        if setting == "off":  # the fallback is said in the run's log, by the master and by every worker
            assert "no wake-up channel to workers [0, 1, 2, 3] (turned off (GCLIB_WAKE=off))" in log, log
            assert all(f"worker {w}: no wake-up channel (" in log for w in range(4)), log
        else:
            assert "wake-up channel" not in log, log
