"""The ``agent`` adapter: a multi-turn tool loop in the arm's workspace.

Each turn is one model call; the tools it asks for run in the workspace and their results go
back on the next turn. The loop ends when the model answers without a tool call, or after the
case's ``max_turns`` calls. The final output is the last text the model wrote.

In ``discover`` mode the skill is staged at ``.skills/<name>/`` for the arms that load it and
listed in the system prompt; the arm records whether the agent actually opened its SKILL.md.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from ..core.contracts import ModelClient
from ..core.messages import Message, ToolOutcome, ToolUse
from ..core.usage import Usage
from ..errors import ProviderError, UsageError
from ..grading.trajectory import ModelTurn, ToolCall, Trajectory
from ..secrets import redact
from ..skill.loader import Skill
from .base import Agent, AgentResult, ArmRequest, sampling
from .skill_view import (
    DISCOVER_DIR,
    DISCOVER_TEMPLATE,
    INLINE_TEMPLATE,
    SKILL_LOADINGS,
    SkillLoading,
    normalize,
    skill_md_path,
    skill_section,
    stage_skill,
    unstage,
)
from .tools import DEFAULT_SHELL_TIMEOUT_S, TOOL_SPECS, TOOLSET_VERSION, Toolbox

if TYPE_CHECKING:
    from ..core.settings import RunConfig
    from ..sandbox.backend import Backend

DEFAULT_MAX_TOKENS = 8192

SYSTEM_PROMPT = """\
You are an autonomous agent completing a task in a workspace directory, which is your current
working directory. Use the tools to look at files, change them and run shell commands; every
path is relative to the workspace. There is no network access and nobody to ask: make
reasonable assumptions and keep going. When the task is done, reply with your final answer as
plain text and call no more tools.
"""


class AgentAdapter(Agent):
    name = "agent"
    # Discover mode stages the offered skills here (inline mode puts them in the prompt).
    staging_dirs = (DISCOVER_DIR,)
    # Trigger trials: the agent is offered skills it may load (see engine.trigger).
    discovers_skills = True
    # Each response names the model served; the baseline cache is keyed on it.
    reports_served_model = True

    def __init__(
        self,
        client: ModelClient,
        *,
        skill_loading: SkillLoading = "inline",
        default_max_turns: int = 12,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        shell_timeout_s: float = DEFAULT_SHELL_TIMEOUT_S,
        endpoint: str | None = None,
    ):
        if skill_loading not in SKILL_LOADINGS:
            raise UsageError(
                f"unknown skill loading '{skill_loading}' (choose from {', '.join(SKILL_LOADINGS)}; "
                "lazy is for --adapter openai-agents)"
            )
        self.client = client
        self.skill_loading = skill_loading
        self.default_max_turns = default_max_turns
        self.max_tokens = max_tokens
        self.shell_timeout_s = shell_timeout_s
        self.endpoint = endpoint

    @classmethod
    def from_config(cls, config: RunConfig) -> AgentAdapter:
        from ..providers.registry import agent_settings, create_client, resolve_base_url

        settings = agent_settings(config.agent.model, config.provider_tuning)
        environ = config.credentials.environ
        return cls(
            create_client(settings, environ),
            skill_loading=config.agent.skill_loading,  # type: ignore[arg-type]
            default_max_turns=config.agent.max_turns,
            max_tokens=config.agent.max_tokens or DEFAULT_MAX_TOKENS,
            endpoint=resolve_base_url(settings, environ),
        )

    def sandbox_profile(self, sandbox: Backend) -> dict[str, Any]:
        return {
            "model_calls": "made by skillab on the host; the key never enters a sandbox",
            "tools": "every shell command runs in the sandbox, in the arm's workspace",
        }

    def identity(self) -> dict[str, Any]:
        return {
            "adapter": self.name,
            "provider": self.client.provider,
            "model": self.client.model,
            "endpoint": redact(self.endpoint) if self.endpoint else None,
            "skill_loading": self.skill_loading,
            "max_turns": self.default_max_turns,
            "max_tokens": self.max_tokens,
            **sampling(self.client),
            "toolset": TOOLSET_VERSION,
            "system_prompt_sha256": _prompt_hash(),
        }

    def _loading(self, request: ArmRequest) -> SkillLoading:
        # A trigger trial measures discovery, so the skill is always listed, never inlined.
        return "discover" if request.purpose == "trigger" else self.skill_loading

    def run(self, request: ArmRequest) -> AgentResult:
        staged = []
        if request.skill is not None and self._loading(request) == "discover":
            staged = [stage_skill(skill, request.workspace) for skill in request.offered]
        try:
            return self._loop(request)
        finally:
            for folder in staged:
                unstage(folder, request.workspace)

    def skill_listing(self, skills: tuple[Skill, ...], sandbox: Backend) -> dict[str, Any]:
        """The discover listing: every skill in full, whatever the count (no budget)."""
        section = skill_section(skills[0], "discover", skills[1:]) if skills else ""
        return {"agent": "agent", "method": "prompt", "skills": len(skills), "ours": len(skills),
                "chars": len(section), "budget_chars": None, "overflow": False,
                "descriptions_dropped": [], "descriptions_cut": [], "absent": [], "others_dropped": []}

    def _loop(self, request: ArmRequest) -> AgentResult:
        started = time.monotonic()
        loading = self._loading(request)
        system = SYSTEM_PROMPT + skill_section(request.skill, loading, request.siblings)
        toolbox = Toolbox(
            request.workspace, shell_timeout_s=self.shell_timeout_s, hide=request.hide,
            sandbox=request.sandbox,
        )
        watch = _ActivationWatch(request, loading)
        messages = [Message.user(request.case.prompt)]
        trajectory = Trajectory(user_input=request.case.prompt)
        usage, final, error = Usage(), "", None
        touched: list[str] = []
        served: str | None = None
        stop: str | None = None
        for turn in range(max(1, request.max_turns)):
            seed = f"{request.case.name}\0{request.arm}\0{request.run_index}\0{turn}"
            try:
                response = self.client.create(
                    messages, system=system, tools=TOOL_SPECS, max_tokens=self.max_tokens, seed=seed
                )
            except ProviderError as exc:
                error = redact(str(exc))
                break
            usage = usage.add(response.usage)
            served = response.served_model or served
            # A key-shaped string the model writes is masked before anything records it.
            said = redact(response.text)
            step = ModelTurn(text=said or None, latency_ms=response.latency_ms)
            trajectory.turns.append(step)
            if said:
                final = said
            if not response.tool_calls:
                if response.stop_reason == "max_tokens":
                    stop = "max_tokens"  # the final answer was cut short
                break
            messages.append(Message("assistant", response.text or None, tuple(response.tool_calls)))
            outcomes = [
                self._use_tool(toolbox, call, step, watch, touched) for call in response.tool_calls
            ]
            messages.append(Message("user", tool_results=tuple(outcomes)))
            if request.purpose == "trigger" and watch.loaded:
                break  # the routing decision is made; the answer is not graded
        else:
            # Every turn asked for tools: the cap ended the session, not the agent.
            stop = "max_turns"
        return AgentResult(
            final_output=final,
            trajectory=trajectory,
            usage=usage,
            duration_ms=int((time.monotonic() - started) * 1000),
            turns=len(trajectory.turns),
            error=error,
            skill_activated=watch.activated,
            skills_loaded=list(watch.loaded),
            paths_touched=touched,
            served_model=served,
            stop_reason=stop,
        )

    @staticmethod
    def _use_tool(
        toolbox: Toolbox,
        call: ToolUse,
        step: ModelTurn,
        watch: _ActivationWatch,
        touched: list[str],
    ) -> ToolOutcome:
        started = time.monotonic()
        run = toolbox.call(call.name, call.arguments)
        latency = int((time.monotonic() - started) * 1000)
        step.tool_calls.append(ToolCall(call.name, call.arguments, run.output, latency))
        touched.extend(run.paths)
        watch.observe(call, run.paths, run.is_error)
        return ToolOutcome(call.id, run.output, run.is_error)


class _ActivationWatch:
    """Discover mode: which staged SKILL.md files the agent opened (by read_file or in a
    command), and whether the skill under test was one of them."""

    def __init__(self, request: ArmRequest, loading: SkillLoading):
        applies = loading == "discover" and request.skill is not None
        self._main = request.skill.name if applies and request.skill else None
        self._targets = {skill_md_path(s): s.name for s in request.offered} if applies else {}
        self.loaded: list[str] = []

    @property
    def activated(self) -> bool | None:
        return None if self._main is None else self._main in self.loaded

    def observe(self, call: ToolUse, paths: list[str], failed: bool) -> None:
        for target, name in self._targets.items():
            if name not in self.loaded and self._opened(target, call, paths, failed):
                self.loaded.append(name)

    @staticmethod
    def _opened(target: str, call: ToolUse, paths: list[str], failed: bool) -> bool:
        if call.name == "read_file":
            return not failed and target in paths
        if call.name == "run_shell" and isinstance(call.arguments, dict):
            return target in normalize_command(str(call.arguments.get("command", "")))
        return False


def normalize_command(command: str) -> str:
    """The command with ``./`` prefixes dropped, so ``cat ./.skills/x/SKILL.md`` matches too."""
    return " ".join(normalize(word) if "/" in word else word for word in command.split())


def _prompt_hash() -> str:
    return hashlib.sha256(
        "\0".join([SYSTEM_PROMPT, INLINE_TEMPLATE, DISCOVER_TEMPLATE]).encode()
    ).hexdigest()
