"""The ``copilot`` adapter: GitHub Copilot CLI (``@github/copilot``), headless, its prompt on stdin
and its events as JSON lines (``--output-format json``).

The with-skill arm gets the skill staged as a project skill under ``.github/skills/<name>/``; the
without-skill arm gets no skill file. Proof of offer is the CLI's own ``session.skills_loaded``
event, which lists every skill the session discovered with its source and path: a with-skill arm
whose skill is not there as a project skill is invalid, never a baseline. Loading is the CLI's
``skill.invoked`` event (written to the session's ``events.jsonl``, read before the private home
is removed), or its ``skill`` tool call, or a read of the staged ``SKILL.md``.

Model calls use Copilot's own "bring your own key" mode (``COPILOT_PROVIDER_BASE_URL``): the
base URL is the credential proxy's bridge, the provider type follows the run's model (Anthropic
Messages for ``claude-*``, OpenAI chat completions otherwise), and the key the CLI holds is the
arm's proxy token, which Copilot keeps out of its shell commands' environment (and is told to,
with ``--secret-env-vars``). ``COPILOT_OFFLINE`` turns off GitHub sign-in, telemetry, web tools,
the GitHub MCP server and updates; ``--no-remote-export`` keeps the session off GitHub.
``COPILOT_HOME`` is a directory under the arm's private home, so no user setting, skill, plugin,
memory or session of the user's enters either arm.

The CLI is a single executable that unpacks its bundled package (about 235 MB) into a cache on
first start: skillab unpacks it once per version, inside the sandbox, into its own cache, and
each arm reads it there read-only (``COPILOT_PKG_CACHE_HOME``).

``copilot -p`` has no turn cap, so the credential proxy enforces ``max_turns`` (as for Codex).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..grading.trajectory import ModelTurn, ToolCall
from ..sandbox.backend import Backend
from ..sandbox.nofollow import read_inside
from ..sandbox.process import CommandResult
from ..sandbox.programs import install_paths
from ..sandbox.workspace import run_in
from ..secrets import redact
from ..skill.loader import SKILL_FILE
from .base import ArmRequest
from .cli_agent import AUTH_STATUSES, CliAgent, CliSummary
from .cli_events import json_lines, workspace_relative
from .cli_session import Launch, check_offered
from .provider_wire import AnthropicWire, OpenAIWire
from .skill_view import folder_name

if TYPE_CHECKING:
    from ..core.settings import RunConfig
    from ..sandbox.turn_budget import RequestBudget
    from ..sandbox.view import ProxyRoute

SKILLS_DIR = ".github/skills"
TOKEN_ENV = "COPILOT_PROVIDER_API_KEY"
# Every arm alike: no GitHub sign-in, telemetry, web tools or updates; the terminal plain.
QUIET_ENV = {"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false", "NO_COLOR": "1"}
# The session's own record, where ``skill.invoked`` is written (not on stdout).
EVENTS_LIMIT = 32 << 20
# Shell tools, file readers, the skill loader: Copilot's built-in tool names.
READ_TOOLS = ("view", "grep", "glob")
SHELL_TOOLS = ("bash",)


class CopilotAdapter(CliAgent):
    """The base: one subclass per provider wire the CLI can be pointed at (``from_config`` picks
    it from the run's model)."""

    name = "copilot"
    cli = "copilot"
    package = "@github/copilot"
    tested_version = "1.0.102"
    skills_dir = SKILLS_DIR
    read_tools = READ_TOOLS
    shell_tools = SHELL_TOOLS
    activate_tools = ("skill",)
    path_keys = ("path",)
    base_env = QUIET_ENV
    # ``COPILOT_PROVIDER_TYPE`` and the path the proxy counts turns on.
    provider_type: str = ""
    turn_path: str = ""

    @classmethod
    def from_config(cls, config: RunConfig) -> CliAgent:
        if cls is not CopilotAdapter:
            return super().from_config(config)
        from ..providers.registry import infer_provider

        model = config.agent.model
        if not model.name:
            raise UsageError("--adapter copilot needs --model: Copilot's own-key mode names the model it "
                             "calls (the credential proxy refuses any other)")
        provider = infer_provider(model.name, explicit=model.provider, base_url=model.base_url)
        chosen = BY_PROVIDER.get(provider)
        if chosen is None:
            raise UsageError(f"--adapter copilot: provider {provider!r} is not one Copilot CLI can be pointed "
                             f"at through the proxy ({', '.join(BY_PROVIDER)})")
        return chosen.from_config(config)

    @classmethod
    def find_binary(cls) -> str:
        return str(native_binary(super().find_binary()))

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "provider_type": self.provider_type,
                # copilot -p has no turn cap of its own: the credential proxy counts model requests.
                "turn_cap": "credential-proxy"}

    def request_budget(self, request: ArmRequest) -> RequestBudget:
        from ..sandbox.turn_budget import RequestBudget

        return RequestBudget(max(1, request.max_turns), self.turn_path)

    def token_env(self, root: Path) -> str:
        return TOKEN_ENV

    def endpoint_env(self, base_url: str | None) -> dict[str, str]:
        return {"COPILOT_PROVIDER_BASE_URL": base_url} if base_url else {}

    def configure(self, config_dir: Path, request: ArmRequest, endpoint: str) -> dict[str, str]:
        env = {"COPILOT_HOME": str(config_dir), "COPILOT_PROVIDER_TYPE": self.provider_type}
        if self.model:
            env["COPILOT_MODEL"] = self.model
        return env

    def launch(self, request: ArmRequest, root: Path, route: ProxyRoute) -> Launch:
        launch = super().launch(request, root, route)
        home = unpacked_package(self.binary, request.sandbox)
        if home is None:
            return launch
        return replace(launch, env={**launch.env, "COPILOT_PKG_CACHE_HOME": str(home)},
                       read_only=(*launch.read_only, home))

    def argv(self, request: ArmRequest, config_dir: Path, endpoint: str) -> list[str]:
        # No -p: the prompt comes on stdin, so no case text lands in the process list.
        argv = [
            self.binary,
            "--output-format", "json",
            "--allow-all-tools",
            "--no-ask-user",
            "--no-auto-update",
            "--no-remote",
            "--no-remote-export",
            "--disable-builtin-mcps",
            "--disable-client-telemetry",
            f"--secret-env-vars={TOKEN_ENV}",
        ]
        if self.model:
            argv += ["--model", self.model]
        return argv

    def execute(self, launch: Launch, sandbox: Backend) -> CommandResult:
        result = super().execute(launch, sandbox)
        if launch.config_dir is None:
            return result
        # ``skill.invoked`` is in the session's record, not on stdout: appended to what is parsed.
        return replace(result, stdout=result.stdout + "\n" + session_events(launch.cwd, launch.config_dir))

    def parse(
        self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()
    ) -> CliSummary:
        return parse_copilot_events(stdout, workspace, skill_name, offered or tuple(filter(None, [skill_name])))


