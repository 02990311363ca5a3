"""A small ``RunLog`` for tests of what reads one (gates, outputs): a whole results document of
no case, with the given top-level fields, read back as ``RunLog.from_json`` reads any."""

from __future__ import annotations

from typing import Any

from skillab.core.runlog import FORMAT, RunLog


def minimal_document(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": FORMAT, "tool": {"name": "skillab", "version": "0"},
        "suite": {"path": "s/eval.yaml", "skill": "s", "skill_hash": "h"},
        "adapter": {"name": "mock"}, "models": {"agent": None}, "isolation": {}, "runs": 1, "pass_k": 1,
        "pass_rate": {"with_skill": None, "without_skill": None, "delta_pts": None},
        "errors": 0, "cases_aggregated": 0, "total_cases": 0,
        "cases_skipped_trigger_only": 0, "verdict": "pass", "verdict_classified": "pass", "outcome_counts": {},
        "statistics": None, "judge_consistency": None, "cache": {"enabled": False, "hits": 0, "arms": 0},
        "usage": {}, "timings": {"started_at": "2026-01-01T00:00:00+00:00",
                                 "finished_at": "2026-01-01T00:00:01+00:00", "wall_ms": 1000},
        "interrupted": False, "planned_cases": 0, "stopped": None, "activation": None, "contaminated_arms": 0,
        "warnings": [], "trigger_only_cases": [], "triggers": None, "criteria": None, "pass_at_k": None,
        "comparison": None, "trend": None, "cases": [],
    }
    for key, value in fields.items():
        doc[key] = {**doc[key], **value} if isinstance(doc.get(key), dict) and isinstance(value, dict) else value
    return doc


def run_log(**fields: Any) -> RunLog:
    return RunLog.from_json(minimal_document(**fields))
