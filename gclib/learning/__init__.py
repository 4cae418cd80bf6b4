"""Models and optimizers (data split into parts as the codes expect): the model interface every run trains through
(:mod:`gclib.learning.model`), the built-in regression problems, the adapters of PyTorch, NumPy and JAX models
(:mod:`gclib.learning.adapters`), the updates and the simulated clock.

The names below are loaded from their modules when first used: a rank of a real run imports this package to build
its model, and loads neither the optimizers nor the training schemes.
"""
from gclib import deferred

_MODULES = {
    "gclib.learning.model": ["Model", "ModelError", "ModelRef", "as_model", "check_model", "load", "parse_kwargs"],
    "gclib.learning.problems": ["DATASETS", "Problem", "auc", "breast_cancer", "diabetes", "family", "generic",
                                "lag_synthetic", "make_problem", "split_parts", "tandon_logistic"],
    "gclib.learning.adapters": ["DataModel", "accuracy", "from_jax", "from_numpy", "from_torch"],
    "gclib.learning.steps": ["GD", "TandonAGD"],
    "gclib.learning.optim": ["SCHEME_NAMES", "LazyScheme", "TrainResult", "compare", "make_scheme", "train"],
}
#: The public names of the package and the module of each.
WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = list(WHERE)
__getattr__, __dir__ = deferred.names(globals(), WHERE)
