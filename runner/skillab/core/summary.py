"""The blocks scoring derives from a run's records, as a results document holds them: the
spec's aggregate, the comparison with the original skill, pass@k, ruby-skill-bench's criteria,
token usage, skill activation and the verifier formats' rewards.

Plain data; ``scoring`` computes it and ``RunSummary`` holds it. Field order is wire order
(``core.wire``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .statistics import LiftStatistics
from .usage import Usage
from .wire import wire


@dataclass(frozen=True)
class PassRate:
    """Per-arm pass rates (4 places) and their difference in percentage points (2 places)."""

    with_skill: float | None
    without_skill: float | None
    delta_pts: float | None


@dataclass(frozen=True)
class DimensionDelta:
    """Per-arm averages of one efficiency dimension and the signed % change (None on a zero baseline)."""

    with_skill_avg: float
    without_skill_avg: float
    delta_pct: float | None


@dataclass(frozen=True)
class Aggregate:
    """The spec's ``test-run-result`` aggregate; its keys sit at the document's top level."""

    pass_rate: PassRate
    duration_ms: DimensionDelta | None
    turns: DimensionDelta | None
    tokens: DimensionDelta | None
    tool_calls: DimensionDelta | None
    duration_ms_correctness_gated: DimensionDelta | None
    turns_correctness_gated: DimensionDelta | None
    tokens_correctness_gated: DimensionDelta | None
    tool_calls_correctness_gated: DimensionDelta | None
    errors: int
    error_dominated: bool
    cases_aggregated: int
    cases_correctness_gated: int
    cases_skipped_apples_oranges: int
    total_cases: int


@dataclass(frozen=True)
class OriginalRef:
    """Where the ``--against`` skill came from."""

    source: Literal["git", "directory"]
    # What the user passed (a path or a ref), and for git the commit it resolved to.
    spec: str
    commit: str | None
    label: str
    skill: str
    skill_hash: str
    # The skill's directory at the ref when the candidate's was renamed since (git only).
    renamed_from: str | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class CandidatePassRate:
    candidate: float | None
    original: float | None
    delta_pts: float | None


@dataclass(frozen=True)
class CandidateDelta:
    """One efficiency dimension, candidate against original."""

    candidate_avg: float
    original_avg: float
    delta_pct: float | None


@dataclass(frozen=True)
class Efficiency:
    duration_ms: CandidateDelta | None
    turns: CandidateDelta | None
    tokens: CandidateDelta | None
    tool_calls: CandidateDelta | None


@dataclass(frozen=True)
class Comparison:
    """Candidate against original (``--against``): the run's aggregate and statistics with the
    original skill standing in for the without-skill arm."""

    original: OriginalRef
    pass_rate: CandidatePassRate
    # Cases the edit broke on their own evidence; other cases that went from pass to fail.
    broken_by_edit: tuple[str, ...]
    changed_within_noise: tuple[str, ...]
    rescued_by_edit: tuple[str, ...]
    outcome_counts: dict[str, int]
    errors: int
    error_dominated: bool
    cases_aggregated: int
    efficiency: Efficiency
    statistics: LiftStatistics | None


@dataclass(frozen=True)
class PlaceboComparison:
    """``--placebo``: the skill against its placebo (same name, same lengths, neutral text), and
    the placebo against no skill, each with the statistics of the main lift. Content lift is
    what the skill's text adds; presence lift what a skill being offered at all does."""

    pass_rate: float | None
    content_delta_pts: float | None
    content: LiftStatistics | None
    presence_delta_pts: float | None
    presence: LiftStatistics | None
    # (case, run) records the placebo arm errored in.
    errors: int


@dataclass(frozen=True)
class PassAtKArm:
    """One arm's mean over cases of each case's mean over runs."""

    pass_at_k: float
    pass_at_1: float
    cases: int


@dataclass(frozen=True)
class PassAtK:
    """pass@k over the run (``--pass-k``/``--pass-n``)."""

    k: int
    attempts: int
    estimator: str
    # Arm-attempts where fewer than k were graded, so the plug-in estimate stood in.
    plug_in_arms: int
    arms: dict[str, PassAtKArm]
    delta_pts: float | None


@dataclass(frozen=True)
class CriterionDimension:
    """One scored dimension of a case, mean per arm."""

    name: str
    max_score: float
    without_skill: float | None
    with_skill: float | None
    delta: float | None


@dataclass(frozen=True)
class WeakDimension:
    """A dimension that scored below the pass threshold's share of its maximum in one arm."""

    arm: str
    name: str
    score: float
    max_score: float
    reason: str


@dataclass(frozen=True)
class Criterion:
    """ruby-skill-bench's verdict for one case: the with-skill total reaches ``pass_threshold``
    and beats the without-skill total by ``minimum_delta`` (None: a side had no scored run)."""

    case_name: str
    passed: bool | None
    with_total: float | None
    without_total: float | None
    delta: float | None
    pass_threshold: float
    minimum_delta: float
    dimensions: tuple[CriterionDimension, ...]
    weak: tuple[WeakDimension, ...]


@dataclass(frozen=True)
class RunUsage:
    """Tokens and cost per arm, the judge's, and the total (cached baselines count nothing)."""

    with_skill: Usage
    without_skill: Usage
    original: Usage | None
    judge: Usage | None
    total: Usage
    # The placebo arm's (``--placebo``), counted in the total.
    placebo: Usage | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class Activation:
    """Share of arms that opened SKILL.md, for adapters that report it (discover mode)."""

    with_skill: float | None
    original: float | None


@dataclass(frozen=True)
class Reward:
    """Verifier formats: the mean fractional reward per arm over the arms that got one."""

    with_skill: float | None
    without_skill: float | None
    arms: int
    threshold: float
