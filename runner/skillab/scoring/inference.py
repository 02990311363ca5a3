"""Inference on the lift with the case as the unit: one paired difference per case.

Runs of one case share the case's difficulty, so they are not independent evidence: each case
contributes the mean of its runs per arm, and the lift is the mean of the per-case differences
``d_i = with_i - without_i`` (each in [-1, 1]).

- The test is the exact sign-flip permutation test on the ``d_i``: under "the skill changes
  nothing" each case's two arms are exchangeable, so every sign pattern of the differences is
  equally likely. Its exact distribution comes from the generating function
  ``prod_i (1 + z^(2 x_i))`` multiplied out as one big integer (see ``sign_flip_p``).
- The interval is the test inverted over shifts of the lift (``interval``): the sign-flip test
  at 0, the score test of a paired proportion elsewhere, so the test and the interval never
  disagree about 0.

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

ALPHA = 0.05
# Above this many bits the exact generating function costs more than it is worth; the
# permutation distribution's normal approximation is very close at that size.
_EXACT_BITS = 1 << 23


@dataclass(frozen=True)
class CasePair:
    """One case: how many runs passed in each arm, out of how many runs that were graded."""

    with_passes: int
    without_passes: int
    runs: int

    @property
    def diff(self) -> float:
        return (self.with_passes - self.without_passes) / self.runs


def integer_scores(cases: Sequence[CasePair]) -> list[int]:
    """The differences on a common integer scale (the sign-flip test is scale-free)."""
    scale = math.lcm(*(c.runs for c in cases))
    return [(c.with_passes - c.without_passes) * (scale // c.runs) for c in cases]


def sign_flip_p(scores: Sequence[int]) -> tuple[float, bool]:
    """Two-sided p of ``|sum(scores)|`` under independent random signs, and whether it is exact."""
    observed = abs(sum(scores))
    if observed == 0:
        return 1.0, True
    upper, exact = sign_flip_upper_tail(scores, observed)
    return min(1.0, 2 * upper), exact


def sign_flip_upper_tail(scores: Sequence[int], t: int) -> tuple[float, bool]:
    """P(S >= t) for S the sum of ``scores`` under independent random signs; exact or not.

    With ``m`` non-zero scores ``x_i`` and ``X = sum |x_i|``, a sign pattern with positive set
    ``P`` has sum ``2 * sum_P x_i - X``; the number of patterns per ``sum_P x_i`` are the
    coefficients of ``prod (1 + z^x_i)``. Packed ``B`` bits per coefficient into one integer,
    each factor is a shift and an add; the tail count is the digit sum of the shifted integer,
    which ``mod (2^B - 1)`` gives at once because ``2^B = 1`` modulo it.
    """
    xs = [abs(x) for x in scores if x]
    m, total = len(xs), sum(xs)
    if t <= -total:
        return 1.0, True
    if t > total:
        return 0.0, True
    bits = m + 2  # each coefficient and every digit sum is at most 2^m < 2^bits - 1
    if (total + 1) * bits > _EXACT_BITS:
        # Continuity-corrected normal approximation of the permutation distribution.
        z = (t - 0.5) / math.sqrt(sum(x * x for x in xs))
        return 1 - NormalDist().cdf(z), False
    poly = 1
    for x in xs:
        poly += poly << (x * bits)
    threshold = max(0, -(-(t + total) // 2))  # sum >= t  <=>  sum_P x_i >= (t + X) / 2
    tail = (poly >> (threshold * bits)) % ((1 << bits) - 1) if threshold else 1 << m
    return float(Fraction(tail, 1 << m)), True


def t_quantile(q: float, df: int) -> float:
    """Student's t quantile: exact for 1 and 2 degrees of freedom, else the Cornish-Fisher
    expansion in 1/df (Abramowitz & Stegun 26.7.5), about 0.1% low at 3 and closer above."""
    if df <= 0:
        return math.inf
    z = NormalDist().inv_cdf(q)
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        p = 2 * min(q, 1 - q)
        t = math.sqrt(2 / (p * (2 - p)) - 2)
        return t if q > 0.5 else -t
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
