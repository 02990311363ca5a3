"""The settings of a run, one frozen dataclass per component that reads them.

The CLI and the Action resolve flags, inputs and the environment into these once; each layer
then reads only its own part: the engine ``EngineSettings``, an agent adapter
``AgentSettings`` (with its ``ModelRole``), the judge ``JudgeSettings``, a provider client
``ProviderTuning`` and ``Credentials``. ``RunConfig`` bundles them for the code that wires the
layers together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from .defaults import DEFAULT_CACHE_TTL_DAYS, DEFAULT_MAX_TURNS
from .run_info import ConfigSource


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``, both 1-based as the user writes them (``2/3``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class ModelRole:
    """One model a run talks to (the agent's or the judge's), and where it is served.

    ``provider`` and ``base_url`` left None are inferred from the name (``providers.registry``).
    """

    name: str | None = None
    provider: str | None = None
    base_url: str | None = None
    # Sampling (``--temperature``/``--seed``, ``--judge-temperature``/``--judge-seed``); None
    # leaves the model's default (the judge's temperature defaults to 0).
    temperature: float | None = None
    seed: int | None = None


@dataclass(frozen=True)
class AgentSettings:
    """How the agent is invoked: the adapter and what it is told."""

    adapter: str = "mock"
    model: ModelRole = ModelRole()
    skill_loading: str = "inline"
    # The tool-loop cap of a case that sets no ``max_turns``.
    max_turns: int = DEFAULT_MAX_TURNS
    mock_responses: Path | None = None
    mock_latency_ms: int = 0
    # An agent CLI's per-arm timeout in seconds (None: the adapter's own default).
    timeout_s: float | None = None
    # The llm and agent adapters' answer budget per model call (None: the adapter's default,
    # cut to the server's context where it says its size).
    max_tokens: int | None = None


@dataclass(frozen=True)
class JudgeSettings:
    """The model that grades expectations; its name None means the agent's, or the mock judge
    when the agent is the mock."""

    model: ModelRole = ModelRole()
    # Let the judge be of the agent's family (``--judge-same-family``); reports disclose it.
    same_family: bool = False
    # Share of expectation verdicts re-judged for the consistency check (0 turns it off).
    consistency: float = 0.10


@dataclass(frozen=True)
class ProviderTuning:
    """How a provider client calls its API: the same for the agent's model and the judge's."""

    request_timeout_s: float = 300.0
    # Attempts per call, retries included; an agent CLI retries ``max_attempts - 1`` times.
    max_attempts: int = 5
    retry_base_delay_s: float = 1.0
    # One call, all its attempts (None: no deadline).
    call_deadline_s: float | None = 600.0
    # Calls in flight at once per provider endpoint, all arms and the judge together (None: the
    # run's ``--concurrency``); the provider's 429s shape it below that (``providers.rate``).
    provider_concurrency: int | None = None
    # Anthropic and OpenAI Responses: server-sent events instead of one JSON body.
    stream: bool = False
    # ``--budget-url``: the service holding the run-wide cap, rate and back-off every shard
    # shares; every model call asks it first (None: this process's own cap only).
    budget_url: str | None = None
    # How long a shard tries to reach that service before its first arm (``--budget-wait-s``).
    budget_wait_s: float = 30.0


class Credentials:
    """Where a run's keys and endpoints come from, read once: the process environment overlaid
    with keys handed over explicitly (the Action's key inputs), which never enter
    ``os.environ`` and so cannot leak into any subprocess. Never printed."""

    __slots__ = ("_environ",)

    def __init__(self, environ: Mapping[str, str] | None = None):
        self._environ = MappingProxyType(dict(os.environ if environ is None else environ))

    @classmethod
    def resolve(cls, given: Mapping[str, str] | None = None,
                environ: Mapping[str, str] | None = None) -> Credentials:
        base = os.environ if environ is None else environ
        return cls({**base, **{name: value for name, value in (given or {}).items() if value}})

    @property
    def environ(self) -> Mapping[str, str]:
        return self._environ

    def __repr__(self) -> str:
        return "Credentials(<not shown>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Credentials) and other._environ == self._environ

    def __hash__(self) -> int:
        return hash(frozenset(self._environ.items()))


@dataclass(frozen=True)
class EngineSettings:
    """What the engine runs and how: repeats, attempts, selection, concurrency, cache, sandbox,
    shard and spend cap."""

    runs: int = 1
    pass_k: int = 1
    # Attempts per arm for pass@k (at least pass_k; 0 means pass_k).
    pass_n: int = 0
    concurrency: int = 4
    cache_enabled: bool = True
    cache_dir: Path | None = None
    cache_ttl_days: float = DEFAULT_CACHE_TTL_DAYS
    case_names: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    keep_workspaces: bool = False
    # ``--against``: the original skill (git ref or directory) run as a third arm.
    against: str | None = None
    suite_format: str | None = None
    # The run history each whole suite run joins (the session's history reporter writes it).
    history_path: Path | None = None
    # ``--placebo``: a third arm with the skill's placebo (``skill.placebo``).
    placebo: bool = False
    # ``--evidence-ledger``: the signed ledger every run, shard and re-run adds its pairs to.
    evidence_ledger: Path | None = None
    # Crowd mode: other skills offered beside the candidate in trigger trials.
    siblings_dir: Path | None = None
    # ``--held-out PATH``: a suite file kept from the author (outside the PR), its cases run as
    # held-out cases beside the suite's own.
    held_out_path: Path | None = None
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
    # ``-k`` / ``--failed``: the case names each suite runs, by its resolved path (a suite not
    # listed takes ``case_names``).
    case_selection: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def for_target(self, target: Path) -> EngineSettings:
        """These settings with the case names ``case_selection`` gives ``target``."""
        key = str(Path(target).resolve())
        for path, names in self.case_selection:
            if path == key:
                return replace(self, case_names=names)
        return self
    # ``--stop-early {curtail,group-sequential}``: cases in a seeded random order, stopping once
    # the rest can no longer change the lift sentence (``scoring.stopping``); None runs them all.
    stop_early: str | None = None
    stop_seed: int | None = None
    # ``--adaptive-runs``: a case whose arms agreed on its first runs gets no more
    # (``scoring.adaptive_runs``).
    adaptive_runs: bool = False
    # The lift gate curtailment must also leave settled (``--min-delta-pts``, ``--gate-on``).
    min_delta_pts: float | None = None
    gate_on: str = "point"


@dataclass(frozen=True)
class RunConfig:
    """Every component's settings for one run of one agent."""

    engine: EngineSettings = EngineSettings()
    agent: AgentSettings = AgentSettings()
    judge: JudgeSettings = JudgeSettings()
    tuning: ProviderTuning = ProviderTuning()
    credentials: Credentials = field(default_factory=Credentials, compare=False)
    # What a config file set, recorded in every report; None when no file did.
    config_source: ConfigSource | None = None

    @property
    def provider_tuning(self) -> ProviderTuning:
        """``tuning`` with the calls in flight per provider resolved: ``--concurrency`` unless set,
        so ``--concurrency N`` means N model calls at once."""
        if self.tuning.provider_concurrency is not None:
            return self.tuning
        return replace(self.tuning, provider_concurrency=self.engine.concurrency)
