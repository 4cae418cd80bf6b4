"""What a message costs on the user's hosts: measured by ``gclib profile`` with the runtime's own sends
(:mod:`gclib.runtime.message_probe`), fitted here, written beside the timing trace, and charged by ``gclib advise``.

The fit (:func:`fit`), on the master's clock:

* **the master's time per message** ``overhead + bytes / bandwidth``: a line through the spacing of the messages
  the floods brought in (every worker answering at once, the master taking them in one at a time: when messages
  queue, their spacing is the master's time for each), drawn through the median spacing (one odd flood of a size
  does not move it) of the smallest size and of the largest, so that the smallest sets the overhead and the largest
  the bandwidth: each where it dominates. A least-squares line through every size lets the sizes in between pull
  both: in absolute error the largest size's scatter, hundreds of times the overhead, sets the overhead; in
  relative error, on a link of limited rate, the middle sizes (a few tens of kilobytes, partly absorbed by the
  link's buffers) put the bandwidth well above the rate;
* **latency**: what a lone message spends on its way besides that time: half the median round trip of the
  smallest message (a request and an answer) minus the master's time for it (at least 0).

:func:`communication` turns it into the simulator's model (:class:`gclib.simulator.Communication` with the master's
queue, ``queue=True``) in seconds and gradients: the bandwidth is divided by the bytes of one gradient message
(``8 dim`` for a float64 gradient of ``dim`` numbers: the profile's ``--dim``, as large as the run's).

The file (:func:`write`, :func:`read`): JSON, ``TRACE.network.json`` beside ``TRACE.csv`` (:func:`beside`)::

    {"format": "gclib network profile", "version": 1,
     "latency": 3.1e-05, "overhead": 2.4e-05, "bandwidth": 2.1e9,       # seconds, seconds, bytes per second
     "gradient_bytes": 800,                                            # one gradient message (8 dim)
     "workers": 8, "hosts": ["node1", ...],
     "ping": [[bytes, worker, seconds], ...], "flood": [[bytes, messages, first, last], ...]}

The last four are what was measured (the fit is made again from them when the file is read); ``hosts`` may be
empty. A hand-made file needs only the first five keys.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gclib import checks, files
from gclib.simulator import Communication

FORMAT = "gclib network profile"
VERSION = 1
#: Message sizes (float64 numbers) a profile measures, besides one gradient message of its ``dim``.
SIZES = (1, 16, 256, 4096, 65536)


def sizes_for(dim: int) -> tuple:
    """The sizes a profile of ``dim``-dimensional gradients measures: :data:`SIZES` and ``dim`` itself."""
    dim = checks.integer("dim", dim, low=1)
    return tuple(sorted(set(SIZES) | {dim}))


@dataclass(frozen=True)
class NetworkProfile:
    """A fitted network: ``latency`` and ``overhead`` in seconds, ``bandwidth`` in bytes per second (``inf``: no
    limit measured), ``gradient_bytes`` of one gradient message, and what it was fitted from (``ping``,
    ``flood``, ``workers``, ``hosts``; empty for a profile stated by hand)."""

    latency: float
    overhead: float
    bandwidth: float
    gradient_bytes: int
    workers: int = 0
    hosts: list = field(default_factory=list)
    ping: list = field(default_factory=list)
    flood: list = field(default_factory=list)

    def communication(self, gradient_bytes: int | None = None):
        """The simulator's model in seconds and gradients (:class:`gclib.simulator.Communication`, the master's
        queue): bandwidth in gradients per second, for gradients of ``gradient_bytes`` (default: the profile's)."""
        g = self.gradient_bytes if gradient_bytes is None else checks.integer("gradient_bytes", gradient_bytes,
                                                                              low=1)
        return Communication(latency=self.latency, bandwidth=self.bandwidth / g, overhead=self.overhead, queue=True)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "latency": self.latency, "overhead": self.overhead,
                "bandwidth": self.bandwidth if math.isfinite(self.bandwidth) else "inf",
                "gradient_bytes": self.gradient_bytes, "workers": self.workers, "hosts": list(self.hosts),
                "ping": [list(r) for r in self.ping], "flood": [list(r) for r in self.flood]}

    def text(self) -> str:
        bw = ("no limit" if math.isinf(self.bandwidth) else f"{self.bandwidth / 1e9:.3g} GB/s"
              if self.bandwidth >= 1e9 else f"{self.bandwidth / 1e6:.3g} MB/s")
        return (f"latency {1e6 * self.latency:.3g} us, the master's time per message {1e6 * self.overhead:.3g} us "
                f"plus its bytes at {bw}; one gradient message ({self.gradient_bytes} bytes) costs "
                f"{1e6 * (self.overhead + self.gradient_bytes / self.bandwidth):.3g} us at the master")


