"""The adapter contract: how the engine asks an agent to work one arm of one case (``Agent``),
with its request and result types."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ..core.contracts import ModelClient
from ..core.usage import Usage
from ..grading.trajectory import Trajectory
from ..sandbox.backend import Backend, default_backend
from ..skill.loader import Skill
from ..suite.model import Case

ArmName = Literal["with_skill", "without_skill", "original", "placebo"]
# "task": work the case; "trigger": a trigger trial, where only which skills the agent loads
# counts and the adapter may stop as soon as it has loaded one; "context": no model turn, only
# the runtime's own count of what the offered skills cost its context.
Purpose = Literal["task", "trigger", "context"]
ARMS: tuple[ArmName, ...] = ("with_skill", "without_skill", "original", "placebo")


@dataclass(frozen=True)
class ArmRequest:
    """Everything an adapter needs for one arm. ``skill`` is None for the without-skill arm."""

    case: Case
    arm: ArmName
    skill: Skill | None
    workspace: Path
    run_index: int = 0
    max_turns: int = 12
    # Host directories the agent's commands must not see (the skill's own directory, for the
    # without-skill arm): the engine names them, adapters hand them to the sandbox.
    hide: tuple[Path, ...] = ()
    # Other skills offered beside ``skill`` (crowd mode), listed and staged the same way.
    siblings: tuple[Skill, ...] = ()
    purpose: Purpose = "task"
    # The run's sandbox backend: the agent's tools and CLI run under it (the engine passes the
    # run's choice; built elsewhere, the one a run without ``--sandbox`` gets).
    sandbox: Backend = field(default_factory=default_backend)

    @property
    def offered(self) -> tuple[Skill, ...]:
        """Every skill the agent is offered, sorted by name so the listing order says nothing
        about which one is under test."""
        skills = ((self.skill,) if self.skill is not None else ()) + self.siblings
        return tuple(sorted(skills, key=lambda s: s.name))


@dataclass(frozen=True)
class MeasuredListing:
    """A skill's listing entry as the agent's own runtime counted it, and how."""

    tokens: int
    source: str


@dataclass
class AgentResult:
    """What the agent did in one arm. ``error`` set means the arm failed to execute."""

    final_output: str
    trajectory: Trajectory
    usage: Usage = field(default_factory=Usage)
    duration_ms: int = 0
    turns: int = 0
    error: str | None = None
    # Discover-mode skill loading: did the agent open SKILL.md? None when not applicable.
    skill_activated: bool | None = None
    # Names of the offered skills the agent loaded (read SKILL.md or invoked), in order.
    skills_loaded: list[str] = field(default_factory=list)
    # Paths the agent read or listed, relative to the workspace; the contamination audit reads it.
    paths_touched: list[str] = field(default_factory=list)
    # The model id the provider reported serving (the baseline cache is keyed on it).
    served_model: str | None = None
    # Why the session ended early: ``max_turns`` when it reached the turn cap (not a failure),
    # ``max_tokens`` when the final answer was cut at the answer budget (a failure).
    stop_reason: str | None = None

    @property
    def tool_call_count(self) -> int:
        return len(self.trajectory.tool_calls)


@runtime_checkable
class Agent(Protocol):
    """An agent runtime that works one arm of one case in its workspace and says what it did.
    Chosen by ``--adapter NAME``; built with ``from_config(RunConfig)``.

    The optional capabilities carry their defaults here: an adapter that subclasses ``Agent``
    inherits them and overrides what it has, and the engine reads them as plain attributes.
    ``agents.registry.create_adapter`` refuses a plugin that lacks any member, naming it.
    """

    name: str
    # Workspace-relative directories where the agent is handed the skills it is offered; the
    # baseline audit flags a without-skill arm that asks for one of them.
    staging_dirs: tuple[str, ...] = ()
    # Whether the agent finds offered skills itself (``skills_loaded`` is filled): trigger
    # queries need it, and the run refuses them otherwise.
    discovers_skills: bool = False
    # Whether ``AgentResult.served_model`` names the model the provider served: the baseline
    # cache then waits for the first arm's answer before it looks anything up.
    reports_served_model: bool = False

    def identity(self) -> dict[str, Any]:
        """Everything that changes the without-skill baseline (model, loading mode, max turns).
        Scopes the baseline cache: two agents with equal identities may share baselines."""
        ...

    def run(self, request: ArmRequest) -> AgentResult:
        """Work the arm in ``request.workspace``. Provider failures return a result with
        ``error`` set, never raise."""
        ...

    def against_warning(self, root: Path, label: str) -> str | None:
        """What makes a comparison with the original skill at ``root`` mean less for this
        agent (``--against``), or None."""
        return None

    def sandbox_profile(self, sandbox: Backend) -> dict[str, Any] | None:
        """How the agent's own work is confined under the run's ``sandbox`` (its process, its
        network, its model calls), for the results' isolation block; None when there is nothing
        of its own to say."""
        return None

    def measured_listing(self, skill: Skill, sandbox: Backend) -> MeasuredListing | None:
        """What the agent's own runtime counts ``skill``'s listing entry at, in tokens, under the
        run's ``sandbox``; None where it has no such count (the context budget then estimates)."""
        return None

    def skill_listing(self, skills: tuple[Skill, ...], sandbox: Backend) -> dict[str, Any] | None:
        """How the agent lists ``skills`` when all are offered at once (crowd trigger trials:
        whether any description was cut from the listing), found under the run's ``sandbox``, or
        None when it cannot tell."""
        return None


def sampling(client: ModelClient) -> dict[str, Any]:
    """The sampling a model client was built with, for an adapter's identity (a rerun with the
    same seed at concurrency 1 is what reproduces a local server's answers)."""
    # Only a client that reads its server's context window has one (``providers.context``).
    window = getattr(client, "context_window", None)
    context = window() if callable(window) else None
    return {
        "temperature": client.sampling_temperature,
        "seed": client.sampling_seed,
        "context_tokens": getattr(context, "tokens", None),
    }
