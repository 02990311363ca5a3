"""JUnit XML: one test suite per skill, one test case per (case, run), judged on the outcome.

CI dashboards read "failure" as "the change made something worse", so a case fails when the skill
did not deliver (``flip_to_fail`` or ``fail_kept``) and errors when it could not be measured.
Each trigger query is a test case too, failing when it was not routed as labelled every time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from junit_xml import TestCase, TestSuite, to_xml_report_string

from .partial import early_stop, interruption

FAILING = {"flip_to_fail": "this run passed without the skill and failed with it",
           "fail_kept": "the agent fails this case with and without the skill"}


def render_junit(documents: list[dict[str, Any]]) -> str:
    suites = []
    for doc in documents:
        cases = []
        for record in doc["cases"]:
            name = record["case_name"]
            if doc.get("runs", 1) > 1:
                name += f" [run {record['run_index'] + 1}]"
            with_arm = record["with_skill"]
            case = TestCase(
                name=name,
                classname=f"skillab.{doc['suite']['skill']}",
                elapsed_sec=(with_arm.get("duration_ms") or 0) / 1000,
                stdout=f"outcome: {record['outcome']}",
            )
            outcome = record["outcome"]
            if outcome == "error":
                message = record.get("error") or with_arm.get("error") or \
                    record["without_skill"].get("error") or "an arm could not be graded"
                case.add_error_info(message=message)
            elif outcome in FAILING:
                case.add_failure_info(message=f"{outcome}: {FAILING[outcome]}",
                                      output=_failed_checks(with_arm))
            cases.append(case)
        cases += _trigger_cases(doc)
        stopped = interruption(doc)
        if stopped:
            # A partial run must not read green on a dashboard that counts only failures.
            partial = TestCase(name="run complete", classname=f"skillab.{doc['suite']['skill']}")
            partial.add_error_info(message=stopped)
            cases.append(partial)
        suite = TestSuite(f"skillab: {doc['suite']['skill']}", cases, file=doc["suite"]["path"])
        early = early_stop(doc)
        if early:
            suite.properties = {"stop_early": early}
        suites.append(suite)
    return to_xml_report_string(suites)


def _trigger_cases(doc: dict[str, Any]) -> list[TestCase]:
    """One test case per trigger query: a failure when it is not routed as labelled every time."""
    found = []
    for query in (doc.get("triggers") or {}).get("queries", []):
        case = TestCase(name=f"trigger: {query['name']}",
                        classname=f"skillab.{doc['suite']['skill']}.triggers",
                        stdout=f"rate {query['rate']} over {query['trials']} trial(s)")
        if query["verdict"] == "error":
            case.add_error_info(message="every trial of this query errored")
        elif query["verdict"] != "ok":
            wanted = "loaded" if query["should_trigger"] else "left alone"
            case.add_failure_info(message=f"{query['verdict']}: the skill should be {wanted}; it was "
                                          f"loaded in {query['triggered']} of {query['trials']} trial(s)",
                                  output=query["query"])
        found.append(case)
    return found


def _failed_checks(arm: dict[str, Any]) -> str:
    lines = [f"validator failed: {v['label']}" for v in arm.get("validator_results", [])
             if not v["passed"]]
    lines += [f"expectation failed: {e['expectation']} — {e['reason']}"
              for e in arm.get("expectation_results", []) if not e["passed"]]
    # The seed formats' own graders (contains, pytest, rubric, dimensions, verifier).
    lines += [f"{g['kind']} failed: {g['label']} — {g['reason']}"
              for g in (arm.get("extra") or {}).get("graders", []) if not g["passed"]]
    return "\n".join(lines)


def write_junit(documents: list[dict[str, Any]], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_junit(documents), encoding="utf-8")
