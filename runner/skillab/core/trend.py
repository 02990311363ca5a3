"""How a run moved since the previous comparable run in the history: the ``trend`` block.

Plain data; ``scoring.trend`` computes it. Field order is wire order (``core.wire``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from .wire import wire

Direction = Literal["improved", "regressed", "unchanged", "within_noise", "changed"]


@dataclass(frozen=True)
class PreviousRun:
    """The history entry this run is compared with."""

    recorded_at: str
    skill_hash: str | None
    verdict: str
    # Per arm (with_skill, without_skill, original): its pass rate then.
    pass_rate: dict[str, float | None]
    delta_pts: float | None


@dataclass(frozen=True)
class ArmTrend:
    """One arm's pass rate (or the lift, ``arm == "lift"``) then and now."""

    arm: str
    previous: float
    current: float
    direction: Direction
    # The sign-flip p of the per-case change over the cases both runs graded (None: no pairs).
    p_value: float | None
    paired_cases: int
    # The wire form also carries the change, after the current rate (``core.wire``).
    __wire_derived__: ClassVar[dict[str, str]] = {"change_pts": "current"}

    @property
    def change_pts(self) -> float:
        return round((self.current - self.previous) * 100, 2)


@dataclass(frozen=True)
class TrendPoint:
    """One comparable run of the series: when it was recorded and its arms' pass rates
    (with_skill, without_skill)."""

    recorded_at: str
    pass_rate: dict[str, float | None]


@dataclass(frozen=True)
class Trend:
    """This run against the previous comparable one; ``previous`` None on the first run."""

    history: str
    previous: PreviousRun | None
    skill_changed: bool
    # Compared with another original: that arm has no trend.
    original_changed: bool
    arms: tuple[ArmTrend, ...]
    # The comparable runs up to this one, oldest first, as the history held them when the run
    # was recorded: what the HTML report charts. None in a document written before it was kept.
    series: tuple[TrendPoint, ...] | None = field(default=None, metadata=wire(omit_none=True))
