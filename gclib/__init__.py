"""gclib: gradient codes as data, exact verification, straggler simulation and real MPI runs.

The curated API, imported with the package::

    import gclib
    code = gclib.codes.crc(n=8, s=2, seed=1)
    res = gclib.simulate(code, gclib.ShiftedExponential(mu=10, alpha=0.01), trials=10_000, seed=1)
    res.summary()["mean_time"]

``gclib.codes`` (every construction), ``gclib.build`` and ``gclib.SCHEMES`` (a code from a scheme's name and
parameters), ``gclib.simulate`` (the simulator's function, from :mod:`gclib.simulator`; its tables over a range of
parameters are in :mod:`gclib.sweeps`), the compute-time models, and ``gclib.checks``. They need NumPy alone. The other
entry points load what they need (SymPy, SciPy, pandas, MPI) when imported by name:

* ``from gclib.symbolic import verify``: exact (SymPy) verification of a code's encoding and decoding;
* ``from gclib.design import search``: the design search of GC-MMC (orders and clusters);
* ``from gclib.fit import fit``: straggler models fitted to a timing trace;
* ``from gclib.advise import advise``: the fitted models of a timing trace to a ranked list of codes;
* ``from gclib.runtime import launch, RunSpec``: a real run over MPI;
* ``from gclib.learning import train``: training on the simulated clock (GD, LAG, LAGC, coded schemes).

``python -m benchmarks.bench_startup`` measures what each of these costs to import, and the command line's start.
"""
from __future__ import annotations

__version__ = "0.1.0"

import os as _os  # noqa: E402
import sys as _sys  # noqa: E402


def _command_line() -> bool:
    """Whether this process is the command line (the ``gclib`` script, or ``python -m gclib``)."""
    name = _os.path.basename(_sys.argv[0]) if _sys.argv else ""
    orig = list(getattr(_sys, "orig_argv", []))
    module = orig[orig.index("-m") + 1] if "-m" in orig[:-1] else ""
    return name in ("gclib", "gclib.exe", "gclib-script.py") or module in ("gclib", "gclib.cli")


def _interrupted_while_starting(signum, frame):
    """Ctrl-C while the command line loads (NumPy, the core, the command line's own modules), before
    :func:`gclib.cli.main` can report it: one line and exit 130, as ``main`` reports one later (it puts Python's
    handler back as it starts)."""
    _os.write(2, b"gclib: interrupted\n")
    _os._exit(130)


if _command_line():
    # the interpreter's own module under signal (loaded as Python starts); signal itself builds its enums first,
    # milliseconds in which a Ctrl-C would still be a traceback
    import _signal  # noqa: E402

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # not when started with SIGINT ignored
        _signal.signal(_signal.SIGINT, _interrupted_while_starting)

from gclib import checks, codes, stragglers  # noqa: E402
from gclib.codes import DecodingError, GradientCode  # noqa: E402
from gclib.schemes import SCHEMES, build  # noqa: E402
from gclib.simulator import Communication, SimResult, simulate  # noqa: E402
from gclib.stragglers import Exponential, Pareto, Persistent, ShiftedExponential  # noqa: E402

__all__ = ["checks", "codes", "stragglers", "DecodingError", "GradientCode", "SCHEMES", "build", "Communication",
           "SimResult", "simulate", "Exponential", "Pareto", "Persistent", "ShiftedExponential", "__version__"]
