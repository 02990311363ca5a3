"""What a run produces: per-arm and per-(case, run) records, and the outcomes and verdicts over
them.

These are the boundary types between the engine, scoring and reports. ``core.wire`` writes them
into the spec's ``test-case-result`` shape plus skillab's extras and reads them back exactly
(``from_wire(T, to_wire(x)) == x``); an ``ArmRecord`` does so through its own ``to_dict`` and
``from_dict``, for the detail it nests under ``extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .checks import ExpectationResult, GraderResult, ValidatorResult
from .usage import Usage
from .wire import from_wire, to_wire, wire

Outcome = Literal["flip_to_pass", "pass_kept", "fail_kept", "flip_to_fail", "error"]
OUTCOMES: tuple[Outcome, ...] = ("flip_to_pass", "pass_kept", "fail_kept", "flip_to_fail", "error")
Verdict = Literal["pass", "fail", "mixed", "error"]


@dataclass
class Contamination:
    """Signs that a without-skill arm saw the skill anyway (``engine.audit``)."""

    fingerprints_seen: int
    skill_paths_asked_for: list[str]


@dataclass
class PassKAttempt:
    attempt: int
    passed: bool
    errored: bool
    error: str | None
    duration_ms: int
    total_tokens: int


@dataclass
class PassKSummary:
    """An arm's attempts under ``--pass-k``: the arm passes if any of the first k does."""

    k: int
    n: int
    graded: int
    passes: int
    pass_at_k: float | None
    pass_at_1: float | None
    estimator: Literal["unbiased", "plug-in"]
    passed_on: int | None
    attempts: list[PassKAttempt]


@dataclass
class HarborTrial:
    """An arm read back from a Harbor job: its trial and the rewards its verifier wrote."""

    trial_name: str
    # None when the trial's verifier wrote none.
    rewards: dict[str, float] | None


# The document keeps the arm's grading detail under ``extra``, in this order.
_EXTRA = ("workspace", "sandbox", "served_model", "stop_reason", "contamination", "tampering", "graders",
          "harbor", "pass_k", "files_changed", "files_deleted")


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
    # Where --keep-workspaces left the arm's workspace.
    workspace: str | None = None
    # The sandbox backend that confined the arm (a cached baseline keeps the one it ran under).
    sandbox: str | None = None
    # The model id the provider reported serving (the baseline cache is keyed on it).
    served_model: str | None = None
    # Why the agent stopped short of an answer of its own (its turn cap: ``max_turns``).
    stop_reason: str | None = None
    contamination: Contamination | None = None
    # Workspace paths of the graders' files (or beside them) the agent changed: the arm is
    # errored, not graded (``sandbox.pristine``).
    tampering: list[str] = field(default_factory=list)
    # The suite format's own graders, after the validators and expectations.
    graders: list[GraderResult] = field(default_factory=list)
    harbor: HarborTrial | None = None
    pass_k: PassKSummary | None = None
    # A compact document's arm (``--compact-results``): its transcript and final output are in
    # this file beside the document, not in it.
    detail: str | None = None
    # The workspace files the agent created or changed, and deleted (the workspace diff).
    files_changed: list[str] = field(default_factory=list)
    files_deleted: list[str] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "passed": self.passed,
            "task_attempted": self.task_attempted,
            "errored": self.errored,
            "error": self.error,
            "duration_ms": self.duration_ms,
            "turns": self.turns,
            "total_tokens": self.total_tokens,
            "tool_call_count": self.tool_call_count,
            "usage": to_wire(self.usage),
            "final_output": self.final_output,
            "transcript": self.transcript,
            "validator_results": to_wire(self.validator_results),
            "expectation_results": to_wire(self.expectation_results),
            "cached": self.cached,
            "skill_activated": self.skill_activated,
            "contaminated": self.contaminated,
        }
        extra = self._extra()
        if extra:
            data["extra"] = extra
        if self.detail is not None:
            del data["final_output"], data["transcript"]
            data["detail"] = self.detail
        return data

    def _extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        for name in _EXTRA:
            value = getattr(self, name)
            if value is None or value == []:
                continue
            extra[name] = to_wire(value)
        return extra

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmRecord:
        extra = data.get("extra") or {}
        unknown = sorted(set(extra) - set(_EXTRA))
        if unknown:
            raise ValueError(f"unknown arm detail {', '.join(map(repr, unknown))} under 'extra'")
        contamination, harbor, pass_k = extra.get("contamination"), extra.get("harbor"), extra.get("pass_k")
        # Older documents hold no usage for an arm: it counts as none.
        return cls(
            passed=bool(data["passed"]),
            errored=bool(data.get("errored", False)),
            task_attempted=bool(data.get("task_attempted", True)),
            error=data.get("error"),
            duration_ms=int(data.get("duration_ms", 0)),
            turns=int(data.get("turns", 0)),
            tool_call_count=int(data.get("tool_call_count", 0)),
            usage=from_wire(Usage, data.get("usage", {}), "usage"),
            final_output=data.get("final_output", ""),
            transcript=data.get("transcript", ""),
            validator_results=from_wire(list[ValidatorResult], data.get("validator_results", []), "validator_results"),
            expectation_results=from_wire(list[ExpectationResult], data.get("expectation_results", []),
                                          "expectation_results"),
            cached=bool(data.get("cached", False)),
            skill_activated=data.get("skill_activated"),
            contaminated=bool(data.get("contaminated", False)),
            workspace=extra.get("workspace"),
            sandbox=extra.get("sandbox"),
            served_model=extra.get("served_model"),
            stop_reason=extra.get("stop_reason"),
            contamination=None if contamination is None else from_wire(Contamination, contamination, "contamination"),
            tampering=[str(path) for path in extra.get("tampering", [])],
            graders=from_wire(list[GraderResult], extra.get("graders", []), "graders"),
            harbor=None if harbor is None else from_wire(HarborTrial, harbor, "harbor"),
            pass_k=None if pass_k is None else from_wire(PassKSummary, pass_k, "pass_k"),
            detail=data.get("detail"),
            files_changed=[str(f) for f in extra.get("files_changed", [])],
            files_deleted=[str(f) for f in extra.get("files_deleted", [])],
        )


@dataclass(slots=True)
class CaseRecord:
    """One (case, run) A/B record: the unit the spec aggregates over.

    Built as ``CaseRecord(case_name, outcome, with_skill, without_skill, ...)``, the rest by
    keyword; the fields are declared in the document's key order."""

    case_name: str
    run_index: int = field(default=0, kw_only=True)
    outcome: Outcome
    tags: tuple[str, ...] = field(default=(), kw_only=True)
    # Why the case errored before any arm ran (setup failure, unsupported task).
    error: str | None = field(default=None, kw_only=True)
    with_skill: ArmRecord
    without_skill: ArmRecord
    # Set when the run compares against the original skill (``--against``); both or neither.
    original: ArmRecord | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))
    original_outcome: Outcome | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))
    # Set when the run has a placebo arm (``--placebo``): its record, and the outcome of the
    # skill against it (the placebo standing in for the baseline); both or neither.
    placebo: ArmRecord | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))
    placebo_outcome: Outcome | None = field(default=None, kw_only=True, metadata=wire(omit_none=True))
