"""Wake-ups between the ranks of one host: two futex words in a small host-local shared-memory file.

A rank that waits for messages sleeps on a word (``FUTEX_WAIT`` with a timeout) instead of in a fixed slice; a
rank that sends rings the word (adds one and ``FUTEX_WAKE``), so the ranks of the sender's host that wait on it
wake at once instead of at their next slice. Word :data:`TO_WORKERS` is rung by the master after it posts
messages to the workers, word :data:`TO_MASTER` by a worker after each message it posts to the master.

The master makes the file (mode 0600, in ``/dev/shm``, a random name) before it sends the run to the workers and
names it in what it sends; every worker that can open it (those of the master's host) does, and the master
removes the name once every worker has said hello, so nothing is left behind. A rank that cannot make or open
it (another host, another operating system) waits in slices as before: a bell only shortens waits, and a missed
ring costs at most the slice. MPI still carries every message; the words carry nothing but "look now".
"""
from __future__ import annotations

import ctypes
import mmap
import os
import platform
import secrets

#: The word the master rings after posting messages to the workers.
TO_WORKERS = 0
#: The word a worker rings after posting a message to the master.
TO_MASTER = 1
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
_FUTEX_WAIT, _FUTEX_WAKE = 0, 1
_SIZE = 64


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class Bell:
    """The two words, mapped from the file at ``path`` (made with ``create``, else opened)."""

    def __init__(self, path: str, create: bool = False):
        fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0), 0o600)
        try:
            if create:
                os.ftruncate(fd, _SIZE)
            self._map = mmap.mmap(fd, _SIZE)
        finally:
            os.close(fd)
        self.path = path
        self._words = (ctypes.c_int32 * 2).from_buffer(self._map)
        base = ctypes.addressof(self._words)
        self._addr = [ctypes.c_void_p(base), ctypes.c_void_p(base + 4)]
        self._libc = ctypes.CDLL(None, use_errno=True)

    def value(self, word: int) -> int:
        """The word's count: read it *before* looking for messages, then :meth:`wait` with it."""
        return self._words[word]

    def ring(self, word: int) -> None:
        """Count one more and wake every rank waiting on ``word``."""
        self._words[word] = (self._words[word] + 1) & 0x7FFFFFFF
        self._libc.syscall(_SYS_FUTEX, self._addr[word], _FUTEX_WAKE, 0x7FFFFFFF, None, None, 0)

    def wait(self, word: int, seen: int, seconds: float) -> None:
        """Sleep up to ``seconds``, or less if ``word`` is rung (at once if it was rung since it read ``seen``)."""
        ts = _Timespec(int(seconds), int((seconds - int(seconds)) * 1e9))
        self._libc.syscall(_SYS_FUTEX, self._addr[word], _FUTEX_WAIT, seen, ctypes.byref(ts), None, 0)

    def unlink(self) -> None:
        """Remove the file's name (the ranks that mapped it keep it until they exit)."""
        try:
            os.unlink(self.path)
        except OSError:
            pass


def make():
    """A new bell for the master, or ``None`` where there is none to make (no futex, no ``/dev/shm``)."""
    if _SYS_FUTEX is None or not os.path.isdir("/dev/shm"):
        return None
    try:
        return Bell(os.path.join("/dev/shm", f"gclib-bell-{secrets.token_hex(8)}"), create=True)
    except OSError:
        return None


def join(path):
    """The master's bell for a worker, or ``None`` where it cannot be opened (another host, say)."""
    if not path or _SYS_FUTEX is None:
        return None
    try:
        return Bell(path)
    except OSError:
        return None
