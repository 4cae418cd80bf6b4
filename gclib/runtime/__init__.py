"""A real run of any gradient code over MPI: one master and K workers, injected stragglers, checked against the
simulator (see ``docs/runtime.md``).

    from gclib.runtime import RunSpec, launch
    res = launch(RunSpec(code, problem, TandonAGD(lr), ShiftedExponential(10, 0.01), iterations=20))
    res.summary()["mean_time"], res.summary()["mean_predicted"]
"""
from gclib.runtime.launcher import launch
from gclib.runtime.protocol import predicted_times, sample_finish
from gclib.runtime.result import RunResult, RuntimeFailure
from gclib.runtime.spec import RunSpec

__all__ = ["RunResult", "RunSpec", "RuntimeFailure", "launch", "predicted_times", "sample_finish"]
