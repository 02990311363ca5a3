"""``--adapter claude-agent-sdk[:MODULE:FUNCTION]``: an agent built with Anthropic's Claude Agent SDK
(``claude-agent-sdk`` from PyPI), measured as the team defined it.

``MODULE:FUNCTION`` returns the team's ``ClaudeAgentOptions`` (system prompt, tools, subagents,
MCP servers); without it, the SDK's defaults with the coding tools. The session runs inside the
sandbox through the Python agent's runner (``python_agent``), and ``claude_sdk_runner`` sets what
the measurement depends on: project settings only, so the user's own skills never enter an arm;
the with-skill arm's skill staged as a project skill under ``.claude/skills/``, the arm without
it given no skill file at all; the bundled CLI running inside the same sandbox; the model calls
through the credential proxy with the arm's token; telemetry off.

Proof of offer is the SDK's own ``system/init`` message, which lists the skills the session
discovered; loading is its ``Skill`` tool call. Tokens and cost are what the proxy counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from .python_agent import AnthropicPythonAgent, SdkTarget

ADAPTER = "claude-agent-sdk"
SDK_RUNNER = Path(__file__).with_name("claude_sdk_runner.py")


class ClaudeAgentSdkAgent(SdkTarget, AnthropicPythonAgent):
    adapter = ADAPTER
    runner_module = SDK_RUNNER.stem
    skills_dir = ".claude/skills"
    shipped: ClassVar[tuple[Path, ...]] = (SDK_RUNNER,)
    package = "claude-agent-sdk"
    read_tools: ClassVar[tuple[str, ...]] = ("Read",)

    def task_extra(self) -> dict[str, Any]:
        return {"options": self.definition_target()}

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "callable": None, "options": self.definition_target(), "sdk": "claude-agent-sdk"}
