"""Why an arm failed, as plain facts read from its record: its error, the validators that failed
(label and output tail), the expectations the judge found unmet (with its reason), and the
format graders that failed. The terminal and JUnit reports render these."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.checks import ExpectationResult, GraderResult, ValidatorResult
from ..core.records import ArmRecord, CaseRecord
from ..core.runlog import RunLog

FAILED_OUTCOMES = ("flip_to_fail", "fail_kept", "error")
ARMS = ("with_skill", "without_skill", "original")
ARM_TITLES = {"with_skill": "with skill", "without_skill": "without skill", "original": "original"}


@dataclass(frozen=True)
class Finding:
    kind: str  # "error", "validator", "expectation" or "grader"
    label: str
    detail: str
    output: str = ""


@dataclass(frozen=True)
class FailedChecks:
    """The checks of one arm that gave no pass: each is either failed or errored (no verdict)."""

    validators: tuple[ValidatorResult, ...]
    expectations: tuple[ExpectationResult, ...]
    graders: tuple[GraderResult, ...]


def failed_checks(arm: ArmRecord) -> FailedChecks:
    """The rule every report shares: a check counts against the arm unless it passed with a verdict."""
    return FailedChecks(
        tuple(v for v in arm.validator_results if not v.passed or v.errored),
        tuple(e for e in arm.expectation_results if not e.passed or e.errored),
        # The seed formats' own graders (contains, pytest, rubric, dimensions, verifier).
        tuple(g for g in arm.graders if not g.passed or g.errored),
    )


def judge_reason(result: ExpectationResult) -> str:
    """The judge's reason as the results document words it (an empty one is said to be empty)."""
    return result.reason or "(no reason given)"


def arm_findings(arm: ArmRecord) -> list[Finding]:
    """What went wrong in one arm (empty when it passed)."""
    if arm.passed and not arm.errored:
        return []
    found: list[Finding] = []
    if arm.error:
        found.append(Finding("error", "error", arm.error))
    checks = failed_checks(arm)
    for v in checks.validators:
        got = "no verdict (errored)" if v.errored else f"exit {v.exit_code}, expected {v.expect_exit_code}"
        output = "\n".join(part for part in (v.stdout, v.stderr) if part.strip())
        found.append(Finding("validator", v.label, got, output))
    for e in checks.expectations:
        state = "judge errored" if e.errored else "not met"
        found.append(Finding("expectation", e.expectation, f"{state}: {judge_reason(e)}"))
    for g in checks.graders:
        state = "no verdict (errored)" if g.errored else "failed"
        found.append(Finding("grader", g.label, f"{state}: {g.reason}", g.output))
    if not found:
        found.append(Finding("error", "failed", "no check passed and none said why"))
    return found


def failed_records(log: RunLog) -> list[CaseRecord]:
    """The (case, run) records a reader must look at: the skill's arm failed or something errored."""
    return [r for r in log.records if r.outcome in FAILED_OUTCOMES]


def tail(text: str, lines: int, width: int = 160) -> list[str]:
    """The last ``lines`` non-empty lines of ``text``, each cut to ``width``."""
    kept = [line.rstrip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return [line if len(line) <= width else line[: width - 1] + "…" for line in kept]
