"""Runs across "hosts" with their own network stacks and no shared directory, on one Linux machine.

The tests marked ``multihost`` make three network namespaces joined by veth pairs to a bridge (an address range of
the private 10.213.0.0/16 that exists only on that bridge; :class:`gclib.runtime.namespace_hosts.LocalHosts`), and run
``gclib run --hosts`` with the ranks spread over them by Hydra's launcher: a small program that Hydra calls as
``PROGRAM -x HOST COMMAND...`` enters HOST's namespace with a private mount namespace (its own /dev/shm, its own host
name, and an empty folder over the launching host's private folder) and runs the command there. The ranks talk over TCP
only (``UCX_TLS=tcp,self``: UCX's shared memory would cross namespaces), which the veths' byte counters confirm. The run
directory lies in the launching host's private folder, which no "host" sees (the checkout and its venv may lie anywhere,
/tmp included: every host sees them, as on a cluster where they are installed at the same path): the launcher program
refuses to start a proxy that could see it, so a finished run shows that no rank read it.

One more measures, through a link into the master's host limited by the kernel's token bucket, the rate of that
link with ``gclib profile``'s network measurement. The other tests check the pieces without namespaces: the spec's
windowed hand-off on rank 0's standard input, the death notices, the ``mpiexec`` options, and the local hosts'
rates and slots.
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gclib.cli import main
from gclib.runtime import namespace_hosts
from gclib.runtime.command import mpiexec_command, mpiexec_options
from gclib.runtime.processes import job_processes, rank_processes
from gclib.runtime.master import DeathNotices
from gclib.runtime.rank import read_spec
from gclib.runtime.protocol import MARK

import fault_helpers

ROOT = Path(__file__).resolve().parents[1]
#: The ranks' network: UCX over TCP only (its shared-memory transports would work across network namespaces).
NETWORK = {"UCX_TLS": namespace_hosts.UCX_TLS}
HOSTS = ("h0", "h1", "h2")
#: Ranks per host in the hostfile: rank 0 (the master) and workers 0, 1 on h0; workers 2, 3 on h1; 4, 5 on h2.
SLOTS = (3, 2, 2)


# ---------------------------------------------------------------------------------------------- the pieces
def test_read_spec_takes_the_spec_a_window_at_a_time(capfd):
    data = pickle.dumps(list(range(3000)))
    r, w = os.pipe()
    try:
        os.write(w, b"%d\n" % len(data) + data + b'{"worker": 1, "signal": 9}\n')
        assert pickle.loads(read_spec(r, window=1000)) == list(range(3000))
        acks = [json.loads(x[len(MARK):]) for x in capfd.readouterr().out.splitlines()]
        full = len(data) // 1000
        assert [a["received"] for a in acks] == [1000 * (i + 1) for i in range(full)] + [len(data)]
        notices = DeathNotices(r)  # what follows the spec: the death notices, one JSON line each
        assert notices.read() == {1: {"signal": 9}} and notices.read() == {}
    finally:
        os.close(w)
        os.close(r)


def test_read_spec_refuses_a_cut_input():
    r, w = os.pipe()
    os.write(w, b"100\nabc")
    os.close(w)
    try:
        with pytest.raises(EOFError, match="after 3 of 100 bytes"):
            read_spec(r, window=64)
    finally:
        os.close(r)


def test_read_spec_between_two_runs_keeps_the_notices_before_the_length_and_reads_0_as_none_follows(capfd):
    r, w = os.pipe()
    try:
        os.write(w, b'{"worker": 2, "continued": true}\n0\n')
        notices = []
        assert read_spec(r, window=64, notices=notices) == b"" and capfd.readouterr().out == ""
        assert notices == [b'{"worker": 2, "continued": true}\n']
        later = DeathNotices(r, b"".join(notices))  # the next run's master reads them first
        assert later.read() == {2: {"continued": True}}
        os.write(w, b'{"worker": 1, "signal": 9}\n5\n')
        with pytest.raises(ValueError, match="length"):  # where the first spec's length belongs, a notice is wrong
            read_spec(r, window=64)
    finally:
        os.close(w)
        os.close(r)


def test_death_notices_keep_a_cut_line_and_skip_garbage():
    r, w = os.pipe()
    try:
        notices = DeathNotices(r)
        os.write(w, b'{"worker": 2, "signal": 9, "host": "h1"}\nnot json\n{"worker": 3, "co')
        assert notices.read() == {2: {"signal": 9, "host": "h1"}}
        os.write(w, b'de": 17}\n')
        assert notices.read() == {3: {"code": 17}}
        os.close(w)
        w = None
        assert notices.read() == {} and not notices.open  # the launcher closed it
    finally:
        os.close(r)
        if w is not None:
            os.close(w)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/self/fd and SCM_RIGHTS")
def test_a_ranks_sockets_outlive_it_in_its_guard(monkeypatch):
    import socket

    from gclib.runtime import guard

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(listener.getsockname())
    conn, _ = listener.accept()
    listener.close()
    try:
        monkeypatch.setenv(guard.CHANNEL, str(theirs.fileno()))
        monkeypatch.delenv("PMI_FD", raising=False)
        assert guard.hand_over_sockets() >= 2  # conn and peer at least
        theirs.close()
        conn.close()  # the rank is gone; its connection is not: the guard holds a copy
        held = guard._taken_over(mine)
        peer.setblocking(False)
        with pytest.raises(BlockingIOError):
            peer.recv(1)  # no end of stream: the connection is still open
        for h in held:
            h.close()
        peer.setblocking(True)
        peer.settimeout(5)
        assert peer.recv(1) == b""  # let go: now the peer sees the end
    finally:
        for x in (mine, peer):
            x.close()


def test_mpiexec_options_go_before_the_program(tmp_path):
    assert mpiexec_options(None, "-launcher ssh -iface 'br 0'") == ["-launcher", "ssh", "-iface", "br 0"]
    assert mpiexec_options("mpiexec_args", ["-iface", "eth1"]) == ["-iface", "eth1"]
    with pytest.raises(ValueError, match="mpiexec_args must be .*No closing quotation"):
        mpiexec_options("mpiexec_args", "-x 'a")
    with pytest.raises(TypeError, match="mpiexec_args must be a list of strings"):
        mpiexec_options("mpiexec_args", ["-n", 3])
    cmd = mpiexec_command(tmp_path, 4, extra=["-iface", "eth1"])
    assert cmd[cmd.index("-iface") + 1] == "eth1" and cmd.index("-iface") < cmd.index(sys.executable)
    assert cmd[-1] == str(tmp_path)  # the job's name, which no rank reads


def test_gclib_run_refuses_bad_mpiexec_args(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--mpiexec-args", "-x 'a"])
    assert e.value.code == 2
    assert "argument --mpiexec-args: must be mpiexec options" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- the hosts
@pytest.fixture
def hosts(tmp_path):
    """Three "hosts" (:class:`gclib.runtime.namespace_hosts.LocalHosts`): network namespaces on a bridge, a hostfile,
    and the launcher program that enters them; the launching host's private folder holds the run directory, which
    no host may see. Everything is removed at the end, whatever happened (and the removal is checked)."""
    why = namespace_hosts.why_not()
    if why:
        pytest.skip(why)
    private = tmp_path / "launching-host"
    run_dir = private / "run"
    run_dir.mkdir(parents=True)
    made = namespace_hosts.LocalHosts(SLOTS, private=private, check=run_dir, directory=tmp_path)
    try:
        made.__enter__()
    except namespace_hosts.HostsUnavailable as e:
        pytest.skip(str(e))
    try:
        yield {"local": made, "hostfile": made.hostfile, "program": made.program, "bridge": made.bridge,
               "namespaces": made.namespaces, "run_dir": run_dir}
    finally:
        made.close()


def _gclib_run(args, hosts, faults=(), stop_at_start=()):
    """``gclib run ARGS --hosts ... --mpiexec-args ...`` across the hosts; ``faults``: ``(rank, iteration,
    signal)``, the signal goes to that rank's process once the iteration is printed; ``stop_at_start``: ranks whose
    processes are stopped (SIGSTOP) as soon as they exist, before MPI_Init. Returns (exit code, output, state
    document)."""
    run_dir, state = hosts["run_dir"], hosts["run_dir"].parent / "state.json"
    cmd = [sys.executable, "-m", "gclib", "run", *args, "--hosts", str(hosts["hostfile"]),
           "--mpiexec-args", f"-launcher ssh -launcher-exec {hosts['program']} -iface {hosts['bridge']}",
           "--run-dir", str(run_dir), "--state", str(state), "--job-timeout", "90"]
    env = dict(os.environ, **NETWORK, PYTHONFAULTHANDLER="1", PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=run_dir.parent)
    err = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    stopper, stopped = fault_helpers.stop_at_start(run_dir, stop_at_start)
    stopper.start()
    out, faults = [], list(faults)
    try:
        for line in proc.stdout:
            out.append(line)
            for rank, it, sig in [f for f in faults if line.startswith(f"iter {f[1]:4d}")]:
                pid = rank_processes(run_dir).get(rank)
                assert pid is not None, f"rank {rank} not found among the job's processes"
                os.kill(pid, sig)
                faults.remove((rank, it, sig))
        rc = proc.wait(timeout=120)
        stopper.join(timeout=10)
        assert sorted(stopped) == sorted(stop_at_start), stopped
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=10)
    text = "".join(out) + "".join(err)
    assert state.exists(), text
    doc = json.loads(state.read_text())
    state.unlink()
    return rc, text, doc


def _nothing_left(hosts):
    assert job_processes(hosts["run_dir"]) == []
    assert hosts["local"].processes() == {h: [] for h in HOSTS}, "processes left in a namespace"


COMMON = ["--samples", "2000", "--dim", "50", "--iterations", "6", "--time-scale", "0.02", "--timeout", "20",
          "--seed", "2"]


@pytest.mark.multihost
@pytest.mark.mpi
def test_runs_across_network_namespaces_without_a_shared_directory(hosts):
    ns = hosts["namespaces"]
    before = {h: hosts["local"].bytes_sent(h) for h in ns}
    train_bytes = 0.8 * 2000 * 50 * 8  # the training data each worker receives in the spec (80% of the samples)

    # CRC with a persistent straggler on the third host (worker 5: rank 6 on h2)
    rc, text, doc = _gclib_run(["--scheme", "crc", "--workers", "6", "--stragglers", "1",
                                "--persistent-workers", "5", *COMMON], hosts)
    assert rc == 0, text
    s = doc["summary"]
    assert s["status"] == "ok" and s["iterations"] == 6 and s["max_grad_error"] < 1e-9, s
    assert all(5 not in r["workers"] for r in doc["records"])  # the straggler never decoded anything
    assert s["dead_workers"] == [] and s["messages_sent"] == s["messages_received"]
    # the workers on the master's host shared its bell (its /dev/shm); those on the others could not, and polled
    on_h0 = sorted(int(w) for w, h in doc["hosts"].items() if h == HOSTS[0])
    assert on_h0 == list(range(SLOTS[0] - 1)) and doc["bells"] == on_h0, (doc["hosts"], doc["bells"])
    _nothing_left(hosts)
    # the bytes crossed the veths: h0 sent the spec (with the data) to the four workers on h1 and h2, and those
    # sent their gradients back
    after = {h: hosts["local"].bytes_sent(h) for h in ns}
    grown = {h: after[h] - before[h] for h in ns}
    assert grown["h0"] > 4 * train_bytes, grown
    assert min(grown["h1"], grown["h2"]) > 6 * 50 * 8, grown

    # GC-MMC (correlated, order 2)
    rc, text, doc = _gclib_run(["--scheme", "gc-mmc-correlated", "--workers", "6", "--load", "2", "--order", "2",
                                *COMMON], hosts)
    assert rc == 0, text
    s = doc["summary"]
    assert s["status"] == "ok" and s["iterations"] == 6 and s["max_grad_error"] < 1e-9, s
    _nothing_left(hosts)

    # a communication-efficient code: Kadhe et al., messages of half a gradient
    rc, text, doc = _gclib_run(["--scheme", "kadhe", "--workers", "6", "--stragglers", "1", "--comm", "2",
                                *COMMON], hosts)
    assert rc == 0, text
    s = doc["summary"]
    assert s["status"] == "ok" and s["max_grad_error"] < 1e-9 and doc["spec"]["code"]["pieces"] == 2, s
    _nothing_left(hosts)
    # the ranks wrote nothing into the run directory (only the launcher did, on this host)
    assert sorted(p.name for p in hosts["run_dir"].iterdir()) == ["stderr.txt"]


@pytest.mark.multihost
@pytest.mark.mpi
def test_a_worker_killed_on_another_host_is_survived(hosts):
    # GC-MMC (correlated, order 2); worker 2 (MPI rank 3, on h1) killed by SIGKILL once iteration 2 is printed.
    # Its guard keeps its connections open until the master ends, so that no send of the master finds one
    # closed before the launcher's notice of the death reaches it (see gclib/runtime/guard.py).
    args = [*COMMON[:COMMON.index("--iterations")], "--iterations", "20", "--time-scale", "0.05",
            *COMMON[COMMON.index("--timeout"):]]
    rc, text, doc = _gclib_run(["--scheme", "gc-mmc-correlated", "--workers", "6", "--load", "2", "--order", "2",
                                *args], hosts, faults=[(3, 2, signal.SIGKILL)])
    _nothing_left(hosts)
    assert rc == 0, text
    s = doc["summary"]
    assert s["status"] == "ok" and s["iterations"] == 20 and s["max_grad_error"] < 1e-9, s
    assert s["dead_workers"] == [2], s
    death = doc["deaths"]["2"]
    assert death["name"] == "SIGKILL" and death["host"] == "h1", death
    # the master heard of the death during the run, and decoded without worker 2 from then on
    known = [i for i, r in enumerate(doc["records"]) if 2 in r["dead"]]
    assert known and known[0] < 19, [r["dead"] for r in doc["records"]]
    assert all(2 not in r["workers"] for r in doc["records"][known[0] + 1:])


@pytest.mark.multihost
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [[3], [3, 5]], ids=["one", "two"])
def test_workers_frozen_on_other_hosts_are_survived(hosts, ranks):
    """Worker 2 (MPI rank 3, on h1), and worker 4 (rank 5, on h2), stopped by SIGSTOP after iteration 2 of 50:
    alive, their TCP connections open, answering nothing. CRC tolerating two stragglers decodes without them to
    the end, and nothing is left running in any namespace."""
    args = [*COMMON[:COMMON.index("--iterations")], "--iterations", "50", *COMMON[COMMON.index("--time-scale"):]]
    rc, text, doc = _gclib_run(["--scheme", "crc", "--workers", "6", "--stragglers", "2", *args], hosts,
                               faults=[(r, 2, signal.SIGSTOP) for r in ranks])
    _nothing_left(hosts)
    assert rc == 0, text
    s = doc["summary"]
    workers = [r - 1 for r in ranks]
    assert s["status"] == "ok" and s["iterations"] == 50 and s["max_grad_error"] < 1e-9, s
    assert s["dead_workers"] == workers, s
    for w in workers:
        assert doc["deaths"][str(w)]["stopped"] == "SIGSTOP" and doc["deaths"][str(w)]["host"] == HOSTS[w // 2]
        # silent from the notice on, whatever it sent before it stopped arrives after the notice; a gradient it
        # sent then may still be decoded in the iteration of the notice, never in a later one
        known = next(i for i, r in enumerate(doc["records"]) if w in r["silent"])
        assert all(w in r["silent"] for r in doc["records"][known:])
        assert all(w not in r["workers"] for r in doc["records"][known + 1:])
    assert "worker processes stopped: 2 (SIGSTOP, MPI rank 3" in text


@pytest.mark.multihost
@pytest.mark.mpi
def test_a_worker_frozen_during_start_up_on_another_host_is_started_again(hosts):
    """Worker 4 (MPI rank 5, on h2) stopped before MPI_Init: its guard's word crosses to the launcher through
    mpiexec, and the job is started again at once, not at the job timeout."""
    rc, text, doc = _gclib_run(["--scheme", "crc", "--workers", "6", "--stragglers", "1", *COMMON], hosts,
                               stop_at_start=[5])
    _nothing_left(hosts)
    assert rc == 0, text
    assert doc["summary"]["iterations"] == 6 and doc["summary"]["dead_workers"] == []
    (first,) = doc["restarts"]
    assert first["4"]["stopped"] == "SIGSTOP" and first["4"]["host"] == "h2", first
    assert "before MPI_Init, worker processes stopped: 4 (SIGSTOP, MPI rank 5" in text


# ---------------------------------------------------------------------------------------------- a throttled link
def test_rates_and_slots_of_local_hosts():
    from gclib.studies.advise.study import network_slots

    assert namespace_hosts.rate_bits("100mbit") == 10**8 and namespace_hosts.rate_bits("1.5gbit") == 15 * 10**8
    assert namespace_hosts.rate_bits(64000) == 64000
    with pytest.raises(ValueError, match="rate must be bits per second.*'fast'"):
        namespace_hosts.rate_bits("fast")
    with pytest.raises(ValueError, match="rate"):
        namespace_hosts.rate_bits("1bit")  # below what a token bucket can hold to
    assert network_slots(8, 4) == (1, 2, 2, 2, 2) and network_slots(7, 3) == (1, 3, 2, 2)
    with pytest.raises(ValueError, match="hosts"):
        network_slots(3, 4)


@pytest.mark.multihost
@pytest.mark.mpi
def test_a_profile_across_local_hosts_measures_the_rate_of_the_masters_link():
    """Two workers on two hosts, the link into the master's host limited to 40 Mbit/s (5 MB/s) by the kernel:
    the bandwidth ``gclib profile``'s network measurement fits is that rate, which nothing told it."""
    from gclib import message_cost
    from gclib.runtime import launch
    from gclib.runtime.measure import profile_spec

    why = namespace_hosts.why_not(rate="40mbit")
    if why:
        pytest.skip(why)
    spec = profile_spec(2, 1, 2, samples=8, dim=16, time_scale=0.02, network=message_cost.sizes_for(16))
    with namespace_hosts.LocalHosts((1, 1, 1), rate="40mbit") as h:
        res = launch(spec, **h.launch_options)
        left = h.processes()
    assert left == {"h0": [], "h1": [], "h2": []}
    assert sorted(res.hosts.values()) == ["h1", "h2"]
    fitted = message_cost.fit(res.network, 8 * 16)
    assert 0.8 * 5e6 < fitted.bandwidth < 1.25 * 5e6, fitted.text()