def fit(measured: dict, gradient_bytes: int, hosts=None) -> NetworkProfile:
    """Fit the latency, the master's time per message and the bandwidth to what
    :func:`gclib.runtime.message_probe.probe` measured (see the module docstring).

    Raises:
        ValueError: nothing was measured (no flood brought two messages, no round trip).
    """
    gradient_bytes = checks.integer("gradient_bytes", gradient_bytes, low=1)
    ping = [list(map(float, r)) for r in measured.get("ping") or []]
    flood = [list(map(float, r)) for r in measured.get("flood") or []]
    gaps = {}
    for b, n, first, last in flood:
        if n >= 2:
            gaps.setdefault(b, []).append((last - first) / (n - 1))
    if not gaps or not ping:
        raise ValueError("the network measurement holds no round trip or no flood of two messages or more: "
                         "nothing to fit")
    x = np.array(sorted(gaps))
    y = np.array([float(np.median(gaps[b])) for b in x])  # per size, the median of its floods
    if x.size >= 2:  # through the smallest size's median and the largest's (see the module docstring)
        slope = (y[-1] - y[0]) / (x[-1] - x[0])
        intercept = y[0] - slope * x[0]
    else:
        slope, intercept = 0.0, float(y[0])
    overhead = max(0.0, float(intercept))
    bandwidth = 1.0 / float(slope) if slope > 0 else math.inf
    small = min(r[0] for r in ping)
    rtt = float(np.median([r[2] for r in ping if r[0] == small]))
    latency = max(0.0, rtt / 2 - (overhead + small / bandwidth))
    return NetworkProfile(latency, overhead, bandwidth, gradient_bytes, int(measured.get("workers", 0)),
                          list(hosts or []), ping, flood)


def beside(trace) -> Path:
    """The network profile's path beside a timing trace: ``times.csv`` -> ``times.network.json``."""
    p = Path(trace)
    return p.with_name(p.stem + ".network.json")


def write(path, profile: NetworkProfile) -> Path:
    """Write ``profile`` as JSON to ``path``; returns the path."""
    path = Path(path)
    path.write_text(json.dumps(profile.to_dict(), indent=1) + "\n")
    return path


def _number(path, data, key, *, low=0.0, finite=True):
    if key not in data:
        raise ValueError(f"{path}: the network profile has no '{key}'")
    v = data[key]
    if isinstance(v, str) and v == "inf" and not finite:
        return math.inf
    try:
        return checks.real(key, v, low=low, finite=finite)
    except ValueError as e:  # what is allowed, not what the file holds
        raise ValueError(f"{path}: {str(e).rsplit(', got ', 1)[0]}") from None


#: The most a network profile file may hold, checked before it is read.
PROFILE_BUDGET = files.Budget("a network profile", files.MIB, constant="gclib.message_cost.PROFILE_BUDGET")
#: The longest a message may take (seconds: latency, overhead and one gradient at the bandwidth): the simulator
#: adds the messages of every worker and every iteration, which overflow float64 beyond it.
MAX_MESSAGE_SECONDS = 1e100


