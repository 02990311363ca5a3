"""What one Action run gathers on its way to the report, the outputs and the gate."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.ablation import AblationDocument
from ..core.routing import RouteDocument
from ..core.runlog import RunLog
from ..errors import SkillabError
from ..reports.markdown_view import FailedSuite
from .discovery import Selection, SuiteLocation


@dataclass
class SuiteOutcome:
    """What happened to one selected suite: its run's log (as written and read back), or the
    reason there is none."""

    location: SuiteLocation
    log: RunLog | None = None
    results_file: Path | None = None
    failure: str | None = None
    # Why the suite was not run without that failing the check (a fork's pull request, whose
    # workflow GitHub gives no secrets).
    skipped: str | None = None
    # The agent, when several ran (``adapter: a,b``): each suite has one outcome per agent.
    agent: str | None = None

    @property
    def label(self) -> str:
        """The suite as messages name it, with its agent when several ran."""
        rel = self.location.rel_dir
        return f"{rel} [{self.agent}]" if self.agent else rel

    def report_row(self) -> FailedSuite | None:
        """The report's row for a suite that failed without a log: verdict ``error``, nothing
        measured."""
        if self.log is not None or not self.failure:
            return None
        return FailedSuite(self.location.rel_dir, self.agent)


@dataclass
class ActionRun:
    """Everything one invocation gathers."""

    selection: Selection = field(default_factory=lambda: Selection(()))
    outcomes: list[SuiteOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Reasons the check fails; the first becomes the one-line exit reason.
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False
    # The usage error that stopped the run before its suites (its exit code wins).
    stopped: SkillabError | None = None
    # ``skillab.ablation/1`` documents of the ``ablate`` input, each with ``changed_in_pr``.
    ablations: list[AblationDocument] = field(default_factory=list)
    # The ``route`` input's routing diffs, one per evaluated skill.
    routes: list[RouteDocument] = field(default_factory=list)

    def failed_suites(self, shard: object | None) -> list[dict[str, Any]]:
        """A shard job's suites that produced no document, as its results file lists them for
        the merge job to report (none outside a shard job)."""
        if shard is None:
            return []
        return [{"suite": o.location.rel_dir, "agent": o.agent, "failure": o.failure, "shard": str(shard)}
                for o in self.outcomes if o.log is None and o.failure]

    @property
    def logs(self) -> list[RunLog]:
        return [o.log for o in self.outcomes if o.log is not None]

    @property
    def failure_rows(self) -> list[FailedSuite]:
        """A row for each suite that failed without a log, after the suites' own."""
        return [row for row in (o.report_row() for o in self.outcomes) if row is not None]
