"""What every report discloses beside a run's lift, in one wording: the counts behind it (what
errored, what was left out and why, what came from the cache) and the sandbox its commands ran
in. The markdown report and the HTML report both say it."""

from __future__ import annotations

from ..core.run_info import IsolationInfo
from ..core.runlog import RunLog, RunSettings


def disclosure_counts(*, errors: int, skipped_apples_oranges: int, trigger_only: int, cache_hits: int,
                      contaminated_arms: int, cases_aggregated: int, total_cases: int) -> list[str]:
    return [
        f"{errors} errored",
        f"{skipped_apples_oranges} skipped (apples-to-oranges)",
        f"{trigger_only} trigger-only",
        f"{cache_hits} cached baselines",
        f"{contaminated_arms} contaminated arms",
        f"{cases_aggregated} of {total_cases} cases aggregated",
    ]


def run_disclosure_counts(log: RunLog) -> list[str]:
    aggregate = log.summary.aggregate
    return disclosure_counts(errors=aggregate.errors, skipped_apples_oranges=aggregate.cases_skipped_apples_oranges,
                             trigger_only=log.summary.cases_skipped_trigger_only, cache_hits=log.settings.cache_hits,
                             contaminated_arms=log.summary.contaminated_arms,
                             cases_aggregated=aggregate.cases_aggregated, total_cases=aggregate.total_cases)


def sandbox_label(isolation: IsolationInfo) -> str:
    """The backend the suite's commands ran under; ``unsandboxed`` for none."""
    return "unsandboxed" if isolation.unsandboxed else isolation.backend or "?"


def runs_span(settings: RunSettings) -> str:
    """The runs a case got: "3", or "2–3" when --adaptive-runs gave cases whose arms agreed fewer."""
    runs = settings.runs or 1
    cut = settings.adaptive_runs
    return f"{cut.settle_after}–{runs}" if cut is not None and cut.cases_cut else str(runs)
