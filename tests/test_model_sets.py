"""The named sets of compute-time models the studies compare, defined once (gclib.stragglers.model_set)."""
from __future__ import annotations

import pytest

from gclib.stragglers import MODEL_SETS, Exponential, Pareto, ShiftedExponential, mean_one_models, model_set


def test_model_sets_are_named_once():
    from gclib.studies.gc_mmc import study as gc_mmc_study
    from gclib.studies.mmc_design import study as design_study
    from gclib.studies.mpi_runs import study as mpi_runs_study
    from gclib.studies.scale import study as scale_study

    assert design_study.design_models() == model_set("mmc-design") == {
        "shifted-exp (eq. 5)": ShiftedExponential(10.0, 0.01), "Pareto (scale 0.05, shape 2.0)": Pareto(0.05, 2.0)}
    scale = {"shifted-exp (mu 10, alpha 0.01)": ShiftedExponential(10, 0.01),
             "Pareto (scale 0.05, shape 2)": Pareto(0.05, 2)}
    assert scale_study.models() == model_set("scale") == scale
    assert mpi_runs_study.MODELS == model_set("mpi-runs") == {"shifted-exp": ShiftedExponential(10.0, 0.01),
                                                              "pareto": Pareto(0.05, 1.5)}
    t = gc_mmc_study.timing_models(3.0, 0.5)
    assert list(t) == [gc_mmc_study.EQ5, gc_mmc_study.PER_TASK] == list(model_set("timing"))
    assert t[gc_mmc_study.PER_TASK] == ShiftedExponential(3.0, 0.5, per_task=True)
    assert list(model_set("scale", pareto_shape=2.5)) == ["shifted-exp (mu 10, alpha 0.01)",
                                                         "Pareto (scale 0.05, shape 2.5)"]
    assert set(MODEL_SETS) == {"mmc-design", "scale", "mpi-runs", "timing", "calibration"}
    with pytest.raises(ValueError, match="model set must be one of"):
        model_set("nope")
    with pytest.raises(ValueError, match="parameters must be among"):
        model_set("scale", shape=2)


def test_the_sets_of_notebooks_06_and_09_are_the_stragglers_modules():
    from gclib.studies.advise import study as advise_study
    from gclib.studies.lazy_aggregation import study as lazy_study

    truths = {"shifted-exp per worker": ShiftedExponential(10.0, 0.01), "exp per task": Exponential(10.0, True),
              "pareto per worker": Pareto(0.05, 2.5)}
    assert advise_study.truths() == model_set("calibration") == truths
    assert advise_study.truths(5.0, 0.1, 2.0, 0.5, 3.0) == model_set("calibration", mu=5.0, alpha=0.1, rate=2.0,
                                                                     pareto_scale=0.5, pareto_shape=3.0)
    assert model_set("calibration", rate=2.0)["exp per task"] == Exponential(2.0, per_task=True)
    assert lazy_study.mean_one_models is mean_one_models
    m = mean_one_models([1.5, 4.0], shift=0.25)
    assert list(m) == [lazy_study.model_label(1.5), "pareto 4", lazy_study.model_label(), "shifted-exp"]
    assert m["pareto 1.5"] == Pareto(1 / 3, 1.5) and m["shifted-exp"] == ShiftedExponential(4 / 3, 0.25)
