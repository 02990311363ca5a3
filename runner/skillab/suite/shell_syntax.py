"""Shell commands of a suite that bash cannot parse: found by ``skillab validate`` before a run
records every arm of their case as ``error``. ``bash -n`` parses without executing anything."""

from __future__ import annotations

import shutil
import subprocess

from ..errors import SuiteIssue
from .model import Case, Suite

_TIMEOUT_S = 10


def nul_byte_issues(suite: Suite) -> list[SuiteIssue]:
    """One located issue per setup command or validator holding a NUL byte: no process can be
    given one, so it could never run (and ``bash -n`` cannot even be asked)."""
    return [SuiteIssue(suite.path, "contains a NUL byte, which no command can hold — remove it", line=case.line,
                       case=case.name, field=field)
            for case, field, cmd in _commands(suite) if "\0" in cmd]


def _commands(suite: Suite) -> list[tuple[Case, str, str]]:
    commands = []
    for case in suite.cases:
        commands += [(case, f"setup command {i + 1}", cmd) for i, cmd in enumerate(case.setup.commands)]
        commands += [(case, f"validators[{i}].cmd ({v.label!r})", v.cmd) for i, v in enumerate(case.validators)]
    return commands


def shell_syntax_warnings(suite: Suite) -> list[str]:
    """One located line per setup command or validator whose syntax bash rejects."""
    bash = shutil.which("bash", path="/usr/bin:/bin")
    if bash is None:
        return []
    commands = [c for c in _commands(suite) if "\0" not in c[2]]
    # One bash for the whole suite, each command a function body, when they all parse (the usual
    # case: validate stays fast); one bash per command only to find the ones that do not.
    whole = "".join(f"f{i}() {{\n{cmd}\n}}\n" for i, (_, _, cmd) in enumerate(commands))
    if not commands or _syntax_error(bash, whole) is None:
        return []
    warnings = []
    for case, field, cmd in commands:
        problem = _syntax_error(bash, cmd)
        if problem:
            where = f"{suite.path}:{case.line}" if case.line else str(suite.path)
            warnings.append(f"{where}: case {case.name} {field} — bash cannot parse it: {problem}; "
                            "it will give no verdict, so the case will be an error in every arm")
    return warnings


def _syntax_error(bash: str, cmd: str) -> str | None:
    try:
        done = subprocess.run([bash, "-n", "-c", cmd], capture_output=True, text=True, errors="replace",
                              env={"PATH": "/usr/bin:/bin"}, timeout=_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None  # cannot tell; the run will say
    if done.returncode == 0:
        return None
    lines = [line.split(": ", 2)[-1] if line.startswith(bash) else line
             for line in done.stderr.strip().splitlines()]
    return "; ".join(lines) or f"exit code {done.returncode}"
