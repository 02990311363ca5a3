"""The typed result of every check an arm is graded by: validators, judged expectations and the
suite formats' graders. Each serializes itself once and reads itself back exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .run_info import JudgeConsistency
from .wire import wire

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
    """One grader's verdict on one arm. ``errored``: no verdict could be reached.

    Built as ``GraderResult(kind, label, passed, reason, ...)``, the rest by keyword (a plugin's
    grader does so too); the fields are declared in the document's key order."""

    # A built-in grader's kind, or a plugin's own.
    kind: GraderKind | str
    label: str
    passed: bool
    errored: bool = field(default=False, kw_only=True)
    reason: str
    score: float | None = field(default=None, kw_only=True)
    max_score: float | None = field(default=None, kw_only=True)
    dimensions: list[DimensionScore] = field(default_factory=list, kw_only=True, metadata=wire(omit_empty=True))
    # The tail of a command's output (pytest, verifier).
    output: str = field(default="", kw_only=True, metadata=wire(omit_empty=True))
    # The score the grader passes at (rubric, dimensions), and the with-minus-without total
    # the dimensions format's own verdict requires.
    threshold: float | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))
    minimum_delta: float | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))


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
