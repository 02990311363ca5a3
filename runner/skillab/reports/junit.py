"""JUnit XML: one test suite per skill, one test case per (case, run), judged on the outcome.

CI dashboards read "failure" as "the change made something worse", so a case fails when the skill
did not deliver (``flip_to_fail`` or ``fail_kept``) and errors when it could not be measured.
Each trigger query is a test case too, failing when it was not routed as labelled every time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from junit_xml import TestCase, TestSuite, to_xml_report_string

from ..core.records import ArmRecord, CaseRecord
from ..core.runlog import RunLog
from .findings import failed_checks, judge_reason
from .partial import early_stop, interruption

FAILING = {"flip_to_fail": "this run passed without the skill and failed with it",
           "fail_kept": "the agent fails this case with and without the skill"}


def render_junit(logs: Sequence[RunLog]) -> str:
    return to_xml_report_string([_suite(log) for log in logs])


def write_junit(logs: Sequence[RunLog], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_junit(logs), encoding="utf-8")


def _suite(log: RunLog) -> TestSuite:
    suite = log.settings.suite
    cases = [_case(record, log) for record in log.records]
    cases += _trigger_cases(log)
    stopped = interruption(log)
    if stopped:
        # A partial run must not read green on a dashboard that counts only failures.
        partial = TestCase(name="run complete", classname=f"skillab.{suite.skill}")
        partial.add_error_info(message=stopped)
        cases.append(partial)
    found = TestSuite(f"skillab: {suite.skill}", cases, file=suite.path)
    early = early_stop(log)
    if early:
        found.properties = {"stop_early": early}
    return found


def _case(record: CaseRecord, log: RunLog) -> TestCase:
    name = record.case_name
    if log.settings.runs > 1:
        name += f" [run {record.run_index + 1}]"
    case = TestCase(name=name, classname=f"skillab.{log.settings.suite.skill}",
                    elapsed_sec=record.with_skill.duration_ms / 1000, stdout=f"outcome: {record.outcome}")
    if record.outcome == "error":
        case.add_error_info(message=record.error or record.with_skill.error or record.without_skill.error
                            or "an arm could not be graded")
    elif record.outcome in FAILING:
        case.add_failure_info(message=f"{record.outcome}: {FAILING[record.outcome]}",
                              output=_failed_checks(record.with_skill))
    return case


def _trigger_cases(log: RunLog) -> list[TestCase]:
    """One test case per trigger query: a failure when it is not routed as labelled every time."""
    block = log.settings.triggers
    found = []
    for query in block.queries if block is not None else ():
        case = TestCase(name=f"trigger: {query.name}", classname=f"skillab.{log.settings.suite.skill}.triggers",
                        stdout=f"rate {query.rate} over {query.trials} trial(s)")
        if query.verdict == "error":
            case.add_error_info(message="every trial of this query errored")
        elif query.verdict != "ok":
            wanted = "loaded" if query.should_trigger else "left alone"
            case.add_failure_info(message=f"{query.verdict}: the skill should be {wanted}; it was "
                                          f"loaded in {query.triggered} of {query.trials} trial(s)",
                                  output=query.query)
        found.append(case)
    return found


def _failed_checks(arm: ArmRecord) -> str:
    checks = failed_checks(arm)
    lines = [f"validator failed: {v.label}" for v in checks.validators]
    lines += [f"expectation failed: {e.expectation} — {judge_reason(e)}" for e in checks.expectations]
    lines += [f"{g.kind} failed: {g.label} — {g.reason}" for g in checks.graders]
    return "\n".join(lines)