class AnthropicCopilot(AnthropicWire, CopilotAdapter):
    provider_type = "anthropic"
    turn_path = "/v1/messages"


class OpenAICopilot(OpenAIWire, CopilotAdapter):
    provider_type = "openai"  # chat completions, Copilot's default wire for this type
    turn_path = "/chat/completions"


BY_PROVIDER: dict[str, type[CopilotAdapter]] = {"anthropic": AnthropicCopilot, "openai": OpenAICopilot}


# --- the installation ---------------------------------------------------------------------------


def native_binary(binary: str) -> Path:
    """The platform executable of an ``@github/copilot`` installation: the npm package's
    ``copilot`` is a Node launcher that starts ``@github/copilot-<platform>/copilot``; started
    directly, the sandbox holds one process fewer, and the token one holder fewer."""
    real = Path(os.path.realpath(binary))
    if real.name != "npm-loader.js":
        return real
    scope = real.parent.parent
    for candidate in sorted(scope.glob("copilot-linux*/copilot")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return real


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skillab" / "copilot"


def unpacked_package(binary: str, sandbox: Backend | None) -> Path | None:
    """A ``COPILOT_PKG_CACHE_HOME`` holding the CLI's bundled package, unpacked once per
    executable by the CLI itself (``COPILOT_SEA_EXTRACT_ONLY``), inside ``sandbox``; None when it
    could not be (each arm then unpacks into its own home)."""
    real = Path(os.path.realpath(binary))
    try:
        info = real.stat()
    except OSError:
        return None
    stamp = hashlib.sha256(f"{real}:{info.st_size}:{info.st_mtime_ns}".encode()).hexdigest()[:16]
    home = cache_root() / f"{real.parent.name}-{stamp}"
    if (home / "pkg").is_dir():
        return home
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / ".unpack.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # arms in flight at once unpack it once
        if (home / "pkg").is_dir():
            return home
        scratch = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=home.parent))
        try:
            result = run_in(scratch, [str(real), "--binary-version"], timeout_s=600,
                            extra_env={"COPILOT_SEA_EXTRACT_ONLY": "1", "COPILOT_PKG_CACHE_HOME": str(scratch)},
                            read_only=install_paths(str(real)), backend=sandbox)
            if not result.completed or not (scratch / "pkg").is_dir():
                return None
            for leftover in (".home", ".tmp"):
                shutil.rmtree(scratch / leftover, ignore_errors=True)
            scratch.rename(home)
            return home
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def session_events(root: Path, config_dir: Path) -> str:
    """The ``skill.invoked`` lines of the session's ``events.jsonl`` (under
    ``config_dir/session-state/<id>/``, read without following any link the agent planted); the
    rest of that record repeats what stdout said."""
    state = config_dir / "session-state"
    try:
        sessions = sorted(p.name for p in state.iterdir() if not p.is_symlink())
    except OSError:
        return ""
    kept = []
    for session in sessions:
        raw = read_inside(root, os.path.relpath(state / session / "events.jsonl", root), EVENTS_LIMIT)
        for event in json_lines(raw.decode("utf-8", "replace") if raw else ""):
            if event.get("type") == "skill.invoked":
                kept.append(json.dumps(event))
    return "\n".join(kept)


