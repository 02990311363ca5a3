"""The lift's 95% interval, made to agree with the sign-flip test the sentence is decided by.

Three steps, each for a stated reason:

1. The Agresti-Min-adjusted t interval on the per-case differences (``adjusted_t_interval``):
   the right width when many cases vary.
2. Widened to the exact bounds a case's difference allows: ``|d| <= 1``, so the lift lies
   between ``P(a case goes up) - P(a case goes down)`` bounded each way by exact
   Clopper-Pearson bounds on the two shares (Bonferroni: 98.75% one-sided each, so each side
   of the interval holds at 97.5% whatever the data; a case with several runs counts as its
   fraction of a case, rounded outward). This is the honest width for a near-deterministic
   suite, where the t interval's spread comes from a handful of discordant cases: 20 cases
   where nothing differs allow a lift of up to 19.7 pts, not the t interval's 9.7.
3. Reconciled with the test at 0, so "p < 0.05" and "the interval excludes 0" never disagree:
   where the test rejects 0 but the interval holds it, the bound on 0's side is the test's own
   inversion (the smallest shift of the differences the sign-flip test no longer rejects, to a
   half point); where the test keeps 0, the interval reaches 0.
   ``benchmarks/calibration.py`` measures the coverage of the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .inference import ALPHA, CasePair, adjusted_t_interval, integer_scores, sign_flip_p, sign_flip_upper_tail

# The grid the test is inverted on: steps per unit of difference (half a point).
_INVERSION_STEPS = 200


@dataclass(frozen=True)
class LiftInference:
    """The case-level lift (points), its 95% interval and the sign-flip p-value."""

    n_cases: int
    lift_pts: float
    ci95: tuple[float, float] | None
    p_value: float
    exact: bool
    # The p-value bound the claim is decided at (5%; a group-sequential look's own bound).
    alpha: float = ALPHA

    @property
    def beyond_noise(self) -> bool:
        """The test decides; the interval is built to agree with it (``interval.lift_interval``)."""
        return self.ci95 is not None and self.p_value < self.alpha


def infer_lift(cases: Sequence[CasePair], *, level: float = 0.95, alpha: float = ALPHA) -> LiftInference | None:
    """The lift over ``cases``; None without a case. The interval needs two cases or more."""
    cases = [c for c in cases if c.runs > 0]
    if not cases:
        return None
    diffs = [c.diff for c in cases]
    n = len(diffs)
    mean = sum(diffs) / n
    p, exact = sign_flip_p(integer_scores(cases))
    ci = lift_interval(cases, p, level=level, alpha=alpha) if n > 1 else None
    return LiftInference(n, 100 * mean, ci, p, exact, alpha)


def lift_interval(cases: Sequence[CasePair], p_value: float, *, level: float = 0.95,
                  alpha: float = ALPHA) -> tuple[float, float]:
    """The interval (points) for the case-level lift; ``p_value`` is the sign-flip test's."""
    diffs = [c.diff for c in cases]
    lo, hi = adjusted_t_interval(diffs, level=level)
    tail = (1 - level) / 2
    n = len(cases)
    up = sum(max(c.diff, 0.0) for c in cases)
    down = sum(max(-c.diff, 0.0) for c in cases)
    ups, downs = math.ceil(up - 1e-9), math.ceil(down - 1e-9)
    # Each share is bounded at half the side's error, so each difference bound holds at 97.5%.
    hi = max(hi, 100 * (clopper_pearson_upper(ups, n, tail / 2)
                        - clopper_pearson_lower(math.floor(down + 1e-9), n, tail / 2)))
    lo = min(lo, 100 * (clopper_pearson_lower(math.floor(up + 1e-9), n, tail / 2)
                        - clopper_pearson_upper(downs, n, tail / 2)))
    lift = 100 * sum(diffs) / n
    if p_value < alpha and lo <= 0 <= hi:
        bound = inverted_bound(cases, alpha=alpha)
        lo, hi = (max(lo, bound), hi) if lift > 0 else (lo, min(hi, bound))
    elif p_value >= alpha:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return max(-100.0, lo), min(100.0, hi)


def clopper_pearson_upper(successes: int, n: int, tail: float) -> float:
    """Exact one-sided upper bound on a share: the p with P(Binomial(n, p) <= successes) = tail."""
    if successes >= n:
        return 1.0
    lo, hi = successes / n, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _binom_cdf(successes, n, mid) > tail else (lo, mid)
    return hi


def clopper_pearson_lower(successes: int, n: int, tail: float) -> float:
    """Exact one-sided lower bound on a share (the upper bound of the failures, mirrored)."""
    return 1.0 - clopper_pearson_upper(n - successes, n, tail)


def _binom_cdf(k: int, n: int, p: float) -> float:
    # In log space: math.comb(n, i) passes a float's range past n of about 1,030.
    if p <= 0.0 or p >= 1.0:
        return 1.0 if p <= 0.0 or k >= n else 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                 + i * log_p + (n - i) * log_q) for i in range(k + 1)))


def inverted_bound(cases: Sequence[CasePair], *, alpha: float = ALPHA) -> float:
    """The bound (points) on 0's side of the lift from inverting the sign-flip test.

    The test of "the lift is s" flips the signs of ``d_i - s``; the bound is the shift nearest
    the observed lift that it rejects no more, searched between 0 and the observed lift on a
    grid of 1/2 pt (the scores are scaled to integers so the test stays exact).
    """
    scale = math.lcm(*(c.runs for c in cases))
    unit = _INVERSION_STEPS / 100  # grid steps per point
    base = [(c.with_passes - c.without_passes) * (scale // c.runs) * _INVERSION_STEPS for c in cases]
    total = sum(base)
    sign = 1 if total > 0 else -1
    # A shift of j grid steps; the scores are then d_i - j / _INVERSION_STEPS on the integer scale.
    def rejects(j: int) -> bool:
        shifted = [sign * b - j * scale for b in base]
        return 2 * sign_flip_upper_tail(shifted, sum(shifted))[0] < alpha
    lo, hi = 0, abs(total) // (len(cases) * scale)  # rejected at 0, kept at the observed lift
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if rejects(mid) else (lo, mid)
    return sign * hi / unit
