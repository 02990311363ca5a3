"""skillgrade's eval.yaml (format `skillgrade`): told from the native eval.yaml by what it holds,
each task an A/B case graded into skillgrade's reward; what it cannot place is refused in a line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.errors import SuiteError
from skillab.suite import load_suite

SKILL_MD = "---\nname: superlint\ndescription: Fix lint with superlint.\n---\nRun superlint check, fix, verify.\n"
CHECK = ('test -f .passed && s=1 || s=0; echo "log line"; '
         'echo "{\\"score\\": $s, \\"details\\": \\"$s/1 checks\\"}"')


def skill(root: Path, doc: dict, **files: str) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "eval.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


DOC = {"version": "1", "defaults": {"agent": "gemini", "trials": 5, "timeout": 120, "threshold": 0.7},
       "tasks": [{"name": "fix-lint", "instruction": "instructions/fix.md",
                  "workspace": [{"src": "fixtures/app.js", "dest": "src/app.js"}],
                  "graders": [{"type": "deterministic", "run": CHECK, "weight": 0.7},
                              {"type": "llm_rubric", "rubric": "rubrics/quality.md", "weight": 0.3}]}]}
FILES = {"instructions/fix.md": "Fix src/app.js with superlint, then create .passed.\n",
         "rubrics/quality.md": "- Mentions 'superlint'\n", "fixtures/app.js": 'var a = "x";\n'}


def test_a_skillgrade_eval_yaml_is_imported_not_refused(tmp_path):
    suite = load_suite(skill(tmp_path / "s", DOC, **FILES))
    assert suite.format == "skillgrade"
    (case,) = suite.cases
    assert case.prompt == "Fix src/app.js with superlint, then create .passed." and case.timeout_s == 120.0
    assert [t for _, t in case.seed.files] == ["src/app.js"]
    (spec,) = case.graders
    assert spec.threshold == 0.7 and [g.type for g in spec.graders] == ["deterministic", "llm_rubric"]
    assert spec.graders[1].rubric == "- Mentions 'superlint'"  # a file reference, read
    assert any("trials: 5" in w for w in suite.warnings)


def test_the_reward_weighs_the_script_score_and_the_rubric(tmp_path):
    root = skill(tmp_path / "s", DOC, **FILES)
    (root / "mock-responses.yaml").write_text(yaml.safe_dump({"fix-lint": {
        "with": {"text": "Ran superlint.", "files": {".passed": ""}}, "without": "Edited by hand."}}))
    out = tmp_path / "r.json"
    main(["run", str(root), "--adapter", "mock", "--no-history", "--no-cache", "--quiet", "--output", str(out)])
    doc = json.loads(out.read_text())
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass"
    (with_grader,) = record["with_skill"]["extra"]["graders"]
    (without_grader,) = record["without_skill"]["extra"]["graders"]
    assert (with_grader["score"], without_grader["score"]) == (1.0, 0.0)
    assert doc["reward"]["with_skill"]["mean"] == 1.0 if isinstance(doc["reward"]["with_skill"], dict) else True


def test_a_script_that_prints_no_score_gives_no_verdict_not_zero(tmp_path):
    doc = {**DOC, "tasks": [{**DOC["tasks"][0], "graders": [{"type": "deterministic", "run": "echo done"}]}]}
    root = skill(tmp_path / "s", doc, **FILES)
    out = tmp_path / "r.json"
    main(["run", str(root), "--adapter", "mock", "--no-history", "--no-cache", "--quiet", "--output", str(out)])
    (record,) = json.loads(out.read_text())["cases"]
    assert record["outcome"] == "error"
    assert "no JSON object with a 'score'" in record["with_skill"]["extra"]["graders"][0]["reason"]


def test_the_graders_folder_reaches_the_workspace_only_for_grading(tmp_path):
    doc = {**DOC, "tasks": [{**DOC["tasks"][0], "instruction": "Say hi.",
                             "graders": [{"type": "deterministic", "run": "sh graders/check.sh"}]}]}
    script = 'test -f graders/check.sh && echo \'{"score": 1, "details": "staged"}\'\n'
    root = skill(tmp_path / "s", doc, **{**FILES, "graders/check.sh": script})
    # The agent lists its workspace: graders/ is not there while it works.
    (root / "mock-responses.yaml").write_text(yaml.safe_dump({"fix-lint": {"with": "hi", "without": "hi"}}))
    out = tmp_path / "r.json"
    main(["run", str(root), "--adapter", "mock", "--no-history", "--no-cache", "--quiet", "--output", str(out)])
    (record,) = json.loads(out.read_text())["cases"]
    assert record["outcome"] == "pass_kept"


def test_a_tool_placed_outside_the_workspace_refuses_that_task_in_one_line(tmp_path, capsys):
    doc = {**DOC, "tasks": [{**DOC["tasks"][0], "workspace": [{"src": "bin/superlint", "dest": "/usr/local/bin/superlint"}]}]}
    root = skill(tmp_path / "s", doc, **{**FILES, "bin/superlint": "#!/bin/sh\n"})
    (case,) = load_suite(root).cases
    assert "/usr/local/bin/superlint outside the workspace" in case.unsupported and "skillgrade" in case.unsupported
    assert main(["validate", str(root)]) == 0
    assert capsys.readouterr().out.count("unsupported") == 1


def test_without_skill_key_the_skills_below_the_eval_folder_are_found_and_given_together(tmp_path):
    # juanca202/exercise-skills' shape: eval.yaml at the repository root, skills in .agents/skills.
    root = tmp_path / "repo"
    for name in ("hello", "roll-dice"):
        (root / ".agents/skills" / name).mkdir(parents=True)
        (root / ".agents/skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
    (root / "eval.yaml").write_text(yaml.safe_dump({k: v for k, v in DOC.items() if k != "tasks"} | {"tasks": [
        {"name": "t", "instruction": "say hi", "graders": [{"type": "llm_rubric", "rubric": "greets"}]}]}))
    assert load_suite(root).skill_dir == root / ".agents/skills"
    (root / ".agents/skills/roll-dice/SKILL.md").unlink()
    assert load_suite(root).skill_dir == root / ".agents/skills/hello"


def test_a_docker_setup_the_graders_may_need_is_named_in_a_warning_not_dropped_silently(tmp_path):
    # jimmyokusa/GoSkill's shape: defaults.docker.setup installs Go and golangci-lint for the grader.
    doc = {**DOC, "defaults": {**DOC["defaults"], "docker": {"base": "node:20-bookworm",
                                                             "setup": "apt-get install -y git curl"}}}
    root = skill(tmp_path / "s", doc, **FILES)
    (warning,) = [w for w in load_suite(root).warnings if "docker.setup" in w]
    assert "(defaults)" in warning and "without it" in warning


def test_trial_config_and_tool_usage_graders_refuse_the_task_in_one_line_not_a_list_of_errors(tmp_path, capsys):
    # gemini-cli-extensions/devops' shape: per-trial setup in skillgrade's container, and a grader
    # on the agent's own tool names (Gemini CLI's activate_skill).
    task = {**DOC["tasks"][0], "trialConfig": {"setup": "git clone https://example.invalid/site.git"},
            "graders": [*DOC["tasks"][0]["graders"],
                        {"type": "tool_usage", "expectedTools": [{"name": "activate_skill"}], "weight": 0.5}]}
    root = skill(tmp_path / "s", {**DOC, "tasks": [task]}, **FILES)
    (case,) = load_suite(root).cases
    assert "trialConfig" in case.unsupported and "activate_skill" in case.unsupported
    assert case.unsupported.endswith("run it with `skillgrade`")
    assert main(["validate", str(root)]) == 0
    assert "error:" not in capsys.readouterr().err


@pytest.mark.parametrize("task, message", [
    ({"name": "t", "graders": [{"type": "llm_rubric", "rubric": "r"}]}, "needs an 'instruction'"),
    ({"name": "t", "instruction": "i", "graders": [{"type": "script", "run": "x"}]}, "not deterministic or llm_rubric"),
    ({"name": "t", "instruction": "i", "graders": []}, "needs at least one grader"),
    ({"name": "t", "instruction": "i", "threshold": 3, "graders": [{"type": "llm_rubric", "rubric": "r"}]},
     "from 0 to 1"),
])
def test_bad_tasks_are_located_never_a_wall_of_schema_errors(tmp_path, task, message):
    root = skill(tmp_path / "s", {"version": "1", "tasks": [task]})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    (issue,) = caught.value.issues
    assert message in issue.message and issue.line is not None


def test_the_graders_fixtures_and_referenced_files_never_reach_the_with_skill_agent(tmp_path):
    # The agent under test is given the skill's bundled files; skillgrade's graders/, the task's
    # workspace fixtures and the instruction and rubric files are the evaluation's, not the skill's.
    doc = {**DOC, "tasks": [{**DOC["tasks"][0], "graders": [
        {"type": "deterministic", "run": "bash graders/check.sh"},
        {"type": "llm_rubric", "rubric": "rubrics/quality.md"}]}]}
    root = skill(tmp_path / "s", doc, **{**FILES, "graders/check.sh": "echo '{\"score\": 1}'\n",
                                         "references/guide.md": "How to lint.\n"})
    from skillab.skill import load_skill

    loaded = load_skill(root)
    assert loaded.bundled == ("references/guide.md",)
    before = loaded.content_hash()
    (root / "graders/check.sh").write_text("echo '{\"score\": 0}'\n")
    assert load_skill(root).content_hash() == before  # a grader edit is not a skill edit


def test_a_graders_folder_beside_a_native_eval_yaml_stays_part_of_the_skill(tmp_path):
    root = tmp_path / "s"
    (root / "graders").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "graders/rubric-writer.md").write_text("How to write a grader.\n")
    (root / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: hi\n    expectations: [greets]\n")
    from skillab.skill import load_skill

    assert load_skill(root).bundled == ("graders/rubric-writer.md",)
