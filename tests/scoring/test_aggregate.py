"""Aggregation, verdict and rounding beyond the spec's goldens, on skillab's own record types."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest
from skillevaluation import aggregation as reference
from skillevaluation.outcomes import compute_verdict as reference_verdict

from skillab.core.records import OUTCOMES, ArmRecord, CaseRecord
from skillab.core.summary import Aggregate
from skillab.core.usage import Usage
from skillab.core.wire import from_wire, to_wire
from skillab.scoring import (
    aggregate,
    classify_outcome,
    compute_verdict,
    is_comparable,
    round_half_away,
    run_verdict,
)


def arm(passed: bool, *, tokens: int = 0, turns: int = 0, duration_ms: int = 0, tools: int = 0,
        attempted: bool = True, errored: bool = False) -> ArmRecord:
    return ArmRecord(
        passed=passed, errored=errored, task_attempted=attempted, duration_ms=duration_ms, turns=turns,
        tool_call_count=tools, usage=Usage(input_tokens=tokens),
    )


def record(name: str, with_arm: ArmRecord, without_arm: ArmRecord, run_index: int = 0) -> CaseRecord:
    errored = with_arm.errored or without_arm.errored
    outcome = classify_outcome(with_passed=with_arm.passed, without_passed=without_arm.passed, errored=errored)
    return CaseRecord(name, outcome, with_arm, without_arm, run_index=run_index)


@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        (2.45, 1, 2.5),
        (0.125, 2, 0.13),
        (-2.45, 1, -2.5),
        (-0.125, 2, -0.13),
        (1.005, 2, 1.01),
        (0.25, 1, 0.3),
        (2 / 3, 4, 0.6667),
        (200 / 3, 2, 66.67),
        (-100 / 3, 1, -33.3),
        (1234.5, 0, 1235.0),
        (0.0, 2, 0.0),
    ],
)
def test_round_half_away_from_zero(value, places, expected):
    assert round_half_away(value, places) == expected


def test_round_half_away_differs_from_builtin_round_on_ties():
    # Built-in round ties to even, and rounds the binary value (2.675 is stored as 2.67499...).
    assert round(0.125, 2) == 0.12 and round_half_away(0.125, 2) == 0.13
    assert round(2.5) == 2 and round_half_away(2.5, 0) == 3.0
    assert round(2.675, 2) == 2.67 and round_half_away(2.675, 2) == 2.68


def test_round_half_away_passes_non_finite_through():
    assert round_half_away(float("inf"), 2) == float("inf")


def test_runs_are_means_over_records_and_gating_uses_both_passed():
    records = [
        record("a", arm(True, tokens=100, turns=2), arm(True, tokens=300, turns=6), run_index=0),
        record("a", arm(True, tokens=100, turns=2), arm(False, tokens=500, turns=10), run_index=1),
        record("b", arm(False, tokens=50, turns=1), arm(False, tokens=50, turns=1)),
    ]
    agg = aggregate(records)
    assert to_wire(agg.pass_rate) == {"with_skill": 0.6667, "without_skill": 0.3333, "delta_pts": 33.33}
    assert to_wire(agg.tokens) == {"with_skill_avg": 83.33, "without_skill_avg": 283.33, "delta_pct": -70.6}
    assert to_wire(agg.tokens_correctness_gated) == {
        "with_skill_avg": 100.0, "without_skill_avg": 300.0, "delta_pct": -66.7,
    }
    assert agg.turns_correctness_gated.delta_pct == -66.7
    assert (agg.cases_aggregated, agg.cases_correctness_gated, agg.total_cases) == (3, 1, 3)


def test_errored_and_punted_records_are_disclosed_not_averaged():
    records = [
        record("ok", arm(True, tokens=100), arm(False, tokens=100)),
        record("boom", arm(False, errored=True), arm(False)),
        record("punt", arm(True, tokens=4000), arm(False, tokens=20, attempted=False)),
        record("ok2", arm(True, tokens=100), arm(True, tokens=100)),
        record("ok3", arm(False, tokens=100), arm(False, tokens=100)),
    ]
    agg = aggregate(records)
    assert (agg.errors, agg.cases_skipped_apples_oranges, agg.cases_aggregated, agg.total_cases) == (1, 1, 3, 5)
    assert agg.tokens.with_skill_avg == 100.0
    assert not agg.error_dominated
    assert [is_comparable(r) for r in records] == [True, False, False, True, True]


@pytest.mark.parametrize(("errors", "total", "dominated"), [(1, 4, False), (2, 8, False), (2, 7, True), (3, 4, True)])
def test_error_floor_is_strictly_above_a_quarter(errors, total, dominated):
    records = [record(f"e{i}", arm(False, errored=True), arm(False)) for i in range(errors)]
    records += [record(f"p{i}", arm(True), arm(False)) for i in range(total - errors)]
    agg = aggregate(records)
    assert agg.error_dominated is dominated
    assert (agg.pass_rate.delta_pts is None) is dominated
    assert agg.pass_rate.with_skill == 1.0
    verdict = run_verdict(agg, [r.outcome for r in records])
    assert verdict == ("error" if dominated else "pass")


def test_absent_arms_count_as_not_passed_with_zero_metrics():
    bare = SimpleNamespace(outcome="fail_kept", with_skill=None, without_skill=None)
    agg = aggregate([bare])
    assert agg.cases_aggregated == 1
    assert agg.pass_rate.with_skill == 0.0
    assert to_wire(agg.tokens) == {"with_skill_avg": 0.0, "without_skill_avg": 0.0, "delta_pct": None}


def test_the_aggregate_round_trips_through_json():
    records = [record("a", arm(True, tokens=10, duration_ms=1200), arm(False, tokens=20, duration_ms=900))]
    data = json.loads(json.dumps(to_wire(aggregate(records))))
    assert from_wire(Aggregate, data) == aggregate(records)
    assert to_wire(from_wire(Aggregate, to_wire(aggregate([])))) == to_wire(aggregate([]))


def _random_suite(rng: random.Random) -> list[dict]:
    suite = []
    for i in range(rng.randint(0, 9)):
        if rng.random() < 0.2:
            suite.append({"case_name": f"c{i}", "outcome": "error"})
            continue
        arms = {}
        for side in ("with_skill", "without_skill"):
            arms[side] = {
                "passed": rng.random() < 0.5,
                "task_attempted": rng.random() > 0.1,
                "duration_ms": rng.choice([0, rng.randint(1, 90_000)]),
                "turns": rng.randint(0, 12),
                "total_tokens": rng.choice([0, rng.randint(1, 50_000)]),
                "tool_call_count": rng.randint(0, 7),
            }
        outcome = classify_outcome(
            with_passed=arms["with_skill"]["passed"], without_passed=arms["without_skill"]["passed"], errored=False
        )
        suite.append({"case_name": f"c{i % 4}", "outcome": outcome, **arms})
    return suite


def test_aggregate_agrees_with_the_spec_reference_on_random_suites():
    rng = random.Random(7)
    for _ in range(300):
        suite = _random_suite(rng)
        ours = aggregate([
            SimpleNamespace(
                outcome=r["outcome"],
                with_skill=SimpleNamespace(**r["with_skill"]) if "with_skill" in r else None,
                without_skill=SimpleNamespace(**r["without_skill"]) if "without_skill" in r else None,
            )
            for r in suite
        ])
        theirs = reference.compute_run_aggregates([
            reference.CaseResult(
                r["case_name"], r["outcome"],
                reference.CaseMetrics(**r["with_skill"]) if "with_skill" in r else None,
                reference.CaseMetrics(**r["without_skill"]) if "without_skill" in r else None,
            )
            for r in suite
        ])
        assert to_wire(ours) == theirs.to_dict(), suite


def test_verdict_agrees_with_the_spec_reference_on_random_outcomes():
    rng = random.Random(11)
    for _ in range(500):
        outcomes = [rng.choice(OUTCOMES) for _ in range(rng.randint(0, 6))]
        assert compute_verdict(outcomes) == reference_verdict(outcomes), outcomes
