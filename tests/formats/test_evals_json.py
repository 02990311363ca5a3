"""The Agent Skills evaluation format (``evals/evals.json``), written from skill-creator's
``references/schemas.md`` and agentskills.io's examples: every field, every rule, a whole run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.errors import SuiteError
from skillab.formats.evals_json.specs import ChecklistGrader
from skillab.suite import load_suite

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "duplicate-invoices"
SKILL_MD = "---\nname: pdf-report\ndescription: Report rules.\n---\nAnswer with REPORT: and the total.\n"

# skill-creator's schemas.md example, plus the assertion forms agentskills.io shows.
EVALS = {
    "skill_name": "pdf-report",
    "evals": [
        {
            "id": 1,
            "prompt": "Summarise evals/files/sample.csv",
            "expected_output": "A one-line report with the total 42",
            "files": ["evals/files/sample.csv"],
            "expectations": ["The output includes 'REPORT:'", "The skill used script Y"],
        },
        {
            "id": 2,
            "prompt": "Summarise it again",
            "expected_output": "",
            "files": [],
            "assertions": [
                "The response states the total",
                {"text": "Output contains a structured findings table", "passed": None, "evidence": ""},
                {"name": "has_report", "type": "contains", "value": "REPORT:"},
                {"name": "no_apology", "type": "not_contains", "value": "sorry"},
                {"type": "regex", "value": "^REPORT: \\d+$"},
                {"type": "file_exists", "path": "report.txt"},
                {"type": "command", "command": "test -f report.txt"},
            ],
        },
    ],
}


def write_skill(root: Path, evals: dict | list | str = EVALS, **files: str) -> Path:
    (root / "evals" / "files").mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "evals" / "files" / "sample.csv").write_text("amount\n40\n2\n")
    text = evals if isinstance(evals, str) else json.dumps(evals, indent=2)
    (root / "evals" / "evals.json").write_text(text)
    for rel, content in files.items():
        (root / rel).write_text(content)
    return root


def test_every_field_is_imported(tmp_path):
    suite = load_suite(write_skill(tmp_path / "pdf-report"))
    assert suite.format == "evals.json" and suite.skill_dir == tmp_path / "pdf-report"
    first, second = suite.cases
    assert first.name == "eval-1" and first.prompt == "Summarise evals/files/sample.csv"
    assert [target for _, target in first.seed.files] == ["evals/files/sample.csv"]
    (grader,) = first.graders
    assert isinstance(grader, ChecklistGrader) and grader.reference == "A one-line report with the total 42"
    assert [i.description for i in grader.items] == EVALS["evals"][0]["expectations"]
    assert grader.pass_threshold == 2  # every expectation must hold
    (judged,) = second.graders
    assert [i.description for i in judged.items] == ["The response states the total",
                                                     "Output contains a structured findings table"]
    assert judged.reference is None and second.seed is None
    labels = [v.label for v in second.validators]
    assert labels[:2] == ["has_report", "no_apology"] and len(labels) == 5


def test_the_deterministic_assertions_grade_the_output_and_the_workspace(tmp_path):
    root = write_skill(tmp_path / "pdf-report")
    responses = tmp_path / "mock.yaml"
    responses.write_text(yaml.safe_dump({
        "eval-1": {"with": "REPORT: 42", "without": "The total is 42."},
        "eval-2": {"with": {"text": "REPORT: 42\nThis states the total in a structured findings table.",
                            "files": {"report.txt": "REPORT: 42\n"}},
                   "without": "sorry, the total is 42"},
    }))
    out = tmp_path / "results.json"
    code = main(["run", str(root), "--adapter", "mock", "--mock-responses", str(responses), "--output", str(out),
                 "--no-cache", "--no-history", "--quiet", "--keep-workspaces"])
    doc = json.loads(out.read_text())
    first, second = doc["cases"]
    try:
        # The eval's files are in both arms' workspaces; the rest of evals/ in neither.
        for arm in ("with_skill", "without_skill"):
            workspace = Path(first[arm]["extra"]["workspace"])
            assert (workspace / "evals" / "files" / "sample.csv").read_text() == "amount\n40\n2\n"
            assert not (workspace / "evals" / "evals.json").exists()
    finally:
        shutil.rmtree(Path(first["with_skill"]["extra"]["workspace"]).parents[1], ignore_errors=True)
    verdicts = {v["label"]: v["passed"] for v in second["without_skill"]["validator_results"]}
    assert verdicts["has_report"] is False and verdicts["no_apology"] is False
    assert all(v["passed"] for v in second["with_skill"]["validator_results"])
    assert second["outcome"] == "flip_to_pass" and code == 0
    checklist = first["with_skill"]["extra"]["graders"][0]
    assert checklist["kind"] == "checklist" and checklist["dimensions"][0]["score"] == 1.0


@pytest.mark.parametrize("evals, field, message", [
    ({"evals": []}, "evals", "non-empty list"),
    ({"evals": [{"id": 1}]}, "evals[0].prompt", "non-empty string"),
    ({"evals": [{"prompt": "p"}]}, "evals[0].id", "each eval needs an id"),
    ({"evals": [{"id": 1, "prompt": "p"}, {"id": 1, "prompt": "q"}]}, "evals[1].id", "duplicate eval 'eval-1'"),
    ({"evals": [{"id": 1, "prompt": "p", "files": ["../secret"]}]}, "evals[0].files[0]", "relative to the skill"),
    ({"evals": [{"id": 1, "prompt": "p", "files": ["evals/files/none.csv"]}]}, "evals[0].files[0]", "is not a file"),
    ({"evals": [{"id": 1, "prompt": "p", "assertions": [{"type": "sql_equals", "value": "x"}]}]},
     "evals[0].assertions[0].type", "type 'sql_equals' is not one skillab can check"),
    ({"evals": [{"id": 1, "prompt": "p", "assertions": [{"type": "regex", "value": "("}]}]},
     "evals[0].assertions[0].value", "not a valid regular expression"),
    ({"evals": [{"id": 1, "prompt": "p", "expectations": [""]}]}, "evals[0].expectations[0]", "non-empty string"),
    ({"evals": [{"id": 1, "prompt": "p", "expected_output": 3}]}, "evals[0].expected_output", "must be a string"),
    ({"evals": [{"id": 1.5, "prompt": "p"}]}, "evals[0].id", "integer or a string"),
])
def test_each_rule_names_the_file_line_and_field(tmp_path, evals, field, message):
    root = write_skill(tmp_path / "pdf-report", evals)
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    found = [i for i in caught.value.issues if i.field == field]
    assert found, [str(i) for i in caught.value.issues]
    assert message in found[0].message and found[0].line is not None
    assert found[0].path == root / "evals" / "evals.json"


def test_syntax_errors_and_oversized_numbers_are_located(tmp_path):
    with pytest.raises(SuiteError, match=r"evals.json:3: invalid JSON"):
        load_suite(write_skill(tmp_path / "a", '{\n "evals": [\n  {"id": 1,, "prompt": "p"}]}'))
    with pytest.raises(SuiteError, match=r"a number of 4400 digits"):
        load_suite(write_skill(tmp_path / "b", '{"evals": [{"id": %s, "prompt": "p"}]}' % ("9" * 4400)))


def test_unknown_keys_are_warnings_and_a_trigger_set_beside_it_is_not_refused(tmp_path):
    evals = {"skill_name": "pdf-report", "version": 2,
             "evals": [{"id": 1, "prompt": "p", "expectations": ["e"], "eval_name": "first", "rubric": "x"}]}
    root = write_skill(tmp_path / "pdf-report", evals)
    (root / "evals" / "trigger-evals.json").write_text('[{"query": "q", "should_trigger": true}]')
    suite = load_suite(root)
    assert [c.name for c in suite.cases] == ["first"]
    assert any("'version'" in w for w in suite.warnings) and any("'rubric'" in w for w in suite.warnings)


def test_a_top_level_list_is_named_as_a_trigger_set(tmp_path):
    with pytest.raises(SuiteError, match="trigger set"):
        load_suite(write_skill(tmp_path / "s", [{"query": "q", "should_trigger": True}]))


def test_the_example_shows_a_real_lift_with_the_mock_adapter(tmp_path):
    out = tmp_path / "results.json"
    code = main(["run", str(EXAMPLE), "--adapter", "mock", "--output", str(out), "--no-cache", "--no-history",
                 "--quiet"])
    doc = json.loads(out.read_text())
    assert code == 0 and doc["verdict"] == "pass"
    outcomes = {c["case_name"]: c["outcome"] for c in doc["cases"]}
    assert outcomes == {"eval-1": "flip_to_pass", "eval-2": "flip_to_pass", "eval-3": "pass_kept"}


def test_validate_and_run_find_every_suite_below_a_folder(tmp_path, capsys):
    write_skill(tmp_path / "repo" / "skills" / "pdf-report")
    shutil.copytree(EXAMPLE, tmp_path / "repo" / "skills" / "duplicate-invoices")
    (tmp_path / "repo" / "node_modules" / "x").mkdir(parents=True)
    assert main(["validate", str(tmp_path / "repo")]) == 0
    out = capsys.readouterr().out
    assert out.count("ok: ") == 2 and "duplicate-invoices/evals/evals.json" in out
    results = tmp_path / "results.json"
    main(["run", str(tmp_path / "repo" / "skills"), "--adapter", "mock", "--output", str(results),
          "--no-cache", "--no-history", "--quiet", "--case", "eval-1"])
    doc = json.loads(results.read_text())
    assert len(doc["suites"]) == 2
    assert main(["validate", str(tmp_path / "repo" / "node_modules")]) == 2


def test_expected_output_alone_is_judged_and_trigger_items_are_left_to_trigger_evaluation(tmp_path):
    evals = {"evals": [
        {"id": 1, "prompt": "p", "expected_output": "The answer mentions 'REPORT:'"},
        {"id": 2, "prompt": "q", "should_trigger": False},
        {"id": 3, "prompt": "r", "should_trigger": True, "expectations": ["e"]},
    ]}
    suite = load_suite(write_skill(tmp_path / "pdf-report", evals))
    first, second, third = suite.cases
    (grader,) = first.graders
    assert [i.description for i in grader.items] == ["The answer mentions 'REPORT:'"] and grader.reference is None
    assert second.trigger_only and not third.trigger_only


def test_the_action_finds_an_evals_json_suite_and_names_its_skill_when_the_file_goes(tmp_path):
    from skillab.github.discovery import ChangedFile, find_suites, select_changed

    repo = tmp_path / "repo"
    root = write_skill(repo / "skills" / "pdf-report")
    suites = find_suites(repo, repo)
    assert [s.rel_dir for s in suites] == ["skills/pdf-report"]
    touched = select_changed(suites, [ChangedFile("skills/pdf-report/evals/evals.json")], repo, repo)
    assert touched.suites == tuple(suites)
    (root / "evals" / "evals.json").unlink()
    gone = select_changed(find_suites(repo, repo), [ChangedFile("skills/pdf-report/evals/evals.json", "removed")],
                          repo, repo)
    assert gone.notes == ("skills/pdf-report no longer holds a skill with a suite in this pull request: skipped.",)


def test_the_skill_itself_in_files_never_reaches_the_baseline_and_repeated_keys_warn_once(tmp_path):
    evals = {"skill_name": "pdf-report", "description": "sample prompts",
             "evals": [{"id": i, "category": "review", "prompt": "p", "expected_output": "e",
                        "files": ["SKILL.md", "evals/files/sample.csv"]} for i in (1, 2, 3)]}
    suite = load_suite(write_skill(tmp_path / "pdf-report", evals))
    assert all([t for _, t in c.seed.files] == ["evals/files/sample.csv"] for c in suite.cases)
    (listed,) = [w for w in suite.warnings if "SKILL.md in 'files'" in w]
    assert "3 evals list SKILL.md in 'files' — it is the skill, so only the with-skill arm gets it" in listed
    (category,) = [w for w in suite.warnings if "'category'" in w]
    assert "3 evals have the key 'category'" in category


def test_the_skills_own_references_in_files_never_reach_the_baseline(tmp_path):
    # As 88lin/diataxis-docs-skill's evals/evals.json lists them ("the references inside this repo
    # that back the expected output"): its SKILL.md and references/*.md, one by one or as a folder.
    evals = {"skill_name": "pdf-report",
             "evals": [{"id": 1, "prompt": "p", "expected_output": "e",
                        "files": ["SKILL.md", "references/template-map.md", "evals/files/sample.csv"]},
                       {"id": 2, "prompt": "p", "expected_output": "e", "files": ["references"]},
                       {"id": 3, "prompt": "p", "expected_output": "e", "files": ["."]}]}
    root = write_skill(tmp_path / "pdf-report", evals)
    (root / "references").mkdir()
    (root / "references" / "template-map.md").write_text("the skill's own guidance\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "audit.py").write_text("print('skill code')\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    suite = load_suite(root)
    first, second, third = suite.cases
    assert [t for _, t in first.seed.files] == ["evals/files/sample.csv"]
    assert second.seed is None
    # "." is the whole skill folder: its eval inputs are staged; the skill and the suite are not.
    assert [t for _, t in third.seed.files] == ["evals/files/sample.csv"]
    text = "\n".join(suite.warnings)
    assert "eval eval-1 lists references/template-map.md in 'files' — it is part of the skill, so only " \
           "the with-skill arm gets it" in text
    assert "eval eval-2 lists references in 'files' — it holds the skill's own files " \
           "(references/template-map.md), so only the with-skill arm gets it" in text
    assert "eval eval-3 lists . in 'files' — it holds the skill's own files (SKILL.md, " \
           "references/template-map.md, scripts/audit.py)" in text


def test_evals_at_a_repositorys_root_find_the_skill_their_skill_name_names(tmp_path):
    # AvdLee/Xcode-Disk-Cleanup-Agent-Skill's layout: evals/ (evals.json, trigger-evals.json) at
    # the repository's root, the skill in xcode-disk-cleanup/.
    from skillab.github.discovery import find_suites

    repo = tmp_path / "repo"
    skill = repo / "xcode-disk-cleanup"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD.replace("pdf-report", "xcode-disk-cleanup"))
    (skill / "references" / "paths.md").write_text("~/Library/Developer/Xcode/DerivedData\n")
    (repo / "evals").mkdir()
    (repo / "evals" / "evals.json").write_text(json.dumps(
        {"skill_name": "xcode-disk-cleanup",
         "evals": [{"id": 1, "name": "low-space-audit", "prompt": "Audit Xcode storage.", "expected_output": "a report",
                    "files": ["xcode-disk-cleanup/references/paths.md"], "expectations": ["sorted by GB"]}]}))
    (repo / "evals" / "trigger-evals.json").write_text(json.dumps(
        [{"query": "Audit Xcode storage", "should_trigger": True}, {"query": "Fix my build", "should_trigger": False}]))
    suite = load_suite(repo)
    assert suite.skill_dir == skill and suite.cases[0].seed is None
    assert any("lists xcode-disk-cleanup/references/paths.md in 'files' — it is part of the skill" in w
               for w in suite.warnings)
    assert [s.rel_dir for s in find_suites(repo, repo)] == ["."]
    assert main(["validate", str(repo)]) == 0


def test_an_unprintable_eval_name_is_reported_on_the_name_not_the_id(tmp_path):
    evals = {"skill_name": "pdf-report",
             "evals": [{"id": 1, "name": "tab\there", "prompt": "p", "expected_output": "e"},
                       {"id": "x" * 200, "prompt": "p", "expected_output": "e"}]}
    with pytest.raises(SuiteError) as raised:
        load_suite(write_skill(tmp_path / "pdf-report", evals))
    fields = [issue.field for issue in raised.value.issues]
    assert fields == ["evals[0].name", "evals[1].id"]
    assert str(raised.value.issues[0]).endswith(":6: 'evals[0].name' — must be printable and at most 128 characters")


def test_the_dry_run_counts_a_judge_call_per_checklist_item(tmp_path, capsys, monkeypatch):
    # 88lin/diataxis-docs-skill's 32 evals, each judged on its expected_output, planned 0 judge
    # calls: the estimate left out every judge call the run would make.
    evals = {"skill_name": "pdf-report",
             "evals": [{"id": 1, "prompt": "p", "expected_output": "e", "expectations": ["a", "b", "c"]},
                       {"id": 2, "prompt": "p", "expected_output": "the total is 42"},
                       {"id": 3, "prompt": "p", "expected_output": "e",
                        "assertions": [{"type": "contains", "value": "x"}]}]}
    root = write_skill(tmp_path / "pdf-report", evals)
    # A dry run is a preflight: it needs the keys the run would (nothing is sent with them).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-" + "a" * 24)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "o" * 24)
    assert main(["run", str(root), "--model", "claude-sonnet-4-5", "--judge-model", "gpt-4.1", "--dry-run",
                 "--no-cache", "--output", str(tmp_path / "none.json")]) == 0
    plan = capsys.readouterr().out
    # Per arm: 3 expectations, the expected_output judged alone, nothing for the checked one.
    assert "judge calls    8" in plan


def test_evals_json_beside_skill_md_and_a_structured_expected_output_load(tmp_path):
    # OIT-AI-Skills/vibe-coding-discipline keeps evals.json beside SKILL.md (inputs under
    # evals/files/); Qson8/wechat-writing-skill describes success as an object, not a sentence.
    root = tmp_path / "wechat-writing"
    (root / "evals" / "files").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "evals" / "files" / "draft.md").write_text("# draft\n")
    (root / "evals.json").write_text(json.dumps({"skill_name": "wechat-writing", "evals": [
        {"id": 1, "prompt": "写一篇文章", "files": ["evals/files/draft.md"],
         "expected_output": {"sections": ["【标题】", "【正文】"], "title_max_chars": 25}},
        {"id": 2, "prompt": "改写标题", "expected_output": {"no_banned_words": True}}]}, ensure_ascii=False))
    suite = load_suite(root)
    assert suite.format == "evals.json" and suite.skill_dir == root and suite.path == root / "evals.json"
    first = suite.cases[0]
    assert [t for _, t in first.seed.files] == ["evals/files/draft.md"]
    (item,) = first.graders[0].items
    assert json.loads(item.description) == {"sections": ["【标题】", "【正文】"], "title_max_chars": 25}
    assert any("2 evals have a structured expected_output — the judge is shown it as JSON" in w
               for w in suite.warnings)
    (root / "evals" / "evals.json").write_text(json.dumps(EVALS))
    with pytest.raises(SuiteError, match="holds both evals/evals.json and evals.json"):
        load_suite(root)


def test_keys_inside_an_assertion_object_are_shown_to_the_judge_or_named_never_dropped(tmp_path):
    # An assertion object with its statement split over 'text' and 'check' (a real suite's shape).
    root = write_skill(tmp_path / "s", {"skill_name": "pdf-report", "evals": [{
        "id": 1, "prompt": "Summarise it",
        "assertions": [{"id": "a1", "text": "States the total", "check": "The total is 42, in the first line",
                        "points": 2}]}]})
    suite = load_suite(root)
    (case,) = suite.cases
    (grader,) = case.graders
    assert grader.items[0].description == "States the total; check: The total is 42, in the first line"
    assert any("'points'" in w and "not shown" in w for w in suite.warnings)


def test_a_repeated_eval_name_runs_every_eval_told_apart_by_id_never_refusing_the_suite(tmp_path):
    evals = [{"id": i, "name": "summarise", "prompt": f"Summarise file {i}", "expectations": ["ok"]} for i in (1, 2)]
    evals.append({"id": 3, "name": "other", "prompt": "Another", "expectations": ["ok"]})
    suite = load_suite(write_skill(tmp_path / "s", {"skill_name": "pdf-report", "evals": evals}))
    assert [c.name for c in suite.cases] == ["summarise", "summarise (id 2)", "other"]
    assert any("eval name 'summarise' repeats line" in w for w in suite.warnings)
