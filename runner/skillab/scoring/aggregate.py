"""Run-level aggregation: pass rates, efficiency deltas and the honesty disclosures.

One record is one (case, run); with ``--runs N`` every run enters the means as its own record,
so the expected value of each rate does not depend on N (spec rev 2, MEAN aggregation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.records import Verdict
from ..core.summary import Aggregate, DimensionDelta, PassRate
from .outcomes import compute_verdict
from .rounding import round_half_away

# Strictly more than this share of errored records withholds the lift claim (normative).
ERROR_DOMINATED_FLOOR = 0.25

# Wire name of each efficiency dimension -> the arm attribute that carries it.
DIMENSIONS: dict[str, str] = {
    "duration_ms": "duration_ms",
    "turns": "turns",
    "tokens": "total_tokens",
    "tool_calls": "tool_call_count",
}


def dimension_delta(with_total: float, without_total: float, n: int) -> DimensionDelta:
    """Per-arm averages over ``n`` records and the signed % change (None on a zero baseline)."""
    divisor = max(n, 1)
    with_avg, without_avg = with_total / divisor, without_total / divisor
    pct = None
    if without_avg != 0:
        pct = round_half_away((with_avg - without_avg) / without_avg * 100, 1)
    return DimensionDelta(round_half_away(with_avg, 2), round_half_away(without_avg, 2), pct)


@dataclass
class _Sums:
    """Running totals over one set of records (all comparable ones, or the both-passed ones)."""

    n: int = 0
    with_pass: int = 0
    without_pass: int = 0
    with_dims: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0))
    without_dims: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0))

    def add(self, with_arm: Any, without_arm: Any) -> None:
        self.n += 1
        self.with_pass += arm_passed(with_arm)
        self.without_pass += arm_passed(without_arm)
        for dim, attr in DIMENSIONS.items():
            self.with_dims[dim] += _metric(with_arm, attr)
            self.without_dims[dim] += _metric(without_arm, attr)

    def delta(self, dim: str) -> DimensionDelta:
        return dimension_delta(self.with_dims[dim], self.without_dims[dim], self.n)

    def pass_rate(self) -> PassRate:
        if self.n == 0:
            return PassRate(None, None, None)
        with_rate, without_rate = self.with_pass / self.n, self.without_pass / self.n
        return PassRate(
            round_half_away(with_rate, 4),
            round_half_away(without_rate, 4),
            round_half_away((with_rate - without_rate) * 100, 2),
        )


def arm_passed(arm: Any) -> bool:
    """An absent arm (None, as on an errored record) counts as not passed."""
    return bool(getattr(arm, "passed", False))


def _metric(arm: Any, attr: str) -> int:
    # Metrics are recommended, not required: a missing one counts as 0, as the spec says.
    return int(getattr(arm, attr, 0) or 0)


def is_comparable(record: Any) -> bool:
    """Whether a record enters the lift: not errored, and both arms engaged with the task."""
    if record.outcome == "error":
        return False
    return all(getattr(arm, "task_attempted", True) is not False for arm in _arms(record))


def _arms(record: Any) -> tuple[Any, Any]:
    return getattr(record, "with_skill", None), getattr(record, "without_skill", None)


def aggregate(records: Sequence[Any]) -> Aggregate:
    """Aggregate (case, run) records per the runner contract's skip rules, floor and rounding."""
    everything, both_passed = _Sums(), _Sums()
    errors = skipped = 0
    for record in records:
        if record.outcome == "error":
            errors += 1
            continue
        if not is_comparable(record):
            skipped += 1
            continue
        with_arm, without_arm = _arms(record)
        everything.add(with_arm, without_arm)
        if arm_passed(with_arm) and arm_passed(without_arm):
            both_passed.add(with_arm, without_arm)

    total = len(records)
    error_dominated = total > 0 and errors / total > ERROR_DOMINATED_FLOOR
    pass_rate = everything.pass_rate()
    if error_dominated:
        pass_rate = PassRate(pass_rate.with_skill, pass_rate.without_skill, None)

    raw: dict[str, DimensionDelta | None] = {dim: everything.delta(dim) for dim in DIMENSIONS}
    if everything.n == 0:
        # The spec's goldens pin this asymmetry: a run that measured nothing nulls duration, turns
        # and tokens, yet still reports tool_calls and every gated dimension as 0.0 / 0.0 / null.
        raw.update(duration_ms=None, turns=None, tokens=None)
    gated = {f"{dim}_correctness_gated": both_passed.delta(dim) for dim in DIMENSIONS}

    return Aggregate(
        pass_rate=pass_rate,
        **raw,
        **gated,
        errors=errors,
        error_dominated=error_dominated,
        cases_aggregated=everything.n,
        cases_correctness_gated=both_passed.n,
        cases_skipped_apples_oranges=skipped,
        total_cases=total,
    )


def run_verdict(agg: Aggregate, outcomes: Iterable[str]) -> Verdict:
    """The verdict a run reports: the classifier's, overridden to ``error`` on an error-dominated run."""
    if agg.error_dominated:
        return "error"
    return compute_verdict(outcomes)
