"""ruby-skill-bench evals: their shapes, every criteria.json rule, blind scoring and whole runs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.core.messages import Message
from skillab.errors import SuiteError
from skillab.formats.ruby_bench.dimensions import DIMENSION_SYSTEM
from skillab.formats.ruby_bench.specs import DimensionGrader
from skillab.grading.judge import fenced_blocks
from skillab.providers.mock import MockClient
from skillab.suite import load_suite
from skillab.suite.json_source import parse_located_json

from ..fakes.model_server import FakeModelServer, Reply, ToolCallSpec, text

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "ruby-skill-bench"
EXAMPLE_EVAL = EXAMPLE / "evals" / "skills" / "service-object" / "extract-order-total"
SKILL_MD = "---\nname: {name}\ndescription: A skill for a test.\n---\nWrite service objects.\n"
FIVE = [
    {"name": "correctness", "max_score": 30},
    {"name": "skill_adherence", "max_score": 25},
    {"name": "code_quality", "max_score": 20},
    {"name": "test_coverage", "max_score": 15},
    {"name": "documentation", "max_score": 10},
]


def criteria(**overrides) -> dict:
    return {"context": "Checks the extraction.", "dimensions": FIVE, "pass_threshold": 70,
            "minimum_delta": 10, **overrides}


def make_eval(root: Path, criteria_text: str | None = None, *, skill: str = "greeter",
              eval_path: str = "evals/skills/greeter/basic") -> Path:
    """A repository in ruby-skill-bench's layout; returns the eval directory."""
    (root / "skills" / skill).mkdir(parents=True, exist_ok=True)
    (root / "skills" / skill / "SKILL.md").write_text(SKILL_MD.format(name=skill))
    directory = root / eval_path
    (directory / "lib").mkdir(parents=True, exist_ok=True)
    (directory / "task.md").write_text("# Eval\n\n## Task\nBuild `Greeter`.\n")
    (directory / "criteria.json").write_text(criteria_text or json.dumps(criteria(), indent=2))
    (directory / "lib" / "greeter.rb").write_text("class Greeter; end\n")
    (directory / "mock-responses.yaml").write_text("basic: {with: a, without: b}\n")
    return directory


# --- valid shapes ----------------------------------------------------------------------------


def test_an_eval_directory_is_one_case_with_its_workspace(tmp_path):
    directory = make_eval(tmp_path)
    suite = load_suite(directory)
    assert suite.format == "ruby-skill-bench" and suite.skill_dir == tmp_path / "skills" / "greeter"
    (case,) = suite.cases
    assert case.name == "basic" and case.prompt == "# Eval\n\n## Task\nBuild `Greeter`.\n"  # verbatim
    assert case.description == "Checks the extraction."
    # Every other file is the workspace: not the eval's definition, not the mock script.
    assert [target for _, target in case.seed.files] == ["lib/greeter.rb"]
    (grader,) = case.graders
    assert isinstance(grader, DimensionGrader)
    assert [d.name for d in grader.dimensions] == [d["name"] for d in FIVE] and grader.max_total == 100
    assert (grader.pass_threshold, grader.minimum_delta) == (70, 10)


def test_defaults_custom_dimensions_and_descriptions(tmp_path):
    dims = [*FIVE[:4], {"name": "documentation", "max_score": 5}, {"name": "rails_idioms", "max_score": 5,
                                                                   "description": "Uses `ApplicationService`."}]
    text = json.dumps({"context": "", "dimensions": dims})
    (grader,) = load_suite(make_eval(tmp_path, text)).cases[0].graders
    assert (grader.pass_threshold, grader.minimum_delta) == (70, 10)
    assert grader.dimensions[-1].name == "rails_idioms" and grader.dimensions[-1].description == "Uses `ApplicationService`."


def test_the_quickstart_layout_finds_the_only_skill(tmp_path):
    """examples/offline-quickstart: evals/improve-greeting beside skills/greeting-skill."""
    directory = make_eval(tmp_path, skill="greeting-skill", eval_path="evals/improve-greeting")
    assert load_suite(directory).skill_dir == tmp_path / "skills" / "greeting-skill"


