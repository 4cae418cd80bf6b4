"""Learning problems and optimizers (data split into parts as the codes expect)."""
from gclib.learning.problems import (
    DATASETS, Problem, auc, breast_cancer, diabetes, family, generic, lag_synthetic, make_problem, split_parts,
    tandon_logistic)
from gclib.learning.steps import GD, TandonAGD
from gclib.learning.optim import SCHEME_NAMES, LazyScheme, TrainResult, compare, make_scheme, train

__all__ = ["DATASETS", "Problem", "auc", "breast_cancer", "diabetes", "family", "generic", "lag_synthetic", "make_problem",
           "split_parts", "tandon_logistic", "GD", "TandonAGD", "SCHEME_NAMES", "LazyScheme", "TrainResult",
           "compare", "make_scheme", "train"]
