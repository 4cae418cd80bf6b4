"""Gradient codes: what is sent. Every code is a :class:`GradientCode` (see :mod:`gclib.codes.base`)."""
from .base import (COND_WARN, DecodingError, GradientCode, IllConditionedWarning, condition_number,
                   split_pieces, straggler_patterns)
from .compose import clustered, split_evenly
from .polynomial import evaluation_points, polynomial_code, rs
from .rules import AnyOf, ThresholdRule, coverage, threshold
from .tandon import (crc, crc_matrix, cyclic_support, example_n3, example_n3_code, frc, ignore_stragglers,
                     partial_stragglers, uncoded)

__all__ = [
    "COND_WARN", "DecodingError", "GradientCode", "IllConditionedWarning", "condition_number", "split_pieces",
    "straggler_patterns", "clustered", "split_evenly", "evaluation_points", "polynomial_code", "rs", "AnyOf",
    "ThresholdRule", "coverage", "threshold", "crc", "crc_matrix", "cyclic_support", "example_n3",
    "example_n3_code", "frc", "ignore_stragglers", "partial_stragglers", "uncoded",
]
