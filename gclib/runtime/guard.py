"""What ``mpiexec`` runs on every rank: a small guard that starts the real rank and outlives it.

    mpiexec -disable-auto-cleanup -n K+1 python -I .../gclib/runtime/guard.py RUN_DIR

Hydra's proxy kills every process it started on its host (SIGKILL) when it sees one of them die by a signal,
whatever ``-disable-auto-cleanup`` says; it lets the others run on only when a process *exits*. So the process
Hydra starts is this guard: it forks, the child execs the rank (``python -m gclib.runtime.rank RUN_DIR --rank
R``, so that ``ps`` tells the two apart) and the guard waits for it. When the rank dies by a signal (or exits
with a non-zero code), the guard writes one line after :data:`REPORT` on stderr (``mpiexec`` forwards it to the
launcher, from every host) and exits with ``128 + signal``: Hydra sees an exit, and the rest of the job runs on.
This is how the launcher learns which rank died of which signal. A dead worker is then a straggler that never
answers; a dead master ends the run (the launcher kills the job).

The guard passes on the catchable signals it gets (and continues a rank that is stopped, so that the signal takes
effect); the rank dies with its guard, and the guard with the process that started it, Hydra's proxy
(``PR_SET_PDEATHSIG``), so killing the job, or losing a proxy, leaves no rank behind. When the rank is stopped by a
signal (SIGSTOP, SIGTSTP, ...) or continued, the guard says so in one line after :data:`STOPPED`: the launcher
passes it on to the master, which sends nothing more to a stopped worker until it answers again.

SIGUSR1, Hydra's notice to every rank that some rank ended, is ignored (it would kill a rank that is still
importing; the rank's ``main`` ignores it again after ``MPI_Init``, where MPICH installs a handler of its own),
and SIGINT until the rank's ``main`` sets it back. The guard imports nothing but the standard library and runs as
a script (``-I``: nothing beside it on the path), not as part of the package: it costs about 11 MB per rank. See
``docs/runtime.md``.
"""
from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import sys
import time

#: Prefix of a guard's report line on stderr:
#: ``REPORT {"rank": r, "pid": p, "signal": s, "code": c, "host": h, "time": t}``.
REPORT = "@gclib-rank-exit "
#: Prefix of a guard's line when its rank is stopped by a signal (SIGSTOP, SIGTSTP, ...) or continued:
#: ``STOPPED {"rank": r, "pid": p, "stopped": "SIGSTOP", "host": h, "time": t}`` (``"stopped": null``: continued).
STOPPED = "@gclib-rank-stop "
#: Argument that marks the rank process under a guard (``... gclib.runtime.rank RUN_DIR --rank R``; worker ``R - 1``, or
#: the master for ``R = 0``).
RANK = "--rank"
#: Signals a guard passes on to its rank (SIGKILL and SIGSTOP cannot be caught).
FORWARD = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGALRM", "SIGPIPE")
#: Environment variable naming the rank's end of the socket pair on which it hands its network sockets to its
#: guard (:func:`hand_over_sockets`).
CHANNEL = "GCLIB_GUARD_CHANNEL"
#: Longest time (seconds) a guard keeps the TCP connections of its dead rank open (the launcher's notice of the
#: death reaches the master in tens of milliseconds); it lets them go earlier when a peer closes its end (the
#: master ended) or when it gets a signal. Below the launcher's grace for a job to exit after the master's end.
HOLD = 5.0
#: File descriptors per message of a hand-over (Linux takes at most 253 in one).
FDS_PER_MESSAGE = 200


def env_rank() -> int | None:
    """This process's MPI rank as Hydra's (or ``srun``'s) environment tells it before ``MPI_Init`` (``None``
    outside ``mpiexec`` and ``srun``)."""
    for key in ("PMI_RANK", "PMI_ID", "SLURM_PROCID"):
        v = os.environ.get(key, "")
        if v.isdigit():
            return int(v)
    return None


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent (the guard, or the guard's starter) dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the worker's idle timeout is the backstop
        pass


def guard(rank: int, argv) -> None:
    """Fork and exec the MPI rank in the child, as ``python -m gclib.runtime.rank RUN_DIR --rank R``; wait for
    it and exit with it (never returns).

    The parent closes its copy of Hydra's PMI socket, so that the socket closes when the *rank* ends and Hydra
    notices the end at once; it passes on catchable signals, reports a death by signal or a non-zero exit, and
    exits with ``128 + signal`` (or the child's exit code).
    """
    # SIGUSR1 is Hydra's notice to every rank's process group that some rank ended. A rank that has not yet
    # reached MPI_Init would die of it: ignore it in both processes (the disposition survives exec; MPICH
    # installs its own handler in MPI_Init, and the rank's main ignores the signal again after it).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError:
        mine = theirs = None
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        _become_rank(rank, argv, parent, mine, theirs)
    if theirs is not None:
        theirs.close()
    fd = os.environ.get("PMI_FD", "")
    if fd.isdigit():
        try:
            os.close(int(fd))
        except OSError:
            pass
    status = _watch(rank, pid)
    if os.WIFSIGNALED(status):
        sig, code, exit_code = os.WTERMSIG(status), None, 128 + os.WTERMSIG(status)
    else:
        sig, code = None, os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
        exit_code = code
    if sig is not None or code:
        _say(REPORT + json.dumps({"rank": rank, "pid": pid, "signal": sig, "code": code,
                                  "host": os.uname().nodename, "time": time.time()}))
        if mine is not None:
            _hold(_taken_over(mine), exit_code)
    os._exit(exit_code)


def _become_rank(rank: int, argv, parent: int, mine, theirs) -> None:
    """In the forked child: keep ``theirs``, the end of the channel for the sockets it hands over, die with the
    guard (whose pid is ``parent``), and exec the rank's program (never returns)."""
    if theirs is not None:
        mine.close()
        os.set_inheritable(theirs.fileno(), True)
        os.environ[CHANNEL] = str(theirs.detach())
    _die_with_parent()
    if os.getppid() != parent:  # the guard died before the request took effect
        os._exit(1)
    # Ignored until the rank's main() sets it back: a SIGINT while Python imports would end the rank with
    # a traceback and exit code 1 instead of a death by signal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.execv(sys.executable, [sys.executable, "-m", "gclib.runtime.rank", *argv, RANK, str(rank)])
    except OSError:
        os._exit(1)


def _watch(rank: int, pid: int) -> int:
    """Pass the catchable signals on to rank ``pid``, say when it is stopped or continued, and return its wait
    status once it ended."""
    stopped = []  # the rank is stopped (SIGSTOP, ...): a signal passed on must also continue it to take effect

    def forward(sig, frame):
        try:
            os.kill(pid, sig)
            if stopped:
                os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass

    for name in FORWARD:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), forward)
    while True:
        try:
            _, status = os.waitpid(pid, os.WUNTRACED | os.WCONTINUED)
        except ChildProcessError:
            os._exit(1)
        if not (os.WIFSTOPPED(status) or os.WIFCONTINUED(status)):
            return status
        stop = _signal_name(os.WSTOPSIG(status)) if os.WIFSTOPPED(status) else None  # frozen, or thawed: say so
        stopped[:] = [stop] if stop else []
        _say(STOPPED + json.dumps({"rank": rank, "pid": pid, "stopped": stop, "host": os.uname().nodename,
                                   "time": time.time()}))


