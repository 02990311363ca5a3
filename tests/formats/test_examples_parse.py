"""The example skills: they load, their mock scripts fit their suites, and their graders grade.

Each case's arms are replayed the way a run does it, without the engine: a workspace holding the
skill's bundled files and the case's setup, the mock adapter's answer (and files), the reply
staged as response.txt, every validator run through the shell, every expectation through the
real judge prompt and the mock judge. The resulting outcomes are pinned below, so editing a
grader, a suite or a script shows here first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from skillab.agents.base import ArmRequest
from skillab.agents.mock import MockAdapter, load_mock_responses
from skillab.grading.judge import Judge
from skillab.grading.trajectory import render_v1
from skillab.providers.mock import MockClient
from skillab.skill.loader import Skill, load_skill
from skillab.suite import Case, Suite, load_suite
from skillab.suite.trigger import suite_trigger_queries

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
# The eval.yaml examples; examples/duplicate-invoices (evals/evals.json) runs in test_evals_json.
# examples/team-facts is the real model's example, sized for a 135M model: tests/real_model runs it.
SKILL_DIRS = sorted(p.parent for p in EXAMPLES.glob("*/SKILL.md")
                    if (p.parent / "eval.yaml").is_file() and p.parent.name != "team-facts")

EXPECTED_OUTCOMES = {
    "sql-migration-safety": {
        "add-optional-column": "flip_to_pass",
        "drop-legacy-column": "flip_to_pass",
        "index-on-large-table": "flip_to_pass",
        "rename-column": "flip_to_pass",
        "required-column-backfill": "fail_kept",
        "create-audit-table": "pass_kept",
        "reporting-query": "flip_to_fail",
    },
    "changelog-entry": {
        "bugfix-entry": "flip_to_pass",
        "update-changelog-file": "flip_to_pass",
        "breaking-change": "flip_to_pass",
        "skip-internal-changes": "flip_to_pass",
        "deprecation-without-hash": "flip_to_pass",
        "security-section-question": "pass_kept",
    },
}


def ids(dirs):
    return [d.name for d in dirs]


def test_the_examples_are_the_ones_pinned_here():
    assert ids(SKILL_DIRS) == sorted(EXPECTED_OUTCOMES)


@pytest.mark.parametrize("skill_dir", SKILL_DIRS, ids=ids(SKILL_DIRS))
def test_skill_and_suite_load(skill_dir):
    skill = load_skill(skill_dir)
    assert skill.name == skill_dir.name
    assert len(skill.description) > 40 and len(skill.body) > 500
    assert any(rel.startswith("scripts/") for rel in skill.bundled)
    assert "mock-responses.yaml" not in skill.bundled
    suite = load_suite(skill_dir)
    assert 5 <= len(suite.cases) <= 8


@pytest.mark.parametrize("skill_dir", SKILL_DIRS, ids=ids(SKILL_DIRS))
def test_mock_responses_name_only_cases_of_the_suite(skill_dir):
    suite = load_suite(skill_dir)
    responses = load_mock_responses(skill_dir / "mock-responses.yaml")
    runnable = {c.name for c in suite.cases if not c.trigger_only}
    queries = {q.name for q in suite_trigger_queries(suite, skill_dir, skill_name=skill_dir.name)}
    assert set(responses) <= {c.name for c in suite.cases} | queries
    # Every case the A/B loop runs is scripted for both arms: no default answers in examples.
    # Entries with no arm script only the trigger trials (``loads:``).
    answered = {case for case, arms in responses.items() if arms}
    assert answered == runnable
    assert all({"with", "without"} <= set(responses[case]) for case in answered)


def test_the_suites_together_exercise_every_feature():
    cases = [c for d in SKILL_DIRS for c in load_suite(d).cases]
    validators = [v for c in cases for v in c.validators]
    scripted_files = [
        rel
        for d in SKILL_DIRS
        for arms in load_mock_responses(d / "mock-responses.yaml").values()
        for answer in arms.values()
        for rel in answer.files
    ]
    assert any(v.cmd.startswith("!") and "grep" in v.cmd for v in validators)
    assert any(v.expect_exit_code != 0 for v in validators)
    assert any("scripts/" in v.cmd for v in validators)
    assert any(c.expectations for c in cases)
    assert any(c.setup.files and c.setup.commands for c in cases)
    assert any(c.setup.commands and not c.setup.files for c in cases)
    assert any(c.trigger_only for c in cases)
    assert any(c.should_trigger is not None and not c.trigger_only for c in cases)
    assert any(rel.split("/")[0] in v.cmd for rel in scripted_files for v in validators)


def test_the_outcome_mix_is_honest():
    mix = Counter(o for outcomes in EXPECTED_OUTCOMES.values() for o in outcomes.values())
    assert mix["flip_to_pass"] > len(list(mix.elements())) / 2
    assert mix["pass_kept"] >= 1 and mix["fail_kept"] == 1 and mix["flip_to_fail"] >= 1


def replay_cases():
    for skill_dir in SKILL_DIRS:
        for name in EXPECTED_OUTCOMES.get(skill_dir.name, {}):
            yield pytest.param(skill_dir, name, id=f"{skill_dir.name}/{name}")


@pytest.mark.parametrize("skill_dir, case_name", list(replay_cases()))
def test_graders_give_the_pinned_outcome(tmp_path, skill_dir, case_name):
    skill = load_skill(skill_dir)
    suite = load_suite(skill_dir)
    case = next(c for c in suite.cases if c.name == case_name)
    adapter = MockAdapter(load_mock_responses(skill_dir / "mock-responses.yaml"))
    with_passed = replay_arm(tmp_path / "with", skill, suite, case, adapter, "with_skill")
    without_passed = replay_arm(tmp_path / "without", skill, suite, case, adapter, "without_skill")
    outcome = {
        (True, False): "flip_to_pass",
        (True, True): "pass_kept",
        (False, False): "fail_kept",
        (False, True): "flip_to_fail",
    }[with_passed, without_passed]
    assert outcome == EXPECTED_OUTCOMES[skill_dir.name][case_name]


def replay_arm(workspace: Path, skill: Skill, suite: Suite, case: Case, adapter, arm) -> bool:
    workspace.mkdir()
    for rel in skill.bundled:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(skill.root / rel, workspace / rel)
    for rel, content in case.setup.files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(content, encoding="utf-8")
    for command in case.setup.commands:
        shell(command, workspace, {}, check=True)
    loaded = skill if arm == "with_skill" else None
    result = adapter.run(ArmRequest(case=case, arm=arm, skill=loaded, workspace=workspace))
    (workspace / "response.txt").write_text(result.final_output, encoding="utf-8")
    env = {"RESPONSE_TEXT": result.final_output}
    validators_pass = True
    for validator in case.validators:
        code = shell(validator.cmd, workspace, env).returncode
        # Anything but a clean verdict is a broken grader, which an example must never ship.
        assert code in (0, 1, validator.expect_exit_code), f"{validator.label}: exit {code}"
        validators_pass &= code == validator.expect_exit_code
    verdicts = Judge(MockClient()).grade_all(
        list(case.expectations),
        prompt=case.prompt,
        transcript=render_v1(result.trajectory),
        final_output=result.final_output,
    )
    assert not any(v.errored for v in verdicts)
    return validators_pass and all(v.passed for v in verdicts)


def shell(command: str, cwd: Path, env: dict[str, str], check: bool = False):
    full_env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "LC_ALL": "C.UTF-8", **env}
    done = subprocess.run(
        ["sh", "-c", command], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=30
    )
    if check:
        assert done.returncode == 0, f"setup {command!r} failed: {done.stderr}"
    return done


@pytest.mark.parametrize(
    "script, text, code",
    [
        ("sql-migration-safety/scripts/check_migration.py", "-- migrate:up\nCREATE TABLE t (id int);\n-- migrate:down\nDROP TABLE t;\n", 0),
        ("sql-migration-safety/scripts/check_migration.py", "-- migrate:up\nDROP TABLE t;\n-- migrate:down\nCREATE TABLE t (id int);\n", 1),
        ("sql-migration-safety/scripts/check_migration.py", "-- migrate:up transaction:false\nCREATE INDEX CONCURRENTLY t_a_idx ON t (a);\n-- migrate:down\nSELECT 1;\n", 1),
        ("sql-migration-safety/scripts/check_migration.py", "", 1),
        ("changelog-entry/scripts/check_changelog.py", "## [Unreleased]\n\n### Fixed\n- Works again (#1)\n", 0),
        ("changelog-entry/scripts/check_changelog.py", "## [Unreleased]\n\n### Fixed\n- Works (#1)\n\n### Added\n- New (#2)\n", 1),
        ("changelog-entry/scripts/check_changelog.py", "## [Unreleased]\n\n### Fixed\n- Works (abc1234, #1)\n", 1),
        ("changelog-entry/scripts/check_changelog.py", "## [Unreleased]\n\n### Fixed\n", 1),
    ],
)
def test_grader_scripts_on_small_inputs(tmp_path, script, text, code):
    (tmp_path / "response.txt").write_text(text, encoding="utf-8")
    done = shell(f"python3 {EXAMPLES / script}", tmp_path, {})
    assert done.returncode == code, done.stdout + done.stderr


@pytest.mark.parametrize(
    "script", ["sql-migration-safety/scripts/check_migration.py", "changelog-entry/scripts/check_changelog.py"]
)
def test_grader_scripts_refuse_bad_arguments_with_exit_2(tmp_path, script):
    assert shell(f"python3 {EXAMPLES / script} --bogus", tmp_path, {}).returncode == 2