def test_the_example_loads(tmp_path):
    suite = load_suite(EXAMPLE_EVAL / "criteria.json")
    assert suite.skill_dir == EXAMPLE / "skills" / "service-object"
    assert sorted(t for _, t in suite.cases[0].seed.files) == ["app/controllers/orders_controller.rb", "test/test_helper.rb"]


# --- every rule, made to fail ----------------------------------------------------------------


def lines(obj: dict) -> str:
    return json.dumps(obj, indent=2)


INVALID = [
    (lines(criteria(extra=True)), 27, "extra", "unknown key 'extra'"),
    (lines(criteria(context=5)), 2, "context", "must be a string"),
    (lines({k: v for k, v in criteria().items() if k != "dimensions"}), None, "dimensions", "is missing"),
    (lines(criteria(dimensions=[])), 3, "dimensions", "non-empty list"),
    (lines(criteria(dimensions=[*FIVE[:4], "documentation"])), 20, "dimensions[4]", "must be an object"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": 10, "weight": 1}])), 23, "weight", "unknown key 'weight'"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "Documentation", "max_score": 10}])), 21, "dimensions[4].name", "lower_snake_case"),
    (lines(criteria(dimensions=[*FIVE[:4], {"max_score": 10}])), 20, "dimensions[4].name", "lower_snake_case"),
    (lines(criteria(dimensions=[*FIVE, {"name": "correctness", "max_score": 1}])), 25, "dimensions[5].name", "duplicate dimension 'correctness'"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": 0}])), 22, "dimensions[4].max_score", "whole number from 1 to 100"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": 10.5}])), 22, "dimensions[4].max_score", "whole number"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": "10"}])), 22, "dimensions[4].max_score", "whole number"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": True}])), 22, "dimensions[4].max_score", "whole number"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": 10, "description": 3}])), 23, "dimensions[4].description", "must be a string"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "style", "max_score": 10}])), 3, "dimensions", "must include documentation"),
    (lines(criteria(dimensions=[*FIVE[:4], {"name": "documentation", "max_score": 11}])), 3, "dimensions", "sum to 101; they must sum to exactly 100"),
    (lines(criteria(pass_threshold=150)), 25, "pass_threshold", "from 0 to 100"),
    (lines(criteria(pass_threshold="70")), 25, "pass_threshold", "from 0 to 100"),
    (lines(criteria(minimum_delta=None)), 26, "minimum_delta", "got null"),
    ('{\n  "context": "a",\n  "context": "b",\n  "dimensions": []\n}', 3, "context", "duplicate key 'context' (first on line 2)"),
]


@pytest.mark.parametrize("text, line, field, message", INVALID)
def test_each_rule_names_file_line_and_field(tmp_path, text, line, field, message):
    directory = make_eval(tmp_path, text)
    with pytest.raises(SuiteError) as caught:
        load_suite(directory)
    found = [i for i in caught.value.issues if i.field == field]
    assert found, [str(i) for i in caught.value.issues]
    assert message in found[0].message and found[0].line == (line or 1)
    assert found[0].path == directory / "criteria.json"


@pytest.mark.parametrize(
    "text, line, message",
    [
        ('{\n  "context": "a",\n  "dimensions": [1,\n 2,,]\n}', 4, "expecting value"),
        ('{\n  "context": "a"\n  "dimensions": []\n}', 3, "expected ',' or '}'"),
        ("{'context': 1}", 1, "expected a key in double quotes"),
        ('{"context": "a"} trailing', 1, "extra data"),
        ("", 1, "ends where a value was expected"),
        ("[" * 200 + "]" * 200, 1, "deeper than"),
    ],
)
def test_malformed_json_names_the_line(tmp_path, text, line, message):
    directory = make_eval(tmp_path, text or " ")
    with pytest.raises(SuiteError) as caught:
        load_suite(directory)
    (issue,) = caught.value.issues
    assert issue.line == line and message in issue.message and "invalid JSON" in issue.message


def test_located_json_keeps_the_lines_of_keys_and_items():
    doc = parse_located_json('{\n "a": [\n  1,\n  {"b": 2}\n ]\n}', Path("x.json"))
    assert doc.value == {"a": [1, {"b": 2}]}
    assert doc.lines[("a",)] == 2 and doc.lines[("a", 1)] == 4 and doc.lines[("a", 1, "b")] == 4


