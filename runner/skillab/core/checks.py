"""The typed result of every check an arm is graded by: validators, judged expectations and the
suite formats' graders. Each serializes itself once and reads itself back exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .run_info import JudgeConsistency
from .wire import from_wire, to_wire, wire

GraderKind = Literal["contains", "pytest", "llm-rubric", "dimensions", "verifier", "timeout", "checklist",
                     "plugin-eval", "truncated"]


@dataclass(slots=True)
class ValidatorResult:
    """One validator's verdict. ``errored``: no verdict (timeout, spawn failure, odd exit code)."""

    label: str
    passed: bool
    expect_exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    errored: bool = False
    duration_ms: int = 0
    # None: the command never exited (it did not start, or was killed). Keyword-only, as it
    # once came third.
    exit_code: int | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))


@dataclass(slots=True)
class ExpectationResult:
    """The judge's verdict on one expectation. ``errored``: the judge could not be asked."""

    expectation: str
    passed: bool
    reason: str
    # Keyword-only: a positional fourth argument (once the score) is refused, not misread.
    errored: bool = field(default=False, kw_only=True)
    score: float | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))

    def __post_init__(self) -> None:
        # A verdict always says why, even when the judge gave no reason.
        self.reason = self.reason or "(no reason given)"


@dataclass
class DimensionScore:
    name: str
    # A checklist item's weight may be fractional (Tessl's ``max_score``: a positive number).
    max_score: float
    score: float
    reason: str


@dataclass
class GraderResult:
    """One grader's verdict on one arm. ``errored``: no verdict could be reached."""

    kind: GraderKind
    label: str
    passed: bool
    reason: str
    errored: bool = False
    score: float | None = None
    max_score: float | None = None
    dimensions: list[DimensionScore] = field(default_factory=list)
    # The tail of a command's output (pytest, verifier).
    output: str = ""
    # The score the grader passes at (rubric, dimensions), and the with-minus-without total
    # the dimensions format's own verdict requires.
    threshold: float | None = None
    minimum_delta: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "label": self.label,
            "passed": self.passed,
            "errored": self.errored,
            "reason": self.reason,
            "score": self.score,
            "max_score": self.max_score,
        }
        if self.dimensions:
            data["dimensions"] = to_wire(self.dimensions)
        if self.output:
            data["output"] = self.output
        if self.threshold is not None:
            data["threshold"] = self.threshold
        if self.minimum_delta is not None:
            data["minimum_delta"] = self.minimum_delta
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GraderResult:
        return cls(
            kind=data["kind"],
            label=str(data.get("label", "")),
            passed=bool(data.get("passed")),
            reason=str(data.get("reason", "")),
            errored=bool(data.get("errored")),
            score=data.get("score"),
            max_score=data.get("max_score"),
            dimensions=from_wire(list[DimensionScore], data.get("dimensions", []), "dimensions"),
            output=str(data.get("output", "")),
            threshold=data.get("threshold"),
            minimum_delta=data.get("minimum_delta"),
        )


# Below this agreement the lift is withheld (why 0.8: ``engine.consistency``).
AGREEMENT_FLOOR = 0.80


@dataclass(frozen=True)
class ConsistencyCheck:
    verdicts: int
    sampled: int
    agreed: int
    errored: int
    floor: float = AGREEMENT_FLOOR
    # The agreement's 95% interval, and how the check decided: "interval" (it cleared or fell
    # below the floor), "cap" (re-asks ran out first: the point estimate decides); None: pooled.
    ci95: tuple[float, float] | None = None
    decided: str | None = None
    withheld: bool | None = None

    @property
    def compared(self) -> int:
        return self.sampled - self.errored

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    @property
    def lift_withheld(self) -> bool:
        if self.withheld is not None:
            return self.withheld
        return self.agreement is not None and self.agreement < self.floor

    def block(self) -> JudgeConsistency:
        """The results document's ``judge_consistency`` block (rates to 4 places)."""
        return JudgeConsistency(
            self.verdicts, self.sampled, self.agreed, self.errored,
            None if self.agreement is None else round(self.agreement, 4), self.floor, self.lift_withheld,
            None if self.ci95 is None else (round(self.ci95[0], 4), round(self.ci95[1], 4)), self.decided,
        )
