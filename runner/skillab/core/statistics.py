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
class ErrorAccount:
    """How the errored records could move the lift, and whether one arm errored more.

    A claim ("helps" / "hurts" beyond noise) stands only if it also holds with every record
    where one arm errored counted against it: for "helps" the errored with-skill arm fails and
    the errored without-skill arm passes; for "hurts" the reverse. A record where both arms
    errored (an outage of the run around them) says nothing about either arm and stays out.
    """

    # Records read, and those whose with-skill / without-skill arm errored (a record may be both).
    records: int
    with_errored: int
    without_errored: int
    # Exact McNemar p over the records where exactly one arm errored: do the arms error alike?
    error_p: float
    # The case-level lift (pts) and its p with every errored arm counted as a failure.
    lift_as_failures_pts: float | None
    p_as_failures: float | None
    # The lift and its p with the errors counted against "helps", and against "hurts".
    lift_against_helps_pts: float | None
    p_against_helps: float | None
    lift_against_hurts_pts: float | None
    p_against_hurts: float | None
    # Whether the claim the records alone support still holds under the errors (None: no claim).
    claim_holds: bool | None = None

    @property
    def arms_differ(self) -> bool:
        """The two arms' error rates differ beyond noise (exact test at 5%)."""
        return self.error_p < 0.05


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
    # Present when any record errored: see ``ErrorAccount``.
    errors: ErrorAccount | None = None

    def broke(self, case_name: str) -> bool:
        """Whether the case's drop with the skill passed its own noise test: "broken by the
        skill", not "worse within noise"."""
        return self.regression and case_name in self.regressed_cases