def test_the_eval_directory_must_hold_a_prompt_and_no_skill(tmp_path):
    directory = make_eval(tmp_path)
    (directory / "task.md").unlink()
    with pytest.raises(SuiteError, match="task.md: is missing"):
        load_suite(directory)
    (directory / "task.md").write_text("  \n")
    with pytest.raises(SuiteError, match="task.md:1: is empty"):
        load_suite(directory)
    (directory / "task.md").write_text("Do it.\n")
    (directory / "SKILL.md").write_text(SKILL_MD.format(name="greeter"))
    with pytest.raises(SuiteError, match="whose files are the agent's workspace"):
        load_suite(directory)


def test_a_link_in_the_workspace_is_refused(tmp_path):
    directory = make_eval(tmp_path)
    os.symlink("/etc/passwd", directory / "passwd")
    with pytest.raises(SuiteError, match="passwd: is a symbolic link"):
        load_suite(directory)


def test_an_eval_without_a_findable_skill_says_how_to_lay_it_out(tmp_path):
    directory = make_eval(tmp_path, skill="other", eval_path="evals/skills/greeter/basic")
    (tmp_path / "skills" / "second").mkdir()
    (tmp_path / "skills" / "second" / "SKILL.md").write_text(SKILL_MD.format(name="second"))
    with pytest.raises(SuiteError, match="cannot tell which skill this eval evaluates"):
        load_suite(directory)


# --- whole runs ------------------------------------------------------------------------------


def run(target: Path, tmp_path: Path, *extra: str) -> tuple[int, dict, str, str]:
    out = tmp_path / "results.json"
    code = main(["run", str(target), "--output", str(out), "--cache-dir", str(tmp_path / "cache"),
                 "--no-history", "--quiet", "--markdown", str(tmp_path / "report.md"), *extra])
    return code, json.loads(out.read_text()), (tmp_path / "report.md").read_text(), str(out)


def dimension_scores(arm: dict) -> dict[str, float]:
    (grader,) = arm["extra"]["graders"]
    return {d["name"]: d["score"] for d in grader["dimensions"]}


def test_the_example_runs_with_the_mock_adapter(tmp_path, capsys):
    code, doc, report, _ = run(EXAMPLE_EVAL, tmp_path, "--adapter", "mock")
    out = capsys.readouterr().out
    assert code == 0
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass" and doc["verdict"] == "pass"
    assert dimension_scores(record["with_skill"]) == {
        "correctness": 30, "skill_adherence": 25, "code_quality": 20, "test_coverage": 15, "documentation": 0}
    assert dimension_scores(record["without_skill"]) == {
        "correctness": 15, "skill_adherence": 0, "code_quality": 20, "test_coverage": 0, "documentation": 0}
    # The terminal table: the criteria verdict, the per-dimension rows, the weak dimensions.
    criteria_line = next(line for line in out.splitlines() if line.startswith("  criteria "))
    assert "extract-order-total: with 90/100 · without 35/100 · delta +55" in criteria_line
    assert criteria_line.endswith(": pass")
    assert "skill_adherence       0/25      25/25     +25" in out
    assert "weak (with skill) documentation 0/10" in out and "@param" in out
    # The markdown report: the same table, and the judge's reasons.
    assert "| skill\\_adherence | 0/25 | 25/25 | +25 |" in report
    assert "with 90/100, without 35/100, Δ +55" in report and "✅ pass" in report
    assert "- without skill · test\\_coverage 0/15:" in report
    # The results document carries the same verdict for other tools to read.
    (verdict,) = doc["criteria"]
    assert verdict["passed"] is True and verdict["delta"] == 55 and verdict["with_total"] == 90
    assert {d["name"]: d["delta"] for d in verdict["dimensions"]}["skill_adherence"] == 25


def test_the_criteria_verdict_can_fail_where_the_ab_outcome_passes(tmp_path, capsys):
    """Each arm passes on its own total; ruby-skill-bench also asks for the minimum delta."""
    shutil.copytree(EXAMPLE, tmp_path / "repo")
    directory = tmp_path / "repo" / EXAMPLE_EVAL.relative_to(EXAMPLE)
    data = json.loads((directory / "criteria.json").read_text())
    (directory / "criteria.json").write_text(json.dumps({**data, "minimum_delta": 60}))
    code, doc, report, _ = run(directory, tmp_path, "--adapter", "mock")
    out = capsys.readouterr().out
    assert code == 0 and doc["cases"][0]["outcome"] == "flip_to_pass"
    assert "(needs with >= 70 and delta >= +60): fail" in out
    assert "❌ fail" in report
    assert doc["criteria"][0]["passed"] is False and doc["criteria"][0]["minimum_delta"] == 60


