"""task_suite.yaml (improvement-evaluator): its shapes, every validation rule, and whole runs."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.core.messages import Message
from skillab.errors import SuiteError
from skillab.formats.task_suite.specs import ContainsGrader, PytestGrader
from skillab.grading.judge import fenced_blocks
from skillab.grading.rubric import RUBRIC_SYSTEM
from skillab.providers.mock import MockClient
from skillab.suite import load_suite
from skillab.suite.model import RubricGrader

from ..fakes.agents import ListingAdapter
from ..fakes.model_server import FakeModelServer, text

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "task-suite"
EXAMPLE_SUITE = EXAMPLE / "task_suites" / "commit-message"
SKILL_MD = "---\nname: {name}\ndescription: A skill for a test.\n---\nAlways answer KEYWORD.\n"

VALID = """\
skill_id: demo
version: "1.0"
tasks:
  - id: keywords
    description: Both words, any case.
    prompt: Say the words.
    timeout_seconds: 30
    judge:
      type: contains
      expected: [POWERFUL, tier]
  - id: structured
    prompt: Reply with JSON.
    judge: {type: pytest, test_file: fixtures/test_json.py}
  - id: rubric
    prompt: Explain.
    judge:
      type: llm-rubric
      rubric: Names the trade-off.
"""


def write_suite(root: Path, text: str = VALID, *, skill: str | None = "demo", fixtures: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "task_suite.yaml").write_text(text)
    if skill:
        (root / "SKILL.md").write_text(SKILL_MD.format(name=skill))
    if fixtures:
        (root / "fixtures").mkdir(exist_ok=True)
        (root / "fixtures" / "test_json.py").write_text("def test_it():\n    assert True\n")
    return root / "task_suite.yaml"


# --- valid shapes ----------------------------------------------------------------------------


def test_a_suite_beside_its_skill_loads_every_judge(tmp_path):
    suite = load_suite(write_suite(tmp_path / "demo").parent)
    assert suite.format == "task_suite.yaml" and suite.skill_dir == tmp_path / "demo"
    keywords, structured, rubric = suite.cases
    assert keywords.name == "keywords" and keywords.description == "Both words, any case."
    assert keywords.graders == (ContainsGrader(("POWERFUL", "tier")),) and keywords.timeout_s == 30
    (pytest_grader,) = structured.graders
    assert isinstance(pytest_grader, PytestGrader) and pytest_grader.test_file == "fixtures/test_json.py"
    assert [t for _, t in pytest_grader.fixtures.files] == ["fixtures/test_json.py"]
    assert structured.timeout_s == 300  # the default
    assert rubric.graders == (RubricGrader("Names the trade-off.", 0.7),)
    assert [c.line for c in suite.cases] == [4, 11, 14]


@pytest.mark.parametrize("layout", ["skills/demo", "demo"])
def test_skill_id_finds_the_skill_elsewhere(tmp_path, layout):
    """improvement-evaluator keeps task_suites/<id>/ apart from skills/<id>/."""
    skill = tmp_path / layout
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD.format(name="demo"))
    path = write_suite(tmp_path / "task_suites" / "demo", skill=None)
    assert load_suite(path).skill_dir == skill


def test_the_example_suite_loads(tmp_path):
    suite = load_suite(EXAMPLE_SUITE)
    assert suite.skill_dir == EXAMPLE / "skills" / "commit-message"
    assert [type(c.graders[0]) for c in suite.cases] == [ContainsGrader, PytestGrader, RubricGrader]


# --- every rule, made to fail ----------------------------------------------------------------


def task_with(**fields) -> str:
    task = {"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}, **fields}
    return yaml.safe_dump({"skill_id": "demo", "version": "1.0", "tasks": [task]}, sort_keys=False)


INVALID = [
    ("version: '1.0'\ntasks: [{id: t, prompt: p, judge: {type: contains, expected: [x]}}]\n", 1, "skill_id", "is missing"),
    (task_with().replace("skill_id: demo", "skill_id: ''"), 1, "skill_id", "non-empty string"),
    (task_with().replace("version: '1.0'", "version: 1.0"), 2, "version", "quote it"),
    (task_with().replace("version: '1.0'", "version: '2.0'"), 2, "version", 'must be the string "1.0"'),
    ("skill_id: 2024-01-01\nversion: '1.0'\ntasks: []\n", 1, "skill_id", "got date '2024-01-01' — quote it"),
    ("skill_id: " + "s" * 300 + "\nversion: '1.0'\ntasks: []\n", 1, "skill_id", "(300 characters)"),
    ("skill_id: demo\nversion: '1.0'\n", 1, "tasks", "is missing"),
    ("skill_id: demo\nversion: '1.0'\ntasks: []\n", 3, "tasks", "non-empty list"),
    ("skill_id: demo\nversion: '1.0'\ntasks: [just a string]\n", 3, "tasks[0]", "must be a mapping"),
    (task_with(id=""), 4, "id", "non-empty string"),
    (task_with(prompt="  "), 5, "prompt", "non-empty string"),
    (task_with(description=3), 10, "description", "must be a string"),
    (task_with(timeout_seconds=0), 10, "timeout_seconds", "positive number"),
    (task_with(timeout_seconds=True), 10, "timeout_seconds", "positive number"),
    (task_with(timeout_seconds="300"), 10, "timeout_seconds", "positive number"),
    (task_with(judge="contains"), 6, "judge", "must be a mapping"),
    (task_with(judge={"type": "regex"}), 7, "judge.type", "must be one of contains, pytest, llm-rubric"),
    (task_with(judge={"expected": ["x"]}), 6, "judge.type", "got None"),
    (task_with(judge={"type": "contains", "expected": []}), 8, "judge.expected", "non-empty list"),
    (task_with(judge={"type": "contains", "expected": ["ok", ""]}), 10, "judge.expected[1]", "non-empty string"),
    (task_with(judge={"type": "contains", "expected": ["x"], "rubric": "r"}), 10, "rubric", "unknown key 'rubric'"),
    (task_with(judge={"type": "pytest", "test_file": "tests/test_json.py"}), 8, "judge.test_file", "not under fixtures/"),
    (task_with(judge={"type": "pytest", "test_file": "fixtures/../../etc/passwd"}), 8, "judge.test_file", "climbs out with '..'"),
    (task_with(judge={"type": "pytest", "test_file": "/etc/passwd"}), 8, "judge.test_file", "is absolute"),
    (task_with(judge={"type": "pytest", "test_file": "fixtures/test_missing.py"}), 8, "judge.test_file", "does not exist"),
    (task_with(judge={"type": "pytest"}), 6, "judge.test_file", "must name a test file"),
    (task_with(judge={"type": "llm-rubric", "rubric": ""}), 8, "judge.rubric", "non-empty string"),
    (task_with(judge={"type": "llm-rubric", "rubric": "r", "pass_threshold": 1.5}), 9, "judge.pass_threshold", "from 0 to 1"),
    (task_with(judge={"type": "llm-rubric", "rubric": "r", "pass_threshold": "high"}), 9, "judge.pass_threshold", "from 0 to 1"),
    (task_with(timeout=3), 10, "timeout", "did you mean 'timeout_seconds'?"),
]


@pytest.mark.parametrize("text, line, field, message", INVALID)
def test_each_rule_names_file_line_and_field(tmp_path, text, line, field, message):
    path = write_suite(tmp_path / "demo", text)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    found = [i for i in caught.value.issues if i.field == field]
    assert found, [str(i) for i in caught.value.issues]
    assert found[0].line == line and message in found[0].message
    assert str(found[0]).startswith(f"{path}:{line}: ")


def test_duplicate_task_ids_point_at_the_first_use(tmp_path):
    text = textwrap.dedent(
        """\
        skill_id: demo
        version: "1.0"
        tasks:
          - {id: same, prompt: p, judge: {type: contains, expected: [x]}}
          - {id: same, prompt: q, judge: {type: contains, expected: [y]}}
        """
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(write_suite(tmp_path / "demo", text))
    (issue,) = caught.value.issues
    assert issue.line == 5 and issue.case == "same" and "first used on line 4" in issue.message


def test_a_duplicate_yaml_key_is_an_error(tmp_path):
    text = task_with() + "skill_id: other\n"
    with pytest.raises(SuiteError, match="duplicate key 'skill_id'"):
        load_suite(write_suite(tmp_path / "demo", text))


def test_a_fixture_link_leading_out_is_refused(tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("def test_x(): pass\n")
    path = write_suite(tmp_path / "demo", task_with(judge={"type": "pytest", "test_file": "fixtures/link.py"}))
    os.symlink(outside, path.parent / "fixtures" / "link.py")
    with pytest.raises(SuiteError, match="goes through a symbolic link"):
        load_suite(path)


def test_a_suite_whose_skill_cannot_be_found_says_where_it_looked(tmp_path):
    path = write_suite(tmp_path / "task_suites" / "demo", skill=None)
    with pytest.raises(SuiteError, match=r"cannot find the skill 'demo'.*skills/demo/"):
        load_suite(path)


def test_every_problem_is_reported_at_once(tmp_path):
    text = "skill_id: ''\nversion: 2\ntasks:\n  - {id: a, prompt: '', judge: {type: nope}}\n"
    with pytest.raises(SuiteError) as caught:
        load_suite(write_suite(tmp_path / "demo", text))
    assert {i.field for i in caught.value.issues} == {"skill_id", "version", "prompt", "judge.type"}


def test_validate_command_reports_the_located_issue(tmp_path, capsys):
    path = write_suite(tmp_path / "demo", task_with(timeout_seconds=-5))
    assert main(["validate", str(path.parent)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:10: case t 'timeout_seconds' — must be a positive number" in err


# --- whole runs ------------------------------------------------------------------------------


def run(target: Path, tmp_path: Path, *extra: str) -> tuple[int, dict, str]:
    out = tmp_path / "results.json"
    code = main(["run", str(target), "--output", str(out), "--cache-dir", str(tmp_path / "cache"),
                 "--no-history", "--quiet", "--markdown", str(tmp_path / "report.md"), *extra])
    return code, json.loads(out.read_text()), (tmp_path / "report.md").read_text()


EXPECTED = {
    "parser-fix-message": "flip_to_pass",
    "commit-as-json": "flip_to_pass",
    "breaking-release-advice": "pass_kept",
}


def test_the_example_runs_with_the_mock_adapter(tmp_path, capsys):
    code, doc, report = run(EXAMPLE_SUITE, tmp_path, "--adapter", "mock")
    assert code == 0, capsys.readouterr().err
    assert {c["case_name"]: c["outcome"] for c in doc["cases"]} == EXPECTED
    assert doc["verdict"] == "pass" and doc["suite"]["format"] == "task_suite.yaml"
    assert doc["suite"]["skill"] == "commit-message" and doc["models"]["judge"] == "mock-judge"
    graders = {c["case_name"]: c["without_skill"]["extra"]["graders"][0] for c in doc["cases"]}
    assert graders["parser-fix-message"]["kind"] == "contains" and graders["parser-fix-message"]["score"] == 0.0
    assert graders["commit-as-json"]["kind"] == "pytest" and "KeyError" in graders["commit-as-json"]["output"]
    rubric = {c["case_name"]: c["with_skill"]["extra"]["graders"][0] for c in doc["cases"]}["breaking-release-advice"]
    assert rubric["kind"] == "llm-rubric" and rubric["score"] == 1.0 and rubric["threshold"] == 0.7
    # The failing grader's reason reaches the markdown report.
    assert "0 of 2 keywords found" in report and "some tests failed" in report


def test_an_arm_over_its_timeout_fails_the_task(tmp_path, capsys):
    path = write_suite(tmp_path / "demo", task_with(timeout_seconds=0.2))
    (path.parent / "mock-responses.yaml").write_text("t: {with: x, without: x}\n")
    code, doc, _ = run(path.parent, tmp_path, "--adapter", "mock", "--mock-latency-ms", "400")
    assert code == 0, capsys.readouterr().err
    (record,) = doc["cases"]
    for arm in ("with_skill", "without_skill"):
        checks = record[arm]["extra"]["graders"]
        assert record[arm]["passed"] is False and record[arm]["errored"] is False
        assert checks[-1]["kind"] == "timeout" and "over the case's 0.2 s" in checks[-1]["reason"]


# --- whole runs through the fake model server ------------------------------------------------


def scripted_model(suite_dir: Path):
    """The agent answers each task as the example's mock script says for its arm (it knows which
    arm it is by whether the skill is in its system prompt); the judge scores with the mock rule,
    over the wire."""
    answers = yaml.safe_load((suite_dir / "mock-responses.yaml").read_text())
    prompts = {c.prompt: c.name for c in load_suite(suite_dir).cases}
    skill_body = (EXAMPLE / "skills" / "commit-message" / "SKILL.md").read_text().split("---")[-1].strip()

    def reply(req):
        if req.api == "openai":
            assert req.system_text == RUBRIC_SYSTEM
            return text(MockClient().create([Message.user(req.last_user_text)], system=req.system_text).text)
        case = prompts[req.last_user_text]
        arm = "with" if skill_body[:200] in req.system_text else "without"
        return text(answers[case][arm])

    return reply


@pytest.fixture
def model_server(monkeypatch):
    with FakeModelServer(scripted_model(EXAMPLE_SUITE)) as fake:
        fake.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "TaskSuite" * 5,
                        openai_key="sk-proj-" + "Judge" * 8)
        yield fake


def test_the_example_runs_through_the_fake_model_server(model_server, tmp_path, capsys):
    code, doc, _ = run(EXAMPLE_SUITE, tmp_path, "--model", "claude-haiku-4-5", "--judge-model", "gpt-4o")
    assert code == 0, capsys.readouterr().err
    assert {c["case_name"]: c["outcome"] for c in doc["cases"]} == EXPECTED
    assert doc["verdict"] == "pass" and doc["models"] == {
        "agent": "claude-haiku-4-5", "judge": "gpt-4o", "judge_prompt_sha256": doc["models"]["judge_prompt_sha256"],
        "judge_same_family": False, "judge_sampling": {"temperature": 0.0, "seed": None},
    }
    judge_calls = [r for r in model_server.requests if r.api == "openai"]
    # One rubric call per arm of the llm-rubric task; none for the contains and pytest tasks.
    assert len(judge_calls) == 2
    assert {fenced_blocks(r.last_user_text)["RUBRIC"].splitlines()[0] for r in judge_calls} == {
        "- The message has a 'BREAKING CHANGE' footer."
    }


def test_a_suite_copied_elsewhere_keeps_working(tmp_path, capsys):
    """The skill is found by skill_id wherever the pair of directories is moved."""
    shutil.copytree(EXAMPLE, tmp_path / "copy")
    code, doc, _ = run(tmp_path / "copy" / "task_suites" / "commit-message", tmp_path, "--adapter", "mock")
    assert code == 0, capsys.readouterr().err
    assert doc["suite"]["skill_dir"] == str(tmp_path / "copy" / "skills" / "commit-message")


# --- the pytest judge's tests stay out of the agents' reach ----------------------------------


def test_fixtures_beside_the_skill_never_reach_an_agent_but_reach_the_judge(tmp_path):
    from skillab.engine.prepare import prepare_suite
    from skillab.engine.runner import Execution

    from ..configs import run_config

    path = write_suite(tmp_path / "demo", task_with(judge={"type": "pytest", "test_file": "fixtures/test_json.py"}))
    (path.parent / "notes.md").write_text("bundled with the skill\n")
    config = run_config(adapter="listing", cache_enabled=False)
    prepared = prepare_suite(path.parent, config.engine)
    # Not a bundled file, so neither staged into workspaces nor copied by discover/claude-code.
    assert "notes.md" in prepared.skill.bundled
    assert not any(rel.startswith("fixtures/") for rel in prepared.skill.bundled)
    adapter = ListingAdapter('{"ok": true}')
    (record,) = Execution(prepared, config, adapter, None, None, None).run().log.records
    assert "notes.md" in adapter.seen["with_skill"]  # the skill's own files reach it
    for arm in ("with_skill", "without_skill"):
        assert not any(f.startswith("fixtures/") for f in adapter.seen[arm])
    assert record.with_skill.passed and record.with_skill.graders[0].reason == "the tests passed"


def test_an_extra_top_level_key_is_accepted_with_a_warning(tmp_path):
    path = write_suite(tmp_path / "demo", task_with() + "description: what this suite is for\n")
    suite = load_suite(path)
    (warning,) = suite.warnings
    assert ":10:" in warning and "'description'" in warning


def test_the_skill_is_found_above_a_relative_suite_path(tmp_path, monkeypatch):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nbody\n")
    suites = tmp_path / "suites" / "demo"
    suites.mkdir(parents=True)
    (suites / "task_suite.yaml").write_text(task_with())
    monkeypatch.chdir(suites)
    suite = load_suite(Path("task_suite.yaml"))
    assert suite.skill_dir.resolve() == (tmp_path / "skills" / "demo").resolve()
