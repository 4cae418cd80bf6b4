"""Wake-up channels: one TCP connection between the master and each worker that carries nothing but wake-ups.

MPI moves the data; a rank that waits blocks in ``select`` on these connections (and the master on its standard
input, where the launcher's death notices arrive) instead of sleeping in short slices between probes. The sender
of an MPI message writes one byte on the connection to its receiver after posting the send; the receiver wakes
at once, reads the bytes and probes MPI. A byte that arrives before its message is visible to MPI is *owed*: the
receiver then polls in short slices until the message is there.

Set-up (untimed, during the warm-up): the master listens on an ephemeral TCP port on every address and sends
each worker (over MPI, tag ``TAG_WAKE``) the port, its IPv4 addresses (loopback last) and a random token. A
worker connects to the first address that answers and sends the token and its index; the master checks both
and answers one byte; only then does the worker use the connection, and it tells the master so in its hello.
Where no connection can be made (no address reachable, no sockets, ``GCLIB_WAKE=off`` in the environment) the
two fall back to polling, and the master says so in the run's log.

Only the byte's arrival means anything: what a connection carries is read and dropped. Nothing is unpickled.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import select
import socket
import struct
import time

#: Environment variable that turns the wake-up channels off (``off``): every wait polls.
ENV = "GCLIB_WAKE"
#: Seconds a worker tries one of the master's addresses, and in all.
CONNECT_EACH, CONNECT_TOTAL = 1.0, 4.0
#: Longest time (seconds) a rank blocks in ``select`` without looking at MPI: a safety net only (a wake-up
#: byte comes with every message, and the master also watches its standard input).
CAP = 0.02
#: Linux ``ioctl`` that reads an interface's IPv4 address.
SIOCGIFADDR = 0x8915


def enabled(env=None) -> bool:
    """False when the environment turns the channels off (``GCLIB_WAKE=off``, ``0`` or ``no``)."""
    v = (os.environ if env is None else env).get(ENV, "").strip().lower()
    return v not in ("off", "0", "no", "false")


def local_addresses() -> list[str]:
    """This host's IPv4 addresses, the loopback ones last (a worker on another host cannot use them; one on
    this host in the same network stack can use any)."""
    found = []
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for _, name in socket.if_nameindex():
                try:
                    res = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
                except OSError:
                    continue
                found.append(socket.inet_ntoa(res[20:24]))
        finally:
            probe.close()
    except (OSError, AttributeError):
        pass
    if not found:  # not Linux: what the host name resolves to
        try:
            found = [a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
        except OSError:
            found = []
    out = []
    for a in sorted(found, key=lambda a: a.startswith("127.")):
        if a not in out:
            out.append(a)
    return out


def _nodelay(sock):
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


def notify(sock) -> bool:
    """Write one wake-up byte on ``sock``; False if the connection is gone (a full buffer counts as written:
    the receiver has wake-ups to read anyway)."""
    try:
        sock.send(b"w", socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
        return True
    except BlockingIOError:
        return True
    except OSError:
        return False


def drain(sock) -> int:
    """Read every byte waiting on ``sock`` without blocking: how many (``-1`` when the peer closed it)."""
    n = 0
    while True:
        try:
            got = sock.recv(4096, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return n
        except OSError:
            return -1 if n == 0 else n
        if not got:
            return -1 if n == 0 else n
        n += len(got)
        if len(got) < 4096:
            return n


def wait(socks, timeout) -> list:
    """``select`` on ``socks`` (sockets or file descriptors) for at most ``timeout`` seconds (microsecond
    resolution, unlike ``poll``); the readable ones. Raises ``ValueError`` for a descriptor ``select`` cannot
    watch (above ``FD_SETSIZE``)."""
    try:
        return select.select(socks, (), (), max(0.0, timeout))[0]
    except InterruptedError:
        return []


class Listener:
    """The master's side of the set-up: an ephemeral port on every address and the connections made to it."""

    def __init__(self, workers: int):
        self.workers = workers
        self.token = secrets.token_hex(16)
        self.server = None
        self.conns = {}  # worker -> connected and checked socket
        self.why = ""
        if not enabled():
            self.why = f"turned off ({ENV}={os.environ.get(ENV)})"
            return
        addrs = local_addresses()
        if not addrs:
            self.why = "this host has no IPv4 address"
            return
        try:
            self.server = socket.create_server(("", 0), backlog=max(16, workers))
            self.server.setblocking(False)
        except OSError as e:
            self.server, self.why = None, f"cannot listen: {e.strerror or e}"
            return
        self.addrs = addrs

    def offer(self) -> bytes:
        """What the master sends every worker: JSON with the port, the addresses and the token (``{}`` when
        there is no listener: the worker polls)."""
        if self.server is None:
            return b"{}"
        port = self.server.getsockname()[1]
        return json.dumps({"port": port, "addrs": self.addrs, "token": self.token}).encode()

    def accept(self, timeout=0.0) -> None:
        """Take the connections waiting (for at most ``timeout`` s), check each one's token and worker index,
        and answer the good ones."""
        if self.server is None:
            return
        if not wait([self.server], timeout):
            return
        while True:
            try:
                conn, _ = self.server.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            try:
                conn.settimeout(1.0)
                head = b""
                while len(head) < 36:
                    got = conn.recv(36 - len(head))
                    if not got:
                        break
                    head += got
                if len(head) != 36 or not secrets.compare_digest(head[:32], self.token.encode("ascii")):
                    conn.close()
                    continue
                w = struct.unpack("!I", head[32:])[0]
                if not w < self.workers or w in self.conns:
                    conn.close()
                    continue
                conn.sendall(b"k")
                conn.setblocking(False)
                _nodelay(conn)
                self.conns[w] = conn
            except OSError:
                conn.close()

    def close_server(self):
        if self.server is not None:
            self.server.close()
            self.server = None


def connect(offer: bytes, w: int):
    """A worker's side of the set-up: a checked connection to the master for worker ``w`` from the master's
    ``offer`` (:meth:`Listener.offer`), or ``(None, why)``."""
    try:
        info = json.loads(offer)
        port, addrs, token = int(info["port"]), list(info["addrs"]), str(info["token"])
    except (ValueError, KeyError, TypeError):
        return None, "the master offered no wake-up channel"
    if not enabled():
        return None, f"turned off ({ENV}={os.environ.get(ENV)})"
    end = time.monotonic() + CONNECT_TOTAL
    tried = []
    for addr in addrs:
        left = end - time.monotonic()
        if left <= 0:
            break
        try:
            sock = socket.create_connection((addr, port), timeout=min(CONNECT_EACH, left))
        except OSError as e:
            tried.append(f"{addr}: {errno.errorcode.get(e.errno, e)}")
            continue
        try:
            sock.settimeout(max(0.1, min(CONNECT_EACH, end - time.monotonic())))
            sock.sendall(token.encode("ascii") + struct.pack("!I", w))
            if sock.recv(1) == b"k":
                sock.setblocking(False)
                _nodelay(sock)
                return sock, ""
            tried.append(f"{addr}: refused the token")
        except OSError as e:
            tried.append(f"{addr}: {errno.errorcode.get(e.errno, e)}")
        sock.close()
    return None, "no address of the master reachable (" + "; ".join(tried) + ")"
