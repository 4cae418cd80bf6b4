"""Gradient codes: what is sent. Every code is a :class:`GradientCode` (see :mod:`gclib.codes.base`)."""
from gclib.codes.base import DecodingError, Decoder, GradientCode, split_pieces, straggler_patterns
from gclib.codes.conditioning import COND_WARN, IllConditionedWarning, condition_number, decoding_amplification
from gclib.codes.compose import clustered, split_evenly
from gclib.codes.polynomial import evaluation_points, polynomial_code, rs
from gclib.codes.rules import AnyOf, ThresholdRule, coverage, threshold
from gclib.codes.repetition import (
    crc, crc_matrix, cyclic_support, example_n3, example_n3_code, frc, ignore_stragglers, partial_stragglers, uncoded)

__all__ = [
    "COND_WARN", "DecodingError", "Decoder", "GradientCode", "IllConditionedWarning", "condition_number", "split_pieces",
    "straggler_patterns", "clustered", "split_evenly", "evaluation_points", "polynomial_code", "rs", "AnyOf",
    "ThresholdRule", "coverage", "threshold", "crc", "crc_matrix", "cyclic_support", "example_n3",
    "example_n3_code", "frc", "ignore_stragglers", "partial_stragglers", "uncoded",
]

# --- Reed-Solomon exact mode and communication-efficient codes (Ye-Abbe, Kadhe et al.) ---
from gclib.codes.comm_efficient import (
    BasesRule, gaussian_generator, kadhe, load_generator, min_distance, repetition_generator, ye_abbe)
from gclib.codes.polynomial import point_permutation, rational_points  # noqa: E402

__all__ += ["BasesRule", "gaussian_generator", "kadhe", "load_generator", "min_distance", "repetition_generator",
            "ye_abbe", "rational_points", "point_permutation", "decoding_amplification"]

# --- Approximate codes (Raviv et al.'s expander codes, stochastic gradient coding) ---
from gclib.codes.approximate import ScaledSum, decoding_error, error_report, expander, stochastic  # noqa: E402

__all__ += ["ScaledSum", "decoding_error", "error_report", "expander", "stochastic"]
