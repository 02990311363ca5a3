"""The settings blocks of a results document: what was run (suite, adapter, models), under what
isolation, the shard it was, and the run-level checks the engine records beside the records
(the judge's consistency, the skill's context cost, ``--stop-early``).

Plain data; the engine fills it in. Field order is wire order (``core.wire``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .wire import UNSET, Unset, wire


@dataclass(frozen=True)
class SuiteInfo:
    path: str
    format: str
    skill: str
    skill_dir: str
    skill_hash: str
    # What "the same suite" means for a trend; a Harbor import has none.
    suite_hash: str | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class AdapterInfo:
    name: str
    # Everything that changes the without-skill baseline, in the adapter's own shape.
    identity: dict[str, Any]


@dataclass(frozen=True)
class JudgeSampling:
    temperature: float | None
    seed: int | None


@dataclass(frozen=True)
class ModelsInfo:
    agent: str | None
    judge: str | None
    judge_prompt_sha256: str | None
    # A Harbor import records neither of these.
    judge_same_family: bool | None = field(default=None, metadata=wire(omit_none=True))
    # None: no model judge (the transport's temperature and seed otherwise).
    judge_sampling: JudgeSampling | None | Unset = UNSET


@dataclass(frozen=True)
class IsolationInfo:
    """The isolation the run's commands got. A Harbor import records only the first four."""

    network: str
    backend: str | None = field(default=None, metadata=wire(omit_none=True))
    detail: str = ""
    # The command sees only its own processes (private /proc); None: not known (Harbor).
    pid_namespace: bool | None = None
    unsandboxed: bool | None = field(default=None, metadata=wire(omit_none=True))
    # What the backend guarantees, in its own words (``sandbox.Backend.describe``).
    guarantees: dict[str, Any] | None = field(default=None, metadata=wire(omit_none=True))
    # How the adapter's agent is confined (its model calls and its own process).
    agent: dict[str, Any] | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class ShardMarker:
    """What a ``--shard I/N`` run's document says about its shard (``merge`` checks it)."""

    index: int
    count: int
    plan_sha256: str
    cases: tuple[str, ...]
    # (case, run) units this shard ran.
    units: tuple[tuple[str, int], ...]
    # The lift the merged power statement is sized for (a shard may show no power statement).
    target_lift_pts: float | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class JudgeConsistency:
    """The judge re-asked on a sample of its verdicts: how often it agreed with itself."""

    verdicts: int
    sampled: int
    agreed: int
    errored: int
    agreement: float | None
    floor: float
    lift_withheld: bool
    # The agreement's 95% interval, and how the check decided: "interval" or "cap"; None: pooled.
    ci95: tuple[float, float] | None = None
    decided: str | None = None


@dataclass(frozen=True)
class ListingCost:
    """What the skill's entry costs in one agent's skill listing."""

    tokens: int
    # The entry's share of the agent's listing budget, 0..1; None where it has no budget.
    share: float | None
    # Whether the agent cuts the description in its listing; None where it has no cap.
    description_cut: bool | None
    source: str


@dataclass(frozen=True)
class OriginalContext:
    """The ``--against`` original's context cost, for the same agent."""

    total_tokens: int
    body_tokens: int
    files_tokens: int
    listings: dict[str, ListingCost]


@dataclass(frozen=True)
class ContextBudget:
    """A skill's context cost in (estimated) tokens: loaded, and listed by each agent."""

    format: str
    # The run's agent, and what the skill costs it once used: its listing entry plus the body.
    agent: str
    total_tokens: int
    body_tokens: int
    files_tokens: int
    listings: dict[str, ListingCost]
    method: str
    # With ``--against``: the original's cost, and the candidate's total minus it.
    original: OriginalContext | None = field(default=None, metadata=wire(omit_none=True))
    change_tokens: int | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class StopEarly:
    """``--stop-early``: the design, the seed and order of the cases, and where and why it stopped."""

    design: str
    seed: int
    order: tuple[str, ...]
    planned_cases: int
    cases_ran: int
    stopped: bool
    reason: str | None
    alpha: float
    # Only when it stopped: what stopping saved, and the sentence that says so.
    saved_model_calls: int | None = field(default=None, metadata=wire(omit_none=True))
    saved_usd: float | None | Unset = UNSET
    sentence: str | None = field(default=None, metadata=wire(omit_none=True))
    # Measured when it stopped: the arms the plan held, those never started (a stop decided
    # while arms were in flight lets them finish), and the ``--concurrency`` that ran.
    arms_planned: int | None = field(default=None, metadata=wire(omit_none=True))
    arms_not_started: int | None = field(default=None, metadata=wire(omit_none=True))
    concurrency: int | None = field(default=None, metadata=wire(omit_none=True))


@dataclass(frozen=True)
class AdaptiveRuns:
    """``--adaptive-runs``: the runs every case got before agreement could stop it, the cases it
    stopped, and what that saved, measured: the arms never started at the ``--concurrency`` that
    ran, at the calls and cost per arm observed."""

    runs: int
    settle_after: int
    cases_cut: tuple[str, ...]
    arms_planned: int
    arms_not_started: int
    saved_model_calls: int
    saved_usd: float | None
    concurrency: int
    sentence: str


@dataclass(frozen=True)
class ConfigSource:
    """The settings a run took from a config file (``skillab.toml`` / ``[tool.skillab]``): which
    file, which keys it set that no flag overrode, and which of those widened what the run may
    reach with the user's consent (``--trust-config``)."""

    file: str
    keys: tuple[str, ...]
    trusted: tuple[str, ...] = ()

    def sentence(self) -> str:
        """One line for a report's header: ``settings from F: a, b (trusted: b)``."""
        trusted = f" (trusted by --trust-config: {', '.join(self.trusted)})" if self.trusted else ""
        return f"settings from {self.file}: {', '.join(self.keys)}{trusted}"
