"""The agent adapter's tools, confined to the arm's workspace.

Every path goes through ``safe_join``; the shell runs under the sandbox's rules (scrubbed
environment, timeout with a process-group kill, capped output, no network). A tool never raises
into the agent loop: a refused path, a missing file or a failed command comes back to the model
as an error result it can react to, the way a real runtime reports it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.messages import ToolSpec
from ..errors import SandboxError
from ..sandbox.backend import Backend
from ..sandbox.environment import inherited
from ..sandbox.process import CommandResult
from ..sandbox.workspace import run_in, safe_join
from ..secrets import redact
from .skill_view import normalize

# Part of the adapter identity: changing a tool's behaviour or description changes baselines.
TOOLSET_VERSION = "1"
DEFAULT_SHELL_TIMEOUT_S = 120.0
MAX_SHELL_TIMEOUT_S = 600.0
# What one tool result may hand back to the model, in characters.
RESULT_LIMIT = 30_000
# How much of a file read_file reads at most.
READ_LIMIT_BYTES = 4 * RESULT_LIMIT
# The largest file edit_file reads whole.
EDIT_LIMIT_BYTES = 16 << 20
SHELL_OUTPUT_LIMIT = 65_536

TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "run_shell",
        "Run a bash command in the workspace (the current directory) and return its exit code, "
        "stdout and stderr. There is no network access.",
        {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command to run."},
                "timeout_s": {
                    "type": "number",
                    "description": "Seconds before the command is killed "
                    f"(default {DEFAULT_SHELL_TIMEOUT_S:g}).",
                },
            },
            "required": ["command"],
        },
    ),
    ToolSpec(
        "read_file",
        "Read a UTF-8 text file in the workspace. Paths are relative to the workspace. A long "
        "file is cut; read parts of it with run_shell (sed, head, tail).",
        {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Relative path of the file."}},
            "required": ["path"],
        },
    ),
    ToolSpec(
        "write_file",
        "Create or overwrite a text file in the workspace (parent folders are created).",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Relative path of the file."},
                "content": {"type": "string", "description": "The complete new content."},
            },
            "required": ["path", "content"],
        },
    ),
    ToolSpec(
        "edit_file",
        "Replace an exact piece of text in a file. old_text must occur exactly once in the file; "
        "include enough surrounding lines to make it unique.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Relative path of the file."},
                "old_text": {"type": "string", "description": "The exact text to replace."},
                "new_text": {"type": "string", "description": "The text to put in its place."},
            },
            "required": ["path", "old_text", "new_text"],
        },
    ),
    ToolSpec(
        "list_dir",
        "List a directory of the workspace; folders end with '/'.",
        {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Relative path (default '.', the workspace).",
                }
            },
        },
    ),
)


@dataclass
class ToolRun:
    """A tool's result for the model, and the workspace paths it read or listed."""

    output: str
    is_error: bool = False
    paths: list[str] = field(default_factory=list)


class ToolError(Exception):
    """A tool call the tool refuses or cannot carry out; its message goes to the model."""


