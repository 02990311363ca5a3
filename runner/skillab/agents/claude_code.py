"""The ``claude-code`` adapter: the real ``claude`` CLI, headless, in the arm's workspace.

The with-skill arm gets the skill staged as a project skill under ``.claude/skills/<name>/``;
the without-skill arm gets nothing. ``HOME`` is the workspace's private home, so no user-level
skills, settings or memory leak into either arm. The CLI's ``stream-json`` output becomes the
trajectory, usage (its own cost estimate included), turns and duration.

The CLI runs inside the sandbox like every other command: it sees its workspace, its own
installation (read-only) and the read-only system, never the skill's directory or another arm.
It gets no key: its only way out is the credential proxy (``sandbox.proxy``) on a Unix socket,
which forwards to the configured endpoint alone and adds the key on the host. Inside, the CLI
talks to ``http://127.0.0.1:<port>`` and authenticates with the arm's token, which its Bash
commands do not inherit and cannot read from it (``sandbox.sealed``).
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.usage import Usage
from ..grading.trajectory import ModelTurn, ToolCall
from ..sandbox.backend import Backend
from ..sandbox.workspace import HOME_NAME, safe_join
from ..secrets import redact
from ..skill.loader import SKILL_FILE, Skill
from .base import ArmRequest
from .cli_agent import AUTH_STATUSES, CliAgent, CliSummary
from .cli_events import json_lines, workspace_relative
from .skill_view import folder_name

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
SKILLS_DIR = ".claude/skills"
DEFAULT_ENDPOINT = "https://api.anthropic.com"
# Longer than any arm: the helper's file is read once, so Claude Code must never ask again.
KEY_HELPER_TTL_MS = 10 * 24 * 3600 * 1000
_SIDE_MODEL_ENV = ("ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL")
# The same built-in tools for every arm; web tools are off so both arms work from the same
# closed world.
TOOLS = ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "Skill", "TodoWrite")
DENIED_TOOLS = ("WebFetch", "WebSearch")
_QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


class ClaudeCodeAdapter(CliAgent):
    name = "claude-code"
    # Trigger trials: the agent is offered skills it may load (see engine.trigger).
    discovers_skills = True
    cli = "claude"
    package = "@anthropic-ai/claude-code"
    tested_version = "2.1.330"
    provider = "anthropic"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV
    default_endpoint = DEFAULT_ENDPOINT
    skills_dir = SKILLS_DIR
    api_paths = (r"/v1/messages(/count_tokens)?", r"/v1/models(/[^/]+)?")
    base_env = _QUIET_ENV

    def identity(self) -> dict[str, Any]:
        return {
            "adapter": self.name,
            "provider": "anthropic",
            "model": self.model,
            "endpoint": redact(self.base_url) if self.base_url else None,
            "claude_code_version": self.version,
            # Claude Code lists skills and loads them when it judges them relevant.
            "skill_loading": "discover",
            "max_turns": self.default_max_turns,
            "tools": list(TOOLS),
            "denied_tools": list(DENIED_TOOLS),
            "permission_mode": "acceptEdits",
        }

    def credentials(self) -> dict[str, str]:
        return {"x-api-key": self._api_key}

    def endpoint_env(self, base_url: str | None) -> dict[str, str]:
        return {}  # the endpoint is in the settings

    def configure(self, config_dir: Path, request: ArmRequest, endpoint: str) -> dict[str, str]:
        # The key helper runs once: its file is gone after.
        return {"CLAUDE_CODE_MAX_RETRIES": str(self.max_retries),
                "CLAUDE_CODE_API_KEY_HELPER_TTL_MS": str(KEY_HELPER_TTL_MS)}

    def token_env(self, root: Path) -> str:
        return str(safe_join(Path(os.path.realpath(root)), f"{HOME_NAME}/.skillab-{self.name}/key"))

    def argv(self, request: ArmRequest, config_dir: Path, endpoint: str) -> list[str]:
        # The endpoint is the proxy's bridge and the key the arm's token: the proxy swaps in
        # the real key outside the sandbox. Claude Code passes its whole environment to Bash, so
        # the token is not in it: its key helper reads the file the bridge wrote, once, and
        # removes it, before any tool can run; the CLI keeps it for the session.
        token = shlex.quote(self.token_env(request.workspace))
        # Its background calls (the "small, fast" model) use the run's model too: the proxy
        # refuses any other.
        pinned = {name: self.model for name in _SIDE_MODEL_ENV} if self.model else {}
        settings: dict[str, Any] = {
            "apiKeyHelper": f"cat {token}; rm -f {token}",
            "env": {BASE_URL_ENV: endpoint, **pinned},
        }
        argv = [
            self.binary,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--max-turns",
            str(max(1, request.max_turns)),
            "--permission-mode",
            "acceptEdits",
            "--tools",
            ",".join(TOOLS),
            "--allowedTools",
            ",".join(TOOLS),
            "--disallowedTools",
            ",".join(DENIED_TOOLS),
            "--strict-mcp-config",
            "--no-session-persistence",
            "--settings",
            json.dumps(settings),
        ]
        if self.model:
            argv += ["--model", self.model]
        return argv

    def skill_listing(self, skills: tuple[Skill, ...], sandbox: Backend) -> dict[str, Any]:
        """What this CLI's skill listing shows of ``skills``, run under ``sandbox`` (see
        ``claude_listing``)."""
        from .claude_listing import probe_listing

        found = probe_listing(self, skills, sandbox)
        found["agent"] = f"claude-code {self.version}"
        return found

    def parse(
        self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()
    ) -> CliSummary:
        stream = parse_stream(stdout, workspace, skill_name, offered=offered)
        if stream.finished and stream.is_error and stream.subtype != "error_max_turns":
            status = f"HTTP {stream.api_error_status}: " if stream.api_error_status else ""
            stream.error = f"({stream.subtype}): {status}{stream.final_text}"
        if stream.subtype == "error_max_turns":
            stream.stop_reason = "max_turns"
        if stream.api_error_status in AUTH_STATUSES:
            stream.auth_status = stream.api_error_status
        return stream


# --- stream-json ------------------------------------------------------------------------------


@dataclass
class StreamSummary(CliSummary):
    """What a ``claude -p --output-format stream-json`` session did: the shared summary plus the
    fields of Claude Code's closing ``result`` event."""

    is_error: bool = False
    subtype: str = ""
    api_error_status: int | None = None


