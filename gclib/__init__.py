"""gclib: gradient codes as data, exact verification, straggler simulation and real MPI runs.

The curated API::

    import gclib
    code = gclib.codes.crc(n=8, s=2, seed=1)
    res = gclib.simulate(code, gclib.ShiftedExponential(mu=10, alpha=0.01), trials=10_000, seed=1)
    res.summary()["mean_time"]
"""
from . import codes, stragglers
from .codes import DecodingError, GradientCode
from .schemes import SCHEMES, build
from .simulate import Communication, SimResult, simulate
from .stragglers import Exponential, Pareto, Persistent, ShiftedExponential

__version__ = "0.1.0"

__all__ = ["codes", "stragglers", "DecodingError", "GradientCode", "SCHEMES", "build", "Communication",
           "SimResult", "simulate", "Exponential", "Pareto", "Persistent", "ShiftedExponential", "__version__"]
