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

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from ..errors import SkillabError
from ..sandbox.backend import Backend
from ..sandbox.workspace import Workspace
from ..skill.loader import Skill
from ..suite.model import Case
from .base import ArmRequest, MeasuredListing
from .python_agent import AnthropicPythonAgent, SdkTarget

ADAPTER = "claude-agent-sdk"
CONTEXT_SOURCE = ("the Claude Agent SDK's get_context_usage(): the skill's entry in its Skills category, "
                  "the bundled CLI's own count of its listing line")
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

    def measured_listing(self, skill: Skill, sandbox: Backend) -> MeasuredListing | None:
        """The SDK's own count of the skill's listing entry: its entry in the Skills category of
        ``get_context_usage()``, in a session run as an arm runs (sandbox, proxy, the user's
        options) with the skill staged but no model turn; None when the session could not count."""
        scratch = Path(tempfile.mkdtemp(prefix="skillab-context-"))
        try:
            workspace = Workspace.create(scratch, "context", backend=sandbox)
            request = ArmRequest(case=Case(name="context-usage", prompt="(a context count: no model turn)"),
                                 arm="with_skill", skill=skill, workspace=workspace.root, max_turns=1,
                                 purpose="context", sandbox=sandbox)
            result = self.run(request)
            counted = json.loads(result.final_output) if result.error is None else {}
        except (SkillabError, OSError, ValueError):
            return None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        entries = counted.get("skills") if isinstance(counted, dict) else None
        tokens = next((e.get("tokens") for e in entries or [] if isinstance(e, dict)
                       and e.get("name") == skill.name and e.get("source") == "projectSettings"), None)
        return MeasuredListing(tokens, CONTEXT_SOURCE) if isinstance(tokens, int) else None
