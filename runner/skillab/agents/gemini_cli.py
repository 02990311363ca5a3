"""The ``gemini-cli`` adapter: Google's Gemini CLI (``@google/gemini-cli``), headless with
``gemini -p ... --output-format stream-json``.

The with-skill arm gets the skill staged as a workspace skill under ``.gemini/skills/<name>/``;
Gemini CLI lists workspace skills (name, description) in its system instruction and loads one
through its ``activate_skill`` tool. The without-skill arm gets nothing. ``GEMINI_CLI_HOME``
points at a directory under the arm's private home whose ``.gemini/settings.json`` chooses
API-key auth, caps attempts and session turns, turns usage statistics off and redacts the
arm's proxy token from the environment of the shell commands the CLI runs. The endpoint, from
``GOOGLE_GEMINI_BASE_URL``, is the credential proxy's bridge; the proxy adds the real
``x-goog-api-key`` on the host.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..core.usage import Usage
from ..grading.trajectory import ModelTurn, ToolCall
from ..providers.pricing import cost_usd
from ..secrets import redact
from .base import ArmRequest
from .cli_agent import CliAgent, CliSummary
from .cli_events import json_lines

_STATUS = re.compile(r"\b(?:status|code)\D{0,4}(\d{3})\b", re.IGNORECASE)


class GeminiCliAdapter(CliAgent):
    name = "gemini-cli"
    cli = "gemini"
    package = "@google/gemini-cli"
    tested_version = "0.61.0"
    provider = "gemini"
    key_env = "GEMINI_API_KEY"
    base_url_env = "GOOGLE_GEMINI_BASE_URL"
    skills_dir = ".gemini/skills"
    api_paths = (r"/v1(alpha|beta)?/models(/[^/:]+(:(streamGenerateContent|generateContent|countTokens|embedContent|batchEmbedContents))?)?",)
    default_endpoint = "https://generativelanguage.googleapis.com"
    read_tools = ("read_file", "read_many_files", "list_directory", "glob", "grep_search")
    shell_tools = ("run_shell_command",)
    activate_tools = ("activate_skill",)
    # Node's WebAssembly trap handler reserves more address space than the sandbox's limit
    # allows; explicit bounds checks cost the HTTP parser a little speed instead. The CLI
    # otherwise starts itself a second time to raise its heap limit, doubling the start-up.
    base_env = {"NODE_OPTIONS": "--disable-wasm-trap-handler", "GEMINI_CLI_NO_RELAUNCH": "true"}

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "approval_mode": "yolo"}

    def credentials(self) -> dict[str, str]:
        return {"x-goog-api-key": self._api_key}

    def configure(self, config_dir: Path, request: ArmRequest, endpoint: str) -> dict[str, str]:
        settings_dir = config_dir / ".gemini"
        settings_dir.mkdir(mode=0o700, exist_ok=True)
        (settings_dir / "settings.json").write_text(
            json.dumps(self.settings(request.max_turns), indent=2), encoding="utf-8"
        )
        return {"GEMINI_CLI_HOME": str(config_dir)}

    def settings(self, max_turns: int) -> dict[str, Any]:
        return {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "environmentVariableRedaction": {
                    "enabled": True,
                    "blocked": [self.key_env, "GOOGLE_API_KEY"],
                },
            },
            "general": {"maxAttempts": self.max_retries + 1, "enableAutoUpdate": False},
            "model": {"maxSessionTurns": max(1, max_turns)},
            "privacy": {"usageStatisticsEnabled": False},
        }

    def argv(self, request: ArmRequest, config_dir: Path, endpoint: str) -> list[str]:
        argv = [
            self.binary,
            "--output-format",
            "stream-json",
            "--approval-mode",
            "yolo",
            "--skip-trust",
        ]
        if self.model:
            argv += ["--model", self.model]
        # -p runs headless; the prompt itself comes on stdin, which the CLI prepends to it.
        return argv + ["-p", ""]

    def parse(
        self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()
    ) -> CliSummary:
        return parse_gemini_events(self, stdout, workspace, skill_name)


# The error type of Gemini CLI's result event when ``model.maxSessionTurns`` ended the session.
_TURN_CAP_ERROR = "FatalTurnLimitedError"


def parse_gemini_events(
    agent: CliAgent, stdout: str, workspace: Path, skill_name: str | None
) -> CliSummary:
    """Read ``stream-json``: assistant message deltas and tool uses become turns, tool results
    fill outputs, ``result`` carries status and token stats."""
    summary = CliSummary()
    calls: dict[str, ToolCall] = {}
    last_error = ""
    for event in json_lines(stdout):
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            _add_text(summary, redact(str(event.get("content") or "")))
        elif kind == "tool_use":
            call = ToolCall(str(event.get("tool_name")), event.get("parameters") or {})
            if not summary.turns:
                summary.turns.append(ModelTurn())
            summary.turns[-1].tool_calls.append(call)
            calls[str(event.get("tool_id"))] = call
            agent.observe(summary, call, workspace, skill_name)
        elif kind == "tool_result":
            answered = calls.get(str(event.get("tool_id")))
            if answered is not None:
                error = event.get("error")
                detail = error.get("message") if isinstance(error, dict) else error
                answered.output = redact(str(event.get("output") or detail or event.get("status") or ""))
        elif kind == "error":
            last_error = str(event.get("message") or "")
        elif kind == "result":
            _read_result(agent, summary, event, last_error)
    summary.final_text = (summary.turns[-1].text or "") if summary.turns else ""
    summary.num_turns = len(summary.turns)
    return summary


def _add_text(summary: CliSummary, piece: str) -> None:
    if not piece:
        return
    if not summary.turns or summary.turns[-1].tool_calls:
        summary.turns.append(ModelTurn())
    summary.turns[-1].text = (summary.turns[-1].text or "") + piece


def _read_result(agent: CliAgent, summary: CliSummary, event: dict[str, Any], last_error: str) -> None:
    stats = event.get("stats") or {}
    summary.duration_ms = int(stats.get("duration_ms") or 0)
    usage = Usage(
        input_tokens=int(stats.get("input_tokens") or 0),
        output_tokens=int(stats.get("output_tokens") or 0),
        cache_read_tokens=int(stats.get("cached") or 0),
    )
    usage.cost_usd = cost_usd(agent.model, usage) if agent.model else None
    summary.usage = usage
    if event.get("status") == "success":
        summary.finished = True
        return
    error = event.get("error")
    if isinstance(error, dict) and error.get("type") == _TURN_CAP_ERROR:
        # Its own cap on model turns (maxSessionTurns, set to max_turns) ended the session: the
        # arm is graded on what it did, as a capped Claude Code or Codex session is.
        summary.finished = True
        summary.stop_reason = "max_turns"
        return
    message = (error.get("message") if isinstance(error, dict) else error) or last_error
    summary.error = redact(str(message or f"status {event.get('status')}"))
    found = _STATUS.search(summary.error)
    if found and int(found.group(1)) in (401, 403):
        summary.auth_status = int(found.group(1))
