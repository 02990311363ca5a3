"""The trigger trials' block of a results document (``triggers``, format ``skillab.triggers/1``):
per query how often the skill was loaded, and recall, false-trigger rate, precision and F1 over
the set, with crowd and ``--against`` detail.

Plain data; ``scoring.trigger_summary`` computes it. Field order is wire order (``core.wire``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .usage import Usage
from .wire import UNSET, Unset, wire


@dataclass(frozen=True)
class RateInterval:
    """A rate with its 95% interval; ``n_effective`` is the effective sample size behind it."""

    value: float | None
    low: float | None
    high: float | None
    n_effective: float
    trials: int


@dataclass(frozen=True)
class TriggerMetrics:
    recall: RateInterval
    false_trigger_rate: RateInterval
    precision: RateInterval
    f1: RateInterval


@dataclass(frozen=True)
class QueryCount:
    should_trigger: int
    should_not_trigger: int


@dataclass(frozen=True)
class QueryMiss:
    """A false trigger or a miss, listed worst first."""

    name: str
    query: str
    rate: float | None
    owner: str | None
    taken_by: dict[str, int]


@dataclass(frozen=True)
class QueryRate:
    """The original description's rate on one query (``--against``)."""

    rate: float | None
    triggered: int
    trials: int


@dataclass(frozen=True)
class QueryOutcome:
    """One query: how often the skill under test was loaded over its trials."""

    name: str
    query: str
    should_trigger: bool
    source: str
    line: int | None
    # None: the skill under test; else the sibling skill the query is meant for.
    owner: str | None
    rate: float | None
    triggered: int
    trials: int
    errors: int
    # Other skills loaded in trials where the skill under test was not.
    taken_by: dict[str, int]
    verdict: str
    original: QueryRate | None = field(default=None, metadata=wire(omit_none=True))
    # A sibling's query posed to the siblings alone: how often its owner took it then.
    owner_rate_without_skill: float | None | Unset = UNSET


@dataclass(frozen=True)
class StolenQuery:
    """A query meant for a sibling that the skill under test takes."""

    name: str
    query: str
    meant_for: str | None
    rate: float | None
    owner_rate: float | None
    owner_rate_without_skill: float | None


@dataclass(frozen=True)
class LostQuery:
    """One of the skill's own queries a sibling took."""

    name: str
    query: str
    taken_by: dict[str, int]
    rate: float | None


@dataclass(frozen=True)
class Crowd:
    """Crowd mode: the sibling skills offered beside the skill under test."""

    siblings: tuple[str, ...]
    stolen_from_siblings: tuple[StolenQuery, ...]
    lost_to_siblings: tuple[LostQuery, ...]
    # How the agent lists every skill at once (the adapter's own shape), when it can tell.
    listing: dict[str, Any] | None
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class RateChange:
    """Candidate minus original over the queries of one label, with a paired sign-flip p."""

    candidate: float | None
    original: float | None
    delta_pts: float | None
    p_value: float | None
    queries_changed: int
    significant: bool


@dataclass(frozen=True)
class ChangedQuery:
    name: str
    query: str
    should_trigger: bool
    candidate: float | None
    original: float | None


@dataclass(frozen=True)
class TriggerComparison:
    """The candidate's description against the original's (``--against``)."""

    original: str | None
    recall: RateChange
    false_trigger_rate: RateChange
    original_metrics: TriggerMetrics
    # The original's trials that failed without loading it: left out of its rates.
    original_errors: int
    changed_queries: tuple[ChangedQuery, ...]


@dataclass(frozen=True)
class TriggerTrialRecord:
    """One query posed once: which skills the agent loaded (the evidence behind each rate)."""

    query: str
    run_index: int
    arm: str
    triggered: bool | None
    loaded: tuple[str, ...]
    error: str | None
    duration_ms: int
    usage: Usage
    transcript: str


@dataclass(frozen=True)
class TriggerBlock:
    format: str
    skill: str
    runs: int
    sources: tuple[str, ...]
    query_count: QueryCount
    trials: int
    baseline_trials: int
    errors: int
    metrics: TriggerMetrics
    false_triggers: tuple[QueryMiss, ...]
    misses: tuple[QueryMiss, ...]
    queries: tuple[QueryOutcome, ...]
    crowd: Crowd | None
    comparison: TriggerComparison | None
    usage: Usage
    trial_records: tuple[TriggerTrialRecord, ...]
    interrupted: bool
