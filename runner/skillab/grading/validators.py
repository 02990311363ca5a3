"""Validators: shell commands that grade what an arm left in its workspace.

Before they run, the arm's final output is staged as ``./response.txt`` (complete) and as
``$RESPONSE_TEXT`` (cut to what one environment string may hold). A validator's exit code is
its verdict: ``expect_exit_code`` passes, the other of 0/1 fails, and anything else (another
code, a signal, a timeout, a failure to start) is no verdict at all: ``errored``, which keeps
the case out of the lift instead of scoring a broken grader as a model failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.checks import ValidatorResult
from ..sandbox.process import CommandResult
from ..sandbox.workspace import Workspace
from ..suite.model import ValidatorSpec

RESPONSE_FILE = "response.txt"
RESPONSE_ENV = "RESPONSE_TEXT"
# Linux refuses to exec with any single environment string over 32 pages (MAX_ARG_STRLEN,
# 128 KiB), counting "NAME=" and the closing NUL.
ENV_TEXT_LIMIT = 128 * 1024 - len(RESPONSE_ENV) - 2
# Validator output kept in results, per stream (head and tail).
OUTPUT_LIMIT = 4096


def run_validators(
    specs: Sequence[ValidatorSpec], workspace: Workspace, response_text: str
) -> list[ValidatorResult]:
    """Stage the response, then run each validator in the workspace and record its verdict."""
    if not specs:
        return []
    stage_response(workspace, response_text)
    env_text = env_copy(response_text)
    return [_run_one(spec, workspace, env_text) for spec in specs]


def stage_response(workspace: Workspace, response_text: str) -> None:
    """Write ``response.txt`` afresh, whatever the agent left at that path."""
    workspace.put(RESPONSE_FILE, response_text.encode("utf-8", "replace"))


def env_copy(text: str) -> str:
    """``text`` as an environment value: without NULs, cut to ``ENV_TEXT_LIMIT`` UTF-8 bytes
    on a character boundary."""
    data = text.replace("\0", "").encode("utf-8", "replace")[:ENV_TEXT_LIMIT]
    return data.decode("utf-8", "ignore")


def _run_one(spec: ValidatorSpec, workspace: Workspace, env_text: str) -> ValidatorResult:
    extra = {**dict(spec.env), RESPONSE_ENV: env_text}
    result = workspace.run(
        spec.cmd, timeout_s=spec.timeout_s, extra_env=extra, output_limit=OUTPUT_LIMIT
    )
    passed, errored = _verdict(result, spec.expect_exit_code)
    stderr = result.stderr
    if not result.completed or errored:
        note = f"[skillab] validator gave no verdict: {result.describe()}"
        stderr = f"{stderr.rstrip()}\n{note}" if stderr.strip() else note
    return ValidatorResult(
        label=spec.label,
        passed=passed,
        exit_code=result.exit_code,
        expect_exit_code=spec.expect_exit_code,
        stdout=result.stdout,
        stderr=stderr,
        errored=errored,
        duration_ms=result.duration_ms,
    )


def _verdict(result: CommandResult, expected: int) -> tuple[bool, bool]:
    """(passed, errored) for a validator run."""
    if not result.completed:
        return False, True
    if result.exit_code == expected:
        return True, False
    if result.exit_code in (0, 1):
        return False, False
    return False, True
