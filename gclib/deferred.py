"""A package's public names loaded from their modules on first use (PEP 562), so that importing the package loads
none of them: :mod:`gclib.runtime` (a rank imports it, and must not load the launcher's stack) and
:mod:`gclib.learning` (a rank builds a model, and needs neither the optimizers nor the training schemes)."""
from __future__ import annotations

import importlib


def names(package: dict, where: dict):
    """``(__getattr__, __dir__)`` for the package whose globals are ``package``: ``where`` maps each public name
    to the module that defines it; a name is imported from there when first read, then kept in the package."""
    title = package["__name__"]

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {title!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        package[name] = value
        return value

    def __dir__():
        return sorted(set(package) | set(where))

    return __getattr__, __dir__
