"""What a BenchFlow verifier installs before it runs, and whether that needs the network.

SkillsBench v1.1 verifiers install their test tools unless ``BENCHFLOW_SKIP_VERIFIER_DEPS=1``::

    if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" != "1" ]; then pip3 install pytest==8.4.1 ...; fi
    if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" = "1" ]; then pytest ...; else ... uvx --with ...; fi

Lines in the branch that runs only without the variable are not network use: skillab sets it
where the tools are already there. The Python distributions that branch installs are kept, so
the grader can check for them and name what is missing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

SKIP_DEPS = "BENCHFLOW_SKIP_VERIFIER_DEPS"
# Commands a verifier cannot run without network.
NETWORK_USE = re.compile(
    r"(?:^|[\s;&|(`])(?:apt-get|apt|apk|yum|dnf|curl|wget|uvx|npx|git\s+clone)\s"
    r"|(?:^|[\s;&|(`])(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b"
    r"|(?:^|[\s;&|(`])uv\s+(?:run|sync|tool|add)\b"
)
_IF = re.compile(r"^\s*if\b")
_ELSE = re.compile(r"^\s*(?:else|elif)\b")
_FI = re.compile(r"^\s*fi\b|;\s*fi\s*$")
# The test says "the variable is not 1" (the install runs in its then-branch).
_NEGATED = re.compile(r"!=|-ne\b|\[\s*!\s|\bif\s+!\s")
_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class VerifierNeeds:
    # (line number, line) of each command that needs the network whatever the variable says.
    network: tuple[tuple[int, str], ...]
    # Python distributions the guarded branch installs (pytest, pytest-json-ctrf, ...).
    guarded_packages: tuple[str, ...]
    # Whether the script reads BENCHFLOW_SKIP_VERIFIER_DEPS at all.
    guarded: bool


def read_needs(script: str) -> VerifierNeeds:
    network: list[tuple[int, str]] = []
    packages: list[str] = []
    # One entry per open ``if``: None for an unrelated one, else whether its current branch is
    # the one that installs.
    stack: list[bool | None] = []
    for number, line in _logical_lines(script):
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if _IF.match(line):
            opens = not _FI.search(line)
            if SKIP_DEPS in line:
                installs_here = bool(_NEGATED.search(line))
                if not opens:  # one line: if ...; then ...; fi
                    _take(line.split("then", 1)[-1], installs_here, number, network, packages)
                    continue
                stack.append(installs_here)
            elif opens:
                stack.append(None)
            continue
        if _ELSE.match(line) and stack:
            if stack[-1] is not None:
                stack[-1] = not stack[-1]
            continue
        if _FI.match(line) and stack:
            stack.pop()
            continue
        guarded = any(frame for frame in stack if frame is not None)
        if not guarded and SKIP_DEPS in line and re.search(r"\]\s*(?:\|\||&&)", line):
            # [ "$BENCHFLOW_SKIP_VERIFIER_DEPS" = 1 ] || pip install ...
            test, operator, rest = re.split(r"\]\s*(\|\||&&)", line, maxsplit=1)
            installs = (operator == "&&") == bool(_NEGATED.search(test))
            _take(rest, installs, number, network, packages)
            continue
        _take(line, guarded, number, network, packages)
    return VerifierNeeds(tuple(network), tuple(dict.fromkeys(packages)), SKIP_DEPS in script)


def _logical_lines(script: str) -> list[tuple[int, str]]:
    """(first line number, text) with backslash-continued lines joined."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(script.splitlines(), start=1):
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append((start, pending + raw))
        pending = ""
    if pending:
        lines.append((start, pending))
    return lines


def _take(text: str, guarded: bool, number: int, network: list[tuple[int, str]], packages: list[str]) -> None:
    if not NETWORK_USE.search(text):
        return
    if not guarded:
        network.append((number, text.strip()))
        return
    packages += _python_packages(text)


def _uvx_tool(words: list[str]) -> list[str]:
    """The tool ``uvx [--with X]... [--from X] TOOL`` runs (its own distribution)."""
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--with", "--from", "--python", "-p", "--index-url"):
            skip = True
        elif not word.startswith("-"):
            return [word]
    return []


def _python_packages(text: str) -> list[str]:
    """Distributions named by ``pip install`` arguments or ``uvx --with`` options."""
    found: list[str] = []
    for command in re.split(r"\s*(?:;|&&|\|\||\|)\s*", text):
        try:
            words = shlex.split(command, comments=True)
        except ValueError:
            continue
        for i, word in enumerate(words):
            if word == "install" and (words[i - 1:i] in (["pip"], ["pip3"]) or words[i - 2:i] == ["-m", "pip"]):
                found += [w for w in words[i + 1:] if not w.startswith("-")]
            elif word == "--with" and i + 1 < len(words):
                found.append(words[i + 1])
            elif word == "uvx":
                found += _uvx_tool(words[i + 1:])
    names = []
    for requirement in found:
        match = _REQUIREMENT.match(requirement)
        if match:
            names.append(match.group(0))
    return names
