"""The author and held-out lifts and their gap, with the case as the unit (``scoring.inference``).

Each side's lift is the mean of its per-case differences (with − without, over the case's runs),
its interval the pseudo-pair-adjusted t interval the run's statistics start from. The two sides
are independent samples of cases, so the gap's interval is Welch's on the adjusted moments
(Satterthwaite's degrees of freedom): approximate, and wide at a few cases a side, as it should be.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.held_out import HELD_OUT_TAG, HeldOutLift, SplitLift
from ..core.records import CaseRecord
from .inference import t_quantile
from .statistics import case_pairs

# Agresti-Min pseudo-pairs (value, weight): half a case at +1 and at -1, one at 0, so a side whose
# cases all agree still has a spread.
_PSEUDO = ((1.0, 0.5), (-1.0, 0.5), (0.0, 1.0))


def held_out_lift(records: Sequence[CaseRecord]) -> HeldOutLift | None:
    """None unless the run has held-out cases and author cases both."""
    held = [r for r in records if HELD_OUT_TAG in r.tags]
    if not held or len(held) == len(records):
        return None
    author = [r for r in records if HELD_OUT_TAG not in r.tags]
    a_diffs = [p.diff for p in case_pairs(author)[1]]
    h_diffs = [p.diff for p in case_pairs(held)[1]]
    a_side, h_side = _side(a_diffs), _side(h_diffs)
    if a_side.lift_pts is None or h_side.lift_pts is None:
        return HeldOutLift(a_side, h_side, None, None)
    return HeldOutLift(a_side, h_side, a_side.lift_pts - h_side.lift_pts, _gap_interval(a_diffs, h_diffs))


def _side(diffs: Sequence[float]) -> SplitLift:
    if not diffs:
        return SplitLift(0, None, None)
    ci = adjusted_t_interval(diffs) if len(diffs) > 1 else None
    return SplitLift(len(diffs), 100 * sum(diffs) / len(diffs), ci)


def _gap_interval(a: Sequence[float], h: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    if len(a) < 2 or len(h) < 2:
        return None
    a_mean, a_var, a_weight = adjusted_moments(a)
    h_mean, h_var, h_weight = adjusted_moments(h)
    a_term, h_term = a_var / a_weight, h_var / h_weight
    se = math.sqrt(a_term + h_term)
    df = (a_term + h_term) ** 2 / (a_term ** 2 / (len(a) - 1) + h_term ** 2 / (len(h) - 1)) if se else 1
    half = t_quantile(1 - (1 - level) / 2, max(1, int(df))) * se
    centre = a_mean - h_mean
    return max(-200.0, 100 * (centre - half)), min(200.0, 100 * (centre + half))


def adjusted_moments(diffs: Sequence[float]) -> tuple[float, float, float]:
    """Mean, variance and total weight of the differences with the pseudo-pairs added."""
    weight = len(diffs) + sum(w for _, w in _PSEUDO)
    centre = (sum(diffs) + sum(v * w for v, w in _PSEUDO)) / weight
    squares = sum((d - centre) ** 2 for d in diffs) + sum(w * (v - centre) ** 2 for v, w in _PSEUDO)
    return centre, squares / (weight - 1), weight


def adjusted_t_interval(diffs: Sequence[float], *, level: float = 0.95) -> tuple[float, float]:
    """t interval (points) on the differences plus the pseudo-pairs; clipped to [-100, 100]."""
    centre, variance, weight = adjusted_moments(diffs)
    half = t_quantile(1 - (1 - level) / 2, len(diffs) - 1) * math.sqrt(variance / weight)
    return max(-100.0, 100 * (centre - half)), min(100.0, 100 * (centre + half))
