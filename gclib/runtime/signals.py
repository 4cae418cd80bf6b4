"""The stop signals of the launching process: while a job runs, Ctrl-C (SIGINT), SIGTERM and SIGHUP raise
:class:`Interrupted` in the main thread, so that the job is killed, no rank is left behind and the state is saved.
"""
from __future__ import annotations

import signal
import threading

#: Signals that stop a run like Ctrl-C does (the state is saved and the job killed).
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupted(Exception):
    """The launching process got a stop signal (Ctrl-C)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def catch_stop_signals():
    """Turn Ctrl-C (and SIGTERM, SIGHUP) into :class:`Interrupted` while the job runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        for name in STOP_SIGNALS:  # a second Ctrl-C while we clean up must not break the clean-up
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        raise Interrupted(signum)

    old = {}
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            old[sig] = signal.signal(sig, handler)
    return old


def restore(old) -> None:
    """Put back the handlers :func:`catch_stop_signals` replaced (``old``, its return value)."""
    if old:
        for sig, h in old.items():
            signal.signal(sig, h)


def signal_name(sig) -> str:
    """``"SIGKILL"`` for 9; ``"signal N"`` for a number that names no signal."""
    try:
        return signal.Signals(int(sig)).name
    except (ValueError, TypeError):
        return f"signal {sig}"
