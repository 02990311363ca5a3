"""JUnit XML names what failed, whichever kind of grader failed it."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import yaml

from skillab.cli import main


def test_a_failing_format_grader_is_named_in_the_failure(tmp_path: Path):
    suite = tmp_path / "kw"
    suite.mkdir()
    (suite / "SKILL.md").write_text("---\nname: kw\ndescription: d\n---\nSay alpha and beta.\n")
    (suite / "task_suite.yaml").write_text(yaml.safe_dump({
        "skill_id": "kw", "version": "1.0",
        "tasks": [{"id": "both-words", "description": "d", "prompt": "Say the words.",
                   "judge": {"type": "contains", "expected": ["alpha", "beta"]}}],
    }))
    (suite / "mock-responses.yaml").write_text(yaml.safe_dump(
        {"both-words": {"with": "alpha only", "without": "alpha and beta"}}))
    junit = tmp_path / "junit.xml"
    code = main(["run", str(suite), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--output", str(tmp_path / "r.json"), "--junit", str(junit)])
    assert code == 1  # flip_to_fail: the verdict is fail, which gates by default
    (case,) = ElementTree.parse(junit).getroot().iter("testcase")
    failure = case.find("failure")
    assert failure is not None and failure.get("message").startswith("flip_to_fail")
    assert "contains failed" in failure.text and "beta" in failure.text


def _failing_log(tmp_path: Path):
    """A real run's log whose first case's skill arm failed a validator, an expectation the judge
    gave no reason for, and a format grader that errored: built in memory, as the session hands
    it to the reporters, never read back from a document."""
    import json
    from dataclasses import replace

    from skillab.core.checks import ExpectationResult, GraderResult, ValidatorResult
    from skillab.core.runlog import RunLog

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "r.json"
    assert main(["run", str(root / "examples" / "changelog-entry"), "--adapter", "mock", "--no-cache",
                 "--no-history", "--quiet", "--output", str(out)]) in (0, 1)
    log = RunLog.from_json(json.loads(out.read_text()))
    first = log.records[0]
    arm = replace(first.with_skill, passed=False, errored=False, validator_results=[
        ValidatorResult("has a heading", passed=False, exit_code=1, stdout="no heading\n"),
        ValidatorResult("is short", passed=True, exit_code=0)],
        expectation_results=[ExpectationResult("names the bug", passed=False, reason="")],
        graders=[GraderResult("pytest", "tests pass", passed=False, reason="timed out", errored=True)])
    record = replace(first, outcome="flip_to_fail", with_skill=arm)
    return replace(log, records=[record, *log.records[1:]])


def test_junit_and_the_terminal_name_the_same_failed_checks(tmp_path: Path):
    """One rule says which checks failed (``findings.failed_checks``): the JUnit failure lists
    exactly the checks the terminal's "why cases failed" lists, and neither the passing one."""
    from skillab.reports.junit import render_junit
    from skillab.reports.terminal import why_failed

    log = _failing_log(tmp_path)
    name = log.records[0].case_name
    failure = next(c for c in ElementTree.fromstring(render_junit([log])).iter("testcase")
                   if c.get("name") == name).find("failure")
    assert failure is not None
    assert failure.text.splitlines() == ["validator failed: has a heading",
                                         "expectation failed: names the bug — (no reason given)",
                                         "pytest failed: tests pass — timed out"]
    terminal = "\n".join(why_failed(log))
    assert "validator 'has a heading': exit 1, expected 0" in terminal and "| no heading" in terminal
    assert "expectation 'names the bug': not met: (no reason given)" in terminal
    assert "grader 'tests pass': no verdict (errored): timed out" in terminal
    assert "is short" not in terminal and "is short" not in failure.text


def test_a_run_in_memory_reports_as_its_document_does(tmp_path: Path):
    """The reporters read the log the session hands them; the same run read back from its
    document renders byte for byte the same (an empty judge reason included)."""
    from skillab.core.runlog import RunLog
    from skillab.reports.junit import render_junit
    from skillab.reports.terminal import render_table

    log = _failing_log(tmp_path)
    again = RunLog.from_json(log.to_json())
    assert render_table(log, verbose=True) == render_table(again, verbose=True)
    assert render_junit([log]) == render_junit([again])


def test_the_junit_reporter_by_name_writes_what_the_flag_writes(tmp_path: Path):
    """``--reporter junit=PATH`` hands the runs to the same renderer as ``--junit PATH``."""
    root = Path(__file__).resolve().parents[2]
    flag, named = tmp_path / "flag.xml", tmp_path / "named.xml"
    assert main(["run", str(root / "examples" / "changelog-entry"), "--adapter", "mock", "--no-cache",
                 "--no-history", "--quiet", "--output", str(tmp_path / "r.json"), "--junit", str(flag),
                 "--reporter", f"junit={named}"]) in (0, 1)
    assert named.read_text(encoding="utf-8") == flag.read_text(encoding="utf-8")
    assert 'name="trigger: ' in flag.read_text(encoding="utf-8")
