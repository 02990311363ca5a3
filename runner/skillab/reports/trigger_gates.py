"""The trigger gates (``--min-trigger-recall``, ``--max-false-trigger-rate``): they compare the
point estimates of a suite's ``triggers`` block; a suite without trigger queries is not gated."""

from __future__ import annotations

from typing import Any

from ..core.runlog import RunLog


def only_triggers(doc: dict[str, Any]) -> bool:
    """A suite whose only cases are trigger queries: it has no A/B verdict to gate on."""
    return not doc.get("cases") and not doc.get("total_cases") and bool(doc.get("triggers"))


def run_only_triggers(log: RunLog) -> bool:
    """``only_triggers`` of a typed run."""
    return not log.records and not log.summary.aggregate.total_cases and log.settings.triggers is not None


def trigger_gate_failures(doc: dict[str, Any], min_recall: float | None,
                          max_false_rate: float | None) -> list[str]:
    block = doc.get("triggers")
    if not block or (min_recall is None and max_false_rate is None):
        return []
    skill = doc["suite"]["skill"]
    metrics = block["metrics"]
    reasons = []
    recall = metrics["recall"]["value"]
    if min_recall is not None and block["query_count"]["should_trigger"]:
        if recall is None:
            reasons.append(f"{skill}: no trigger recall was measured (minimum {min_recall:.2f})")
        elif recall < min_recall:
            reasons.append(f"{skill}: trigger recall {recall:.2f} is below the minimum {min_recall:.2f}")
    false_rate = metrics["false_trigger_rate"]["value"]
    if max_false_rate is not None and block["query_count"]["should_not_trigger"]:
        if false_rate is None:
            reasons.append(f"{skill}: no false-trigger rate was measured (maximum {max_false_rate:.2f})")
        elif false_rate > max_false_rate:
            reasons.append(f"{skill}: false-trigger rate {false_rate:.2f} is above the maximum "
                           f"{max_false_rate:.2f}")
    return reasons
