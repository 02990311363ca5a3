"""The agent adapter: a real tool loop in a real workspace, driven by the fake model server."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from skillab.agents.agent import AgentAdapter
from skillab.agents.base import ArmRequest
from skillab.agents.tools import Toolbox
from skillab.errors import ProviderAuthError
from skillab.providers import RetryPolicy
from skillab.providers.anthropic import AnthropicClient
from skillab.providers.openai_compat import OpenAICompatClient
from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.isolation import detect_isolation
from skillab.skill.loader import load_skill
from skillab.suite.model import Case

from ..fakes.model_server import overloaded, text, tool_call, unauthorized
from ..skillgen import make_skill

SKILL_BODY = "When asked for a report, write report.md whose first line is 'REPORT v2'."
FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001)



@pytest.fixture
def skill(tmp_path: Path):
    root = make_skill(
        tmp_path / "skills",
        [],
        name="report-writer",
        body=SKILL_BODY,
        files={"templates/report.md": "REPORT v2\n"},
    )
    return load_skill(root)



def anthropic(server) -> AnthropicClient:
    return AnthropicClient(
        "claude-haiku-4-5", api_key="sk-ant-test-" + "x" * 20, base_url=server.url, policy=FAST
    )


def openai(server) -> OpenAICompatClient:
    return OpenAICompatClient(
        "gpt-4o-mini", api_key="sk-test-" + "y" * 20, base_url=server.openai_url, policy=FAST
    )


def request(
    workspace, skill=None, *, prompt="Write the weekly report.", max_turns=8, arm=None
) -> ArmRequest:
    return ArmRequest(
        case=Case(name="weekly", prompt=prompt),
        arm=arm or ("with_skill" if skill else "without_skill"),
        skill=skill,
        workspace=workspace.root,
        max_turns=max_turns,
    )


@pytest.mark.parametrize("make_client", [anthropic, openai], ids=["anthropic", "openai"])
def test_agent_writes_a_file_through_a_tool_call(server, workspace, make_client):
    server.push(
        tool_call(
            "write_file",
            {"path": "out/report.md", "content": "REPORT v2\ntotal: 3\n"},
            text="Writing it.",
        ),
        tool_call("run_shell", {"command": "wc -l out/report.md"}),
        text("The report is in out/report.md."),
    )
    result = AgentAdapter(make_client(server)).run(request(workspace))

    assert (workspace.root / "out/report.md").read_text() == "REPORT v2\ntotal: 3\n"
    assert result.error is None
    assert result.final_output == "The report is in out/report.md."
    assert result.turns == 3 and result.tool_call_count == 2
    write, shell = result.trajectory.tool_calls
    assert write.args == {"path": "out/report.md", "content": "REPORT v2\ntotal: 3\n"}
    assert write.output == "wrote 19 bytes to out/report.md"
    assert shell.output.startswith("exit code: 0") and "2 out/report.md" in shell.output
    assert result.trajectory.user_input == "Write the weekly report."
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    # The model saw each tool's result on the next turn.
    assert "wrote 19 bytes" in server.model_requests()[1].tool_results[0]
    assert server.count == 3


def test_inline_mode_puts_the_skill_in_the_with_skill_prompt_only(server, workspace, skill):
    server.handler = lambda req: text("ok")
    adapter = AgentAdapter(anthropic(server), skill_loading="inline")
    with_skill = adapter.run(request(workspace, skill))
    without = adapter.run(request(workspace))
    first, second = server.model_requests()
    assert SKILL_BODY in first.system_text and "report-writer" in first.system_text
    for needle in (SKILL_BODY, "report-writer", "A skill made for a test", ".skills"):
        assert needle not in second.raw
    assert with_skill.skill_activated is None and without.skill_activated is None


def discovering_model(req):
    """Opens SKILL.md when the prompt lists it, then follows it; otherwise answers plainly."""
    results = req.tool_results
    if ".skills/report-writer/SKILL.md" in req.system_text and not results:
        return tool_call("read_file", {"path": ".skills/report-writer/SKILL.md"})
    if results and SKILL_BODY in results[-1]:
        return tool_call("write_file", {"path": "report.md", "content": "REPORT v2\n"})
    if results:
        return text("Followed the skill.")
    return (
        tool_call("list_dir", {"path": "."})
        if "list first" in req.last_user_text
        else text("Plain answer.")
    )


def test_discover_mode_records_activation_when_the_model_opens_skill_md(server, workspace, skill):
    server.handler = discovering_model
    result = AgentAdapter(anthropic(server), skill_loading="discover").run(
        request(workspace, skill)
    )
    system = server.model_requests()[0].system_text
    assert "report-writer: A skill made for a test." in system
    assert ".skills/report-writer/SKILL.md" in system
    assert SKILL_BODY not in system  # listed, not inlined
    assert result.skill_activated is True
    assert ".skills/report-writer/SKILL.md" in result.paths_touched
    assert (workspace.root / "report.md").read_text() == "REPORT v2\n"
    # The staged copy is gone once the agent is done; the validators see the agent's work only.
    assert not (workspace.root / ".skills").exists()


def test_discover_mode_without_opening_is_not_activated(server, workspace, skill):
    server.handler = lambda req: text("I did it my way.")
    result = AgentAdapter(anthropic(server), skill_loading="discover").run(
        request(workspace, skill)
    )
    assert result.skill_activated is False
    assert result.paths_touched == []


def test_discover_mode_stages_bundled_files_beside_skill_md(server, workspace, skill):
    server.push(
        tool_call("read_file", {"path": ".skills/report-writer/templates/report.md"}), text("done")
    )
    result = AgentAdapter(anthropic(server), skill_loading="discover").run(
        request(workspace, skill)
    )
    assert result.trajectory.tool_calls[0].output == "REPORT v2\n"
    assert result.skill_activated is False  # a bundled file is not SKILL.md


def test_without_skill_arm_never_has_the_skill_in_workspace_or_prompt(server, workspace, skill):
    server.handler = discovering_model
    adapter = AgentAdapter(anthropic(server), skill_loading="discover")
    result = adapter.run(request(workspace, prompt="Please list first, then report."))
    listing = result.trajectory.tool_calls[0].output
    assert ".skills" not in listing and "SKILL.md" not in listing
    assert result.skill_activated is None
    for sent in server.model_requests():
        assert "report-writer" not in sent.raw and SKILL_BODY not in sent.raw
    assert result.paths_touched == ["."]


def test_hidden_host_directories_stay_out_of_the_shells_reach(server, workspace, skill):
    if not detect_isolation(choose_sandbox(None)).pid_namespace:
        pytest.skip("this host gives commands no mount namespace, so nothing can be hidden")
    server.push(tool_call("run_shell", {"command": f"cat {skill.root}/SKILL.md"}), text("done"))
    arm = request(workspace)
    result = AgentAdapter(anthropic(server)).run(replace(arm, hide=(skill.root,)))
    output = result.trajectory.tool_calls[0].output
    assert SKILL_BODY not in output and "No such file" in output


def test_max_turns_caps_the_loop(server, workspace):
    server.handler = lambda req: tool_call(
        "run_shell", {"command": "echo again"}, text="still working"
    )
    result = AgentAdapter(anthropic(server)).run(request(workspace, max_turns=3))
    assert server.count == 3
    assert result.turns == 3 and result.tool_call_count == 3
    assert result.final_output == "still working" and result.error is None
    # Recorded as the CLI agents record their caps: the session was cut off, not finished.
    assert result.stop_reason == "max_turns"


def test_a_session_that_ends_by_itself_is_not_marked_capped(server, workspace):
    server.push(tool_call("run_shell", {"command": "true"}), text("done"))
    result = AgentAdapter(anthropic(server)).run(request(workspace, max_turns=2))
    assert result.turns == 2 and result.final_output == "done"
    assert result.stop_reason is None


def test_path_escapes_are_refused_and_reported_to_the_model(server, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("host secret")
    os.symlink(outside, workspace.root / "link.txt")
    server.push(
        tool_call("read_file", {"path": "../../outside.txt"}),
        tool_call("read_file", {"path": str(outside)}),
        tool_call("read_file", {"path": "link.txt"}),
        tool_call("write_file", {"path": "../escaped.txt", "content": "x"}),
        tool_call("list_dir", {"path": ".."}),
        text("gave up"),
    )
    result = AgentAdapter(anthropic(server)).run(request(workspace))
    outputs = [call.output for call in result.trajectory.tool_calls]
    assert all(out.startswith("error:") for out in outputs), outputs
    assert not any("host secret" in out for out in outputs)
    assert not (workspace.root.parent / "escaped.txt").exists()
    # Each refusal went back to the model as an error result, and the loop went on.
    sent = server.model_requests()[1].body["messages"][-1]["content"][0]
    assert sent["is_error"] is True
    assert result.final_output == "gave up" and server.count == 6


def test_edit_file_replaces_exactly_one_match(workspace):
    box = Toolbox(workspace.root)
    (workspace.root / "a.txt").write_text("one two two\n")
    assert (
        box.call("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "1"}).output
        == "edited a.txt"
    )
    twice = box.call("edit_file", {"path": "a.txt", "old_text": "two", "new_text": "2"})
    missing = box.call("edit_file", {"path": "a.txt", "old_text": "three", "new_text": "3"})
    assert twice.is_error and "occurs 2 times" in twice.output
    assert missing.is_error and "does not occur" in missing.output
    assert (workspace.root / "a.txt").read_text() == "1 two two\n"


def test_tool_argument_errors_come_back_as_results(workspace):
    box = Toolbox(workspace.root)
    assert box.call("nope", {}).is_error
    assert "JSON object" in box.call("read_file", "not json").output
    assert "'path' is required" in box.call("read_file", {}).output
    assert "no such file" in box.call("read_file", {"path": "missing.txt"}).output
    (workspace.root / "bin.dat").write_bytes(b"\xff\xfe\x00")
    assert "not UTF-8" in box.call("read_file", {"path": "bin.dat"}).output


def test_long_files_are_cut_on_a_character_boundary(workspace):
    box = Toolbox(workspace.root)
    # One ASCII byte first, so the byte limit falls inside a two-byte character.
    (workspace.root / "big.txt").write_text("a" + "é" * 200_000, encoding="utf-8")
    run = box.call("read_file", {"path": "big.txt"})
    assert not run.is_error and run.output.startswith("aéé")
    assert "more characters not shown" in run.output
    lone_surrogate = box.call("write_file", {"path": "x.txt", "content": "\udc80"})
    assert lone_surrogate.is_error


def test_shell_runs_with_the_scrubbed_environment(workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-live-" + "s" * 24)
    box = Toolbox(workspace.root)
    run = box.call("run_shell", {"command": "env; echo HOME=$HOME"})
    assert "sk-ant-live" not in run.output and "ANTHROPIC_API_KEY" not in run.output
    assert f"HOME={workspace.root}/.home" in run.output
    failed = box.call("run_shell", {"command": "exit 3"})
    assert failed.is_error and failed.output.startswith("exit code: 3")
    slow = box.call("run_shell", {"command": "sleep 5", "timeout_s": 0.5})
    assert slow.is_error and "timed out" in slow.output


def test_provider_failure_mid_loop_errors_the_arm_and_keeps_the_trajectory(server, workspace):
    server.push(
        tool_call("write_file", {"path": "a.txt", "content": "1"}),
        overloaded(retry_after_ms=1),
        overloaded(retry_after_ms=1),
    )
    result = AgentAdapter(anthropic(server)).run(request(workspace))
    assert result.error is not None and "529" in result.error and "Overloaded" in result.error
    assert result.turns == 1 and result.tool_call_count == 1
    assert server.count == 3  # one good turn, then max_attempts=2 for the failing one


def test_credentials_rejected_mid_run_stop_the_run(server, workspace):
    server.push(unauthorized())
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        AgentAdapter(anthropic(server)).run(request(workspace))


def test_identity_names_what_changes_the_baseline(server):
    inline = AgentAdapter(
        anthropic(server), skill_loading="inline", default_max_turns=12
    ).identity()
    discover = AgentAdapter(
        anthropic(server), skill_loading="discover", default_max_turns=12
    ).identity()
    assert inline["adapter"] == "agent" and inline["provider"] == "anthropic"
    assert inline["model"] == "claude-haiku-4-5" and inline["max_turns"] == 12
    assert {"toolset", "system_prompt_sha256"} <= set(inline)
    assert {k for k in inline if inline[k] != discover[k]} == {"skill_loading"}
    assert AgentAdapter(openai(server)).identity()["provider"] == "openai"