def _say(line: str) -> None:
    """One line on stderr, in one write (``mpiexec`` forwards it to the launcher)."""
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _taken_over(chan) -> list:
    """The sockets the rank handed over on ``chan`` (still queued there after its death), as socket objects."""
    fds = []
    chan.setblocking(False)
    while True:
        try:
            _, got, _, _ = socket.recv_fds(chan, 16, FDS_PER_MESSAGE)
        except (OSError, ValueError):
            break
        fds.extend(got)
    out = []
    for fd in fds:
        try:
            out.append(socket.socket(fileno=fd))
        except OSError:
            os.close(fd)
    return out


def _hold(socks, exit_code) -> None:
    """Keep the dead rank's connections open, reading and dropping whatever arrives, until a peer closes one
    (the master ended), :data:`HOLD` seconds pass or a signal comes; then exit with ``exit_code``.

    While they are open the rank's peers see a silent process rather than a closed connection: MPICH over UCX's
    TCP transport crashes (SIGSEGV inside ``MPI_Isend``) when a send finds the connection to its peer closed,
    and the master may send to a dead worker before the launcher's notice of the death reaches it."""
    conns = []
    for s in socks:
        try:
            if s.family not in (socket.AF_INET, socket.AF_INET6) or s.type != socket.SOCK_STREAM:
                continue  # only TCP connections can be found closed by a peer on another host
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                continue  # a listening socket: kept open, never read
            s.setblocking(False)
            conns.append(s)
        except OSError:
            continue
    if not conns:
        return

    def leave(sig, frame):
        os._exit(exit_code)

    for name in FORWARD:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), leave)
    deadline = time.monotonic() + HOLD
    while time.monotonic() < deadline:
        try:
            ready = select.select(conns, [], [], min(1.0, max(0.0, deadline - time.monotonic())))[0]
        except (OSError, ValueError):
            return
        for s in ready:
            try:
                if not s.recv(1 << 16):
                    return  # the peer closed its end: nobody sends to the dead rank any more
            except BlockingIOError:
                continue
            except OSError:
                return


#: The sockets (``/proc/self/fd`` links) a rank has handed to its guard: a run after the first in the same job
#: (:func:`gclib.runtime.launcher.launch_series`) hands only the ones it opened since.
_HANDED: set = set()


def hand_over_sockets() -> int:
    """In a rank under a guard: pass every network socket this process has open (but Hydra's PMI socket) to the
    guard, which keeps them open after the rank's death (see :func:`_hold`); once each. Returns how many were
    passed (0 outside a guard or where ``/proc/self/fd`` is missing)."""
    chan = os.environ.get(CHANNEL, "")
    if not chan.isdigit() or not hasattr(socket, "send_fds"):
        return 0
    skip = {chan, os.environ.get("PMI_FD", "")}
    fds = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return 0
    for n in names:
        if n in skip:
            continue
        try:
            link = os.readlink(f"/proc/self/fd/{n}")
        except OSError:
            continue
        if link.startswith("socket:") and link not in _HANDED:
            fds.append((int(n), link))
    if not fds:
        return 0
    sock = socket.socket(fileno=int(chan))
    try:
        for i in range(0, len(fds), FDS_PER_MESSAGE):
            socket.send_fds(sock, [b"s"], [fd for fd, _ in fds[i:i + FDS_PER_MESSAGE]])
    except OSError:
        return 0
    finally:
        sock.detach()
    _HANDED.update(link for _, link in fds)
    return len(fds)


def main(argv=None) -> None:
    # The guard dies with the process that started it (Hydra's proxy, or srun's step daemon), and its rank with
    # it: a lost proxy leaves nothing running on its host, whatever mpiexec makes of the loss.
    starter = os.getppid()
    _die_with_parent()
    if os.getppid() != starter:  # the starter died before the request took effect
        os._exit(1)
    argv = sys.argv[1:] if argv is None else argv
    rank = env_rank()
    if rank is None:
        sys.stderr.write("gclib guard: no PMI_RANK or SLURM_PROCID in the environment; run under mpiexec or srun\n")
        os._exit(2)
    guard(rank, argv)


if __name__ == "__main__":
    main()
