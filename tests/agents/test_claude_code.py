"""The claude-code adapter against the real ``claude`` CLI from npm, pointed at the fake server.

The CLI comes from ``SKILLAB_CLAUDE_BIN``, else ``tests/.node`` at the version the image pins
(where ``.ci/run`` installs it), else that version is installed there now (``tests/node_cli.py``).
Only a machine without npm skips these tests.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillab.agents.base import ArmRequest
from skillab.agents.claude_code import ClaudeCodeAdapter, parse_stream
from skillab.errors import MissingDependencyError, ProviderAuthError
from skillab.sandbox.workspace import Workspace
from skillab.skill.loader import load_skill
from skillab.suite.model import Case

from ..configs import run_config
from ..fakes.model_server import overloaded, text, tool_call, unauthorized
from ..node_cli import claude_binary
from ..skillgen import make_skill

KEY = "sk-ant-api03-" + "Cc0de" * 9
SKILL_BODY = "Write RESULT.md containing the single line SKILL-FOLLOWED."


@pytest.fixture(scope="module")
def claude() -> str:
    return claude_binary()



@pytest.fixture
def skill(tmp_path: Path):
    root = make_skill(
        tmp_path / "skills",
        [],
        name="result-writer",
        body=SKILL_BODY,
        files={"notes/hint.txt": "hint\n"},
    )
    return load_skill(root)



def adapter(claude: str, server, **kwargs) -> ClaudeCodeAdapter:
    kwargs.setdefault("max_retries", 1)
    return ClaudeCodeAdapter(
        claude, api_key=KEY, model="claude-haiku-4-5", base_url=server.url, **kwargs
    )


def request(workspace, skill=None, prompt="Do the task.") -> ArmRequest:
    return ArmRequest(
        case=Case(name="task", prompt=prompt),
        arm="with_skill" if skill else "without_skill",
        skill=skill,
        workspace=workspace.root,
        max_turns=6,
    )


def turns_so_far(req) -> int:
    return sum(1 for m in req.messages if m.get("role") == "assistant")


def skill_aware_model(workspace_root: Path):
    """Invokes the skill when Claude Code lists it and writes what it says; else writes plainly."""

    def reply(req):
        if "Skill" not in req.tool_names:
            return text("ok")  # a side request (titles, summaries), not the agent loop
        step = turns_so_far(req)
        listed = "result-writer" in req.raw
        if listed and step == 0:
            return tool_call("Skill", {"skill": "result-writer"})
        if step <= 1 and not any("RESULT.md" in r for r in req.tool_results):
            content = "SKILL-FOLLOWED\n" if SKILL_BODY in req.raw else "plain\n"
            return tool_call(
                "Write", {"file_path": str(workspace_root / "RESULT.md"), "content": content}
            )
        return text("Finished.")

    return reply


def test_with_skill_arm_sees_the_staged_skill_and_its_tool_call_lands(
    claude, server, workspace, skill
):
    server.handler = skill_aware_model(workspace.root)
    result = adapter(claude, server).run(request(workspace, skill))

    assert result.error is None, result.error
    first = server.model_requests()[0]
    assert "result-writer" in first.raw and "A skill made for a test." in first.raw
    assert (workspace.root / "RESULT.md").read_text() == "SKILL-FOLLOWED\n"
    assert result.skill_activated is True
    assert result.final_output == "Finished."
    names = [call.name for call in result.trajectory.tool_calls]
    assert names == ["Skill", "Write"]
    write = result.trajectory.tool_calls[1]
    assert write.args["content"] == "SKILL-FOLLOWED\n" and write.output
    assert (
        result.turns >= 3 and result.usage.output_tokens > 0 and result.usage.cache_read_tokens > 0
    )
    assert result.usage.cost_usd is not None and result.duration_ms > 0
    assert result.trajectory.user_input == "Do the task."
    # The staged skill is withdrawn once the agent is done.
    assert not (workspace.root / ".claude" / "skills").exists()


def test_without_skill_arm_never_sees_the_skill(claude, server, workspace, skill):
    server.handler = skill_aware_model(workspace.root)
    result = adapter(claude, server).run(request(workspace))
    assert result.error is None, result.error
    assert result.skill_activated is None
    for sent in server.model_requests():
        assert "result-writer" not in sent.raw and SKILL_BODY not in sent.raw
    assert (workspace.root / "RESULT.md").read_text() == "plain\n"


def test_tools_claude_runs_do_not_inherit_the_key(claude, server, workspace):
    def reply(req):
        if "Bash" not in req.tool_names:
            return text("ok")
        if turns_so_far(req) == 0:
            return tool_call(
                "Bash", {"command": "env > env.txt; echo done", "description": "dump env"}
            )
        return text("Dumped.")

    server.handler = reply
    result = adapter(claude, server).run(request(workspace))
    assert result.error is None, result.error
    dumped = (workspace.root / "env.txt").read_text()
    assert "HOME=" in dumped and KEY not in dumped and "ANTHROPIC_API_KEY" not in dumped
    for sent in server.model_requests():
        assert sent.auth in (KEY, f"Bearer {KEY}")
        assert KEY not in sent.raw
    assert KEY not in json.dumps(result.trajectory.to_dict())


def test_rejected_key_stops_the_run(claude, server, workspace):
    server.handler = lambda req: unauthorized()
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        adapter(claude, server, max_retries=0).run(request(workspace))


def test_outage_errors_the_arm_after_bounded_retries(claude, server, workspace):
    server.handler = lambda req: overloaded(retry_after_ms=1)
    result = adapter(claude, server, max_retries=1).run(request(workspace))
    assert result.error is not None and "529" in result.error
    assert len(server.model_requests()) == 2


def test_missing_binary_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(MissingDependencyError) as caught:
        ClaudeCodeAdapter.from_config(run_config(adapter="claude-code", model="claude-haiku-4-5"))
    assert "npm install -g @anthropic-ai/claude-code@2.1.330" in str(caught.value)


def test_from_config_needs_the_key_and_records_the_cli_version(claude, monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(claude, bin_dir / "claude")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        ClaudeCodeAdapter.from_config(run_config(adapter="claude-code", model="claude-haiku-4-5"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    built = ClaudeCodeAdapter.from_config(
        run_config(adapter="claude-code", model="claude-haiku-4-5")
    )
    identity = built.identity()
    assert identity["adapter"] == "claude-code" and identity["model"] == "claude-haiku-4-5"
    assert identity["claude_code_version"][0].isdigit()
    assert KEY not in json.dumps(identity) and KEY not in repr(built)


def test_parse_stream_reads_turns_tools_usage_and_max_turns(tmp_path):
    lines = [
        {"type": "system", "subtype": "init", "skills": ["x"]},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": "Looking."}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "model": "claude-haiku-4-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Read",
                        "input": {"file_path": f"{tmp_path}/.claude/skills/x/SKILL.md"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "body"}],
                    }
                ]
            },
        },
        "not json at all",
        {
            "type": "result",
            "subtype": "error_max_turns",
            "is_error": True,
            "num_turns": 2,
            "duration_ms": 1234,
            "total_cost_usd": 0.5,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 7,
            },
        },
    ]
    stdout = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    summary = parse_stream(stdout, tmp_path, "x")
    assert len(summary.turns) == 1
    assert summary.turns[0].text == "Looking." and summary.turns[0].tool_calls[0].output == "body"
    assert summary.skill_activated is True
    assert summary.paths_touched == [".claude/skills/x/SKILL.md"]
    assert summary.final_text == "Looking."  # no result text: the last thing the model said
    assert (
        summary.usage.input_tokens,
        summary.usage.cache_read_tokens,
        summary.usage.cost_usd,
    ) == (117, 100, 0.5)
    assert (summary.num_turns, summary.duration_ms, summary.subtype) == (2, 1234, "error_max_turns")
    # The model the API answered with, from the assistant events.
    assert summary.served_model == "claude-haiku-4-5"
    assert ClaudeCodeAdapter("claude", api_key="k").parse(stdout, tmp_path, "x").stop_reason == "max_turns"


def bash_once(command: str):
    """A model that runs one Bash command, then stops."""

    def reply(req):
        if "Bash" not in req.tool_names:
            return text("ok")
        if turns_so_far(req) == 0:
            return tool_call("Bash", {"command": command, "description": "probe"})
        return text("Probed.")

    return reply


def test_the_baseline_cli_cannot_reach_the_skill_or_the_other_arm(claude, server, tmp_path, skill):
    other = Workspace.create(tmp_path / "arms", "with_skill")
    other.write_files({".claude/skills/result-writer/SKILL.md": SKILL_BODY})
    baseline = Workspace.create(tmp_path / "arms", "without_skill")
    server.handler = bash_once(
        f"(cat {skill.root}/SKILL.md; ls -A {skill.root}; cat {other.root}/.claude/skills/*/SKILL.md;"
        f" ls -A {other.root.parent.parent}; ls -A ~/.claude/skills .claude 2>&1) > probe.txt 2>&1"
    )
    result = adapter(claude, server).run(
        ArmRequest(case=Case(name="task", prompt="Do the task."), arm="without_skill", skill=None,
                   workspace=baseline.root, max_turns=6, hide=(skill.root,))
    )
    assert result.error is None, result.error
    probe = (baseline.root / "probe.txt").read_text()
    assert SKILL_BODY not in probe and "hint" not in probe
    assert other.root.parent.name not in probe.replace(str(other.root), "")


def test_the_key_is_absent_from_the_sandboxes_environment_files_and_proc(claude, server, workspace):
    server.handler = bash_once(
        "(env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; "
        "find / -xdev -type f -size -2M -readable 2>/dev/null | grep -v '^/proc' | "
        "grep -v '^/usr' | xargs cat) > dump.bin 2>/dev/null; echo dumped"
    )
    result = adapter(claude, server).run(request(workspace))
    assert result.error is None, result.error
    dump = (workspace.root / "dump.bin").read_bytes()
    assert b"HOME=" in dump and b"claude" in dump  # the dump did read the environment and /proc
    assert KEY.encode() not in dump and b"Cc0deCc0de" not in dump
    # The proxy added the key on the host: the fake server received it on every request.
    assert all(sent.auth in (KEY, f"Bearer {KEY}") for sent in server.model_requests())