def parse_stream(
    stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()
) -> StreamSummary:
    """Read the CLI's JSON lines: assistant messages become turns, tool results fill outputs."""
    summary = StreamSummary()
    calls: dict[str, ToolCall] = {}
    last_message_id = None
    last_text = ""
    for event in json_lines(stdout):
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message") or {}
            if message.get("model") == "<synthetic>":
                continue  # the CLI's own error notice, not a model turn
            if isinstance(message.get("model"), str) and message["model"]:
                summary.served_model = message["model"]
            if message.get("id") != last_message_id or not summary.turns:
                summary.turns.append(ModelTurn())
                last_message_id = message.get("id")
            turn = summary.turns[-1]
            for block in message.get("content") or []:
                if block.get("type") == "text" and block.get("text"):
                    said = redact(block["text"])
                    turn.text = f"{turn.text}\n{said}" if turn.text else said
                    last_text = said
                elif block.get("type") == "tool_use":
                    call = ToolCall(str(block.get("name")), block.get("input") or {})
                    turn.tool_calls.append(call)
                    calls[str(block.get("id"))] = call
                    _observe(summary, call, workspace, offered or tuple(filter(None, [skill_name])))
        elif kind == "user":
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    answered = calls.get(str(block.get("tool_use_id")))
                    if answered is not None:
                        answered.output = redact(_result_text(block.get("content")))
        elif kind == "result":
            _read_result(summary, event)
    if not summary.final_text:
        summary.final_text = last_text
    summary.skill_activated = skill_name in summary.skills_loaded
    return summary


def _read_result(summary: StreamSummary, event: dict[str, Any]) -> None:
    summary.finished = True
    summary.is_error = bool(event.get("is_error"))
    summary.subtype = str(event.get("subtype") or "")
    status = event.get("api_error_status")
    summary.api_error_status = status if isinstance(status, int) else None
    if isinstance(event.get("result"), str):
        summary.final_text = redact(event["result"])
    summary.num_turns = int(event.get("num_turns") or 0)
    summary.duration_ms = int(event.get("duration_ms") or 0)
    raw = event.get("usage") or {}
    cache_read = int(raw.get("cache_read_input_tokens") or 0)
    cache_write = int(raw.get("cache_creation_input_tokens") or 0)
    cost = event.get("total_cost_usd")
    summary.usage = Usage(
        input_tokens=int(raw.get("input_tokens") or 0) + cache_read + cache_write,
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
    )


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else json.dumps(content)


_PATH_KEYS = ("file_path", "path", "notebook_path")


def _observe(
    summary: StreamSummary, call: ToolCall, workspace: Path, offered: tuple[str, ...]
) -> None:
    """Record the paths a tool call read or searched, and which offered skills it loaded."""
    args = call.args if isinstance(call.args, dict) else {}
    if call.name in ("Read", "Glob", "Grep", "NotebookEdit", "Edit"):
        for key in _PATH_KEYS:
            if isinstance(args.get(key), str):
                summary.paths_touched.append(workspace_relative(args[key], workspace))
    for name in offered:
        if name not in summary.skills_loaded and _loads(call, args, workspace, name):
            summary.skills_loaded.append(name)


def _loads(call: ToolCall, args: dict[str, Any], workspace: Path, skill_name: str) -> bool:
    """Whether ``call`` loads the staged skill: invokes it, or reads its SKILL.md."""
    staged = f"{SKILLS_DIR}/{folder_name(skill_name)}/{SKILL_FILE}"
    if call.name == "Skill":
        return str(args.get("skill", "")).split(":")[-1] in (skill_name, folder_name(skill_name))
    if call.name == "Read" and isinstance(args.get("file_path"), str):
        return workspace_relative(args["file_path"], workspace) == staged
    if call.name == "Bash" and isinstance(args.get("command"), str):
        return staged in args["command"]
    return False
