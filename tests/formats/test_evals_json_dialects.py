"""evals.json as public suites write it: graders under `checks`, `must_have`/`must_not_have`,
`scorers` (regex, llm_judge), `expected_behavior`/`evaluation_criteria`, a `fixture` folder the
agent starts from, a skill kept outside `<name>/` and `skills/<name>/`; an eval whose only
graders sit under a key skillab does not read is refused, not passed for finishing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.errors import SuiteError
from skillab.formats.evals_json.specs import ChecklistGrader
from skillab.suite import load_suite

SKILL_MD = "---\nname: tslsp\ndescription: Type-aware TypeScript edits.\n---\nUse `tslsp-cli rename --dry-run`.\n"


def repo(root: Path, evals: list[dict], *, skill_at: str = "skills/tslsp", **extra: str) -> Path:
    """A repository that keeps evals/evals.json at its root and the skill in a folder."""
    (root / skill_at).mkdir(parents=True)
    (root / skill_at / "SKILL.md").write_text(SKILL_MD)
    (root / "evals").mkdir(parents=True, exist_ok=True)
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "tslsp", "evals": evals}, indent=1))
    for rel, text in extra.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def run(root: Path, script: dict, tmp_path: Path) -> dict:
    (tmp_path / "mock.yaml").write_text(yaml.safe_dump(script))
    main(["run", str(root), "--adapter", "mock", "--mock-responses", str(tmp_path / "mock.yaml"),
          "--no-history", "--no-cache", "--quiet", "--output", str(tmp_path / "r.json")])
    return json.loads((tmp_path / "r.json").read_text())


# 0xdeafcafe/tslsp-cli's shape: scorers of type regex (pattern) and llm_judge (criterion).
SCORERS = {"id": 1, "eval_name": "rename-common-name", "prompt": "Rename `add` to `sum`.",
           "scorers": [{"type": "regex", "name": "uses_tslsp_rename", "pattern": r"tslsp-cli\s+rename"},
                       {"type": "regex", "name": "dry_run_first", "pattern": "--dry-run"},
                       {"type": "llm_judge", "name": "no_grep_edit", "criterion": "Does not use 'sed -i'"}]}


def test_scorers_are_read_and_both_kinds_grade_the_answer(tmp_path):
    root = repo(tmp_path / "repo", [SCORERS])
    (case,) = load_suite(root).cases
    assert [v.label for v in case.validators] == ["uses_tslsp_rename", "dry_run_first"]
    (judged,) = case.graders
    assert isinstance(judged, ChecklistGrader) and [i.description for i in judged.items] == ["Does not use 'sed -i'"]
    doc = run(root, {"rename-common-name": {"with": "tslsp-cli rename --symbol add --new-name sum --dry-run",
                                            "without": "sed -i s/add/sum/g src/*.ts"}}, tmp_path)
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass"
    without = record["without_skill"]
    assert [v["passed"] for v in without["validator_results"]] == [False, False]


def test_checks_and_keyword_lists_become_validators_and_statements(tmp_path):
    root = repo(tmp_path / "repo", [
        {"id": 1, "prompt": "p", "checks": ["The answer names 'sum'", {"type": "contains", "value": "sum"}],
         "must_have": ["Rename", "x(("], "must_not_have": ["sorry"]}])
    (case,) = load_suite(root).cases
    assert [i.description for i in case.graders[0].items] == ["The answer names 'sum'"]
    assert len(case.validators) == 4
    doc = run(root, {"eval-1": {"with": "rename to sum, x((", "without": "sorry, renamed to sum"}}, tmp_path)
    (record,) = doc["cases"]
    # must_have is matched regardless of case; an invalid pattern literally; must_not_have must be absent.
    assert [v["passed"] for v in record["with_skill"]["validator_results"]] == [True, True, True, True]
    assert [v["passed"] for v in record["without_skill"]["validator_results"]] == [True, True, False, False]


def test_a_string_match_assertion_is_a_substring_check_with_a_literal_and_a_statement_without(tmp_path):
    # 0xTwyne/twyne-cli's shape: {id, text, type: string_match} whose text says in words what to find.
    root = repo(tmp_path / "repo", [{"id": 0, "prompt": "p", "assertions": [
        {"id": "dry-run", "text": "Mentions --dry-run", "type": "string_match"},
        {"id": "literal", "text": "names the flag", "type": "string_match", "value": "--dry-run"}]}])
    (case,) = load_suite(root).cases
    assert [i.description for i in case.graders[0].items] == ["Mentions --dry-run"]
    (check,) = case.validators
    doc = run(root, {"eval-0": {"with": "vault-cli close --dry-run", "without": "vault-cli close"}}, tmp_path)
    (record,) = doc["cases"]
    assert check.label == "literal"
    assert [v["passed"] for v in record["with_skill"]["validator_results"]] == [True]
    assert [v["passed"] for v in record["without_skill"]["validator_results"]] == [False]


def test_a_fixture_folder_is_the_workspace_both_arms_start_from(tmp_path):
    root = repo(tmp_path / "repo", [{"id": 1, "prompt": "fix it", "fixture": "evals/fixtures/app",
                                     "assertions": [{"type": "file_exists", "path": "src/add.ts"}]}],
                **{"evals/fixtures/app/src/add.ts": "export const add = 1\n",
                   "evals/fixtures/app/evals.json": "{}"})
    (case,) = load_suite(root).cases
    assert [target for _, target in case.seed.files] == ["src/add.ts"]
    doc = run(root, {"eval-1": {"with": "done", "without": "done"}}, tmp_path)
    assert doc["cases"][0]["outcome"] == "pass_kept"  # both arms found the fixture's file


def test_a_fixture_that_is_not_a_folder_is_located(tmp_path):
    root = repo(tmp_path / "repo", [{"id": 1, "prompt": "p", "expected_output": "x", "workspace_dir": "nope"}])
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert caught.value.first.field == "evals[0].workspace_dir" and "'nope' is not a folder" in str(caught.value)


def test_an_eval_whose_graders_sit_under_an_unknown_key_is_refused_not_passed(tmp_path, capsys):
    root = repo(tmp_path / "repo", [SCORERS, {"id": 2, "prompt": "p", "grading": {"rubric": "says hello"},
                                              "difficulty": "easy"}])
    refused = load_suite(root).cases[1]
    assert refused.unsupported and "'grading'" in refused.unsupported and "'difficulty'" not in refused.unsupported
    assert main(["validate", str(root)]) == 0
    assert "case eval-2 is unsupported" in capsys.readouterr().out
    doc = run(root, {"rename-common-name": {"with": "x", "without": "y"}, "eval-2": {"with": "hello", "without": "hello"}},
              tmp_path)
    record = doc["cases"][1]
    assert record["outcome"] == "error" and "'grading'" in record["with_skill"]["error"]


def test_test_cases_with_expected_behavior_and_criteria_are_judged(tmp_path):
    (tmp_path / "skill" / "evals").mkdir(parents=True)
    (tmp_path / "skill" / "SKILL.md").write_text(SKILL_MD)
    (tmp_path / "skill" / "evals" / "evals.json").write_text(json.dumps({
        "skill_name": "tslsp", "test_cases": [{"id": "a", "name": "A", "prompt": "p", "difficulty": "hard",
                                               "expected_behavior": ["Uses 'rename'"],
                                               "evaluation_criteria": {"dry": "Runs 'dry-run' first"}}]}))
    (case,) = load_suite(tmp_path / "skill").cases
    assert [i.description for i in case.graders[0].items] == ["Uses 'rename'", "dry: Runs 'dry-run' first"]


# plugins/ts/skills/x: found by the search, by its frontmatter name.
@pytest.mark.parametrize("skill_at", ["skill/tslsp", ".claude/skills/tslsp", "plugins/ts/skills/x"])
def test_the_named_skill_is_found_outside_name_and_skills_name(tmp_path, skill_at, capsys):
    root = repo(tmp_path / "repo", [SCORERS], skill_at=skill_at)
    assert load_suite(root).skill_dir == root / skill_at
    # validate and run agree on the suite file's path as on its folder.
    assert main(["validate", str(root / "evals" / "evals.json")]) == 0
    assert main(["validate", str(root)]) == 0


def test_a_skill_found_nowhere_names_every_place_looked_and_validate_fails_as_run_does(tmp_path, capsys):
    root = repo(tmp_path / "repo", [SCORERS], skill_at="elsewhere/other")
    (root / "elsewhere" / "other" / "SKILL.md").write_text(SKILL_MD.replace("name: tslsp", "name: other"))
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    message = str(caught.value)
    for place in ("./SKILL.md", "tslsp/SKILL.md", "skills/tslsp/SKILL.md", "skill/tslsp/SKILL.md", "4 folders down"):
        assert place in message
    assert main(["validate", str(root / "evals" / "evals.json")]) == 2
    assert main(["run", str(root / "evals" / "evals.json"), "--adapter", "mock", "--no-history", "--quiet"]) == 2
