"""What this suite can detect, and how many cases a target lift needs.

Both come from the spread of the per-case differences (the observed discordance between the
arms), not from the observed lift, which at pilot sizes is mostly noise. Assumptions, stated in
``PowerStatement.assumptions``: a two-sided test at 5% with 80% power; cases like the ones run
(same spread of differences, same runs per case); the spread taken at its one-sided 80% upper
confidence bound so that a lucky pilot does not advise too few cases; and never below what the
target itself implies (a lift of T needs at least a share T of cases to change).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

from ..core.runlog import DEFAULT_TARGET_LIFT_PTS
from .inference import ALPHA, adjusted_moments, t_quantile

POWER = 0.80
# One-sided confidence that the planning spread is not below the true one.
_PLANNING_CONFIDENCE = 0.80
_MAX_CASES = 100_000


@dataclass(frozen=True)
class PowerStatement:
    target_lift_pts: float
    # Smallest lift (pts) this suite detects with 80% power at its current size.
    detectable_lift_pts: float | None
    # Cases needed for the target; None when the target cannot be reached (see ``note``).
    cases_needed: int | None
    planning_sd_pts: float
    baseline_rate: float | None
    runs: int
    note: str
    assumptions: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def power_statement(
    diffs: Sequence[float], *, baseline_rate: float | None, runs: int,
    target_lift_pts: float = DEFAULT_TARGET_LIFT_PTS,
) -> PowerStatement | None:
    """The statement for a suite whose per-case differences are ``diffs``; None below 2 cases."""
    n = len(diffs)
    if n < 2:
        return None
    target = abs(target_lift_pts) / 100
    sd = planning_sd(diffs, target=target, runs=runs)
    note = ""
    needed: int | None = None
    if target <= 0:
        note = "a target lift of 0 cannot be detected"
    elif baseline_rate is not None and target > 1 - baseline_rate + 1e-9:
        note = (f"the baseline already passes {baseline_rate * 100:.0f}%, so a lift of "
                f"{target * 100:.0f} pts is not possible")
    else:
        needed = cases_for(target, sd)
    detectable = _detectable(n, sd)
    assumptions = (
        f"two-sided 5% test, 80% power, {runs} run{'s' if runs != 1 else ''} per case, cases like "
        f"these (spread of per-case differences {sd * 100:.0f} pts, its 80% upper bound)"
    )
    return PowerStatement(
        target_lift_pts=abs(target_lift_pts),
        detectable_lift_pts=None if detectable is None else round(detectable * 100, 1),
        cases_needed=needed,
        planning_sd_pts=round(sd * 100, 1),
        baseline_rate=baseline_rate,
        runs=runs,
        note=note,
        assumptions=assumptions,
    )


def planning_sd(diffs: Sequence[float], *, target: float, runs: int) -> float:
    """Upper confidence bound of the SD of per-case differences, floored by the target's own."""
    n = len(diffs)
    _, variance, _ = adjusted_moments(diffs)
    upper = variance * (n - 1) / chi2_quantile(1 - _PLANNING_CONFIDENCE, n - 1)
    # A lift of T with only rescues: a share T of cases changes, variance T(1 - T), averaged
    # over the runs of a case at most.
    floor = target * (1 - target) / max(runs, 1)
    return math.sqrt(max(upper, floor))


def cases_for(target: float, sd: float) -> int | None:
    """Smallest n with (t(1 - alpha/2, n - 1) + z(power)) * sd / sqrt(n) <= target."""
    z_power = NormalDist().inv_cdf(POWER)
    n = 2
    while n <= _MAX_CASES:
        if (t_quantile(1 - ALPHA / 2, n - 1) + z_power) * sd / math.sqrt(n) <= target:
            return n
        # Jump close to the normal-theory answer, then walk.
        guess = math.ceil(((NormalDist().inv_cdf(1 - ALPHA / 2) + z_power) * sd / target) ** 2)
        n = max(n + 1, guess) if guess > n + 1 else n + 1
    return None


def _detectable(n: int, sd: float) -> float | None:
    z_power = NormalDist().inv_cdf(POWER)
    lift = (t_quantile(1 - ALPHA / 2, n - 1) + z_power) * sd / math.sqrt(n)
    return min(lift, 1.0)


def chi2_quantile(q: float, df: int) -> float:
    """Chi-square quantile by the Wilson-Hilferty cube approximation (good to ~1% at df >= 2)."""
    z = NormalDist().inv_cdf(q)
    k = max(df, 1)
    value = k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3
    return max(value, 1e-9)
