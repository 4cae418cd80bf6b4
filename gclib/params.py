"""Validation of notebook parameters: a bad ``papermill -p`` value fails at once, naming the parameter."""
from __future__ import annotations

import numbers


def check(name: str, value, kind=None, *, low=None, high=None, low_open: bool = False, choices=None):
    """Check one parameter and return it.

    Args:
        name: the parameter's name (used in the message).
        kind: ``int``, ``float``, ``str``, ``bool`` or ``list`` (``float`` accepts ints; ``list`` accepts tuples).
        low, high: inclusive bounds (``low_open`` makes the lower bound strict); for lists, bounds apply to every
            element.
        choices: allowed values.
    Raises:
        ValueError: naming the parameter, the value and what is allowed.
    """
    def fail(what):
        raise ValueError(f"parameter {name} = {value!r}: {what}")

    if kind is bool and not isinstance(value, bool):
        fail("must be true or false")
    if kind is int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        fail("must be an integer")
    if kind is float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        fail("must be a number")
    if kind is str and not isinstance(value, str):
        fail("must be a string")
    if kind is list and not isinstance(value, (list, tuple)):
        fail("must be a list")
    items = value if isinstance(value, (list, tuple)) else [value]
    for v in items:
        if low is not None or high is not None:
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                fail("must hold numbers")
            if low is not None and (v <= low if low_open else v < low):
                fail(f"must be {'>' if low_open else '>='} {low}")
            if high is not None and v > high:
                fail(f"must be <= {high}")
        if choices is not None and v not in choices:
            fail(f"must be one of {list(choices)}")
    return value
