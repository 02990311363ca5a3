"""The lift's statistics as a results document holds them (``statistics``, and the comparison's
with ``--against``): whether the lift can be told from noise, and what the suite can detect.

Plain data; ``scoring.statistics`` and ``scoring.power`` compute it. Field order is wire order
(``core.wire``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Power:
    """What the suite can detect at its size, and how many cases a target lift needs."""

    target_lift_pts: float
    # Smallest lift (pts) the suite detects with 80% power at its current size.
    detectable_lift_pts: float | None
    # Cases needed for the target; None when it cannot be reached (``note`` says why).
    cases_needed: int | None
    planning_sd_pts: float
    baseline_rate: float | None
    runs: int
    note: str
    assumptions: str
    # The cases the target needs at the estimated discordance and at its 80% bound.
    cases_needed_range: tuple[int, int] | None = None
    # Not even every case moving one way would give p < 0.05 at this size.
    never_significant: bool = False
    discordance: float | None = None


@dataclass(frozen=True)
class LiftStatistics:
    """Whether the observed lift can be told from noise, with the numbers that say so.

    ``delta_pts`` is the spec's record-weighted delta; ``lift_pts`` the mean of the per-case
    differences the interval and p-value are about. Everything but the counts is None when the
    statistic is withheld (``withheld`` says why).
    """

    n_cases: int
    n_records: int
    flip_to_pass: int
    flip_to_fail: int
    delta_pts: float | None
    lift_pts: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    mcnemar_p: float | None
    method: str
    distinguishable: bool
    summary: str | None
    cases_up: int = 0
    cases_down: int = 0
    power: Power | None = None
    # Whether any case's own drop is beyond noise, and which (the "broke N cases" claim).
    regression: bool = False
    regressed_cases: tuple[str, ...] = ()
    withheld: str | None = None
