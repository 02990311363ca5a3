"""The run configuration: every knob of ``skillab run``, resolved once from flags and env."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .shard import Shard

DEFAULT_MAX_TURNS = 12
DEFAULT_CACHE_TTL_DAYS = 7.0
# The run history ``--history`` defaults to (``engine.history`` reads and appends it).
DEFAULT_HISTORY_PATH = Path(".skillab") / "history.jsonl"


@dataclass(frozen=True)
class RunConfig:
    adapter: str = "mock"
    model: str | None = None
    judge_model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    skill_loading: str = "inline"
    runs: int = 1
    pass_k: int = 1
    # Attempts per arm for pass@k (at least pass_k; 0 means pass_k).
    pass_n: int = 0
    # Let the judge be of the agent's family (``--judge-same-family``); reports disclose it.
    judge_same_family: bool = False
    # Share of expectation verdicts re-judged for the consistency check (0 turns it off).
    judge_consistency: float = 0.10
    concurrency: int = 4
    cache_enabled: bool = True
    cache_dir: Path | None = None
    cache_ttl_days: float = DEFAULT_CACHE_TTL_DAYS
    case_names: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    keep_workspaces: bool = False
    mock_responses: Path | None = None
    mock_latency_ms: int = 0
    against: str | None = None
    suite_format: str | None = None
    default_max_turns: int = DEFAULT_MAX_TURNS
    history_path: Path | None = None
    # Crowd mode: other skills offered beside the candidate in trigger trials.
    siblings_dir: Path | None = None
    # ``--shard I/N``: run only this shard's (case, run) units.
    shard: Shard | None = None
    # Stop starting arms once the measured spend reaches this many USD (None: no cap).
    max_cost_usd: float | None = None
    # The verifier reward an arm must reach to pass (SkillsBench / Harbor rewards are fractional).
    reward_threshold: float = 1.0
    # The sandbox backend (``--sandbox``); None: bwrap where it works (see ``sandbox.backend``).
    sandbox: str | None = None
    # The lift (pts) the power statement sizes the suite for (``--target-lift-pts``).
    target_lift_pts: float = 10.0
    extra: dict = field(default_factory=dict)
