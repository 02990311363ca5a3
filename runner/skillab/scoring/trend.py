"""The trend: how a run moved since the previous comparable run in the history.

Each arm is improved or regressed only when the per-case change passes the sign-flip test over
the cases both runs graded; otherwise it moved within noise. The original arm (``--against``)
trends only against a run that compared with the same original.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .inference import ALPHA, sign_flip_p

if TYPE_CHECKING:
    from .history import HistoryEntry

TRACKED_ARMS = ("with_skill", "without_skill", "original")
# Pass rates carry four decimals; anything closer than this is the same rate.
_SAME_RATE = 1e-9

Direction = Literal["improved", "regressed", "unchanged", "within_noise"]


@dataclass(frozen=True)
class ArmTrend:
    arm: str
    previous: float
    current: float
    direction: Direction
    # The sign-flip p of the per-case change, over the cases both runs graded (None: no pairs).
    p_value: float | None = None
    paired_cases: int = 0

    @property
    def change_pts(self) -> float:
        return round((self.current - self.previous) * 100, 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "previous": self.previous,
            "current": self.current,
            "change_pts": self.change_pts,
            "direction": self.direction,
            "p_value": self.p_value,
            "paired_cases": self.paired_cases,
        }


@dataclass(frozen=True)
class Trend:
    """This run against the previous comparable one; ``previous`` None on the first run."""

    history: str
    previous: HistoryEntry | None
    arms: tuple[ArmTrend, ...] = ()
    skill_changed: bool = False
    original_changed: bool = False  # compared with another original: that arm has no trend

    def to_dict(self) -> dict[str, Any]:
        previous = None
        if self.previous is not None:
            previous = {
                "recorded_at": self.previous.recorded_at,
                "skill_hash": self.previous.skill_hash,
                "verdict": self.previous.verdict,
                "pass_rate": dict(self.previous.pass_rate),
                "delta_pts": self.previous.delta_pts,
            }
        return {
            "history": self.history,
            "previous": previous,
            "skill_changed": self.skill_changed,
            "original_changed": self.original_changed,
            "arms": [arm.to_dict() for arm in self.arms],
        }


def compute_trend(current: HistoryEntry, previous: HistoryEntry | None, history: str) -> Trend:
    """Per arm: improved, regressed or unchanged; arms either run lacks are left out, and so is
    the original arm when the runs' originals differ (another skill was measured)."""
    if previous is None:
        return Trend(history, None)
    original_changed = (current.original_hash != previous.original_hash
                        and None not in (current.pass_rate.get("original"), previous.pass_rate.get("original")))
    arms = []
    for arm in TRACKED_ARMS:
        now, before = current.pass_rate.get(arm), previous.pass_rate.get(arm)
        if now is None or before is None or (arm == "original" and original_changed):
            continue
        p, paired = _change_test(current.case_passes.get(arm, {}), previous.case_passes.get(arm, {}))
        arms.append(ArmTrend(arm, before, now, _direction(before, now, p), p, paired))
    return Trend(history, previous, tuple(arms), current.skill_hash != previous.skill_hash, original_changed)


def _change_test(now: dict[str, list[int]], before: dict[str, list[int]]) -> tuple[float | None, int]:
    """Sign-flip p of the per-case change in pass rate, over the cases both runs graded."""
    shared = [name for name in now if name in before and now[name][1] and before[name][1]]
    if not shared:
        return None, 0
    scale = math.lcm(*(now[n][1] * before[n][1] for n in shared))
    scores = [
        now[n][0] * (scale // now[n][1]) - before[n][0] * (scale // before[n][1]) for n in shared
    ]
    return sign_flip_p(scores)[0], len(shared)


def _direction(before: float, now: float, p: float | None) -> Direction:
    if abs(now - before) < _SAME_RATE:
        return "unchanged"
    if p is None or p >= ALPHA:
        return "within_noise"
    return "improved" if now > before else "regressed"


def previous_comparable(entries: list[HistoryEntry], current: HistoryEntry) -> HistoryEntry | None:
    """The latest entry (in file order) with the same comparability key."""
    for entry in reversed(entries):
        if entry.key == current.key:
            return entry
    return None
