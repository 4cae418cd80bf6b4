"""gclib.message_cost: what a message costs, fitted from the runtime's measurement, written beside the trace and read
back, and the --network of gclib advise."""
import json
import math

import numpy as np
import pytest

from gclib import message_cost
from gclib.simulator import Communication

LAT, OVER, BW = 50e-6, 20e-6, 1e9  # seconds, seconds, bytes per second


def _measured(outlier=False, largest=1.0):
    sizes = [8 * s for s in message_cost.SIZES]
    service = lambda b: OVER + b / BW  # noqa: E731
    ping = [[b, w, 2 * (LAT + service(b))] for b in sizes for w in range(3) for _ in range(5)]
    flood = []
    for b in sizes:
        for k in range(3):
            gap = service(b) * (20 if outlier and b == sizes[3] and k < 1 else 1)  # one of a size's floods gone wrong
            gap *= largest if b == sizes[-1] else 1.0  # the largest size's floods all off the line
            flood.append([b, 12, 1e-3, 1e-3 + 11 * gap])
    return {"ping": ping, "flood": flood, "workers": 3}


def test_fit_recovers_the_network_that_made_the_numbers():
    p = message_cost.fit(_measured(), 800)
    assert p.latency == pytest.approx(LAT, rel=1e-6) and p.overhead == pytest.approx(OVER, rel=1e-6)
    assert p.bandwidth == pytest.approx(BW, rel=1e-6) and p.workers == 3 and p.gradient_bytes == 800
    # one flood of a size gone wrong does not move the line (the median of the size's floods)
    q = message_cost.fit(_measured(outlier=True), 800)
    assert q.overhead == pytest.approx(OVER, rel=1e-6) and q.bandwidth == pytest.approx(BW, rel=1e-6)
    c = p.communication()
    assert c.queue and c.latency == p.latency and c.overhead == p.overhead
    assert c.bandwidth == pytest.approx(BW / 800)  # gradients per second
    assert p.communication(gradient_bytes=8000).bandwidth == pytest.approx(BW / 8000)
    assert "latency 50 us" in p.text()
    # the largest size 20% slower than the line: the bandwidth is the largest size's, the overhead stays the
    # smallest size's (a least-squares line in absolute error would move it by about a tenth)
    r = message_cost.fit(_measured(largest=1.2), 800)
    assert r.overhead == pytest.approx(OVER, rel=0.03) and r.bandwidth == pytest.approx(BW / 1.2, rel=0.01)
    with pytest.raises(ValueError, match="nothing to fit"):
        message_cost.fit({"ping": [], "flood": []}, 800)


def test_written_and_read_back(tmp_path):
    p = message_cost.fit(_measured(), 800, hosts=["a", "b", "c"])
    path = message_cost.write(message_cost.beside(tmp_path / "times.csv"), p)
    assert path.name == "times.network.json"
    q = message_cost.read(path)
    assert q == p
    d = json.loads(path.read_text())
    assert d["format"] == message_cost.FORMAT and d["hosts"] == ["a", "b", "c"]
    # by hand: the five keys; bandwidth inf for no limit
    hand = tmp_path / "hand.json"
    hand.write_text(json.dumps({"format": message_cost.FORMAT, "latency": 1e-4, "overhead": 0, "bandwidth": "inf",
                                "gradient_bytes": 8}))
    h = message_cost.read(hand)
    assert math.isinf(h.bandwidth) and h.communication().service(1.0) == 0.0


@pytest.mark.parametrize("text, needle", [
    ("not json", "not JSON"),
    ('{"format": "something else"}', "not a network profile"),
    ('{"format": "gclib network profile", "latency": 1, "overhead": 0, "bandwidth": 5}', "gradient_bytes"),
    ('{"format": "gclib network profile", "latency": -1, "overhead": 0, "bandwidth": 5, "gradient_bytes": 8}',
     "latency"),
    ('{"format": "gclib network profile", "latency": 1, "overhead": 0, "bandwidth": 0, "gradient_bytes": 8}',
     "bandwidth must be positive"),
])
def test_a_bad_profile_is_refused_naming_the_file(text, needle, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=needle) as e:
        message_cost.read(path)
    assert str(path) in str(e.value) and "\n" not in str(e.value)


def test_parse(tmp_path):
    assert message_cost.parse("none") is None
    assert message_cost.parse(None, trace=tmp_path / "t.csv") is None  # nothing beside the trace: no charge
    c = message_cost.parse("latency=1e-4,bandwidth=2000,overhead=5e-5")
    assert c == Communication(1e-4, 2000.0, 5e-5, queue=True)
    assert message_cost.parse("bandwidth=inf, latency=0").bandwidth == math.inf
    message_cost.write(message_cost.beside(tmp_path / "t.csv"), message_cost.fit(_measured(), 800))
    beside = message_cost.read(tmp_path / "t.network.json").communication()
    assert message_cost.parse(None, trace=tmp_path / "t.csv") == beside
    assert message_cost.parse(str(tmp_path / "t.network.json")).queue
    for bad, needle in [("latency=1", "bandwidth missing"), ("latency=x,bandwidth=1", "must be a number"),
                        ("speed=3", "expected latency="), ("latency=1,latency=2,bandwidth=1", "twice"),
                        ("latency=-1,bandwidth=1", "latency"), ("nofile.json", "neither")]:
        with pytest.raises(ValueError, match=needle):
            message_cost.parse(bad)


def test_sizes_for_a_dimension():
    assert message_cost.sizes_for(100) == tuple(sorted(set(message_cost.SIZES) | {100}))
    assert message_cost.sizes_for(16) == message_cost.SIZES


def test_advise_charges_the_network_it_is_given(tmp_path, capsys):
    """gclib advise --network: the ranking under the master's queue; a slow master makes the multi-message
    designs pay for their messages."""
    from gclib import timings
    from gclib.cli import main

    rng = np.random.default_rng(1)
    trace = tmp_path / "t.csv"
    timings.write(trace, 0.01 + rng.exponential(0.05, (40, 8, 3)))
    args = ["advise", "--trace", str(trace), "--workers", "8", "--trials", "400", "--json"]
    assert main(args) == 0
    free = json.loads(capsys.readouterr().out)
    assert free["settings"]["network"] is None
    assert main(args + ["--network", "latency=1e-3,bandwidth=20"]) == 0
    paid = json.loads(capsys.readouterr().out)
    assert paid["settings"]["network"] == {"latency": 1e-3, "bandwidth": 20.0, "overhead": 0.0, "queue": True}
    assert paid["best"]["messages"] < free["best"]["messages"]
    # a profile beside the trace is charged by default, and --network none leaves it out
    message_cost.write(message_cost.beside(trace), message_cost.NetworkProfile(1e-3, 0.0, 8 * 20.0 * 800, 800))
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["network"]["queue"]
    assert main(args + ["--network", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["network"] is None
    assert main(args + ["--network", "latency=1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gclib: error: --network:")
