"""Progress bars: one helper for every loop of gclib that can run for more than a few seconds."""
from __future__ import annotations

from typing import Iterable


def progress(items: Iterable, desc: str, show: bool = True, **kw) -> Iterable:
    """``items`` behind a tqdm progress bar labelled ``desc`` when ``show`` (the bar disappears when the loop
    ends), else ``items`` themselves; ``kw`` go to tqdm (e.g. ``unit="chunk"``). Iterating gives the same items
    in the same order either way."""
    if not show:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, leave=False, **kw)
