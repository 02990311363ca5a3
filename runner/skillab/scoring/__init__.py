"""Scoring: per-case outcomes, the run aggregate and verdict, and the statistics behind the lift."""

from .aggregate import (
    ERROR_DOMINATED_FLOOR,
    aggregate,
    is_comparable,
    run_verdict,
)
from .outcomes import classify_outcome, compute_verdict
from .rounding import round_half_away
from .statistics import case_statistics, paired_statistics, pooled_statistics

__all__ = [
    "ERROR_DOMINATED_FLOOR",
    "aggregate",
    "classify_outcome",
    "compute_verdict",
    "is_comparable",
    "case_statistics",
    "paired_statistics",
    "pooled_statistics",
    "round_half_away",
    "run_verdict",
]
