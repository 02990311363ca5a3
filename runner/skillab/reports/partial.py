"""A document of a run that stopped before its plan was done (Ctrl-C, the cost cap, --stop-early).

Every report puts the same words in its headline in place of a verdict; this module is light
on purpose, so any report can import it without the engine.
"""

from __future__ import annotations

from typing import Any


def interruption(doc: dict[str, Any]) -> str | None:
    """``interrupted: 33 of 120 cases`` for a partial document, the headline every report shows
    in place of a verdict; None for a complete run."""
    if not doc.get("interrupted"):
        return None
    planned = doc.get("planned_cases")
    finished = int(doc.get("total_cases", len(doc.get("cases", []))))
    text = f"interrupted: {finished} of {planned if planned is not None else '?'} cases"
    return text + (f" ({doc['stopped']})" if doc.get("stopped") else "")


def early_stop(doc: dict[str, Any]) -> str | None:
    """``stopped at 14 of 40 cases: the lift sentence could no longer change; saved ~$X (N model
    calls)``, and that the case lists and the verdict cover the cases that ran; None otherwise."""
    block = doc.get("stop_early") or {}
    if not block.get("stopped") or not block.get("sentence"):
        return None
    return (f"{block['sentence']}; the case lists and the verdict cover the {block['cases_ran']} "
            "cases that ran")
