"""The copilot adapter against the real GitHub Copilot CLI from npm, pointed at the fake server.

Copilot's own-key mode with ``COPILOT_PROVIDER_TYPE=anthropic`` talks the Anthropic Messages API
(streamed, ``POST /v1/messages``, the key in ``x-api-key``), as captured from the pinned CLI:
each test scripts the model turn by turn; the CLI runs its real tools (``skill``, ``bash``,
``create``, ``view``) in the arm's workspace, inside the sandbox.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from skillab.agents.base import ArmRequest
from skillab.agents.copilot import (
    AnthropicCopilot,
    CopilotAdapter,
    OpenAICopilot,
    native_binary,
    parse_copilot_events,
)
from skillab.errors import MissingDependencyError, ProviderAuthError, UsageError
from skillab.skill.loader import load_skill
from skillab.suite.model import Case

from ..configs import run_config
from ..fakes.model_server import server_error, text, tool_call, unauthorized
from ..node_cli import alone_on_path, copilot_binary
from ..skillgen import make_skill

SKILL_BODY = "Write RESULT.md containing the single line SKILL-FOLLOWED."
KEY = "sk-ant-api03-" + "C0pilotKey" * 5
MODEL = "claude-sonnet-4-5"
IN_TOKENS, OUT_TOKENS = 1000, 10


@pytest.fixture(scope="module")
def binary() -> str:
    return str(native_binary(copilot_binary()))


@pytest.fixture
def skill(tmp_path: Path):
    return load_skill(make_skill(tmp_path / "skills", [], name="result-writer", body=SKILL_BODY))


def adapter(binary: str, server, **kwargs) -> AnthropicCopilot:
    kwargs.setdefault("max_retries", 0)
    return AnthropicCopilot(binary, api_key=KEY, model=MODEL, base_url=server.url, **kwargs)


def request(workspace, skill=None, max_turns: int = 6) -> ArmRequest:
    return ArmRequest(case=Case(name="task", prompt="Do the task."),
                      arm="with_skill" if skill else "without_skill", skill=skill,
                      workspace=workspace.root, max_turns=max_turns)


def unchecked(command: str) -> str:
    """``command``, encoded: Copilot's own check refuses a command that names a path outside its
    folder, and an agent is not held to it (it is no boundary: the sandbox is)."""
    return f"echo {base64.b64encode(command.encode()).decode()} | base64 -d | sh"


def _scripted(reply):
    reply.input_tokens, reply.output_tokens = IN_TOKENS, OUT_TOKENS
    return reply


def skill_aware_model(root: Path):
    """Loads the skill when the CLI lists it, writes what it says (or plainly), then stops."""
    state = {"wrote": False}

    def reply(req):
        if not req.tool_results and "result-writer" in req.raw:
            return _scripted(tool_call("skill", {"skill": "result-writer"}))
        if not state["wrote"]:
            state["wrote"] = True
            said = "SKILL-FOLLOWED" if SKILL_BODY in req.raw else "plain"
            return _scripted(tool_call("create", {"path": str(root / "RESULT.md"), "file_text": f"{said}\n"}))
        return _scripted(text("Finished."))

    return reply


def test_with_skill_arm_is_offered_loads_and_follows_the_skill(binary, server, workspace, skill):
    server.handler = skill_aware_model(workspace.root)
    result = adapter(binary, server).run(request(workspace, skill))

    assert result.error is None, result.error
    sent = server.model_requests()
    assert all(r.path == "/v1/messages" and r.api == "anthropic" for r in sent)
    assert "result-writer" in sent[0].raw and "A skill made for a test." in sent[0].raw
    assert (workspace.root / "RESULT.md").read_text() == "SKILL-FOLLOWED\n"
    assert result.skill_activated is True and result.skills_loaded == ["result-writer"]
    assert result.final_output == "Finished."
    assert [c.name for c in result.trajectory.tool_calls] == ["skill", "create"]
    # Tokens are what the proxy counted from the answers, summed over the CLI's requests; its
    # prompt asks to be cached, so the fake server's input is mostly cache reads and writes.
    assert result.usage.output_tokens == OUT_TOKENS * len(sent)
    assert result.usage.cache_read_tokens > 0 and result.usage.cache_write_tokens > 0 and result.usage.cost_usd
    assert not (workspace.root / ".github" / "skills").exists()


def test_without_skill_arm_sees_no_skill_and_its_commands_no_key_nor_token(binary, server, workspace, skill):
    model = skill_aware_model(workspace.root)

    def reply(req):
        if not req.tool_results:
            # Its own environment, every process's it can read (the CLI's holds the token), the tree.
            dump = ("env > env.txt; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' > procs.txt; "
                    "ls -aR .github .home > tree.txt 2>&1")
            return tool_call("bash", {"command": unchecked(dump), "description": "dump"})
        return model(req)

    server.handler = reply
    result = adapter(binary, server).run(request(workspace))
    assert result.error is None, result.error
    assert result.skill_activated is None
    for sent in server.model_requests():
        assert "result-writer" not in sent.raw and SKILL_BODY not in sent.raw
        # The CLI holds the arm's token; the proxy swapped in the real key on the host.
        assert sent.auth == KEY and KEY not in sent.raw
    assert (workspace.root / "RESULT.md").read_text() == "plain\n"
    dumped = (workspace.root / "env.txt").read_text()
    assert "HOME=" in dumped and KEY not in dumped
    assert "skillab-arm-" not in dumped and "COPILOT_PROVIDER_API_KEY" not in dumped
    procs = (workspace.root / "procs.txt").read_text()
    assert "PATH=" in procs and "skillab-arm-" not in procs and KEY not in procs
    assert "result-writer" not in (workspace.root / "tree.txt").read_text()
    assert KEY not in json.dumps(result.trajectory.to_dict())
    assert not (workspace.root / ".home" / ".skillab-copilot").exists()


def test_the_package_is_unpacked_once_not_into_each_arm(binary, server, workspace):
    server.handler = lambda req: text("Finished.")
    result = adapter(binary, server).run(request(workspace))
    assert result.error is None, result.error
    # The CLI's 235 MB package is read from skillab's cache, never unpacked into the arm's home.
    assert not (workspace.root / ".home" / ".cache" / "copilot").exists()
    assert list((Path(os.environ["XDG_CACHE_HOME"]) / "skillab" / "copilot").glob("copilot-*/pkg"))


def test_an_arm_whose_skill_the_session_did_not_list_is_invalid(tmp_path):
    # Staged, but Copilot's own listing did not name it: never graded as a with-skill arm.
    listing = {"type": "session.skills_loaded", "data": {"skills": [
        {"name": "customize-cloud-agent", "source": "builtin", "path": "/cache/SKILL.md"}]}}
    lines = [listing, {"type": "assistant.message", "data": {"content": "Done.", "toolRequests": []}},
             {"type": "result", "exitCode": 0, "usage": {"sessionDurationMs": 5}}]
    summary = parse_copilot_events("\n".join(map(json.dumps, lines)), tmp_path, "x", ("x",))
    assert summary.error is not None and "not offered" in summary.error
    staged = {"name": "x", "source": "project", "path": f"{tmp_path}/.github/skills/x/SKILL.md"}
    listing["data"]["skills"].append(staged)
    summary = parse_copilot_events("\n".join(map(json.dumps, lines)), tmp_path, "x", ("x",))
    assert summary.error is None and summary.final_text == "Done." and summary.finished


def test_skill_invoked_in_the_session_record_is_a_load(tmp_path):
    lines = [{"type": "session.skills_loaded", "data": {"skills": [
                 {"name": "x", "source": "project", "path": f"{tmp_path}/.github/skills/x/SKILL.md"}]}},
             {"type": "result", "exitCode": 0},
             {"type": "skill.invoked", "data": {"name": "x", "source": "project"}}]
    summary = parse_copilot_events("\n".join(map(json.dumps, lines)), tmp_path, "x", ("x",))
    assert summary.skill_activated and summary.skills_loaded == ["x"]


def test_an_agent_that_swaps_its_skills_folder_for_a_link_deletes_nothing_outside(binary, server, workspace,
                                                                                   skill, tmp_path):
    host = tmp_path / "checkout-skills"
    (host / "result-writer").mkdir(parents=True)
    (host / "result-writer" / "SKILL.md").write_text("the original")
    swap = unchecked(f"mv .github/skills moved && ln -s {host} .github/skills")
    server.handler = lambda req: (tool_call("bash", {"command": swap, "description": "swap"})
                                  if not req.tool_results else text("Finished."))
    result = adapter(binary, server).run(request(workspace, skill))
    assert result.error is None, result.error
    assert os.path.islink(workspace.root / ".github" / "skills")
    assert (host / "result-writer" / "SKILL.md").read_text() == "the original"


def test_the_agents_commands_reach_only_the_model_api(binary, server, workspace):
    probe = ("python3 -c \"import urllib.request as u\nfor p in ('/v1/files', '/v1/messages/batches'):\n"
             "  try: u.urlopen('http://127.0.0.1:38080' + p)\n  except Exception as e: print(p, e)\"")
    server.handler = lambda req: (tool_call("bash", {"command": probe, "description": "probe"})
                                  if not req.tool_results else text("Finished."))
    result = adapter(binary, server).run(request(workspace))
    assert result.error is None, result.error
    assert "Forbidden" in json.dumps(result.trajectory.to_dict())
    assert not [r.path for r in server.requests if "files" in r.path or "batches" in r.path]


def test_copilot_is_held_to_max_turns_by_the_credential_proxy(binary, server, workspace):
    server.handler = lambda req: _scripted(tool_call("bash", {"command": "echo step >> steps.txt",
                                                              "description": "step"}))
    result = adapter(binary, server).run(request(workspace, max_turns=3))
    assert len(server.model_requests()) == 3
    assert (workspace.root / "steps.txt").read_text() == "step\n" * 3
    assert result.error is None and result.stop_reason == "max_turns"
    assert result.usage.output_tokens == 3 * OUT_TOKENS


def test_outage_errors_the_arm(binary, server, workspace):
    server.handler = lambda req: server_error(retry_after_ms=1)
    result = adapter(binary, server).run(request(workspace))
    assert result.error is not None and "500" in result.error
    assert result.final_output == ""


def test_rejected_key_stops_the_run(binary, server, workspace):
    server.handler = lambda req: unauthorized()
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        adapter(binary, server).run(request(workspace))


def test_from_config_picks_the_wire_by_model_and_records_the_version(binary, monkeypatch, tmp_path):
    alone_on_path("copilot", tmp_path / "bin", monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "0penAiKey" * 5)
    claude = CopilotAdapter.from_config(run_config(adapter="copilot", model=MODEL))
    assert isinstance(claude, AnthropicCopilot) and claude.binary == binary
    identity = claude.identity()
    assert identity["adapter"] == "copilot" and identity["cli_version"] == "1.0.102"
    assert identity["skills_dir"] == ".github/skills" and KEY not in json.dumps(identity)
    assert isinstance(CopilotAdapter.from_config(run_config(adapter="copilot", model="gpt-5-mini")), OpenAICopilot)
    with pytest.raises(UsageError, match="--model"):
        CopilotAdapter.from_config(run_config(adapter="copilot", model=None))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        CopilotAdapter.from_config(run_config(adapter="copilot", model=MODEL))


def test_missing_binary_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(MissingDependencyError, match="@github/copilot"):
        CopilotAdapter.from_config(run_config(adapter="copilot", model=MODEL))


def test_an_openai_model_goes_over_chat_completions_with_the_skill(binary, server, workspace, skill):
    server.handler = skill_aware_model(workspace.root)
    key = "sk-proj-" + "0penAiKey" * 5
    agent = OpenAICopilot(binary, api_key=key, model="gpt-5-mini", base_url=server.openai_url, max_retries=0)
    result = agent.run(request(workspace, skill))
    assert result.error is None, result.error
    sent = server.model_requests()
    assert {(r.path, r.api) for r in sent} == {("/v1/chat/completions", "openai")}
    assert all(r.auth == f"Bearer {key}" for r in sent)
    assert (workspace.root / "RESULT.md").read_text() == "SKILL-FOLLOWED\n"
    assert result.skills_loaded == ["result-writer"] and result.usage.output_tokens == OUT_TOKENS * len(sent)
