"""``--adapter openai-agents[:MODULE:FUNCTION]``: an agent built with the OpenAI Agents SDK
(``openai-agents`` from PyPI), measured as the team defined it.

``MODULE:FUNCTION`` returns the team's ``Agent`` or ``SandboxAgent`` (instructions, tools,
handoffs, MCP servers); without it, a plain agent with the SDK's filesystem and shell tools.
skillab wraps it in a ``SandboxAgent`` whose ``Skills`` capability serves the with-skill arm's
staged skill, eager (copied into ``.agents/skills/`` before the first turn) or lazy
(``--skill-loading lazy``: copied when the model calls ``load_skill``); the arm without the
skill gets no capability and no skill file at all.

Isolation: the whole runner, the SDK and every command its shell tool starts run inside the
arm's sandbox (the SDK's local client adds no confinement on Linux; its commands are children
of a confined process and never see the runner's environment). The model client's ``base_url``
is the credential proxy (Responses API) with the arm's token; tracing is off.

Proof of offer is the system prompt the SDK sends, as its ``on_llm_start`` hook hands it: the
capability's rendered list of skills. Loading is the ``load_skill`` call (lazy) or a command or
read naming the staged ``SKILL.md`` (eager). Tokens and cost are what the proxy counted; an HTTP
error from the model API ends the arm as an ``error``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ..errors import MissingDependencyError
from ..skill.loader import SKILL_FILE
from .cli_agent import CliAgent
from .cli_session import CliSummary
from .python_agent import SKILLS_DIR, AgentPython, OpenAIPythonAgent, SdkTarget
from .skill_view import folder_name

if TYPE_CHECKING:
    from ..core.settings import RunConfig

ADAPTER = "openai-agents"
# The runner's folder for the capability's source (``openai_agents_runner.SOURCE``).
SOURCE = "skill-source"
SDK_RUNNER = Path(__file__).with_name("openai_agents_runner.py")
# What this runtime's own skill instructions tell the model, worth knowing beside other agents.
MUST_USE = ("the OpenAI Agents SDK's Skills instructions tell the model it \"must use\" a skill whose "
            "description matches the task")


def sdk_version(python: AgentPython) -> str:
    """The ``openai-agents`` release among the agent's packages (what its runner imports);
    ``MissingDependencyError`` (exit 2, with the install command) when there is none, before
    any arm runs."""
    from importlib import metadata

    paths = [str(p) for p in python.site_packages]
    found = next(iter(metadata.distributions(name="openai-agents", path=paths)), None)
    if found is None:
        raise MissingDependencyError(f"--adapter {ADAPTER} needs the openai-agents package beside the agent's "
                                     f"python ({python.interpreter}): pip install 'skillab[agents-sdk]'")
    return str(found.version)


class OpenAIAgentsAgent(SdkTarget, OpenAIPythonAgent):
    adapter = ADAPTER
    runner_module = SDK_RUNNER.stem
    shipped: ClassVar[tuple[Path, ...]] = (SDK_RUNNER,)
    package = "openai-agents"
    # The SDK's shell tool; its filesystem tools only patch and view images.
    shell_tools: ClassVar[tuple[str, ...]] = ("exec_command",)
    loading = "eager"
    sdk_version = "unknown"

    @classmethod
    def from_config(cls, config: RunConfig) -> CliAgent:
        agent = cast(OpenAIAgentsAgent, super().from_config(config))
        agent.loading = "lazy" if config.agent.skill_loading == "lazy" else "eager"
        agent.sdk_version = sdk_version(agent.python)
        return agent

    def task_extra(self) -> dict[str, Any]:
        from ..providers.openai_responses import is_reasoning_model

        return {"agent": self.definition_target(), "loading": self.loading, "skills_path": SKILLS_DIR,
                "max_retries": self.max_retries, "reasoning": is_reasoning_model(self.model or "")}

    def identity(self) -> dict[str, Any]:
        # The SDK's release is the agent's version, as a CLI's is (a new release is a new agent).
        return {**super().identity(), "callable": None, "agent": self.definition_target(), "sdk": ADAPTER,
                "cli": self.package, "cli_version": self.sdk_version,
                "skill_loading": "lazy" if self.loading == "lazy" else "discover",
                "skill_prompt": MUST_USE}

    def parse(self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()) -> CliSummary:
        summary = super().parse(stdout, workspace, skill_name, offered=offered)
        # Eager: the model opens a staged SKILL.md with a shell command; either mode: it reads the
        # capability's source, where the runner moved the staged skills, past load_skill.
        staged = {f"{base}/{folder_name(n)}/{SKILL_FILE}": n for n in offered for base in (SKILLS_DIR, SOURCE)}
        for turn in summary.turns:
            for call in turn.tool_calls:
                args = call.args if isinstance(call.args, dict) else {}
                command = str(args.get("cmd", "")) if call.name in self.shell_tools else ""
                summary.skills_loaded += [n for path, n in staged.items()
                                          if path in command and n not in summary.skills_loaded]
        summary.skill_activated = skill_name is not None and skill_name in summary.skills_loaded
        return summary
