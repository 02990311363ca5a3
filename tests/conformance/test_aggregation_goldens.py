"""The spec's aggregation goldens: to_wire(aggregate(...)) equals expected.json, key order included."""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from typing import Any

import pytest

from skillab.core.wire import to_wire
from skillab.scoring import aggregate, compute_verdict, run_verdict

FOLDER = importlib.resources.files("skillevaluation") / "compatibility-tests" / "aggregation"
CASES = sorted((p for p in FOLDER.iterdir() if p.is_dir()), key=lambda p: p.name) if FOLDER.is_dir() else []


@dataclass
class Arm:
    """The golden's per-arm metrics, every one optional as the spec allows."""

    passed: bool = False
    task_attempted: bool = True
    errored: bool = False
    duration_ms: int = 0
    turns: int = 0
    total_tokens: int = 0
    tool_call_count: int = 0


@dataclass
class Record:
    case_name: str
    outcome: str
    with_skill: Arm | None
    without_skill: Arm | None


def _record(data: dict[str, Any]) -> Record:
    def arm(key: str) -> Arm | None:
        return Arm(**data[key]) if key in data else None

    return Record(data["case_name"], data["outcome"], arm("with_skill"), arm("without_skill"))


def _load(case, name: str) -> Any:
    return json.loads((case / name).read_text(encoding="utf-8"))


def _run(case) -> tuple[list[Record], dict]:
    records = [_record(r) for r in _load(case, "input.json")["case_results"]]
    return records, to_wire(aggregate(records))


def test_goldens_are_present():
    # An empty parametrization would only skip; this fails loudly if the spec moved its goldens.
    assert len(CASES) >= 10, f"aggregation goldens missing under {FOLDER}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_aggregation_golden(case):
    _, got = _run(case)
    expected = _load(case, "expected.json")
    assert got == expected
    assert list(got) == list(expected)
    for key, value in expected.items():
        if isinstance(value, dict):
            assert list(got[key]) == list(value), key


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_run_verdict_is_error_exactly_when_error_dominated(case):
    records, got = _run(case)
    outcomes = [r.outcome for r in records]
    verdict = run_verdict(aggregate(records), outcomes)
    if got["error_dominated"]:
        assert verdict == "error"
    else:
        assert verdict == compute_verdict(outcomes)


def test_floor_overrides_a_classifier_pass():
    # verdict/pass-with-error-excluded: the classifier says pass, the run (1 of 3 errored) says error.
    records = [
        Record("a", "pass_kept", Arm(passed=True), Arm(passed=True)),
        Record("b", "flip_to_pass", Arm(passed=True), Arm()),
        Record("c", "error", None, None),
    ]
    outcomes = [r.outcome for r in records]
    assert compute_verdict(outcomes) == "pass"
    assert run_verdict(aggregate(records), outcomes) == "error"
