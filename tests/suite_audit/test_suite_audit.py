"""`skillab audit`: answers the skill gives away, prompts copied from it or naming it, near
duplicates and cases the history says cannot show a lift, each located and with its fix."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from skillab.cli import main
from skillab.core.audit import AuditBlock
from skillab.log.history_entry import HistoryEntry, suite_key
from skillab.skill import load_skill
from skillab.suite import load_suite
from skillab.suite_audit import audit_suite

SKILL = """---
name: error-envelope
description: Shape API errors as the team's error envelope.
---
# Error envelope

Every error response is one JSON object with a code, a message and the request id.
Use the status names of the table in references/codes.md.
"""
CASE = {"name": "not-found", "prompt": "The user with id 42 does not exist. Write the API's error response body.",
        "validators": [{"cmd": "grep -q '\"code\": \"USER_NOT_FOUND_404\"' response.txt", "label": "code"}],
        "expectations": ["The message says 'no user with that id exists'"]}


def suite(root: Path, cases: list[dict], skill: str = SKILL, **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(skill)
    (root / "eval.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def audit(root: Path, history: list[HistoryEntry] = ()) -> AuditBlock:
    loaded = load_suite(root)
    return audit_suite(loaded, load_skill(loaded.skill_dir or root), list(history))


def test_a_clean_suite_has_no_findings(tmp_path):
    assert audit(suite(tmp_path / "s", [CASE])).findings == ()


def test_a_validator_literal_in_a_bundled_file_is_an_answer_leak_located_in_that_file(tmp_path):
    root = suite(tmp_path / "s", [CASE], **{"references/codes.md": "| missing user | `\"code\": \"USER_NOT_FOUND_404\"` |\n"})
    (finding,) = audit(root).findings
    assert (finding.kind, finding.severity, finding.case) == ("answer_leak", "high", "not-found")
    assert (finding.file, finding.line) == (str(root / "references/codes.md"), 1)
    assert "validator 1" in finding.detail and finding.fix


def test_a_quote_an_expectation_checks_for_written_in_skill_md_is_a_high_leak(tmp_path):
    root = suite(tmp_path / "s", [CASE], skill=SKILL + "\nFor a missing user, say: No user with that id exists.\n")
    (finding,) = audit(root).findings
    assert (finding.kind, finding.severity, finding.line) == ("answer_leak", "high", 10)
    assert "expectation 1" in finding.detail


def test_a_regex_validator_matching_skill_text_is_a_leak_but_a_pattern_with_no_literal_is_not(tmp_path):
    cases = [{**CASE, "validators": [{"cmd": "grep -Eq 'request[_ ]id: req-[0-9]+' response.txt"}], "expectations": []},
             {**CASE, "name": "any-number", "prompt": "Count to three.",
              "validators": [{"cmd": "grep -Eq '[0-9]+' response.txt"}], "expectations": []}]
    root = suite(tmp_path / "s", cases, skill=SKILL + "\nEnd with request_id: req-7781.\n")
    (finding,) = audit(root).findings
    assert finding.case == "not-found" and "regex" in finding.detail and "request_id: req-7781" in finding.detail


def test_what_the_prompt_itself_says_is_no_leak(tmp_path):
    case = {**CASE, "prompt": CASE["prompt"] + " Use the code USER_NOT_FOUND_404.",
            "validators": [{"cmd": "grep -q 'USER_NOT_FOUND_404 and more' response.txt"}]}
    root = suite(tmp_path / "s", [case], skill=SKILL + "\nUSER_NOT_FOUND_404 and more.\n")
    assert [f.kind for f in audit(root).findings] == ["answer_leak"]  # the longer literal only
    case["validators"] = [{"cmd": "grep -q 'USER_NOT_FOUND_404' response.txt"}]
    assert audit(suite(tmp_path / "s", [case])).findings == ()


def test_an_expected_output_copied_into_the_skill_is_a_leak(tmp_path):
    root = tmp_path / "s"
    expected = "A JSON object whose code is NOT_FOUND, whose message names the missing user, with the request id"
    suite(root, [CASE], skill=SKILL + "\nExample answer: " + expected.lower() + ".\n")
    (root / "eval.yaml").unlink()
    (root / "evals").mkdir()
    (root / "evals/evals.json").write_text(json.dumps({"skill_name": "error-envelope", "evals": [
        {"id": 1, "prompt": CASE["prompt"], "expected_output": expected}]}))
    kinds = [(f.kind, f.severity, f.detail.split(" ")[1]) for f in audit(root).findings]
    assert ("answer_leak", "high", "expected") in kinds


def test_a_prompt_copied_from_the_skills_example_is_example_contamination(tmp_path):
    example = "\n## Example\n\nUser: The user with id 42 does not exist. Write the error response body for the API.\n"
    (finding,) = audit(suite(tmp_path / "s", [{**CASE, "validators": [], "expectations": ["ok"]}],
                             skill=SKILL + example)).findings
    assert (finding.kind, finding.line) == ("example_contamination", 12)


def test_a_prompt_naming_the_skill_contaminates_the_baseline_a_plain_phrase_does_not(tmp_path):
    named = {**CASE, "name": "named", "prompt": "Use the error-envelope skill: user 42 is missing.", "validators": []}
    called = {**CASE, "name": "called", "prompt": "Apply the Error Envelope skill to a missing user 7.",
              "validators": []}
    plain = {**CASE, "name": "plain", "prompt": "Write an error envelope for a missing order 9.", "validators": []}
    findings = audit(suite(tmp_path / "s", [named, called, plain])).findings
    assert sorted((f.kind, f.case) for f in findings) == [("prompt_contamination", "called"),
                                                          ("prompt_contamination", "named")]
    assert all(f.file.endswith("eval.yaml") and f.line for f in findings)


def test_near_duplicate_cases_are_found_unless_their_workspaces_differ(tmp_path):
    twin = {**CASE, "name": "not-found-again", "prompt": CASE["prompt"].replace("42", "43")}
    other_fixture = {**twin, "name": "on-other-files", "setup": {"files": {"users.json": "[]"}}}
    findings = audit(suite(tmp_path / "s", [CASE, twin, other_fixture])).findings
    assert [(f.kind, f.case, f.other_case) for f in findings] == [("near_duplicate", "not-found-again", "not-found")]


def test_the_history_names_saturated_and_always_failing_cases(tmp_path):
    root = suite(tmp_path / "s", [CASE, {**CASE, "name": "hard", "prompt": "Something else entirely, please."},
                                  {**CASE, "name": "fine", "prompt": "A third and different task here."}])
    key = suite_key(str(root / "eval.yaml"))
    passes = {"with_skill": {"not-found": [3, 3], "hard": [0, 3], "fine": [3, 3]},
              "without_skill": {"not-found": [3, 3], "hard": [0, 3], "fine": [1, 3]}}
    entry = HistoryEntry(suite=key, skill="error-envelope", skill_hash="h", adapter="mock", model=None,
                         pass_rate={}, delta_pts=None, original_delta_pts=None, verdict="pass", cost_usd=None,
                         recorded_at="2026-01-01T00:00:00+00:00", case_passes=passes)
    findings = audit(root, [entry]).findings
    assert sorted((f.kind, f.case) for f in findings) == [("always_failing", "hard"), ("saturated", "not-found")]
    assert audit(root, []).findings == ()


def test_the_command_gates_on_max_leaks_and_one_bad_suite_never_stops_the_others(tmp_path, capsys):
    leaky = suite(tmp_path / "leaky", [CASE], skill=SKILL + "\nSay: no user with that id exists.\n")
    clean = suite(tmp_path / "clean", [CASE])
    bad = suite(tmp_path / "bad", [{"name": "x"}])
    assert main(["audit", str(leaky), str(clean), "--no-history"]) == 0
    out = capsys.readouterr().out
    assert "1 counted as leaks" in out and f"{leaky}/SKILL.md:10 case not-found" in out and "no findings" in out
    assert main(["audit", str(leaky), "--max-leaks", "0", "--no-history"]) == 1
    assert "more than --max-leaks 0" in capsys.readouterr().err
    assert main(["audit", str(bad), str(clean), "--no-history"]) == 2
    captured = capsys.readouterr()
    assert "no findings" in captured.out and "Traceback" not in captured.err
    assert all("bad/eval.yaml" in line for line in captured.err.splitlines())


def test_the_json_form_is_the_wire_block(tmp_path, capsys):
    leaky = suite(tmp_path / "leaky", [CASE], skill=SKILL + "\nSay: no user with that id exists.\n")
    assert main(["audit", str(leaky), "--json", "--no-history"]) == 0
    (doc,) = json.loads(capsys.readouterr().out)
    assert doc["leaks"] == 1 and doc["findings"][0]["kind"] == "answer_leak" and doc["findings"][0]["line"] == 10


def test_a_check_that_the_answer_is_absent_is_no_leak_when_the_skill_names_what_to_avoid(tmp_path):
    skill = SKILL + "\nNever answer with a bare stack trace dump.\n"
    cases = [{**CASE, "validators": [{"cmd": "! grep -qi 'bare stack trace dump' response.txt"}],
              "expectations": ["The body does not contain 'a bare stack trace dump'."]},
             {**CASE, "name": "exit-1", "prompt": "Another missing record, 7.",
              "validators": [{"cmd": "grep -qi 'bare stack trace dump' response.txt", "expect_exit_code": 1}],
              "expectations": []}]
    assert audit(suite(tmp_path / "s", cases, skill=skill)).findings == ()


def test_validate_prints_the_audit_section_and_stays_valid(tmp_path, capsys):
    leaky = suite(tmp_path / "leaky", [CASE], skill=SKILL + "\nSay: no user with that id exists.\n")
    assert main(["validate", str(leaky)]) == 0
    out = capsys.readouterr().out
    assert f"audit: high answer_leak {leaky}/SKILL.md:10 case not-found" in out


def test_a_run_carries_the_audit_in_results_json_and_the_markdown_and_gates_on_max_leaks(tmp_path):
    leaky = suite(tmp_path / "leaky", [CASE], skill=SKILL + "\nSay: no user with that id exists.\n")
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    argv = ["run", str(leaky), "--adapter", "mock", "--no-history", "--no-cache", "--quiet", "--output", str(out),
            "--markdown", str(md), "--allow-error-verdict", "--fail-on-verdict", "none"]
    assert main(argv) == 0
    assert main([*argv, "--max-leaks", "0"]) == 1
    doc = json.loads(out.read_text())
    (finding,) = doc["audit"]["findings"]
    assert (finding["kind"], finding["line"], finding["case"]) == ("answer_leak", 10, "not-found")
    from skillab.core.runlog import RunLog

    assert RunLog.from_json(doc).to_json() == doc
    assert "**Audit**" in md.read_text() and "SKILL.md:10" in md.read_text()


def test_an_inline_scripts_harness_is_no_answer_but_its_pattern_argument_is():
    from skillab.suite_audit.answers import shell_answers

    cmd = ("python3 -c 'import re, sys; t = open(\"response.txt\", encoding=\"utf-8\", errors=\"replace\").read(); "
           "sys.exit(0 if re.search(sys.argv[1], t) else 1)' 'tslsp-cli\\s+rename'")
    assert [(a.kind, a.text) for a in shell_answers(cmd, "v")] == [("regex", "tslsp-cli\\s+rename")]


def test_a_slash_command_naming_the_skill_and_a_value_with_digits_are_found(tmp_path):
    slash = {**CASE, "name": "slash", "prompt": "/envelope-pro user 42 is missing", "validators": []}
    value = {**CASE, "name": "value", "prompt": "Which address does the API listen on?",
             "validators": [{"cmd": "grep -q '198.51.100.7' response.txt"}], "expectations": []}
    skill = SKILL.replace("name: error-envelope", "name: envelope-pro") + "\nThe API listens on 198.51.100.7.\n"
    findings = audit(suite(tmp_path / "s", [slash, value], skill=skill)).findings
    assert sorted((f.kind, f.case, f.severity) for f in findings) == [
        ("answer_leak", "value", "medium"), ("prompt_contamination", "slash", "high")]