def check_cost(comm, what: str):
    """``comm`` (a :class:`gclib.simulator.Communication`) when one message of one gradient takes a finite time
    below :data:`MAX_MESSAGE_SECONDS`; else a ``ValueError`` naming ``what``, before any simulation."""
    cost = comm.latency + comm.overhead + (1.0 / comm.bandwidth if comm.bandwidth > 0 else math.inf)
    if not cost <= MAX_MESSAGE_SECONDS:
        raise ValueError(f"{what}: a message of one gradient would take {cost:.3g} s (latency + overhead + "
                         f"1 / bandwidth), beyond the {MAX_MESSAGE_SECONDS:g} s the simulator can add up "
                         f"(gclib.message_cost.MAX_MESSAGE_SECONDS)")
    return comm


def read(path) -> NetworkProfile:
    """Read a network profile written by :func:`write` (or by hand: ``latency``, ``overhead``, ``bandwidth``,
    ``gradient_bytes``). A file that is not one, or a value that is missing, negative or not a number, is refused
    in one line naming the file and the key."""
    path = Path(path)
    text = files.read_text(None, path, PROFILE_BUDGET, expected="a network profile (JSON)")
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError(f"{path}: not a network profile (its JSON is nested too deeply)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a network profile (not JSON: {e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a network profile (its 'format' must be {FORMAT!r})")
    lat = _number(path, data, "latency")
    over = _number(path, data, "overhead")
    bw = _number(path, data, "bandwidth", low=None, finite=False)
    if not bw > 0:
        raise ValueError(f"{path}: bandwidth must be positive (bytes per second)")
    g = _number(path, data, "gradient_bytes", low=1)
    if g != int(g):
        raise ValueError(f"{path}: gradient_bytes must be an integer")
    return NetworkProfile(lat, over, bw, int(g), int(data.get("workers") or 0), list(data.get("hosts") or []),
                          list(data.get("ping") or []), list(data.get("flood") or []))


#: The keys of a network stated by hand (``--network``), and their form.
SPEC_KEYS = ("latency", "bandwidth", "overhead", "queue")
SPEC = "latency=SECONDS,bandwidth=GRADIENTS_PER_SECOND[,overhead=SECONDS][,queue=no]"


def parse(text: str, trace=None):
    """The network ``gclib advise --network`` names, as a :class:`gclib.simulator.Communication` (seconds and
    gradients) or ``None`` (messages cost nothing):

    * ``latency=S,bandwidth=G[,overhead=S][,queue=no]``: stated by hand (seconds; gradients per second, ``inf``
      for no limit); the master's queue (``queue=no``: independent delays, every message ``latency + overhead +
      size / bandwidth`` after it is sent, the model of the communication-efficient codes' papers);
    * ``none``: no charge;
    * a path: a network profile (:func:`read`).

    ``text`` ``None``: the profile beside ``trace`` (:func:`beside`) when there is one, else no charge.
    """
    if text is None:
        if trace is not None and beside(trace).is_file():
            return check_cost(read(beside(trace)).communication(), f"the network profile {beside(trace)}")
        return None
    text = str(text).strip()
    if text == "none":
        return None
    if "=" in text:
        kw, seen = {"queue": True}, set()
        for item in text.split(","):
            k, sep, v = item.partition("=")
            k, v = k.strip(), v.strip()
            if not sep or k not in SPEC_KEYS:
                raise ValueError(f"--network: expected {SPEC}, got {item.strip()!r}")
            if k in seen:
                raise ValueError(f"--network: {k} given twice")
            seen.add(k)
            if k == "queue":
                if v not in ("yes", "no"):
                    raise ValueError(f"--network: queue must be yes or no, got {v!r}")
                kw[k] = v == "yes"
                continue
            try:
                kw[k] = float(v)
            except ValueError:
                raise ValueError(f"--network: {k} must be a number, got {v!r}") from None
        missing = {"latency", "bandwidth"} - set(kw)
        if missing:
            raise ValueError(f"--network: {', '.join(sorted(missing))} missing ({SPEC})")
        try:
            comm = Communication(**kw)
        except ValueError as e:
            raise ValueError(f"--network: {e}") from None
        return check_cost(comm, "--network")
    p = Path(text)
    if not p.is_file():
        raise ValueError(f"--network: {text!r} is neither latency=...,bandwidth=..., none, nor a network profile "
                         f"file")
    return check_cost(read(p).communication(), f"--network {text}")
