"""Why an arm failed, as plain facts read from a results document: its error, the validators
that failed (label and output tail), the expectations the judge found unmet (with its reason),
and the format graders that failed. The terminal and HTML reports render these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.checks import ExpectationResult, GraderResult, ValidatorResult
from ..core.records import ArmRecord

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


def arm_findings(arm: dict[str, Any]) -> list[Finding]:
    """What went wrong in one arm (empty when it passed)."""
    if arm.get("passed") and not arm.get("errored"):
        return []
    found: list[Finding] = []
    if arm.get("error"):
        found.append(Finding("error", "error", str(arm["error"])))
    for v in arm.get("validator_results", []):
        if v.get("passed") and not v.get("errored"):
            continue
        got = ("no verdict (errored)" if v.get("errored")
               else f"exit {v.get('exit_code')}, expected {v.get('expect_exit_code', 0)}")
        output = "\n".join(part for part in (v.get("stdout", ""), v.get("stderr", "")) if part.strip())
        found.append(Finding("validator", str(v.get("label", "")), got, output))
    for e in arm.get("expectation_results", []):
        if e.get("passed") and not e.get("errored"):
            continue
        state = "judge errored" if e.get("errored") else "not met"
        found.append(Finding("expectation", str(e.get("expectation", "")),
                             f"{state}: {e.get('reason', '')}"))
    for g in (arm.get("extra") or {}).get("graders", []):
        if g.get("passed") and not g.get("errored"):
            continue
        state = "no verdict (errored)" if g.get("errored") else "failed"
        found.append(Finding("grader", str(g.get("label", "")), f"{state}: {g.get('reason', '')}",
                             str(g.get("output") or "")))
    if not found:
        found.append(Finding("error", "failed", "no check passed and none said why"))
    return found


def failed_records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The (case, run) records a reader must look at: the skill's arm failed or something errored."""
    return [r for r in doc.get("cases", []) if r.get("outcome") in FAILED_OUTCOMES]


def tail(text: str, lines: int, width: int = 160) -> list[str]:
    """The last ``lines`` non-empty lines of ``text``, each cut to ``width``."""
    kept = [line.rstrip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return [line if len(line) <= width else line[: width - 1] + "…" for line in kept]
