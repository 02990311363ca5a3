"""What ``skillab audit`` finds in a suite before any model call, as results.json's ``audit``
block: answers the skill gives away, prompts tuned to it, and cases that cannot measure a lift."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .wire import wire

FindingKind = Literal["answer_leak", "example_contamination", "prompt_contamination", "saturated",
                      "always_failing", "near_duplicate"]
Severity = Literal["high", "medium", "low"]
# The kinds ``--max-leaks`` counts: the suite's answers found in what the with-skill agent reads.
LEAK_KINDS: tuple[FindingKind, ...] = ("answer_leak",)


@dataclass(frozen=True)
class AuditFinding:
    """One finding: where it is (``file``:``line``, the file the evidence is in), the case it
    concerns, how bad it is, what was found and the one-line fix."""

    kind: FindingKind
    severity: Severity
    case: str
    file: str
    line: int | None
    detail: str
    fix: str
    # A second case the finding names (a near duplicate's twin).
    other_case: str | None = field(default=None, metadata=wire(omit_none=True))

    def located(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def one_line(self) -> str:
        return f"{self.severity} {self.kind} {self.located()} case {self.case}: {self.detail} — fix: {self.fix}"


@dataclass(frozen=True)
class AuditBlock:
    """The findings of one suite, most severe first."""

    findings: tuple[AuditFinding, ...]

    @property
    def leaks(self) -> int:
        """What ``--max-leaks`` counts: answer leaks above ``low`` (a lone term the skill teaches
        and a grader checks is shown, not counted)."""
        return sum(f.kind in LEAK_KINDS and f.severity != "low" for f in self.findings)

    def count(self, kind: FindingKind) -> int:
        return sum(f.kind == kind for f in self.findings)
