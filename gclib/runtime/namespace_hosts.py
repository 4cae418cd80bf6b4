"""Several "hosts" on one Linux machine: network namespaces on a bridge, for runs whose messages cross a network.

:class:`LocalHosts` makes one network namespace per host, each joined to a bridge by a veth pair, writes an MPICH
hostfile, and a small program that Hydra calls as its launcher (``PROGRAM -x HOST COMMAND...``, where a remote shell
would be) to run the command inside HOST's namespace, with its own ``/dev/shm`` and host name. Its
:attr:`~LocalHosts.launch_options` go to :func:`gclib.runtime.launch` (``hosts=``, ``mpiexec_args=``): the ranks
talk over TCP only (``UCX_TLS=tcp,self``; UCX's shared-memory transports would cross namespaces of one kernel),
so that every byte between two hosts passes through their veths.

``rate`` limits the link into the first host (the master's, with ``slots[0] = 1``) with a token bucket (``tc qdisc
... tbf``): every message a worker sends the master then waits in one queue of that rate, as on a master's network
interface. This is the kernel's queue, not a model: what ``gclib profile`` measures through it is measured.

Needs Linux, root, ``ip`` (iproute2), ``tc`` for ``rate``, ``unshare``, ``mount`` and ``hostname``
(:func:`why_not` says what is missing; :class:`HostsUnavailable` is raised when they cannot be made, for that or
because the kernel refuses). Everything made is removed on exit, whatever happened.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from gclib import checks

#: The ranks' transports: TCP only (see the module docstring).
UCX_TLS = "tcp,self"

_LAUNCHER = r"""#!/bin/sh
# Hydra's launcher for hosts that are network namespaces of this machine: Hydra calls PROGRAM -x HOST COMMAND...
# (the words of the command a remote shell would run). Enter HOST's namespace with a private mount and host name
# namespace, so that /dev/shm (and PRIVATE, when one is named) are empty there.
[ "$1" = "-x" ] && shift
host=$1
shift
case "$host" in
{cases}
  *) echo "gclib local hosts: unknown host $host" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --mount --uts --propagation private sh -c '
  {private}mount -t tmpfs -o size=256m tmpfs /dev/shm && hostname "$0" || exit 96
  {check}exec sh -c "$*"' "$host" "$@"