class Toolbox:
    """The tools of one arm, bound to its workspace root; its shell runs under ``sandbox`` (the
    run's, ``ArmRequest.sandbox``; None: ``default_backend``)."""

    def __init__(
        self,
        root: Path,
        *,
        shell_timeout_s: float = DEFAULT_SHELL_TIMEOUT_S,
        hide: tuple[Path, ...] = (),
        sandbox: Backend | None = None,
    ):
        self.root = Path(root)
        self.shell_timeout_s = shell_timeout_s
        self.hide = hide
        self.sandbox = sandbox
        # The runner's environment as this arm's shell commands see it, read once.
        self.inherited = inherited()
        self._tools: dict[str, Callable[[dict[str, Any]], ToolRun]] = {
            "run_shell": self._run_shell,
            "read_file": self._read_file,
            "write_file": self._write_file,
            "edit_file": self._edit_file,
            "list_dir": self._list_dir,
        }

    def call(self, name: str, arguments: dict[str, Any] | str) -> ToolRun:
        """Run tool ``name``; every failure becomes an error result, never an exception."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolRun(f"error: unknown tool {name!r} (tools: {', '.join(self._tools)})", True)
        if not isinstance(arguments, dict):
            return ToolRun("error: the tool arguments must be a JSON object", True)
        try:
            run = tool(arguments)
        except (ToolError, SandboxError) as exc:
            return ToolRun(f"error: {exc}", True, _attempted_path(arguments, name))
        except OSError as exc:
            return ToolRun(f"error: {exc.strerror or exc}", True, _attempted_path(arguments, name))
        except UnicodeError as exc:  # text the model sent that cannot be written as UTF-8
            return ToolRun(f"error: {exc}", True, _attempted_path(arguments, name))
        run.output = _cap(redact(run.output))
        return run

    # --- the tools ------------------------------------------------------------------------------

    def _run_shell(self, args: dict[str, Any]) -> ToolRun:
        command = _string(args, "command")
        timeout = _timeout(args.get("timeout_s"), self.shell_timeout_s)
        result = self._shell(command, timeout)
        if result.spawn_error is not None:
            return ToolRun(f"error: the command could not start: {result.spawn_error}", True)
        parts = [
            (
                f"exit code: {result.exit_code}"
                if not result.timed_out
                else f"timed out after {timeout:g}s (killed)"
            )
        ]
        if result.stdout:
            parts.append(f"stdout:\n{result.stdout}")
        if result.stderr:
            parts.append(f"stderr:\n{result.stderr}")
        if result.truncated:
            parts.append("(output truncated)")
        return ToolRun("\n".join(parts), is_error=result.timed_out or result.exit_code != 0)

    def _shell(self, command: str, timeout_s: float) -> CommandResult:
        return run_in(
            self.root,
            command,
            timeout_s=timeout_s,
            output_limit=SHELL_OUTPUT_LIMIT,
            hide=self.hide,
            backend=self.sandbox,
            base_env=self.inherited,
        )

    def _read_file(self, args: dict[str, Any]) -> ToolRun:
        rel = _string(args, "path")
        path = safe_join(self.root, rel)
        if path.is_dir():
            raise ToolError(f"{rel} is a directory; use list_dir")
        if not path.is_file():
            raise ToolError(f"{rel}: no such file")
        with path.open("rb") as handle:
            data = handle.read(READ_LIMIT_BYTES + 1)
        cut = len(data) > READ_LIMIT_BYTES
        data = data[:READ_LIMIT_BYTES]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # A cut may split the last character; anything earlier means binary content.
            if not (cut and exc.start >= len(data) - 3):
                raise ToolError(f"{rel} is not UTF-8 text") from None
            text = data[: exc.start].decode("utf-8")
        if cut:
            text += f"\n[... cut at {READ_LIMIT_BYTES} bytes; read the rest with run_shell ...]"
        return ToolRun(text, paths=[normalize(rel)])

    def _write_file(self, args: dict[str, Any]) -> ToolRun:
        rel = _string(args, "path")
        content = _string(args, "content", allow_empty=True)
        path = safe_join(self.root, rel)
        if path.is_dir():
            raise ToolError(f"{rel} is a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        # Check again now the parents exist: a link among them must not lead out.
        path = safe_join(self.root, rel)
        data = content.encode("utf-8")
        with os.fdopen(_open_for_write(path, rel), "wb") as handle:
            handle.write(data)
        return ToolRun(f"wrote {len(data)} bytes to {normalize(rel)}")

    def _edit_file(self, args: dict[str, Any]) -> ToolRun:
        rel = _string(args, "path")
        old = _string(args, "old_text")
        new = _string(args, "new_text", allow_empty=True)
        path = safe_join(self.root, rel)
        if not path.is_file():
            raise ToolError(f"{rel}: no such file")
        if path.stat().st_size > EDIT_LIMIT_BYTES:
            # Read whole into the runner's memory (a sparse file costs the agent nothing).
            raise ToolError(f"{rel} is over {EDIT_LIMIT_BYTES >> 20} MiB; edit it with run_shell")
        text = path.read_text(encoding="utf-8")
        found = text.count(old)
        if found != 1:
            where = "does not occur" if found == 0 else f"occurs {found} times"
            raise ToolError(f"old_text {where} in {rel}; it must match exactly once")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        return ToolRun(f"edited {normalize(rel)}", paths=[normalize(rel)])

    def _list_dir(self, args: dict[str, Any]) -> ToolRun:
        rel = args.get("path") or "."
        if not isinstance(rel, str):
            raise ToolError("'path' must be a string")
        path = self.root if normalize(rel) == "." else safe_join(self.root, rel)
        if not path.is_dir():
            raise ToolError(f"{rel}: no such directory")
        entries = sorted(
            name + ("/" if os.path.isdir(os.path.join(path, name)) else "")
            for name in os.listdir(path)
        )
        return ToolRun("\n".join(entries) or "(empty)", paths=[normalize(rel)])


def _open_for_write(path: Path, rel: str) -> int:
    """``path`` opened for writing from its start, if it is (or becomes) a regular file. Opening
    is non-blocking: a FIFO the agent made would otherwise hang the runner, with no reader ever."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, or a socket
            raise ToolError(f"{rel} is not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(f"{rel} is not a regular file")
    os.ftruncate(fd, 0)
    return fd


def _string(args: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = args.get(key)
    if not isinstance(value, str) or (not allow_empty and not value):
        raise ToolError(
            f"'{key}' is required and must be a {'string' if allow_empty else 'non-empty string'}"
        )
    return value


def _timeout(value: Any, default: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return min(float(value), MAX_SHELL_TIMEOUT_S)
    return default


def _attempted_path(args: dict[str, Any], tool: str) -> list[str]:
    """A refused read or listing is still an attempt the contamination audit should see."""
    rel = args.get("path")
    if tool in ("read_file", "list_dir", "edit_file") and isinstance(rel, str) and rel.strip():
        return [normalize(rel)]
    return []


def _cap(text: str) -> str:
    if len(text) <= RESULT_LIMIT:
        return text
    return f"{text[:RESULT_LIMIT]}\n[... {len(text) - RESULT_LIMIT} more characters not shown]"
