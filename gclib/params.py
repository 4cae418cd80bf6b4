"""Checking a notebook's parameters before anything runs.

A notebook's ``parameters`` cell can be overridden by ``papermill -p name value`` (and by the profiles in
``notebooks/profiles.toml``). A wrong value should fail at once, in the first code cell, with a message that names
the parameter, the value and what is allowed, not deep inside a simulation. The first code cell of every notebook
therefore calls :func:`validate` on the notebook's globals::

    from gclib.params import validate
    validate(globals(),
             profile=dict(choices=["full", "quick"]),
             figures_dir=dict(type=str),
             seed=dict(type=int, low=0),
             trials=dict(type=int, low=1),
             mu=dict(type=float, above=0),
             cond_n=dict(type=list, min_len=1, items=dict(type=int, low=2)))

or :func:`check` on one value (it returns the value, so it can be used inline)::

    from gclib.params import check
    check("trials", trials, int, low=1)
    check("mu", mu, float, low=0, low_open=True)
    check("cond_n", cond_n, list, low=2)          # bounds and choices apply to every element of a list

Both raise :class:`ValueError`, e.g. ``parameter trials must be an integer >= 1, got -5 (int)``.

Rules:

* The type is given as ``type=`` or as the third positional argument (``kind``).
* ``type=int`` accepts Python and NumPy integers but not ``bool`` nor floats (``-p trials 1e5`` is a float and is
  refused with a message saying so); ``type=float`` accepts any real number except ``bool`` and rejects NaN;
  ``type=list`` accepts lists and tuples; other types are checked with ``isinstance``. A tuple of types allows any.
* ``low`` / ``high`` are inclusive bounds, ``above`` / ``below`` exclusive ones; ``low_open=True`` makes ``low``
  exclusive.
* ``choices``: the value must be one of them.
* For a list value without ``items``, the bounds and ``choices`` apply to every element (named ``name[i]``).
* ``items``: a spec (a dict of these keywords) applied to every element of a list, named ``name[i]``.
* ``min_len`` / ``max_len``: bounds on the length of a list or string.
* ``none=True`` also allows ``None``.
"""
from __future__ import annotations

import numbers
from typing import Any, Mapping

__all__ = ["check", "validate"]


def _error(name: str, value: Any, allowed: str) -> ValueError:
    """The error for a bad parameter: a plain :class:`ValueError` naming the parameter, the value and what is
    allowed."""
    return ValueError(f"parameter {name} must be {allowed}, got {value!r} ({type(value).__name__})")


_TYPE_WORDS = {int: "an integer", float: "a number", str: "a string", list: "a list", bool: "True or False",
               dict: "a dict"}


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _type_ok(v, t) -> bool:
    if t is int:
        return _is_int(v)
    if t is float:
        return _is_real(v) and not _is_nan(v)
    if t is list:
        return isinstance(v, (list, tuple))
    if t is bool:
        return isinstance(v, bool)
    return isinstance(v, t)


def _is_nan(v) -> bool:
    try:
        return bool(v != v)
    except Exception:  # pragma: no cover - exotic objects
        return False


def _type_word(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_word(x) for x in t)
    return _TYPE_WORDS.get(t, f"a {getattr(t, '__name__', t)}")


def _range_words(low, high, above, below) -> str:
    parts = []
    if low is not None:
        parts.append(f">= {low}")
    if above is not None:
        parts.append(f"> {above}")
    if high is not None:
        parts.append(f"<= {high}")
    if below is not None:
        parts.append(f"< {below}")
    return " and ".join(parts)


def _allowed(type, low, high, above, below, choices, min_len, max_len, none) -> str:
    """The human description of what a spec allows, e.g. ``an integer >= 1 and <= 100``."""
    if choices is not None:
        words = "one of " + ", ".join(repr(c) for c in choices)
    else:
        words = _type_word(type) if type is not None else "a value"
        rng = _range_words(low, high, above, below)
        if rng:
            words += " " + rng
        if min_len is not None or max_len is not None:
            lo = "" if min_len is None else f"at least {min_len}"
            hi = "" if max_len is None else f"at most {max_len}"
            words += " of length " + " and ".join(x for x in (lo, hi) if x)
    return words + (" (or None)" if none else "")


def check(name: str, value: Any, kind=None, *, type=None, low=None, high=None, low_open: bool = False,
          above=None, below=None, choices=None, items: Mapping | None = None, min_len: int | None = None,
          max_len: int | None = None, none: bool = False) -> Any:
    """Check one parameter; return ``value`` unchanged or raise a ``ValueError`` whose message names the
    parameter, the value and what is allowed (see the module docstring for the keywords)."""
    if kind is not None:
        if type is not None and type is not kind:
            raise TypeError("give the type once: as the third argument or as type=")
        type = kind
    if low_open and low is not None:
        above, low = low, None
    elementwise = dict(low=low, high=high, above=above, below=below, choices=choices)
    if items is None and isinstance(value, (list, tuple)) and any(v is not None for v in elementwise.values()):
        # bounds and choices of a list apply to its elements
        check(name, value, type=type, min_len=min_len, max_len=max_len, none=none)
        for i, v in enumerate(value):
            check(f"{name}[{i}]", v, **elementwise)
        return value
    allowed = _allowed(type, low, high, above, below, choices, min_len, max_len, none)
    if value is None and none:
        return value
    if choices is not None:
        try:
            ok = value in choices
        except TypeError:
            ok = False
        if not ok:
            raise _error(name, value, allowed)
    if type is not None:
        types = type if isinstance(type, tuple) else (type,)
        if not any(_type_ok(value, t) for t in types):
            raise _error(name, value, allowed)
    if any(b is not None for b in (low, high, above, below)):
        if not _is_real(value) or _is_nan(value):
            raise _error(name, value, allowed)
        if ((low is not None and value < low) or (high is not None and value > high)
                or (above is not None and value <= above) or (below is not None and value >= below)):
            raise _error(name, value, allowed)
    if min_len is not None or max_len is not None:
        try:
            n = len(value)
        except TypeError:
            raise _error(name, value, allowed) from None
        if (min_len is not None and n < min_len) or (max_len is not None and n > max_len):
            raise _error(name, value, allowed)
    if items is not None:
        if not isinstance(value, (list, tuple)):
            raise _error(name, value, "a list")
        for i, v in enumerate(value):
            check(f"{name}[{i}]", v, **items)
    return value


def validate(namespace: Mapping[str, Any], /, **specs: Mapping) -> None:
    """Check every parameter named in ``specs`` (``name=dict(type=..., low=..., ...)``, the keywords of
    :func:`check`) against its value in ``namespace`` (a notebook passes ``globals()``).

    Raises ``ValueError`` for the first bad value (in the order given), and also when a named parameter
    is not defined at all.
    """
    for name, spec in specs.items():
        if not isinstance(spec, Mapping):
            raise TypeError(f"the spec of {name} must be a dict of check() keywords, got {spec!r}")
        if name not in namespace:
            raise ValueError(f"parameter {name} is not defined (the parameters cell must set it)")
        check(name, namespace[name], **spec)
