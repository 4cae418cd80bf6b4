"""Progress bars: one helper for every loop of gclib that can run for more than a few seconds."""
from __future__ import annotations

from typing import Iterable


def progress(items: Iterable, desc: str, show: bool = True, **kw) -> Iterable:
    """``items`` behind a tqdm progress bar labelled ``desc`` when ``show`` (the bar disappears when the loop
    ends), else ``items`` themselves; ``kw`` go to tqdm (e.g. ``unit="chunk"``). Iterating gives the same items
    in the same order either way."""
    if not show:
        return items
    return _tqdm()(items, desc=desc, leave=False, **kw)


class _Quiet:
    """What :func:`bar` gives when nothing is shown: the same calls and counts, nothing drawn."""

    def __init__(self, total=0):
        self.total, self.n = total, 0

    def update(self, n=1):
        self.n += n

    def refresh(self):
        pass

    def set_description(self, desc=None, refresh=True):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def bar(total: float, desc: str, show: bool = True, **kw):
    """A tqdm progress bar of ``total`` units that the caller advances (``update(n)``), with the rate and the time
    left (ETA) it shows; a do-nothing stand-in when not ``show``. Use it as a context manager."""
    if not show:
        return _Quiet(total)
    return _tqdm()(total=total, desc=desc, leave=False, **kw)


def _tqdm():
    """tqdm's class for this front end (a notebook's widget or a terminal's text), imported when a bar is first
    shown: ``import gclib`` loads this module, and a loop shown without a bar never needs tqdm."""
    from tqdm.auto import tqdm

    return tqdm
