"""A small ``RunLog`` for tests of what reads one (gates, outputs): a run of no case, read from
a whole results document as ``RunLog.from_json`` reads any, with the summary fields a test sets."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from skillab.core.runlog import FORMAT, RunLog
from skillab.core.statistics import LiftStatistics

_USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0,
          "total_tokens": 0, "cost_usd": None}


def minimal_document() -> dict[str, Any]:
    return {
        "format": FORMAT, "tool": {"name": "skillab", "version": "0"},
        "suite": {"path": "s/eval.yaml", "format": "eval.yaml", "skill": "s", "skill_dir": "s",
                  "skill_hash": "h"},
        "adapter": {"name": "mock", "identity": {}},
        "models": {"agent": None, "judge": None, "judge_prompt_sha256": None},
        "isolation": {"network": "none", "detail": "", "pid_namespace": None}, "runs": 1, "pass_k": 1,
        "pass_rate": {"with_skill": None, "without_skill": None, "delta_pts": None},
        **{key: None for key in ("duration_ms", "turns", "tokens", "tool_calls", "duration_ms_correctness_gated",
                                 "turns_correctness_gated", "tokens_correctness_gated",
                                 "tool_calls_correctness_gated")},
        "errors": 0, "error_dominated": False, "cases_aggregated": 0, "cases_correctness_gated": 0,
        "cases_skipped_apples_oranges": 0, "total_cases": 0,
        "cases_skipped_trigger_only": 0, "verdict": "pass", "verdict_classified": "pass", "outcome_counts": {},
        "statistics": None, "judge_consistency": None, "cache": {"enabled": False, "hits": 0, "arms": 0},
        "usage": {"with_skill": _USAGE, "without_skill": _USAGE, "original": None, "judge": None, "total": _USAGE},
        "timings": {"started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:00:01+00:00",
                    "wall_ms": 1000},
        "interrupted": False, "planned_cases": 0, "stopped": None, "activation": None, "contaminated_arms": 0,
        "warnings": [], "trigger_only_cases": [], "triggers": None, "criteria": None, "pass_at_k": None,
        "comparison": None, "trend": None, "cases": [],
    }


def run_log(*, verdict: str = "pass", delta_pts: float | None = None,
            statistics: LiftStatistics | None = None) -> RunLog:
    base = RunLog.from_json(minimal_document())
    aggregate = base.summary.aggregate
    aggregate = replace(aggregate, pass_rate=replace(aggregate.pass_rate, delta_pts=delta_pts))
    return replace(base, summary=replace(base.summary, verdict=verdict, aggregate=aggregate, statistics=statistics))


def lift_statistics(delta_pts: float | None, ci95: tuple[float, float] | None) -> LiftStatistics:
    """Statistics with an interval and nothing else measured (no power block)."""
    return LiftStatistics(n_cases=0, n_records=0, flip_to_pass=0, flip_to_fail=0, delta_pts=delta_pts,
                          lift_pts=delta_pts, ci95=ci95, p_value=None, mcnemar_p=None, method="sign-flip",
                          distinguishable=False, summary=None)
