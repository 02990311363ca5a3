"""The ``codex`` adapter: OpenAI's Codex CLI (``@openai/codex``), ``codex exec --json``, headless.

The with-skill arm gets the skill staged as a project skill under ``.agents/skills/<name>/``,
where Codex discovers repository skills and lists them (name, description, path) in its
instructions; the without-skill arm gets nothing. Codex reads its configuration from
``CODEX_HOME``, a directory written per arm under the arm's private home: a model provider whose
base URL is the credential proxy's bridge, with ``wire_api = "responses"`` (the OpenAI Responses
API, streamed) and no key of its own (the proxy adds ``Authorization`` on the host), no
approvals, and a shell environment policy that passes its commands only the core variables.

Codex's own command sandbox is off (``danger-full-access``): it needs helper binaries, which it
refuses to install under a temporary directory, and a namespace of its own inside skillab's;
skillab's sandbox is the isolation.

``codex exec`` has no turn cap (no flag, and no configuration key: ``--strict-config`` rejects
``max_turns`` and its kin as unknown fields), so the credential proxy enforces ``max_turns``: it
answers that many model requests (``POST .../responses``) and refuses the next, and the session
ends there, graded on what it did, with ``stop_reason: max_turns``. Its tokens, as every CLI
arm's, are what the proxy read from the answered responses' own ``response.completed`` events.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.usage import Usage
from ..grading.trajectory import ModelTurn, ToolCall
from ..providers.pricing import cost_usd
from ..secrets import redact
from .base import ArmRequest
from .cli_agent import CliAgent, CliSummary
from .cli_events import json_lines

if TYPE_CHECKING:
    from ..sandbox.turn_budget import RequestBudget

_STATUS = re.compile(r"\b(4\d\d|5\d\d)\b")
_SECRET_PATTERNS = ("*KEY*", "*TOKEN*", "*SECRET*")


class CodexAdapter(CliAgent):
    name = "codex"
    cli = "codex"
    package = "@openai/codex"
    tested_version = "0.169.0"
    provider = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    skills_dir = ".agents/skills"
    api_paths = (r"(/v1)?/responses(/compact)?", r"(/v1)?/models(/[^/]+)?")
    default_endpoint = "https://api.openai.com/v1"
    shell_tools = ("exec_command",)

    def identity(self) -> dict[str, Any]:
        return {
            **super().identity(),
            "wire_api": "responses",
            # codex exec has no turn cap of its own: the credential proxy counts model requests.
            "turn_cap": "credential-proxy",
            "cli_sandbox": "danger-full-access",
        }

    def request_budget(self, request: ArmRequest) -> RequestBudget:
        from .codex_budget import ResponsesBudget  # with the proxy, only when an arm runs

        # One answered Responses request per model turn; a retried failure is not a turn.
        return ResponsesBudget(max(1, request.max_turns), "/responses")

    def credentials(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"}

    def token_holders(self) -> tuple[Path, ...]:
        # node runs codex.js, which starts the native binary with its environment.
        return (*super().token_holders(), *native_binaries(self.binary))

    def endpoint_env(self, base_url: str | None) -> dict[str, str]:
        return {}  # the endpoint is in config.toml

    def configure(self, config_dir: Path, request: ArmRequest, endpoint: str) -> dict[str, str]:
        (config_dir / "config.toml").write_text(self.config_toml(endpoint), encoding="utf-8")
        return {"CODEX_HOME": str(config_dir)}

    def config_toml(self, endpoint: str) -> str:
        # JSON string literals are valid TOML basic strings.
        lines = [
            *([f"model = {json.dumps(self.model)}"] if self.model else []),
            'model_provider = "skillab"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.skillab]",
            'name = "skillab"',
            f"base_url = {json.dumps(endpoint)}",
            # The arm's proxy token, from the bridge; the shell policy keeps it from commands.
            f"env_key = {json.dumps(self.key_env)}",
            'wire_api = "responses"',
            f"request_max_retries = {self.max_retries}",
            f"stream_max_retries = {self.max_retries}",
            "",
            "[shell_environment_policy]",
            'inherit = "core"',
            f"exclude = {json.dumps(list(_SECRET_PATTERNS))}",
            "",
            "[analytics]",
            "enabled = false",
            "",
        ]
        return "\n".join(lines)

    def argv(self, request: ArmRequest, config_dir: Path, endpoint: str) -> list[str]:
        # The prompt comes on stdin ("-"), so no case text lands in the process list.
        return [self.binary, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-"]

    def parse(
        self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()
    ) -> CliSummary:
        return parse_codex_events(self, stdout, workspace, skill_name)


def native_binaries(binary: str) -> list[Path]:
    """The platform binaries of an ``@openai/codex`` installation (``codex-<platform>``)."""
    real = Path(os.path.realpath(binary))
    scope = next((p for p in real.parents if p.name == "@openai"), None)
    if scope is None:
        return []
    return sorted(p for p in scope.glob("codex-*/vendor/*/*/codex") if p.is_file())


def parse_codex_events(
    agent: CliAgent, stdout: str, workspace: Path, skill_name: str | None
) -> CliSummary:
    """Read ``codex exec --json``: agent messages and tool items become turns, ``turn.completed``
    carries usage, ``turn.failed`` the error."""
    summary = CliSummary()
    last_error = ""
    for event in json_lines(stdout):
        kind = event.get("type")
        if kind == "item.completed":
            _read_item(agent, summary, event.get("item") or {}, workspace, skill_name)
        elif kind == "turn.completed":
            summary.finished = True
            summary.usage = summary.usage.add(_usage(event.get("usage") or {}, agent.model))
        elif kind == "turn.failed":
            message = str((event.get("error") or {}).get("message") or last_error or "turn failed")
            _fail(summary, message)
        elif kind == "error":
            last_error = str(event.get("message") or "")
    summary.num_turns = len(summary.turns)
    return summary


def _read_item(
    agent: CliAgent, summary: CliSummary, item: dict[str, Any], workspace: Path, skill_name: str | None
) -> None:
    kind = item.get("type")
    if kind == "agent_message" and item.get("text"):
        said = redact(str(item["text"]))
        if not summary.turns or summary.turns[-1].tool_calls:
            summary.turns.append(ModelTurn())
        turn = summary.turns[-1]
        turn.text = f"{turn.text}\n{said}" if turn.text else said
        summary.final_text = said
        return
    call = _tool_call(item)
    if call is None:
        return
    if not summary.turns:
        summary.turns.append(ModelTurn())
    summary.turns[-1].tool_calls.append(call)
    agent.observe(summary, call, workspace, skill_name)


def _tool_call(item: dict[str, Any]) -> ToolCall | None:
    kind = item.get("type")
    if kind == "command_execution":
        output = redact(str(item.get("aggregated_output") or ""))
        return ToolCall("exec_command", {"cmd": str(item.get("command") or "")}, output)
    if kind == "file_change":
        changes = item.get("changes") or []
        return ToolCall("apply_patch", {"changes": changes}, str(item.get("status") or ""))
    if kind == "mcp_tool_call":
        name = f"{item.get('server')}.{item.get('tool')}"
        return ToolCall(name, item.get("arguments") or {}, redact(json.dumps(item.get("result"))))
    if kind == "web_search":
        return ToolCall("web_search", {"query": str(item.get("query") or "")})
    return None


def _fail(summary: CliSummary, message: str) -> None:
    summary.error = redact(message)
    found = _STATUS.search(message)
    if found and int(found.group(1)) in (401, 403):
        summary.auth_status = int(found.group(1))


def _usage(raw: dict[str, Any], model: str | None) -> Usage:
    usage = Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=int(raw.get("cached_input_tokens") or 0),
        cache_write_tokens=int(raw.get("cache_write_input_tokens") or 0),
    )
    usage.cost_usd = cost_usd(model, usage) if model else None
    return usage
