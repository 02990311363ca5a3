"""``--adapter claude-agent-sdk``: the Claude Agent SDK (its bundled CLI inside the sandbox)
against a fake Anthropic server on 127.0.0.1, through the credential proxy."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from skillab.cli import main

from ..documented_example import documented, run_example, start_mock
from ..fakes.model_server import FakeModelServer, text, tool_call
from .test_claude_code import turns_so_far
from .test_python_agent import SECRET_WORD, write_suite

pytest.importorskip("claude_agent_sdk", reason="the claude-agent-sdk extra is not installed "
                                               "(pip install 'skillab[agents-sdk]')")
KEY = "sk-ant-api03-" + "Cl4udeSdk" * 6


def sdk_model(req):
    """Invokes the fruit skill when the SDK's session lists it, then answers with what it said;
    without it, answers that it does not know."""
    if "Skill" not in req.tool_names:
        return text("ok")  # a side request (titles), not the agent loop
    if turns_so_far(req) == 0:
        return tool_call("Skill", {"skill": "fruit"}) if "fruit" in req.raw else text("I do not know the house fruit.")
    return text(f"The house fruit is {SECRET_WORD}." if SECRET_WORD in req.raw else "I do not know.")


def test_an_agent_built_with_the_claude_agent_sdk_is_measured_with_proof_of_offer(tmp_path, monkeypatch):
    skill = write_suite(tmp_path)
    out = tmp_path / "r.json"
    with FakeModelServer(sdk_model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        code = main(["run", str(skill), "--adapter", "claude-agent-sdk", "--model", "claude-haiku-4-5",
                     "--base-url", server.url, "--no-cache", "--no-history", "--quiet", "--output", str(out)])
        requests = server.model_requests()
    doc = json.loads(out.read_text())
    [record] = doc["cases"]
    assert record["outcome"] == "flip_to_pass", json.dumps(record)[:3000]
    assert code == 0 and record["with_skill"]["skill_activated"] is True
    assert record["without_skill"]["error"] is None
    # The key reached the server only from the proxy; never the CLI's own environment.
    assert requests and all(r.auth in (KEY, f"Bearer {KEY}") for r in requests)
    assert record["with_skill"]["usage"]["input_tokens"] > 0
    assert KEY not in out.read_text()


def _sdk_agent(server, monkeypatch):
    from skillab.agents.claude_agent_sdk import ClaudeAgentSdkAgent

    from ..configs import run_config

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    config = run_config(adapter="claude-agent-sdk", model="claude-haiku-4-5", base_url=server.url)
    agent = ClaudeAgentSdkAgent.from_config(config)
    agent.max_retries = 0
    return agent


def test_the_bundled_clis_shell_commands_hold_no_proxy_token(tmp_path, monkeypatch, workspace):
    """The with-skill arm's Bash tool dumps its environment and every process environment it can
    read: the arm's proxy token is in none of them (only the CLI's own API calls may use it)."""
    from skillab.agents.base import ArmRequest
    from skillab.skill.loader import load_skill
    from skillab.suite.model import Case

    dump = ("env > env.txt; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' > procs.txt; "
            "grep -rho 'skillab-arm-[A-Za-z0-9_-]\\{20,\\}' .home > found.txt 2>/dev/null; echo dumped")

    def model(req):
        if "Skill" not in req.tool_names:
            return text("ok")
        return tool_call("Bash", {"command": dump}) if turns_so_far(req) == 0 else text("Done.")

    skill = load_skill(write_suite(tmp_path))
    with FakeModelServer(model) as server:
        agent = _sdk_agent(server, monkeypatch)
        result = agent.run(ArmRequest(case=Case(name="t", prompt="Dump."), arm="with_skill", skill=skill,
                                      workspace=workspace.root, max_turns=4))
        sent = server.model_requests()
    assert result.error is None, result.error
    assert "dumped" in json.dumps(result.trajectory.to_dict())
    assert sent and all(r.auth == KEY for r in sent)  # the CLI's calls went out, with the key added
    for name in ("env.txt", "procs.txt", "found.txt"):
        dumped = (workspace.root / name).read_text()
        assert "skillab-arm-" not in dumped and KEY not in dumped, name
    assert "PATH=" in (workspace.root / "procs.txt").read_text()


def test_the_context_budget_is_the_sdks_own_count(tmp_path, monkeypatch):
    """The skill's entry in the Skills category of ``get_context_usage()`` (the bundled CLI's own
    count, from a session with the skill staged and no model turn) is the claude-agent-sdk
    listing entry in the context budget, and the report says it was measured, not estimated."""
    skill = write_suite(tmp_path)
    out = tmp_path / "r.json"
    with FakeModelServer(sdk_model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        code = main(["run", str(skill), "--adapter", "claude-agent-sdk", "--model", "claude-haiku-4-5",
                     "--base-url", server.url, "--no-cache", "--no-history", "--quiet", "--output", str(out)])
        counts = [r for r in server.requests if r.path.startswith("/v1/messages/count_tokens")]
    assert code == 0
    budget = json.loads(out.read_text())["context_budget"]
    entry = budget["listings"]["claude-agent-sdk"]
    assert "get_context_usage()" in budget["method"] and entry["source"].startswith("measured: ")
    assert "estimated at 4 characters a token" in budget["method"]  # the body still is, and it says so
    # "- fruit: Names the house fruit." at the 4 characters a token the CLI counts for Claude 4.5.
    assert entry["tokens"] == 8 and budget["total_tokens"] == entry["tokens"] + budget["body_tokens"]
    # The session the count came from ran through the proxy, with the key added on the host.
    assert counts and all(r.auth == KEY for r in counts)


# The commands docs/agents-sdk.md gives for the example, verbatim.
MOCK_COMMAND = "python examples/claude-agent-sdk/mock_model.py"
EXAMPLE_COMMAND = ("ANTHROPIC_API_KEY=sk-ant-mock PYTHONPATH=examples/claude-agent-sdk skillab run examples/team-facts "
                   "--case release-code-name --adapter claude-agent-sdk:team_options:options --model claude-haiku-4-5 "
                   "--base-url http://127.0.0.1:8766")


def test_the_example_mock_speaks_the_messages_api_and_refuses_a_broken_body():
    """The Anthropic SDK streams from the mock as from the API; a body that is not JSON gets the
    API's 400 error, not a dropped connection."""
    import anthropic

    mock, base_url = start_mock(MOCK_COMMAND)
    try:
        client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-mock", max_retries=0)
        with client.messages.stream(model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                                    tools=[{"name": "Skill", "input_schema": {"type": "object"}}]) as stream:
            final = stream.get_final_message()
        assert final.stop_reason == "end_turn" and "do not know" in final.content[0].text
        broken = urllib.request.Request(f"{base_url}/v1/messages", data=b"{broken", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(broken, timeout=10)
        assert refused.value.code == 400 and "not JSON" in json.loads(refused.value.read())["error"]["message"]
    finally:
        mock.terminate()
        mock.wait(timeout=10)


def test_the_documented_example_runs_in_one_command_against_the_mock_model(tmp_path):
    """The team's options (its system prompt, tools and in-process MCP server) against the
    scripted Messages API: the with-skill arm calls the Skill tool and answers from the skill,
    the arm without it is never offered the skill and cannot."""
    assert documented("agents-sdk.md", MOCK_COMMAND, EXAMPLE_COMMAND)
    record = run_example(MOCK_COMMAND, EXAMPLE_COMMAND, "http://127.0.0.1:8766", tmp_path / "r.json")
    assert record["outcome"] == "flip_to_pass" and record["with_skill"]["skill_activated"] is True
    assert "ZEPHYR" in record["with_skill"]["final_output"]
    assert "ZEPHYR" not in record["without_skill"]["final_output"] and record["without_skill"]["error"] is None
