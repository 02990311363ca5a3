"""The ablation document (``skillab ablate``'s ``skillab.ablation/1``) as one typed value, written
and read through ``core.wire``: ``AblationDocument.from_json(doc).to_json() == doc``.

``scoring.ablation`` measures the parts and ``session.ablation`` fills this; the reports and the
Action's comment read it by attribute, never by key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .wire import from_wire, to_wire, wire

FORMAT = "skillab.ablation/1"
Role = Literal["load-bearing", "dead weight", "harmful", "not measured"]


@dataclass(frozen=True)
class PartResult:
    """One part's measured contribution: the full skill's pass rate minus the variant's."""

    kind: str
    name: str
    label: str
    lines: tuple[int, int] | None
    chars: int
    tokens: int
    role: Role
    contribution_pts: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    # Holm-adjusted over every part tested in the run.
    p_adjusted: float | None
    # The smallest contribution the suite detects with 80% power (None: it cannot at any size).
    detectable_pts: float | None
    n_cases: int
    errored_records: int
    calls: int
    note: str = ""
    # Cases the variant ran before its label could no longer change (None: it ran them all).
    stopped_at: int | None = None


@dataclass(frozen=True)
class FullLift:
    """The full skill's lift over no skill, the baseline every part is measured against."""

    lift_pts: float | None
    summary: str | None


@dataclass(frozen=True)
class AblationSpend:
    model_calls: int
    cached_arms: int
    cost_usd: float | None
    # Agent arms sequential stopping saved (``--stop-early curtail``).
    calls_saved: int = 0


@dataclass(frozen=True)
class AblationDocument:
    """The whole ablation: the full skill's lift, each part's result, and what it cost."""

    skill: str
    suite: str
    heading_level: int
    full: FullLift
    parts: tuple[PartResult, ...]
    # Bundled files no variant leaves out, because a grader calls them.
    grader_files: tuple[str, ...]
    cases: int
    runs: int
    spend: AblationSpend
    # Sequential stopping per variant: the design and the case order's seed.
    stop_early: str | None = None
    order_seed: int | None = None
    stopped: str | None = None
    warnings: tuple[str, ...] = ()
    # The Action's: the SKILL.md sections the pull request changed, marked in the comment.
    changed_in_pr: tuple[str, ...] | None = field(default=None, metadata=wire(omit_none=True))

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, **to_wire(self)}

    @classmethod
    def from_json(cls, doc: Any) -> AblationDocument:
        """The document ``doc`` is; ``ValueError`` naming the key path where it is not one."""
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ValueError(f"format: expected {FORMAT!r}, got {found!r}")
        return from_wire(cls, {k: v for k, v in doc.items() if k != "format"}, "ablation")
