"""A real run of any gradient code over MPI: one master and K workers, injected stragglers, checked against the
simulator (see ``docs/runtime.md``).

    from gclib.runtime import RunSpec, launch
    res = launch(RunSpec(code, problem, TandonAGD(lr), ShiftedExponential(10, 0.01), iterations=20))
    res.summary()["mean_time"], res.summary()["mean_predicted"]

The names below are loaded from their modules when first used: every rank (``python -m gclib.runtime.rank``)
imports this package too, and loads only what a rank runs (the master's or a worker's loop, the spec), not the
launcher's stack.
"""
from gclib import deferred

#: The public names of the package and the module of each.
WHERE = {"RunResult": "gclib.runtime.result", "RunSpec": "gclib.runtime.spec", "RuntimeFailure": "gclib.runtime.result",
         "launch": "gclib.runtime.launcher", "launch_series": "gclib.runtime.launcher",
         "predicted_times": "gclib.runtime.protocol", "sample_finish": "gclib.runtime.protocol"}

__all__ = list(WHERE)
__getattr__, __dir__ = deferred.names(globals(), WHERE)
