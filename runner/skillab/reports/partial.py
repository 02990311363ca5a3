"""A document of a run that stopped before its plan was done (Ctrl-C, the cost cap, --stop-early).

Every report puts the same words in its headline in place of a verdict; this module is light
on purpose, so any report can import it without the engine. Each rule reads a ``RunLog``; the
results document's dict is read too until every report reads ``RunLog``.
"""

from __future__ import annotations

from typing import Any

from ..core.runlog import RunLog


def interruption(run: RunLog | dict[str, Any]) -> str | None:
    """``interrupted: 33 of 120 cases`` for a partial run, the headline every report shows
    in place of a verdict; None for a complete run."""
    if isinstance(run, RunLog):
        if not run.interrupted:
            return None
        planned = run.settings.planned_cases
        # The document writes the records' count when the run named no plan.
        return _headline(run.summary.aggregate.total_cases, len(run.records) if planned is None else planned,
                         run.stopped)
    if not run.get("interrupted"):
        return None
    return _headline(int(run.get("total_cases", len(run.get("cases", [])))), run.get("planned_cases"),
                     run.get("stopped"))


def _headline(finished: int, planned: int | None, stopped: str | None) -> str:
    text = f"interrupted: {finished} of {planned if planned is not None else '?'} cases"
    return text + (f" ({stopped})" if stopped else "")


def early_stop(run: RunLog | dict[str, Any]) -> str | None:
    """``stopped at 14 of 40 cases: the lift sentence could no longer change; saved ~$X (N model
    calls)``, and that the case lists and the verdict cover the cases that ran; None otherwise."""
    if isinstance(run, RunLog):
        stop = run.settings.stop_early
        if stop is None or not stop.stopped or not stop.sentence:
            return None
        return _stopped_early(stop.sentence, stop.cases_ran)
    block = run.get("stop_early") or {}
    if not block.get("stopped") or not block.get("sentence"):
        return None
    return _stopped_early(block["sentence"], block["cases_ran"])


def _stopped_early(sentence: str, cases_ran: int) -> str:
    return f"{sentence}; the case lists and the verdict cover the {cases_ran} cases that ran"
