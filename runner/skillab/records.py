"""What a run produces: per-check, per-arm and per-(case, run) records.

These are the boundary types between the engine, scoring and reports; each serializes itself
once, into the spec's ``test-case-result`` shape plus skillab's extras. A large run holds
thousands of them, so they keep their fields in slots rather than a dict apiece.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .agents.base import Usage

Outcome = Literal["flip_to_pass", "pass_kept", "fail_kept", "flip_to_fail", "error"]
OUTCOMES: tuple[Outcome, ...] = ("flip_to_pass", "pass_kept", "fail_kept", "flip_to_fail", "error")
Verdict = Literal["pass", "fail", "mixed", "error"]


@dataclass(slots=True)
class ValidatorResult:
    """One validator's verdict. ``errored``: no verdict (timeout, spawn failure, odd exit code)."""

    label: str
    passed: bool
    exit_code: int | None = None
    expect_exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    errored: bool = False
    duration_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "label": self.label,
            "passed": self.passed,
            "expect_exit_code": self.expect_exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "errored": self.errored,
            "duration_ms": self.duration_ms,
        }
        if self.exit_code is not None:
            data["exit_code"] = self.exit_code
        return data


@dataclass(slots=True)
class ExpectationResult:
    """The judge's verdict on one expectation. ``errored``: the judge could not be asked."""

    expectation: str
    passed: bool
    reason: str
    score: float | None = None
    errored: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "expectation": self.expectation,
            "passed": self.passed,
            "reason": self.reason or "(no reason given)",
            "errored": self.errored,
        }
        if self.score is not None:
            data["score"] = self.score
        return data


@dataclass(slots=True)
class ArmRecord:
    """One arm of one (case, run): what the agent did and how it was graded."""

    passed: bool
    errored: bool
    task_attempted: bool = True
    error: str | None = None
    duration_ms: int = 0
    turns: int = 0
    tool_call_count: int = 0
    usage: Usage = field(default_factory=Usage)
    final_output: str = ""
    transcript: str = ""
    validator_results: list[ValidatorResult] = field(default_factory=list)
    expectation_results: list[ExpectationResult] = field(default_factory=list)
    cached: bool = False
    skill_activated: bool | None = None
    contaminated: bool = False
    # Format-specific grading detail (dimension scores, pass@k attempts); importers fill it.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens

    def to_dict(self) -> dict[str, Any]:
        data = {
            "passed": self.passed,
            "task_attempted": self.task_attempted,
            "errored": self.errored,
            "error": self.error,
            "duration_ms": self.duration_ms,
            "turns": self.turns,
            "total_tokens": self.total_tokens,
            "tool_call_count": self.tool_call_count,
            "usage": self.usage.to_dict(),
            "final_output": self.final_output,
            "transcript": self.transcript,
            "validator_results": [v.to_dict() for v in self.validator_results],
            "expectation_results": [e.to_dict() for e in self.expectation_results],
            "cached": self.cached,
            "skill_activated": self.skill_activated,
            "contaminated": self.contaminated,
        }
        if self.extra:
            data["extra"] = self.extra
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ArmRecord":
        return cls(
            passed=bool(data["passed"]),
            errored=bool(data.get("errored", False)),
            task_attempted=bool(data.get("task_attempted", True)),
            error=data.get("error"),
            duration_ms=int(data.get("duration_ms", 0)),
            turns=int(data.get("turns", 0)),
            tool_call_count=int(data.get("tool_call_count", 0)),
            usage=Usage.from_dict(data.get("usage", {})),
            final_output=data.get("final_output", ""),
            transcript=data.get("transcript", ""),
            validator_results=[ValidatorResult(**v) for v in data.get("validator_results", [])],
            expectation_results=[
                ExpectationResult(**e) for e in data.get("expectation_results", [])
            ],
            cached=bool(data.get("cached", False)),
            skill_activated=data.get("skill_activated"),
            contaminated=bool(data.get("contaminated", False)),
            extra=dict(data.get("extra", {})),
        )


@dataclass(slots=True)
class CaseRecord:
    """One (case, run) A/B record: the unit the spec aggregates over."""

    case_name: str
    outcome: Outcome
    with_skill: ArmRecord
    without_skill: ArmRecord
    run_index: int = 0
    tags: tuple[str, ...] = ()
    # Set when the run compares against the original skill (``--against``).
    original: ArmRecord | None = None
    original_outcome: Outcome | None = None
    # Why the case errored before any arm ran (setup failure, unsupported task).
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "case_name": self.case_name,
            "run_index": self.run_index,
            "outcome": self.outcome,
            "tags": list(self.tags),
            "error": self.error,
            "with_skill": self.with_skill.to_dict(),
            "without_skill": self.without_skill.to_dict(),
        }
        if self.original is not None:
            data["original"] = self.original.to_dict()
            data["original_outcome"] = self.original_outcome
        return data
