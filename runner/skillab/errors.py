"""The exception tree. Every error a user can fix derives from ``SkillabError``.

The CLI prints a ``SkillabError`` as one line, without a traceback, and exits with its
``exit_code``. Anything else escaping the CLI is a bug in skillab.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class SkillabError(Exception):
    """A problem the user can fix: bad input, missing skill, missing key."""

    exit_code = EXIT_USAGE


class UsageError(SkillabError):
    """A flag or argument combination that cannot work."""


class SkillError(SkillabError):
    """The skill directory cannot be loaded (no SKILL.md, unreadable, bad frontmatter)."""


class OutputError(SkillabError):
    """A finished run's output (results document, report) could not be written: a full disk,
    a quota. The run failed, though no input was wrong; what finished is kept, and the message
    says where."""

    exit_code = EXIT_GATE


@dataclass(frozen=True)
class SuiteIssue:
    """One problem in a suite file, located as precisely as the file allows."""

    path: Path
    message: str
    line: int | None = None
    case: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        subject = []
        if self.case is not None:
            subject.append(f"case {self.case}")
        if self.field:
            subject.append(f"'{self.field}'")
        prefix = f"{where}: " + (" ".join(subject) + " — " if subject else "")
        return prefix + self.message


class SuiteError(SkillabError):
    """A suite file is invalid. Carries every issue found, not only the first."""

    def __init__(self, issues: list[SuiteIssue]):
        if not issues:
            raise ValueError("SuiteError needs at least one issue")
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))

    @property
    def first(self) -> SuiteIssue:
        return self.issues[0]


class SandboxError(SkillabError):
    """A path or command that the sandbox refuses (escapes the workspace, unsafe link)."""


class ProviderError(Exception):
    """A model provider call failed after retries. Marks the arm ``errored``, never failed."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ProviderAuthError(SkillabError):
    """The provider rejected the credentials (401/403) or none are set: stop the run at once."""


class MissingKeyError(ProviderAuthError):
    """No key is set for a model or an agent CLI. ``key_env`` names the variable, so a front end
    says how to give it in its own terms (the CLI: export it; the Action: an input)."""

    def __init__(self, message: str, *, key_env: str, needs: str) -> None:
        super().__init__(message)
        self.key_env = key_env
        self.needs = needs


class ProviderEndpointError(ProviderAuthError):
    """The provider answered 404 (no such model or endpoint): every arm would get the same
    answer, so the run stops as it does for a rejected key."""


class MissingDependencyError(SkillabError):
    """An optional tool (the claude CLI, an SDK) is not installed; the message says how."""
