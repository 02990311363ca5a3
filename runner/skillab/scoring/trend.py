"""The trend: how a run moved since the previous comparable run in the history.

One test per run, on the lift: the per-case change of the lift (with minus without, this run
against the previous) over the cases both runs graded in both arms, by the sign-flip test. The
lift is improved or regressed only when that test passes; otherwise it moved within noise. The
arms' own rates are shown as numbers that moved or did not ("changed"), never tested one by
one: two arms tested at every run would call an unchanged skill "regressed" far more often
than 5% over a history. For the same reason the lift's test spends its 5% over a history of
one skill: the k-th comparison of runs of an unchanged skill is tested at ``5% * 6 / (pi^2 k^2)``
(these sum to 5%), and a run whose skill changed since the previous one is a new question,
tested at 5%. The original arm (``--against``) is shown only against a run that
compared with the same original.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.runlog import RunLog
from ..core.trend import ArmTrend, Direction, PreviousRun, Trend
from ..log.history import append_entry
from ..log.history_entry import TRACKED_ARMS, HistoryEntry
from .inference import ALPHA, sign_flip_p
from .trend_series import trend_series

# Pass rates carry four decimals; anything closer than this is the same rate.
_SAME_RATE = 1e-9

LIFT = "lift"


def previous_run(entry: HistoryEntry) -> PreviousRun:
    return PreviousRun(entry.recorded_at, entry.skill_hash, entry.verdict, dict(entry.pass_rate), entry.delta_pts)


def compute_trend(current: HistoryEntry, previous: HistoryEntry | None, history: str,
                  *, same_skill: int = 0) -> Trend:
    """The lift (tested) and each arm (moved or not); arms either run lacks are left out, and so
    is the original arm when the runs' originals differ (another skill was measured).
    ``same_skill`` counts the earlier comparable runs of this run's skill (``same_skill_comparisons``)."""
    if previous is None:
        return Trend(history, None, False, False, ())
    alpha = ALPHA if current.skill_hash != previous.skill_hash else history_alpha(max(same_skill, 1))
    original_changed = (current.original_hash != previous.original_hash
                        and None not in (current.pass_rate.get("original"), previous.pass_rate.get("original")))
    arms = []
    lift = _lift_trend(current, previous, alpha)
    if lift is not None:
        arms.append(lift)
    for arm in TRACKED_ARMS:
        now, before = current.pass_rate.get(arm), previous.pass_rate.get(arm)
        if now is None or before is None or (arm == "original" and original_changed):
            continue
        p, paired = _change_test(current.case_passes.get(arm, {}), previous.case_passes.get(arm, {}))
        arms.append(ArmTrend(arm, before, now, "unchanged" if abs(now - before) < _SAME_RATE else "changed",
                              p, paired))
    return Trend(history, previous_run(previous), current.skill_hash != previous.skill_hash, original_changed,
                 tuple(arms))


def history_alpha(k: int) -> float:
    """The level of the k-th test in one skill's history: 5% spent as 6 / (pi^2 k^2) shares."""
    return ALPHA * 6 / (math.pi**2 * k * k)


def same_skill_comparisons(entries: list[HistoryEntry], current: HistoryEntry) -> int:
    """How many earlier comparable runs had this run's skill: this is comparison number that many."""
    return sum(1 for e in entries if e.key == current.key and e.skill_hash == current.skill_hash)


def _lift_trend(current: HistoryEntry, previous: HistoryEntry, alpha: float = ALPHA) -> ArmTrend | None:
    """The lift's change, tested once: per case, (with - without) now minus (with - without) then."""
    rates = [e.pass_rate.get(a) for e in (current, previous) for a in ("with_skill", "without_skill")]
    known = [rate for rate in rates if rate is not None]
    if len(known) < len(rates):
        return None
    now, before = known[0] - known[1], known[2] - known[3]
    p, paired = _change_test(_case_lift(current), _case_lift(previous))
    return ArmTrend(LIFT, round(before, 4), round(now, 4), _direction(before, now, p, alpha), p, paired)


def _case_lift(entry: HistoryEntry) -> dict[str, list[int]]:
    """Per case graded in both arms: [with-passes * g_o - without-passes * g_w, g_w * g_o]."""
    with_arm, without = entry.case_passes.get("with_skill", {}), entry.case_passes.get("without_skill", {})
    out = {}
    for name, (w, gw) in with_arm.items():
        if name in without and gw and without[name][1]:
            o, go = without[name]
            out[name] = [w * go - o * gw, gw * go]
    return out


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


def _direction(before: float, now: float, p: float | None, alpha: float = ALPHA) -> Direction:
    if abs(now - before) < _SAME_RATE:
        return "unchanged"
    if p is None or p >= alpha:
        return "within_noise"
    return "improved" if now > before else "regressed"


def previous_comparable(entries: list[HistoryEntry], current: HistoryEntry) -> HistoryEntry | None:
    """The latest entry (in file order) with the same comparability key."""
    for entry in reversed(entries):
        if entry.key == current.key:
            return entry
    return None


@dataclass
class Recorded:
    """What recording a run gave: its trend (None when the history could not be used)."""

    trend: Trend | None
    warnings: list[str] = field(default_factory=list)


def record_into(log: RunLog, path: Path, key: bytes | str | None = None) -> RunLog:
    """Record a finished run; its log with the trend and any history warnings. ``key`` signs
    the history (``log.history``); default: ``signing.cache_key()``."""
    recorded = record_run(log.to_json(), path, key)
    settings = dataclasses.replace(log.settings, trend=recorded.trend,
                                   warnings=(*log.settings.warnings, *recorded.warnings))
    return dataclasses.replace(log, settings=settings)


def record_run(document: dict[str, Any], path: Path, key: bytes | str | None = None) -> Recorded:
    """Append the run's entry to the history at ``path`` and return its trend against the entries
    before it; problems become warnings."""
    entry = HistoryEntry.from_document(document)

    def trend(entries: list[HistoryEntry]) -> Trend:
        found = compute_trend(entry, previous_comparable(entries, entry), str(path),
                              same_skill=same_skill_comparisons(entries, entry))
        # What the HTML report charts, as the history held it now: the run carries it.
        return dataclasses.replace(found, series=trend_series(entries, entry))

    found, warnings = append_entry(Path(path), entry, trend, key)
    return Recorded(found, warnings)
