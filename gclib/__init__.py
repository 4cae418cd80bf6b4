"""gclib: gradient codes as data, exact verification, straggler simulation and real MPI runs.

The curated API::

    import gclib
    code = gclib.codes.crc(n=8, s=2, seed=1)
    res = gclib.simulate(code, gclib.ShiftedExponential(mu=10, alpha=0.01), trials=10_000, seed=1)
    res.summary()["mean_time"]

The names below, and every submodule (``gclib.codes``, ``gclib.checks``, ...), are imported on first use, so
that ``import gclib`` itself costs nothing: the command line (``gclib ...``) starts, and handles a Ctrl-C, before
NumPy and SciPy load. ``gclib.simulate`` is the function :func:`gclib.simulate.simulate`; its module is
``sys.modules["gclib.simulate"]`` (``from gclib.simulate import ...`` works as usual).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__version__ = "0.1.0"

#: The curated names: name -> the submodule that defines it.
_API = {"DecodingError": "codes", "GradientCode": "codes", "SCHEMES": "schemes", "build": "schemes",
        "Communication": "simulate", "SimResult": "simulate", "simulate": "simulate", "Exponential": "stragglers",
        "Pareto": "stragglers", "Persistent": "stragglers", "ShiftedExponential": "stragglers"}

__all__ = ["codes", "stragglers", "DecodingError", "GradientCode", "SCHEMES", "build", "Communication",
           "SimResult", "simulate", "Exponential", "Pareto", "Persistent", "ShiftedExponential", "__version__"]


def __getattr__(name: str):
    if name in _API:
        value = getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package's module type: importing the submodule ``gclib.simulate`` does not replace the function
    ``gclib.simulate`` (Python sets a package's attribute to each submodule it imports)."""

    def __setattr__(self, name, value):
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
