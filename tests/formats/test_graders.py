"""The graders of imported formats, one by one, in real workspaces and through the judge seam."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from skillab.core.checks import DimensionScore, GraderResult
from skillab.core.messages import ModelResponse
from skillab.core.records import ArmRecord, CaseRecord
from skillab.errors import ProviderError
from skillab.formats.ruby_bench.dimensions import (
    DIMENSION_SYSTEM,
    criteria_verdicts,
    grade_dimensions,
    parse_dimension_reply,
)
from skillab.formats.ruby_bench.specs import Dimension, DimensionGrader
from skillab.formats.skillsbench.specs import VerifierGrader
from skillab.formats.skillsbench.verifier import grade_verifier, read_reward
from skillab.formats.task_suite.graders import grade_contains, grade_pytest
from skillab.formats.task_suite.specs import ContainsGrader, PytestGrader
from skillab.grading.graders import (
    AI_OUTPUT_ENV,
    GradingInput,
)
from skillab.grading.judge import Judge, UnreadableReply, fenced_blocks
from skillab.grading.rubric import grade_rubric, parse_score_reply
from skillab.grading.workspace_diff import render_changes, snapshot
from skillab.providers.base import ModelProvider
from skillab.providers.mock import MockClient
from skillab.suite.loading import seed_files
from skillab.suite.model import RubricGrader

FIVE = (
    Dimension("correctness", 30),
    Dimension("skill_adherence", 25),
    Dimension("code_quality", 20),
    Dimension("test_coverage", 15),
    Dimension("documentation", 10),
)


class Recording(ModelProvider):
    """A judge model that answers from a function and keeps every call."""

    provider = "recording"
    model = "recording-judge"

    def __init__(self, answer):
        self.answer = answer
        self.calls: list[tuple[str, str]] = []

    def create(self, messages, *, system, **_) -> ModelResponse:
        self.calls.append((system, messages[-1].text))
        return ModelResponse(self.answer(system, messages[-1].text))


class Down(ModelProvider):
    provider = "down"

    def __init__(self):
        super().__init__("down")

    def create(self, messages, *, system, **_) -> ModelResponse:
        raise ProviderError("503 from the judge", status=503)



def grading(workspace, final="", model=None, work="", prompt="Do the task.") -> GradingInput:
    judge = Judge(model) if model is not None else None
    return GradingInput(workspace, prompt, final, "[Step 1] User: Do the task.", work, judge)


# --- contains --------------------------------------------------------------------------------


def test_contains_scores_the_share_found_but_passes_only_with_every_keyword(workspace):
    spec = ContainsGrader(("POWERFUL", "tier", "Refs: #1"))
    partial = grade_contains(spec, grading(workspace, "a powerful TIER"))
    assert not partial.passed and partial.score == round(2 / 3, 4)
    assert "'Refs: #1'" in partial.reason and "every keyword is required" in partial.reason
    full = grade_contains(spec, grading(workspace, "Powerful tier. refs: #1"))
    assert full.passed and full.score == 1.0 and not full.errored


# --- pytest ----------------------------------------------------------------------------------


def pytest_spec(tmp_path: Path, files: dict[str, str], test_file: str) -> PytestGrader:
    suite = tmp_path / "suite"
    for rel, text in files.items():
        (suite / rel).parent.mkdir(parents=True, exist_ok=True)
        (suite / rel).write_text(text)
    pairs = [(suite / rel, rel) for rel in files]
    return PytestGrader(fixtures=seed_files(pairs, root=suite), test_file=test_file, timeout_s=60)


JSON_TEST = f"""
import json, os
def test_ok():
    with open(os.environ["{AI_OUTPUT_ENV}"]) as handle:
        assert json.load(handle)["ok"] is True
