"""Models and optimizers (data split into parts as the codes expect): the model interface every run trains through
(:mod:`gclib.learning.model`), the built-in regression problems, the adapters of PyTorch, NumPy and JAX models
(:mod:`gclib.learning.adapters`), the updates and the simulated clock."""
from gclib.learning.model import Model, ModelError, ModelRef, as_model, check_model, load, parse_kwargs
from gclib.learning.problems import (
    DATASETS, Problem, auc, breast_cancer, diabetes, family, generic, lag_synthetic, make_problem, split_parts,
    tandon_logistic)
from gclib.learning.adapters import DataModel, accuracy, from_jax, from_numpy, from_torch
from gclib.learning.steps import GD, TandonAGD
from gclib.learning.optim import SCHEME_NAMES, LazyScheme, TrainResult, compare, make_scheme, train

__all__ = ["Model", "ModelError", "ModelRef", "as_model", "check_model", "load", "parse_kwargs", "DATASETS",
           "Problem", "auc", "breast_cancer", "diabetes", "family", "generic", "lag_synthetic", "make_problem",
           "split_parts", "tandon_logistic", "DataModel", "accuracy", "from_jax", "from_numpy", "from_torch", "GD",
           "TandonAGD", "SCHEME_NAMES", "LazyScheme", "TrainResult", "compare", "make_scheme", "train"]
