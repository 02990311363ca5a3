"""Preparing a case's workspace from its ``setup``: files first, then commands in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SandboxError
from ..suite.model import Setup
from .process import CommandResult
from .python_runtime import grader_python, grader_python_env
from .workspace import Workspace

SETUP_TIMEOUT_S = 300.0
# How much of a failed command's stderr the error message quotes (its end says most).
_STDERR_TAIL = 500


@dataclass
class SetupResult:
    """Whether the workspace is ready; ``error`` says what stopped it."""

    ok: bool
    error: str | None
    commands: list[CommandResult] = field(default_factory=list)


def prepare(workspace: Workspace, setup: Setup, *, timeout_s: float = SETUP_TIMEOUT_S) -> SetupResult:
    """Write ``setup.files``, then run ``setup.commands`` (each within ``timeout_s``).

    Stops at the first refused path, failed write, or command that does not exit 0.
    """
    try:
        workspace.write_files(setup.files)
    except SandboxError as exc:
        return SetupResult(False, f"setup file refused: {exc}")
    except OSError as exc:
        return SetupResult(False, f"setup file could not be written: {exc}")
    results: list[CommandResult] = []
    python = grader_python(workspace.backend) if setup.user_python and setup.commands else None
    for command in setup.commands:
        if python is None:
            result = workspace.run(command, timeout_s=timeout_s)
        else:
            result = workspace.run(command, timeout_s=timeout_s, read_only=python.read_only,
                                   extra_env=grader_python_env(python))
        results.append(result)
        if not (result.completed and result.exit_code == 0):
            return SetupResult(False, _failure(command, result), results)
    return SetupResult(True, None, results)


def _failure(command: str, result: CommandResult) -> str:
    message = f"setup command {command!r} failed: {result.describe()}"
    tail = result.stderr.strip()[-_STDERR_TAIL:]
    return f"{message}: {tail}" if tail else message
