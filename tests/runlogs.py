"""Run logs built in a test the way a run builds them: typed case records and settings, and the
summary ``summarize`` derives from them. A reporter test renders these, not a hand-written dict.
``summary_log`` is a run of no case whose summary fields a test sets (for gates and outputs)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from skillab.core.records import ArmRecord, CaseRecord, Outcome
from skillab.core.run_info import AdapterInfo, IsolationInfo, ModelsInfo, SuiteInfo
from skillab.core.runlog import RunLog, RunSettings
from skillab.core.statistics import LiftStatistics
from skillab.core.usage import Usage
from skillab.scoring.summary import summarize

# (with skill passed, without skill passed) of each graded outcome.
PASSES = {"flip_to_pass": (True, False), "pass_kept": (True, True), "fail_kept": (False, False),
          "flip_to_fail": (False, True)}


def arm(passed: bool, **changes: Any) -> ArmRecord:
    return replace(ArmRecord(passed=passed, errored=False, duration_ms=1200, turns=2, tool_call_count=1,
                             usage=Usage(input_tokens=100, output_tokens=20), final_output="an answer"), **changes)


def case(name: str, outcome: Outcome, *, run_index: int = 0, tags: tuple[str, ...] = (),
         with_skill: dict[str, Any] | None = None, without_skill: dict[str, Any] | None = None) -> CaseRecord:
    """A (case, run) record whose arms passed as ``outcome`` says; an ``error`` case's skill arm errored."""
    if outcome == "error":
        with_arm = arm(False, errored=True, error="provider returned HTTP 529 after 4 attempts")
        without_arm = arm(True)
    else:
        with_arm, without_arm = (arm(passed) for passed in PASSES[outcome])
    return CaseRecord(name, outcome, replace(with_arm, **(with_skill or {})),
                      replace(without_arm, **(without_skill or {})), run_index=run_index, tags=tags)


def run_log(records: list[CaseRecord], **settings: Any) -> RunLog:
    """The log of ``records`` run with these settings (``RunSettings`` fields) over the defaults."""
    base = RunSettings(
        tool_version="0.1.0",
        suite=SuiteInfo(path="skills/s/eval.yaml", format="eval.yaml", skill="s", skill_dir="skills/s",
                        skill_hash="ab" * 32),
        adapter=AdapterInfo(name="llm", identity={"adapter": "llm"}),
        models=ModelsInfo(agent="m", judge=None, judge_prompt_sha256=None),
        isolation=IsolationInfo(network="none", backend="bwrap", detail="test"),
        runs=1, pass_k=1, trigger_only=(), cache_enabled=False, cache_hits=0, cache_arms=0, judge_usage=None,
        started_at=datetime(2026, 11, 22, tzinfo=UTC), finished_at=datetime(2026, 11, 22, 0, 1, tzinfo=UTC),
    )
    return summarize(replace(base, **settings), records)


def summary_log(*, verdict: str = "pass", delta_pts: float | None = None,
                statistics: LiftStatistics | None = None) -> RunLog:
    base = run_log([])
    aggregate = base.summary.aggregate
    aggregate = replace(aggregate, pass_rate=replace(aggregate.pass_rate, delta_pts=delta_pts))
    return replace(base, summary=replace(base.summary, verdict=verdict, aggregate=aggregate, statistics=statistics))


def lift_statistics(delta_pts: float | None, ci95: tuple[float, float] | None) -> LiftStatistics:
    """Statistics with an interval and nothing else measured (no power block)."""
    return LiftStatistics(n_cases=0, n_records=0, flip_to_pass=0, flip_to_fail=0, delta_pts=delta_pts,
                          lift_pts=delta_pts, ci95=ci95, p_value=None, mcnemar_p=None, method="sign-flip",
                          distinguishable=False, summary=None)
