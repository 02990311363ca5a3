"""Why a suite produced no results, or errored arms, told as annotations and log lines."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import MissingKeyError, ProviderAuthError, SkillabError, SuiteError
from ..secrets import redact
from .event import Event
from .outcome import SuiteOutcome
from .workflow_commands import Log


@dataclass
class SuiteFailures:
    log: Log
    env: Mapping[str, str]
    event: Event
    # A path as the workspace-relative name annotations and readers need.
    repo_path: Callable[[Path], str]

    def record(self, outcome: SuiteOutcome, exc: Exception) -> tuple[bool, str | None]:
        """Annotate why the suite could not run, into ``outcome.failure``; whether the other
        suites go on (not without a key), and a note for the report."""
        rel_dir, label = outcome.location.rel_dir, outcome.label
        if isinstance(exc, SuiteError):
            return True, self.invalid_suite(outcome, exc)
        if isinstance(exc, ProviderAuthError):
            return False, self.no_credentials(outcome, exc)
        if isinstance(exc, SkillabError):
            outcome.failure = f"{label}: {redact(str(exc), self.env)}"
            self.log.error(outcome.failure, file=f"{rel_dir}/SKILL.md")
            return True, None
        # A parser or engine bug: this suite errors, the others run.
        outcome.failure = (f"{label}: could not be evaluated "
                           f"({type(exc).__name__}: {redact(str(exc), self.env)[:300]})")
        self.log.error(outcome.failure, file=f"{rel_dir}/SKILL.md")
        self.log.line(redact(traceback.format_exc(), self.env))
        return True, None

    def invalid_suite(self, outcome: SuiteOutcome, exc: SuiteError) -> str:
        # Issues name their file relative to the repository, as annotations and readers need.
        issues = [replace(issue, path=Path(self.repo_path(issue.path))) for issue in exc.issues]
        for issue in issues:
            self.log.error(redact(str(issue), self.env), file=str(issue.path), line=issue.line)
        first = issues[0]
        where = f"{first.path}:{first.line}" if first.line else str(first.path)
        outcome.failure = f"{where}: the suite is invalid ({len(issues)} issue(s))"
        return redact(str(first), self.env)

    def no_credentials(self, outcome: SuiteOutcome, exc: ProviderAuthError) -> str:
        message = redact(action_wording(exc), self.env)
        pr = self.event.pull_request
        if pr is not None and pr.is_fork and self.event.name == "pull_request":
            # GitHub withholds secrets from a fork's pull_request run: nothing the contributor
            # can fix, so the check is not failed for it; a maintainer runs it instead.
            message += (
                " — secrets are not passed to workflows triggered from forks, so this pull "
                "request cannot be evaluated here; a maintainer can run the workflow manually"
            )
            self.log.notice(f"skillab did not run: {message}")
            outcome.skipped = message
        else:
            if self.event.name == "pull_request_target":
                # This event runs with the repository's secrets, forks included: the workflow is
                # what left the key out, and only a maintainer can add it.
                message += (
                    " — pull_request_target runs with this repository's secrets, so the workflow does "
                    "not pass this key to the skillab step: add it to the step's `with:` "
                    "(anthropic-api-key, openai-api-key, gemini-api-key) or `env:`"
                )
            self.log.notice(f"skillab did not run: {message}")
            outcome.failure = f"no provider credentials: {message}"
        # With several agents, only this agent's runs stop; the others go on.
        return f"{outcome.label} did not run: {message}" if outcome.agent else f"No suite ran: {message}"

    def log_errored_arms(self, outcome: SuiteOutcome) -> None:
        errors = []
        for record in outcome.log.records if outcome.log is not None else ():
            for arm, result in (("with_skill", record.with_skill), ("without_skill", record.without_skill),
                                ("original", record.original)):
                if result is not None and result.errored and result.error:
                    errors.append(f"{record.case_name} [{arm}]: {result.error}")
            if record.error:
                errors.append(f"{record.case_name}: {record.error}")
        if errors:
            with self.log.group(f"{outcome.label}: {len(errors)} errored arm(s)"):
                for line in errors:
                    self.log.line(redact(line, self.env))


def action_wording(exc: ProviderAuthError) -> str:
    """A missing key said as a workflow gives it (an input, or the step's env), not as a shell
    would (``export ...``)."""
    if not isinstance(exc, MissingKeyError):
        return str(exc)
    from .inputs import INPUTS

    inputs = {spec.name.upper().replace("-", "_"): spec.name for spec in INPUTS if spec.secret}
    name = inputs.get(exc.key_env)
    how = (f"pass the `{name}` input (`{name}: ${{{{ secrets.{exc.key_env} }}}}`) or set "
           f"{exc.key_env} in the step's env" if name else f"set {exc.key_env} in the step's env")
    return f"{exc.needs}: {how}"