# --- its events ---------------------------------------------------------------------------------


def parse_copilot_events(
    stdout: str, workspace: Path, skill_name: str | None, offered: tuple[str, ...]
) -> CliSummary:
    """Read ``--output-format json``: ``assistant.message`` events become turns (their text and
    tool requests), ``tool.execution_complete`` fills outputs, ``session.error`` is the arm's
    error, ``result`` closes the session; ``session.skills_loaded`` proves the offer and
    ``skill.invoked`` (from the session's record) proves a load."""
    summary = CliSummary()
    calls: dict[str, ToolCall] = {}
    listed: list[str] | None = None
    for event in json_lines(stdout):
        kind = event.get("type")
        data = _mapping(event.get("data"))
        if kind == "session.skills_loaded" and listed is None:
            listed = [str(s.get("name")) for s in data.get("skills") or []
                      if isinstance(s, dict) and s.get("source") == "project" and _staged(s, workspace)]
        elif kind == "assistant.message":
            _add_message(summary, data, calls, workspace, offered)
        elif kind == "tool.execution_complete":
            answered = calls.get(str(data.get("toolCallId")))
            if answered is not None:
                outcome, failure = _mapping(data.get("result")), _mapping(data.get("error"))
                answered.output = redact(str(outcome.get("content") or failure.get("message") or ""))
        elif kind == "skill.invoked":
            _loaded(summary, str(data.get("name", "")), offered)
        elif kind == "session.error":
            summary.error = redact(str(data.get("message") or data.get("errorType") or "session error"))
            status = data.get("statusCode")
            if isinstance(status, int) and status in AUTH_STATUSES:
                summary.auth_status = status
        elif kind == "result":
            summary.finished = True
            usage = _mapping(event.get("usage"))
            summary.duration_ms = int(usage.get("sessionDurationMs") or 0)
            if event.get("exitCode") not in (0, None) and summary.error is None:
                summary.error = f"copilot exited with code {event.get('exitCode')}"
    summary.num_turns = len(summary.turns)
    summary.final_text = next((t.text for t in reversed(summary.turns) if t.text), "") or ""
    check_offered(summary, skill_name, listed, "Copilot's session listed as project skills")
    summary.skill_activated = skill_name is not None and skill_name in summary.skills_loaded
    return summary


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _staged(skill: dict[str, Any], workspace: Path) -> bool:
    path = skill.get("path")
    return isinstance(path, str) and workspace_relative(path, workspace).startswith(f"{SKILLS_DIR}/")


def _add_message(summary: CliSummary, data: dict[str, Any], calls: dict[str, ToolCall], workspace: Path,
                 offered: tuple[str, ...]) -> None:
    turn = ModelTurn(text=redact(str(data.get("content") or "")) or None)
    for request in data.get("toolRequests") or []:
        if not isinstance(request, dict):
            continue
        given = request.get("arguments")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        call = ToolCall(str(request.get("name")), args)
        turn.tool_calls.append(call)
        calls[str(request.get("toolCallId"))] = call
        _observe(summary, call, workspace, offered)
    summary.turns.append(turn)


def _observe(summary: CliSummary, call: ToolCall, workspace: Path, offered: tuple[str, ...]) -> None:
    """Record the paths a tool call read, and which offered skills it loaded."""
    args = call.args if isinstance(call.args, dict) else {}
    path = args.get("path")
    if call.name in READ_TOOLS and isinstance(path, str):
        summary.paths_touched.append(workspace_relative(path, workspace))
    for name in offered:
        staged = f"{SKILLS_DIR}/{folder_name(name)}/{SKILL_FILE}"
        if call.name == "skill" and str(args.get("skill", "")) in (name, folder_name(name)):
            _loaded(summary, name, offered)
        elif call.name == "view" and isinstance(path, str) and workspace_relative(path, workspace) == staged:
            _loaded(summary, name, offered)
        elif call.name in SHELL_TOOLS and staged in str(args.get("command", "")):
            _loaded(summary, name, offered)


def _loaded(summary: CliSummary, name: str, offered: tuple[str, ...]) -> None:
    found = next((n for n in offered if name in (n, folder_name(n))), None)
    if found is not None and found not in summary.skills_loaded:
        summary.skills_loaded.append(found)
