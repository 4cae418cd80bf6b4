"""The named sets of compute-time models the studies compare, defined once (gclib.stragglers.model_set)."""
from __future__ import annotations

import pytest

from gclib.stragglers import MODEL_SETS, Pareto, ShiftedExponential, model_set


def test_model_sets_are_named_once():
    from gclib.studies.gc_mmc import study as gc_mmc_study
    from gclib.studies.mmc_design import study as design_study
    from gclib.studies.mpi_runs import experiments
    from gclib.studies.scale import study as scale_study

    assert design_study.design_models() == model_set("mmc-design") == {
        "shifted-exp (eq. 5)": ShiftedExponential(10.0, 0.01), "Pareto (scale 0.05, shape 2.0)": Pareto(0.05, 2.0)}
    scale = {"shifted-exp (mu 10, alpha 0.01)": ShiftedExponential(10, 0.01),
             "Pareto (scale 0.05, shape 2)": Pareto(0.05, 2)}
    assert scale_study.models() == model_set("scale") == scale
    assert experiments.MODELS == model_set("mpi-runs") == {"shifted-exp": ShiftedExponential(10.0, 0.01),
                                                           "pareto": Pareto(0.05, 1.5)}
    t = gc_mmc_study.timing_models(3.0, 0.5)
    assert list(t) == [gc_mmc_study.EQ5, gc_mmc_study.PER_TASK] == list(model_set("timing"))
    assert t[gc_mmc_study.PER_TASK] == ShiftedExponential(3.0, 0.5, per_task=True)
    assert list(model_set("scale", pareto_shape=2.5)) == ["shifted-exp (mu 10, alpha 0.01)",
                                                         "Pareto (scale 0.05, shape 2.5)"]
    assert set(MODEL_SETS) == {"mmc-design", "scale", "mpi-runs", "timing"}
    with pytest.raises(ValueError, match="model set must be one of"):
        model_set("nope")
    with pytest.raises(ValueError, match="parameters must be among"):
        model_set("scale", shape=2)
