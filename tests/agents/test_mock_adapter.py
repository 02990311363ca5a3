"""The mock adapter: scripted answers per arm, defaults, written files, usage and identity."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from skillab.agents.base import ArmRequest
from skillab.agents.mock import MockAdapter, MockAnswer, default_answer, load_mock_responses
from skillab.errors import EXIT_USAGE, SandboxError, SkillabError
from skillab.grading.trajectory import render_v1
from skillab.skill.loader import Skill
from skillab.suite.model import Case

from ..configs import run_config

CASE = Case(name="greet", prompt="Say hello to the team.")
SKILL = Skill(root=Path("."), name="greeter", description="Greets.", body="Always greet with 'Ahoy'.")
SCRIPT = {
    "greet": {
        "with": "Ahoy, team!",
        "without": "Hello team.",
    },
    "report": {
        "with": {"text": "Report written.", "files": {"out/report.md": "# Report\n", "notes.txt": "n"}},
        "without": {"text": "No report."},
        "original": "Old skill answer.",
    },
}


def request(tmp_path: Path, arm: str = "with_skill", case: Case = CASE) -> ArmRequest:
    skill = None if arm == "without_skill" else SKILL
    return ArmRequest(case=case, arm=arm, skill=skill, workspace=tmp_path)


def test_scripted_answer_per_arm(tmp_path):
    adapter = MockAdapter(SCRIPT)
    assert adapter.run(request(tmp_path, "with_skill")).final_output == "Ahoy, team!"
    assert adapter.run(request(tmp_path, "without_skill")).final_output == "Hello team."
    # The original arm falls back to "with" unless it is scripted.
    assert adapter.run(request(tmp_path, "original")).final_output == "Ahoy, team!"
    report = Case(name="report", prompt="Write the report.")
    assert adapter.run(request(tmp_path, "original", report)).final_output == "Old skill answer."


def test_unscripted_cases_get_a_default_that_restates_the_prompt(tmp_path):
    adapter = MockAdapter({})
    with_text = adapter.run(request(tmp_path, "with_skill")).final_output
    without_text = adapter.run(request(tmp_path, "without_skill")).final_output
    assert with_text != without_text
    assert "Say hello to the team." in with_text and "Say hello to the team." in without_text
    # Same answer but for the arm label: no lift out of thin air.
    assert with_text.replace("with_skill", "ARM") == without_text.replace("without_skill", "ARM")
    assert adapter.run(request(tmp_path, "with_skill")).final_output == with_text


def test_a_case_scripting_one_arm_defaults_the_other(tmp_path):
    adapter = MockAdapter({"greet": {"with": "Ahoy!"}})
    assert adapter.run(request(tmp_path, "without_skill")).final_output == default_answer(
        "greet", CASE.prompt, "without_skill"
    ).text


def test_trajectory_and_result_shape(tmp_path):
    result = MockAdapter(SCRIPT).run(request(tmp_path, "with_skill"))
    assert result.turns == 1
    assert result.error is None
    assert result.trajectory.user_input == CASE.prompt
    assert [t.text for t in result.trajectory.turns] == ["Ahoy, team!"]
    assert render_v1(result.trajectory) == "[Step 1] User: Say hello to the team.\n[Step 2] Agent: Ahoy, team!"


def test_scripted_files_are_written_into_the_workspace(tmp_path):
    report = Case(name="report", prompt="Write the report.")
    result = MockAdapter(SCRIPT).run(request(tmp_path, "with_skill", report))
    assert (tmp_path / "out" / "report.md").read_text() == "# Report\n"
    assert (tmp_path / "notes.txt").read_text() == "n"
    assert [(c.name, c.args, c.output) for c in result.trajectory.tool_calls] == [
        ("write_file", {"path": "out/report.md"}, "ok"),
        ("write_file", {"path": "notes.txt"}, "ok"),
    ]
    assert result.tool_call_count == 2
    assert 'Agent → tool: write_file(path="out/report.md")' in render_v1(result.trajectory)


def test_a_binary_file_given_as_yaml_binary_is_written_byte_for_byte(tmp_path):
    # A SkillsBench oracle's output can be a spreadsheet: YAML's !!binary carries its bytes.
    blob = bytes(range(256)) + b"PK\x03\x04"
    path = write(tmp_path, "book:\n  with:\n    text: done\n    files:\n      out/gdp.xlsx: !!binary |\n        "
                 + base64.b64encode(blob).decode() + "\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    MockAdapter(load_mock_responses(path)).run(request(workspace, "with_skill", Case(name="book", prompt="p")))
    assert (workspace / "out" / "gdp.xlsx").read_bytes() == blob


@pytest.mark.parametrize("rel", ["../escaped.txt", "/tmp/skillab-mock-escape.txt", "a/../../escaped.txt"])
def test_paths_that_leave_the_workspace_are_refused_when_the_script_is_read(rel):
    with pytest.raises(SkillabError) as caught:
        MockAdapter({"greet": {"with": {"text": "x", "files": {rel: "pwned"}}}})
    assert "case greet 'with' 'files'" in str(caught.value)
    assert repr(rel) in str(caught.value)


def test_a_symbolic_link_out_of_the_workspace_is_refused_when_writing(tmp_path):
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "out").symlink_to(outside)
    adapter = MockAdapter({"greet": {"with": {"text": "x", "files": {"out/escaped.txt": "pwned"}}}})
    with pytest.raises(SandboxError) as caught:
        adapter.run(request(workspace, "with_skill"))
    assert "case greet" in str(caught.value)
    assert not (outside / "escaped.txt").exists()


def test_usage_is_an_estimate_and_only_the_with_arm_pays_for_the_skill(tmp_path):
    adapter = MockAdapter(SCRIPT)
    with_usage = adapter.run(request(tmp_path, "with_skill")).usage
    without_usage = adapter.run(request(tmp_path, "without_skill")).usage
    prompt_tokens = -(-len(CASE.prompt) // 4)
    assert without_usage.input_tokens == prompt_tokens
    assert with_usage.input_tokens == prompt_tokens + -(-len(SKILL.body) // 4)
    assert with_usage.output_tokens == -(-len("Ahoy, team!") // 4)
    assert with_usage.cost_usd is None and without_usage.cost_usd is None


def test_the_without_skill_arm_must_not_carry_the_skill(tmp_path):
    bad = ArmRequest(case=CASE, arm="without_skill", skill=SKILL, workspace=tmp_path)
    with pytest.raises(ValueError):
        MockAdapter(SCRIPT).run(bad)


def test_latency_is_recorded_on_the_turn(tmp_path):
    result = MockAdapter(SCRIPT, latency_ms=20).run(request(tmp_path))
    assert result.trajectory.turns[0].latency_ms == 20
    assert MockAdapter(SCRIPT).run(request(tmp_path)).trajectory.turns[0].latency_ms is None


# --- the responses file ---------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mock-responses.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_mock_responses(tmp_path):
    path = write(
        tmp_path,
        "greet:\n  with: Ahoy\n  without: Hello\n"
        "report:\n  with:\n    text: done\n    files:\n      out.md: '# x'\n",
    )
    assert load_mock_responses(path) == {
        "greet": {"with": MockAnswer("Ahoy"), "without": MockAnswer("Hello")},
        "report": {"with": MockAnswer("done", {"out.md": "# x"})},
    }


BAD_FILES = [
    ("", "empty"),
    ("- a\n- b\n", "expected a mapping of case name"),
    ("greet: hello\n", "case greet — expected a mapping"),
    ("greet:\n  wiht: hi\n", "case greet — unknown key 'wiht'"),
    ("greet:\n  with: 3\n", "case greet 'with' — expected a string or a mapping"),
    ("greet:\n  with:\n    files: {}\n", "case greet 'with' 'text' — must be a string"),
    ("greet:\n  with:\n    text: hi\n    file: {}\n", "case greet 'with' — unknown key 'file'"),
    ("greet:\n  with:\n    text: hi\n    files: [a.txt]\n", "case greet 'with' 'files' — must be a mapping"),
    ("greet:\n  with:\n    text: hi\n    files:\n      a.txt: 3\n", "content of a.txt must be a string"),
    ("greet:\n  with: [unclosed\n", "not valid YAML"),
    ("12:\n  with: hi\n", "case name 12 must be a non-empty string"),
]


@pytest.mark.parametrize("text, message", BAD_FILES)
def test_bad_files_are_user_errors_naming_file_case_and_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(SkillabError) as caught:
        load_mock_responses(path)
    assert caught.value.exit_code == EXIT_USAGE
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)


def test_a_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(SkillabError, match="cannot be read"):
        load_mock_responses(tmp_path / "absent.yaml")


def test_from_config_reads_the_file_and_latency(tmp_path):
    path = write(tmp_path, "greet:\n  with: Ahoy from file\n")
    adapter = MockAdapter.from_config(run_config(mock_responses=path, mock_latency_ms=5))
    result = adapter.run(request(tmp_path / "ws", "with_skill"))
    assert result.final_output == "Ahoy from file"
    assert result.trajectory.turns[0].latency_ms == 5


def test_identity_changes_when_the_file_changes(tmp_path):
    path = write(tmp_path, "greet:\n  without: Hello\n")
    before = MockAdapter.from_config(run_config(mock_responses=path)).identity()
    assert before["adapter"] == "mock"
    assert before == MockAdapter.from_config(run_config(mock_responses=path)).identity()
    write(tmp_path, "greet:\n  without: Hello there\n")
    assert MockAdapter.from_config(run_config(mock_responses=path)).identity() != before


def test_identity_without_a_file_follows_the_script():
    assert MockAdapter({}).identity() == MockAdapter(None).identity()
    assert MockAdapter({"a": {"with": "x"}}).identity() != MockAdapter({"a": {"with": "y"}}).identity()
    assert MockAdapter({}, responses_sha256="abc").identity() == {
        "adapter": "mock",
        "responses_sha256": "abc",
    }
