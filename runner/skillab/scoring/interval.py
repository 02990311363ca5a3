"""The lift's 95% interval: every shift of the lift the test does not reject.

The interval is a test inverted: a shift ``s`` of the lift is in it when the paired test of
"the lift is s" keeps it at 5%. At ``s = 0`` that test is the sign-flip test the sentence is
decided by (exact McNemar at one run per case), so the interval excludes 0 exactly when
p < 0.05. Elsewhere it is the score test of the mean difference with its variance at the
constrained maximum likelihood (Tango 1998 for paired proportions): the test a paired 2x2 table
gets at any shift, where the sign-flip test of ``d_i - s`` degenerates (every case flipping
leaves every shift's signs alike, so it keeps none or all of them).

Why this test, and what it gives:

- monotone in the evidence: a run rescued (the with-skill arm passing a run it failed, or the
  without-skill arm failing one it passed) raises the test's gap ``b - c - n*s`` by ``1/runs`` at
  every shift. A bound sits where the statistic is z, so it cannot move against the rescue while
  the standard error at that shift moves by at most ``1/(runs*z)``. At one run per case that is
  Tango's test's own (a whole case rescued raises its statistic at every shift). With several
  runs the scale below moves with the data, by up to ``2/runs`` of a case over ``sum d_i^2 +
  pseudo``; a linearised look asks that sum to be about z^2 (3.84) or more, so the pseudo-evidence
  tops it up to ``_SCALE_FLOOR`` = 4.25 whole cases, the smallest quarter step with no bound moving
  back over every suite of up to 4 cases x 2-3 runs and of 6 to 200 cases x 2-10 runs with up to
  3 cases differing (``benchmarks/interval_monotone.py``; 4.0 moves one back by 0.0015 pt at 10
  runs). A suite with more cases and the same shares narrows it;
- never zero width: the constrained variance puts the unobserved outcomes back (a suite whose
  every case flips up is still consistent with some cases going down);
- several runs per case: a case counts as its fraction of a case up or down (``d_i`` in
  [-1, 1]), and the variance is scaled by how much less a fractional difference varies than a
  whole one (``sum d_i^2 / sum |d_i|``, with at least one whole discordant case of
  pseudo-evidence, more up to ``_SCALE_FLOOR``, so a few fractional cases cannot make it small).
  Near ``|s| = 1`` every case must move whole, so the ``s^2`` term's weight goes from 1 at 0 to the
  scale at the edges and the variance vanishes only there, as Tango's does (a variance scaling
  only the ``E|d|`` term vanishes short of the edge, and there a case turned fractional drops the
  far bound). At one run per case the scale is 1: Tango's test.

``benchmarks/calibration.py`` measures its coverage and its width beside the alternatives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from .inference import ALPHA, CasePair, integer_scores, sign_flip_p

# Whole discordant cases of pseudo-evidence in the variance scale, and the squared difference
# (in whole cases) it tops the suite's own up to (see the module doc).
_SCALE_PSEUDO = 1.0
_SCALE_FLOOR = 4.25
# The smallest distance from 0 a bound keeps when the test rejects 0 (the reports' last digit).
_CLEAR_OF_ZERO = 0.1
_BISECTIONS = 60


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
        """The test decides; the interval is the same test inverted (``interval.lift_interval``)."""
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


@dataclass(frozen=True)
class ShiftTest:
    """The score test of "the lift is s" over per-case differences (see the module doc)."""

    n: int
    up: float  # sum of the positive differences: cases up, fractions of a case counted
    down: float  # sum of the negative differences' sizes
    scale: float  # how much a difference varies against a whole one (1 at one run per case)

    @classmethod
    def of(cls, diffs: Sequence[float]) -> ShiftTest:
        up = sum(d for d in diffs if d > 0)
        down = -sum(d for d in diffs if d < 0)
        squares = sum(d * d for d in diffs)
        pseudo = max(_SCALE_PSEUDO, _SCALE_FLOOR - squares)
        return cls(len(diffs), up, down, (squares + pseudo) / (up + down + pseudo))

    @property
    def estimate(self) -> float:
        return (self.up - self.down) / self.n

    def statistic(self, shift: float) -> float:
        """z of the observed lift against ``shift`` (a fraction in [-1, 1])."""
        n, b, c, s = self.n, self.up, self.down, shift
        # Tango's constrained maximum-likelihood share of cases going down, given the lift is s.
        qa, qb, qc = 2 * n, -b - c + (2 * n - b + c) * s, -c * s * (1 - s)
        down_share = (-qb + math.sqrt(max(qb * qb - 4 * qa * qc, 0.0))) / (2 * qa)
        # The s^2 term weighs 1 near 0 and the scale at |s| = 1, where every case must move whole:
        # the variance then vanishes only at the edges, as Tango's does.
        m = self.scale
        variance = n * max(m * (2 * down_share + s) - s * s * (1 - (1 - m) * abs(s)), 0.0)
        gap = b - c - n * s
        if variance <= 1e-12:
            return 0.0 if abs(gap) <= 1e-9 else math.copysign(math.inf, gap)
        return gap / math.sqrt(variance)


def lift_interval(cases: Sequence[CasePair], p_value: float, *, level: float = 0.95,
                  alpha: float = ALPHA) -> tuple[float, float]:
    """The interval (points) for the case-level lift; ``p_value`` is the sign-flip test's at 0."""
    test = ShiftTest.of([c.diff for c in cases])
    critical = NormalDist().inv_cdf(1 - (1 - level) / 2)
    lo = 100 * _bound(test, -1.0, critical)
    hi = 100 * _bound(test, 1.0, critical)
    # At 0 the sign-flip test decides: the interval holds 0 exactly when it keeps 0.
    if p_value < alpha:
        lo, hi = (max(lo, _CLEAR_OF_ZERO), hi) if test.estimate > 0 else (lo, min(hi, -_CLEAR_OF_ZERO))
    else:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return max(-100.0, lo), min(100.0, hi)


def _bound(test: ShiftTest, edge: float, critical: float) -> float:
    """The last shift from the estimate toward ``edge`` the test keeps (its statistic grows
    steadily away from the estimate, so a bisection finds it)."""
    inside, outside = test.estimate, edge
    if abs(test.statistic(edge)) <= critical:
        return edge
    for _ in range(_BISECTIONS):
        mid = (inside + outside) / 2
        inside, outside = (mid, outside) if abs(test.statistic(mid)) <= critical else (inside, mid)
    return inside
