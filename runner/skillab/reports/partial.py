"""A run that stopped before its plan was done (Ctrl-C, the cost cap, --stop-early).

Every report puts the same words in its headline in place of a verdict; this module is light
on purpose, so any report can import it without the engine.
"""

from __future__ import annotations

from ..core.runlog import RunLog


def interruption(log: RunLog) -> str | None:
    """``interrupted: 33 of 120 cases`` for a partial run (or what failed once its arms had
    run), the headline every report shows in place of a verdict; None for a complete run."""
    if not log.interrupted:
        return None
    # The document writes the records' count when the run named no plan.
    planned = log.settings.planned_cases
    of = f"{log.summary.aggregate.total_cases} of {len(log.records) if planned is None else planned} cases"
    if log.settings.failure is not None:
        return f"{log.settings.failure} ({of} kept)"
    return f"interrupted: {of}" + (f" ({log.stopped})" if log.stopped else "")


def early_stop(log: RunLog) -> str | None:
    """``stopped at 14 of 40 cases: the lift sentence could no longer change; saved ~$X (N model
    calls)``, and that the case lists and the verdict cover the cases that ran; then what
    ``--adaptive-runs`` saved, when it cut a case; None when neither saved anything."""
    block = log.settings.stop_early
    adaptive = log.settings.adaptive_runs
    cut = adaptive.sentence if adaptive is not None and adaptive.cases_cut else None
    if block is None or not block.stopped or not block.sentence:
        return cut
    stop = f"{block.sentence}; the case lists and the verdict cover the {block.cases_ran} cases that ran"
    return stop if cut is None else f"{stop}. {cut[0].upper()}{cut[1:]}"