"""


def test_pytest_judge_reads_the_final_output_through_ai_output_file(tmp_path, workspace):
    spec = pytest_spec(tmp_path, {"fixtures/test_out.py": JSON_TEST}, "fixtures/test_out.py")
    passed = grade_pytest(spec, grading(workspace, '{"ok": true}'))
    assert passed.passed and not passed.errored, passed.output
    failed = grade_pytest(spec, grading(workspace, '{"ok": false}'))
    assert not failed.passed and not failed.errored
    assert "assert False is True" in failed.output or "AssertionError" in failed.output


def test_an_agent_written_conftest_cannot_change_the_pytest_verdict(tmp_path, workspace):
    spec = pytest_spec(tmp_path, {"fixtures/test_out.py": JSON_TEST}, "fixtures/test_out.py")
    # The agent plants a conftest that would pass every test, and a pytest.ini, at the root.
    (workspace.root / "conftest.py").write_text(
        "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n"
        "    outcome = yield\n    outcome.force_result(None)\n"
    )
    (workspace.root / "pytest.ini").write_text("[pytest]\naddopts = --co\n")
    # ... and a judge directory of its own, which is replaced.
    (workspace.root / ".skillab-judge").mkdir()
    (workspace.root / ".skillab-judge" / "conftest.py").write_text("raise SystemExit(0)\n")
    result = grade_pytest(spec, grading(workspace, '{"ok": false}'))
    assert not result.passed and not result.errored, result.output


def test_a_test_file_that_collects_nothing_is_no_verdict(tmp_path, workspace):
    spec = pytest_spec(tmp_path, {"fixtures/test_none.py": "X = 1\n"}, "fixtures/test_none.py")
    result = grade_pytest(spec, grading(workspace, "anything"))
    assert result.errored and not result.passed and "collected no tests" in result.reason


def test_fixture_helpers_beside_the_test_file_are_importable(tmp_path, workspace):
    files = {
        "fixtures/helpers.py": "EXPECTED = 'hello'\n",
        "fixtures/test_hello.py": (
            "import os\nfrom helpers import EXPECTED\n"
            f"def test_it():\n    assert open(os.environ['{AI_OUTPUT_ENV}']).read() == EXPECTED\n"
        ),
    }
    spec = pytest_spec(tmp_path, files, "fixtures/test_hello.py")
    assert grade_pytest(spec, grading(workspace, "hello")).passed


# --- the rubric judge ------------------------------------------------------------------------


def test_rubric_passes_at_the_threshold_and_carries_the_judges_reason(workspace):
    spec = RubricGrader("Mentions the trade-off.", pass_threshold=0.7)
    at = Recording(lambda s, u: '{"score": 0.7, "reason": "It names the trade-off."}')
    result = grade_rubric(spec, grading(workspace, "the trade-off is ...", at))
    assert result.passed and result.score == 0.7 and "It names the trade-off." in result.reason
    below = Recording(lambda s, u: 'Sure! ```json\n{"score": 0.69, "reason": "Vague."}\n```')
    assert not grade_rubric(spec, grading(workspace, "x", below)).passed
    system, user = at.calls[0]
    blocks = fenced_blocks(user)
    assert blocks["RUBRIC"] == "Mentions the trade-off." and blocks["FINAL_OUTPUT"] == "the trade-off is ..."
    assert "score" in system


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("", "empty"),
        ('{"passed": true, "reason": "x"}', "no JSON object with a 'score'"),
        ('{"score": 1.5, "reason": "x"}', "outside [0, 1]"),
        ('{"score": "0.9", "reason": "x"}', "not a number"),
        ('{"score": true, "reason": "x"}', "not a number"),
        ('{"score": 0.5}', "'reason' is missing"),
        ('{"score": 0.2, "reason": "a"} {"score": 0.9, "reason": "b"}', "disagree"),
    ],
)
def test_unreadable_score_replies_say_why(reply, problem):
    with pytest.raises(UnreadableReply, match=re.escape(problem)):
        parse_score_reply(reply)


def test_an_unreadable_or_unreachable_judge_is_no_verdict_never_a_fail(workspace):
    spec = RubricGrader("anything")
    unreadable = grade_rubric(spec, grading(workspace, "x", Recording(lambda s, u: "I think 8/10")))
    assert unreadable.errored and "could not be read" in unreadable.reason
    down = grade_rubric(spec, grading(workspace, "x", Down()))
    assert down.errored and "judge unavailable" in down.reason and down.kind == "llm-rubric"


# --- the dimension judge ---------------------------------------------------------------------


def dimension_reply(scores: dict[str, float]) -> str:
    return json.dumps(
        {"dimensions": [{"name": n, "score": s, "reason": f"{n} evidence"} for n, s in scores.items()]}
    )


def test_dimensions_total_passes_at_the_threshold(workspace):
    spec = DimensionGrader("ctx", FIVE, pass_threshold=70)
    scores = {"correctness": 25, "skill_adherence": 20, "code_quality": 15, "test_coverage": 7, "documentation": 3}
    judge = Recording(lambda s, u: dimension_reply(scores))
    result = grade_dimensions(spec, grading(workspace, "done", judge, work="=== a.rb (new) ===\nclass A; end"))
    assert result.passed and result.score == 70 and result.max_score == 100
    assert [d.name for d in result.dimensions] == [d.name for d in FIVE]
    assert result.threshold == 70 and result.minimum_delta == 10
    assert "weakest: documentation 3/10" in result.reason
    system, user = judge.calls[0]
    assert system == DIMENSION_SYSTEM
    blocks = fenced_blocks(user)
    assert blocks["WORK"].startswith("=== a.rb (new) ===") and blocks["CONTEXT"] == "ctx"
    assert [d["name"] for d in json.loads(blocks["DIMENSIONS"])] == [d.name for d in FIVE]


def test_each_arm_is_scored_in_its_own_call_that_names_no_arm(workspace):
    spec = DimensionGrader("ctx", FIVE)
    judge = Recording(lambda s, u: dimension_reply({d.name: d.max_score for d in FIVE}))
    grade_dimensions(spec, grading(workspace, "WITH-ARM answer", judge))
    grade_dimensions(spec, grading(workspace, "WITHOUT-ARM answer", judge))
    assert len(judge.calls) == 2
    for (system, user), own, other in zip(judge.calls, ("WITH-ARM", "WITHOUT-ARM"), ("WITHOUT-ARM", "WITH-ARM")):
        assert own in user
        assert f"{other} answer" not in user
        for word in ("with_skill", "without_skill", "with skill", "without skill", "baseline"):
            assert word not in user.lower() and word not in system.lower()


@pytest.mark.parametrize(
    "reply, problem",
    [
        (dimension_reply({"correctness": 30}), "no score for dimension 'skill_adherence'"),
        (dimension_reply({**{d.name: 1 for d in FIVE}, "style": 3}), "unknown dimension 'style'"),
        (dimension_reply({**{d.name: 1 for d in FIVE}, "correctness": 31}), "outside 0..30"),
        (dimension_reply({**{d.name: 1 for d in FIVE}, "correctness": -1}), "outside 0..30"),
        ('{"dimensions": [{"name": "correctness", "score": 3}]}', "'reason' is missing"),
        ('{"dimensions": "all good"}', "neither a list nor an object"),
        ('{"total": 80}', "no JSON object with a 'dimensions'"),
    ],
)
def test_dimension_replies_must_score_every_dimension_within_range(reply, problem):
    with pytest.raises(UnreadableReply, match=re.escape(problem)):
        parse_dimension_reply(reply, FIVE)


def test_dimension_replies_may_map_names_to_scores():
    reply = json.dumps({"dimensions": {d.name: {"score": 1, "reason": "ok"} for d in FIVE}})
    assert [s.score for s in parse_dimension_reply(reply, FIVE)] == [1.0] * 5


def test_render_changes_shows_new_and_changed_files_not_the_starting_ones(tmp_path):
    root = tmp_path / "ws"
    (root / ".home").mkdir(parents=True)
    (root / "keep.txt").write_text("same")
    (root / "edit.rb").write_text("old")
    (root / "gone.txt").write_text("bye")
    before = snapshot(root)
    (root / "edit.rb").write_text("new body")
    (root / "gone.txt").unlink()
    (root / "lib").mkdir()
    (root / "lib" / "new.rb").write_text("class New; end")
    (root / ".home" / "history").write_text("not work")
    work = render_changes(root, before)
    assert "=== edit.rb (changed) ===\nnew body" in work
    assert "=== lib/new.rb (new) ===\nclass New; end" in work
    assert "=== gone.txt (deleted) ===" in work
    assert "keep.txt" not in work and "history" not in work
    assert render_changes(root, snapshot(root)).startswith("(the agent created")


# --- the mock score judge --------------------------------------------------------------------


def test_one_mock_model_answers_the_expectation_judge_and_the_score_judges(workspace):
    model = MockClient()
    verdict = Judge(model).grade("Says 'accept'.", prompt="p", transcript="t", final_output="accept it")
    assert (verdict.passed, verdict.errored) == (True, False)
    rubric = grade_rubric(RubricGrader("- says 'accept'\n- says 'coverage'"),
                          grading(workspace, "accept it", model))
    assert (rubric.score, rubric.errored) == (0.5, False)
    assert "rubric criteria met" in rubric.reason


def test_the_mock_score_judge_grades_the_text_it_is_shown_deterministically(workspace):
    rubric = RubricGrader("- says 'trade-off'\n- says 'accept'\n- says 'coverage'")
    mock = MockClient()
    half = grade_rubric(rubric, grading(workspace, "A trade-off: accept it.", mock))
    assert half.score == 0.67 and not half.passed
    assert grade_rubric(rubric, grading(workspace, "A trade-off: accept it.", mock)).score == 0.67
    assert grade_rubric(rubric, grading(workspace, "trade-off, accept, coverage", mock)).passed
    dims = DimensionGrader("ctx", (
        Dimension("correctness", 60, "Returns `total_cents`."),
        Dimension("skill_adherence", 40),
    ))
    task = "Extract it.\n- Uses `self.call`.\n- Returns a `Result`."
    scored = grade_dimensions(dims, grading(workspace, "done", mock, work="def self.call total_cents", prompt=task))
    assert [(d.name, d.score) for d in scored.dimensions] == [("correctness", 60.0), ("skill_adherence", 20.0)]
    assert "1 of 2 criteria met" in scored.dimensions[1].reason


# --- the SkillsBench verifier ----------------------------------------------------------------


def verifier_spec(tmp_path: Path, script: str, extra: dict[str, str] | None = None, **kw) -> VerifierGrader:
    tests = tmp_path / "verifier"
    tests.mkdir(exist_ok=True)
    (tests / "test.sh").write_text(script)
    for rel, text in (extra or {}).items():
        (tests / rel).write_text(text)
    files = ["test.sh", *(extra or {})]
    return VerifierGrader(tests=seed_files([(tests / f, f) for f in files], root=tests), timeout_s=30, **kw)


def test_verifier_paths_are_rewritten_and_a_nonzero_reward_passes(tmp_path, workspace):
    script = (
        "mkdir -p /logs/verifier\n"
        "if python3 /tests/check.py /root/out.txt; then echo 1 > /logs/verifier/reward.txt;"
        " else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    check = "import sys\nsys.exit(0 if open(sys.argv[1]).read().strip() == 'ok' else 1)\n"
    spec = verifier_spec(tmp_path, script, {"check.py": check})
    (workspace.root / "out.txt").write_text("ok\n")
    result = grade_verifier(spec, grading(workspace))
    assert result.passed and result.score == 1.0, result.output
    (workspace.root / "out.txt").write_text("nope\n")
    failed = grade_verifier(spec, grading(workspace))
    assert not failed.passed and not failed.errored and failed.score == 0.0


def test_verifier_sees_its_env_and_the_workdir_as_the_workspace(tmp_path, workspace):
    script = 'mkdir -p /logs/verifier\n[ "$GREETING" = hi ] && [ -f /app/data.txt ] && echo 0.5 > /logs/verifier/reward.txt\n'
    spec = verifier_spec(tmp_path, script, env=(("GREETING", "hi"),), workspace_paths=("/root", "/app"))
    (workspace.root / "data.txt").write_text("x")
    result = grade_verifier(spec, grading(workspace))
    # Harbor rewards are fractional: 0.5 is kept as the score, and fails the default threshold.
    assert not result.passed and not result.errored and result.score == 0.5, result.output
    lenient = dataclasses.replace(spec, reward_threshold=0.5)
    assert grade_verifier(lenient, grading(workspace)).passed


def test_a_verifier_that_writes_no_reward_gives_no_verdict(tmp_path, workspace):
    spec = verifier_spec(tmp_path, "echo checking; exit 3\n")
    result = grade_verifier(spec, grading(workspace))
    assert result.errored and "no reward.txt" in result.reason and "exit code 3" in result.reason


def test_an_agent_cannot_plant_the_reward(tmp_path, workspace):
    (workspace.root / ".skillab-verifier" / "logs").mkdir(parents=True)
    (workspace.root / ".skillab-verifier" / "logs" / "reward.txt").write_text("1")
    spec = verifier_spec(tmp_path, "true\n")
    assert grade_verifier(spec, grading(workspace)).errored


def test_reward_json_and_bad_rewards(tmp_path):
    (tmp_path / "reward.json").write_text('{"reward": 0.25, "extra": 1}')
    assert read_reward(tmp_path, ".") == 0.25
    (tmp_path / "reward.txt").write_text("yes")
    with pytest.raises(ValueError, match="not a number"):
        read_reward(tmp_path, ".")


# --- the criteria verdict, over a run's records ----------------------------------------


def arm_with(total: float, scores: list[float], errored: bool = False) -> ArmRecord:
    result = GraderResult(
        "dimensions", "dimensions", total >= 70, "r", errored=errored, score=total, max_score=100,
        threshold=70, minimum_delta=10,
    )
    result.dimensions = [DimensionScore(d.name, d.max_score, s, f"{d.name} because") for d, s in zip(FIVE, scores)]
    return ArmRecord(passed=total >= 70, errored=errored, graders=[result])


def record(name: str, with_arm: ArmRecord, without_arm: ArmRecord) -> CaseRecord:
    return CaseRecord(name, "pass_kept", with_arm, without_arm)


def test_criteria_verdict_needs_the_threshold_and_the_minimum_delta():
    cases = [record("basic", arm_with(75, [30, 20, 10, 10, 5]), arm_with(68, [25, 20, 10, 10, 3]))]
    (verdict,) = criteria_verdicts(cases)
    assert verdict.with_total == 75 and verdict.without_total == 68 and verdict.delta == 7
    assert verdict.passed is False  # 75 >= 70, but +7 < +10
    assert [(r.name, r.delta) for r in verdict.dimensions][0] == ("correctness", 5)
    weak = {(w.arm, w.name) for w in verdict.weak}
    assert ("with_skill", "code_quality") in weak and ("without_skill", "documentation") in weak
    assert ("with_skill", "correctness") not in weak
    cases[0].without_skill = arm_with(60, [20, 20, 10, 5, 5])
    assert criteria_verdicts(cases)[0].passed is True


def test_criteria_verdict_averages_runs_and_is_unknown_when_an_arm_errored():
    runs = [
        record("c", arm_with(80, [30, 25, 10, 10, 5]), arm_with(50, [20, 10, 10, 5, 5])),
        record("c", arm_with(90, [30, 25, 20, 10, 5]), arm_with(60, [20, 20, 10, 5, 5])),
    ]
    (verdict,) = criteria_verdicts(runs)
    assert verdict.with_total == 85 and verdict.without_total == 55
    assert verdict.dimensions[2].with_skill == 15 and verdict.passed is True
    errored = [record("c", arm_with(0, [], errored=True), arm_with(50, [20, 10, 10, 5, 5]))]
    assert criteria_verdicts(errored)[0].passed is None