"""


class HostsUnavailable(RuntimeError):
    """The local hosts cannot be made here (not Linux, not root, a program missing, or the kernel refused a
    namespace, a link or the rate limit); the message says which."""


def why_not(rate=None) -> str | None:
    """Why :class:`LocalHosts` cannot be made here, or ``None`` when it can."""
    if not sys.platform.startswith("linux"):
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "unshare", "mount", "hostname") + (("tc",) if rate is not None else ()):
        if shutil.which(tool) is None:
            return f"no '{tool}' program (Debian: apt-get install iproute2 util-linux)"
    return None


def _ip(*args, check=True):
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip() or 'exit code %d' % r.returncode}")
    return r


def _free_subnet() -> int:
    used = _ip("-4", "-o", "addr").stdout
    for x in range(13, 250):
        if f" 10.213.{x}." not in used:
            return x
    raise RuntimeError("no free address range 10.213.x.0/24 for the local hosts' network")


def rate_bits(rate) -> int:
    """A rate in bits per second from a number or a string with a unit (``"40mbit"``, ``"1gbit"``, ``"500kbit"``)."""
    if isinstance(rate, str):
        text = rate.strip().lower()
        for unit, f in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3), ("bit", 1)):
            if text.endswith(unit):
                try:
                    value = float(text[:-len(unit)])
                except ValueError:
                    break
                return checks.integer("rate", round(value * f), low=8000)
        raise ValueError(f"rate must be bits per second, a number or e.g. '40mbit', got {rate!r}")
    return checks.integer("rate", rate, low=8000)


class LocalHosts:
    """Hosts ``h0``, ``h1``, ... with ``slots[i]`` ranks each, as network namespaces of this machine (see the module
    docstring). Use as a context manager::

        with LocalHosts((1, 4, 4), rate="100mbit") as hosts:
            result = launch(spec, **hosts.launch_options)

    Args:
        slots: ranks per host; rank 0 (the master) is on ``h0``.
        rate: optional limit of the link into ``h0`` (bits per second, or a string such as ``"100mbit"``).
        private: optional folder of this host that no other host may see (it is hidden by an empty one there,
            and a launched command finding ``check`` in it refuses to start).
        check: optional path that must not be visible on the hosts (a run directory in ``private``).
        directory: where the hostfile and the launcher program go (default a new temporary folder, removed).
    """

    def __init__(self, slots=(1, 2, 2), *, rate=None, private=None, check=None, directory=None):
        self.slots = tuple(checks.integer("slots", s, low=1) for s in slots)
        if not self.slots:
            raise ValueError("slots must name at least one host")
        self.rate = None if rate is None else rate_bits(rate)
        self.private, self.check = private, check
        self._directory = directory
        self.names = [f"h{i}" for i in range(len(self.slots))]
        self.tag = f"gcl{os.getpid() % 100000}"
        self.bridge = f"{self.tag}b"
        self.namespaces = {h: f"{self.tag}-{h}" for h in self.names}
        self._made = {"ns": [], "bridge": False, "dir": None}

    # ------------------------------------------------------------------------------------------- made on entry
    def __enter__(self) -> "LocalHosts":
        why = why_not(self.rate)
        if why:
            raise HostsUnavailable(f"cannot make local hosts: {why}")
        try:
            self._make()
        except BaseException as e:
            self.close()
            if isinstance(e, (RuntimeError, OSError, subprocess.SubprocessError)):
                raise HostsUnavailable(f"cannot make local hosts: {e}") from e
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _make(self):
        x = _free_subnet()
        _ip("link", "add", self.bridge, "type", "bridge")
        self._made["bridge"] = True
        _ip("addr", "add", f"10.213.{x}.1/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, h in enumerate(self.names):
            ns = self.namespaces[h]
            _ip("netns", "add", ns)
            self._made["ns"].append(ns)
            _ip("link", "add", f"{self.tag}v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", f"{self.tag}v{i}", "master", self.bridge, "up")
            _ip("-n", ns, "addr", "add", f"10.213.{x}.{10 + i}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        if self.rate is not None:  # the bridge's side of h0's pair sends into h0: its queue is h0's inbound link
            burst = max(16 * 1024, self.rate // 8 // 250)  # at least one timer tick's bytes
            r = subprocess.run(["tc", "qdisc", "add", "dev", f"{self.tag}v0", "root", "tbf", "rate",
                                f"{self.rate}bit", "burst", str(burst), "limit", str(max(4 << 20, 4 * burst))],
                               capture_output=True, text=True, timeout=30)
            if r.returncode:
                raise RuntimeError(f"tc could not limit the link into h0 to {self.rate} bit/s: {r.stderr.strip()}")
        d = Path(self._directory) if self._directory is not None else Path(tempfile.mkdtemp(prefix="gclib-hosts-"))
        if self._directory is None:
            self._made["dir"] = d
        d.mkdir(parents=True, exist_ok=True)
        cases = "\n".join(f"  {h}) ns={ns} ;;" for h, ns in self.namespaces.items())
        private = (f'mount -t tmpfs -o size=16m tmpfs "{self.private}" && ' if self.private is not None else "")
        check = (f'if [ -e "{self.check}" ]; then echo "gclib local hosts: {self.check} is visible on $0" >&2; '
                 f'exit 97; fi\n  ' if self.check is not None else "")
        self.program = d / "netns-launcher"
        self.program.write_text(_LAUNCHER.replace("{cases}", cases).replace("{private}", private)
                                .replace("{check}", check))
        self.program.chmod(0o755)
        self.hostfile = d / "hosts"
        self.hostfile.write_text("".join(f"{h}:{n}\n" for h, n in zip(self.names, self.slots)))

    # ---------------------------------------------------------------------------------------------- in use
    @property
    def mpiexec_args(self) -> list:
        """The options of ``mpiexec`` that start the ranks in the namespaces and keep them on TCP."""
        return ["-launcher", "ssh", "-launcher-exec", str(self.program), "-iface", self.bridge,
                "-genv", "UCX_TLS", UCX_TLS]

    @property
    def launch_options(self) -> dict:
        """``hosts=`` and ``mpiexec_args=`` for :func:`gclib.runtime.launch`."""
        return {"hosts": str(self.hostfile), "mpiexec_args": self.mpiexec_args}

    def bytes_sent(self, host: str) -> int:
        """Bytes ``host`` has sent through its link so far (its veth's counter)."""
        ns = self.namespaces[host]
        return int(_ip("netns", "exec", ns, "cat", "/sys/class/net/eth0/statistics/tx_bytes").stdout)

    def processes(self) -> dict:
        """The processes left in each host's namespace (``{host: [pid, ...]}``)."""
        return {h: [int(p) for p in _ip("netns", "pids", ns, check=False).stdout.split()]
                for h, ns in self.namespaces.items() if ns in self._made["ns"]}

    # ------------------------------------------------------------------------------------------- removed on exit
    def close(self):
        """Remove everything made (killing any process left in a namespace), and check that it is gone."""
        for i, ns in enumerate(self._made["ns"]):
            for pid in _ip("netns", "pids", ns, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _ip("link", "del", f"{self.tag}v{i}", check=False)
            _ip("netns", "del", ns, check=False)
        if self._made["bridge"]:
            _ip("link", "del", self.bridge, check=False)
        if self._made["dir"] is not None:
            shutil.rmtree(self._made["dir"], ignore_errors=True)
        left = [ns for ns in self._made["ns"] if ns in _ip("netns", "list", check=False).stdout.split()]
        links = _ip("-o", "link", check=False).stdout
        self._made = {"ns": [], "bridge": False, "dir": None}
        if left or f" {self.bridge}:" in links or f" {self.tag}v" in links:
            raise RuntimeError(f"local hosts not removed: namespaces {left}, links of {self.tag} left")