def test_workspace_files_reach_both_arms_and_nothing_else_does(tmp_path, capsys, request):
    directory = make_eval(tmp_path)
    (directory / "mock-responses.yaml").write_text(yaml.safe_dump({"basic": {
        "with": {"text": "done", "files": {"lib/greeter.rb": "class Greeter\n  def self.call; end\nend\n"}},
        "without": "done",
    }}))
    code, doc, _, _ = run(directory, tmp_path, "--adapter", "mock", "--keep-workspaces")
    assert code == 0, capsys.readouterr().err
    (record,) = doc["cases"]
    kept = Path(record["with_skill"]["extra"]["workspace"]).parents[1]
    request.addfinalizer(lambda: shutil.rmtree(kept, ignore_errors=True))
    for arm in ("with_skill", "without_skill"):
        root = Path(record[arm]["extra"]["workspace"])
        assert (root / "lib" / "greeter.rb").is_file()
        assert not (root / "criteria.json").exists() and not (root / "task.md").exists()
        assert not (root / "mock-responses.yaml").exists() and not (root / "SKILL.md").exists()
    with_file = Path(record["with_skill"]["extra"]["workspace"]) / "lib" / "greeter.rb"
    without_file = Path(record["without_skill"]["extra"]["workspace"]) / "lib" / "greeter.rb"
    assert "self.call" in with_file.read_text() and without_file.read_text() == "class Greeter; end\n"


# --- through the fake model server: files written by tool calls, a blind judge over the wire -


def scripted_model(directory: Path):
    answers = yaml.safe_load((directory / "mock-responses.yaml").read_text())["extract-order-total"]
    skill_md = (EXAMPLE / "skills" / "service-object" / "SKILL.md").read_text()
    skill_rule = "Return a `Result` (`success?`, `value`, `error`)"
    assert skill_rule in skill_md

    def reply(req):
        if req.api == "openai":
            assert req.system_text == DIMENSION_SYSTEM
            return text(MockClient().create([Message.user(req.last_user_text)], system=req.system_text).text)
        arm = answers["with" if skill_rule in req.system_text else "without"]
        if not req.tool_results:
            calls = [ToolCallSpec("write_file", {"path": p, "content": c}) for p, c in arm["files"].items()]
            return Reply(tool_calls=calls)
        return text(arm["text"])

    return reply


@pytest.fixture
def model_server(monkeypatch):
    with FakeModelServer(scripted_model(EXAMPLE_EVAL)) as fake:
        fake.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "RubyBench" * 5,
                        openai_key="sk-proj-" + "Judge" * 8)
        yield fake


def test_the_example_runs_through_the_fake_model_server_with_a_blind_judge(model_server, tmp_path, capsys):
    code, doc, report, _ = run(EXAMPLE_EVAL, tmp_path, "--model", "claude-haiku-4-5", "--judge-model", "gpt-4o")
    assert code == 0, capsys.readouterr().err
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass" and doc["verdict"] == "pass"
    assert sum(dimension_scores(record["with_skill"]).values()) == 90
    assert sum(dimension_scores(record["without_skill"]).values()) == 35
    judge_calls = [r for r in model_server.requests if r.api == "openai"]
    assert len(judge_calls) == 2  # one per arm, never both arms in one call
    works = [fenced_blocks(r.last_user_text)["WORK"] for r in judge_calls]
    with_work = next(w for w in works if "class CalculateOrderTotal" in w)
    without_work = next(w for w in works if "class OrderTotalCalculator" in w)
    assert "OrderTotalCalculator" not in with_work and "CalculateOrderTotal\n" not in without_work
    assert "calculate_order_total_test.rb (new)" in with_work
    for call in judge_calls:
        user = call.last_user_text.lower()
        assert "with_skill" not in user and "without_skill" not in user and "skill_md" not in user
    assert "| correctness | 15/30 | 30/30 | +15 |" in report
