"""A document of a run that stopped before its plan was done (Ctrl-C, the cost cap, --stop-early).

Every report puts the same words in its headline in place of a verdict; this module is light
on purpose, so any report can import it without the engine.
"""

from __future__ import annotations

from typing import Any

from ..core.runlog import RunLog


def interruption(doc: dict[str, Any]) -> str | None:
    """``interrupted: 33 of 120 cases`` for a partial document, the headline every report shows
    in place of a verdict; None for a complete run."""
    if not doc.get("interrupted"):
        return None
    finished = int(doc.get("total_cases", len(doc.get("cases", []))))
    return _interrupted(finished, doc.get("planned_cases"), doc.get("stopped"))


def run_interruption(log: RunLog) -> str | None:
    """``interruption`` of a typed run."""
    if not log.settings.interrupted:
        return None
    return _interrupted(log.summary.aggregate.total_cases, log.settings.planned_cases, log.settings.stopped)


def _interrupted(finished: int, planned: int | None, stopped: str | None) -> str:
    text = f"interrupted: {finished} of {planned if planned is not None else '?'} cases"
    return text + (f" ({stopped})" if stopped else "")


def early_stop(doc: dict[str, Any]) -> str | None:
    """``stopped at 14 of 40 cases: the lift sentence could no longer change; saved ~$X (N model
    calls)``, and that the case lists and the verdict cover the cases that ran; None otherwise."""
    block = doc.get("stop_early") or {}
    if not block.get("stopped") or not block.get("sentence"):
        return None
    return _early(block["sentence"], block["cases_ran"])


def run_early_stop(log: RunLog) -> str | None:
    """``early_stop`` of a typed run."""
    block = log.settings.stop_early
    if block is None or not block.stopped or not block.sentence:
        return None
    return _early(block.sentence, block.cases_ran)


def _early(sentence: str, cases_ran: int) -> str:
    return f"{sentence}; the case lists and the verdict cover the {cases_ran} cases that ran"
