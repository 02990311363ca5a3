"""The codex and gemini-cli adapters against the real CLIs from npm, pointed at the fake server.

Codex talks the OpenAI Responses API (streamed events) to ``/v1/responses``; Gemini CLI talks the
Gemini API (``:streamGenerateContent?alt=sse``). Each test scripts the model turn by turn; the
CLI runs its real tools in the arm's workspace.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skillab.agents.base import ArmRequest
from skillab.agents.cli_agent import CliAgent
from skillab.agents.codex import CodexAdapter, parse_codex_events
from skillab.agents.gemini_cli import GeminiCliAdapter, parse_gemini_events
from skillab.errors import MissingDependencyError, ProviderAuthError
from skillab.skill.loader import load_skill
from skillab.suite.model import Case

from ..configs import run_config
from ..fakes.model_server import Reply, server_error, text, tool_call, unauthorized
from ..node_cli import alone_on_path, codex_binary, gemini_binary
from ..skillgen import make_skill

SKILL_BODY = "Write RESULT.md containing the single line SKILL-FOLLOWED."
IN_TOKENS, OUT_TOKENS = 1000, 10


@dataclass
class Cli:
    """One CLI under test: how to build its adapter and how its model asks for each tool."""

    name: str
    binary: Callable[[], str]
    adapter: type[CliAgent]
    key: str
    url: Callable[[Any], str]
    read_skill: Callable[[Path], Reply]
    write: Callable[[Path, str], Reply]
    shell: Callable[[str], Reply]


def _codex_shell(command: str) -> Reply:
    return tool_call("exec_command", {"cmd": command})


CLIS = {
    "codex": Cli(
        "codex",
        codex_binary,
        CodexAdapter,
        "sk-proj-" + "C0dexKey" * 6,
        lambda server: server.openai_url,
        lambda root: _codex_shell("cat .agents/skills/result-writer/SKILL.md"),
        lambda root, content: _codex_shell(f"printf '{content}\\n' > RESULT.md"),
        _codex_shell,
    ),
    "gemini-cli": Cli(
        "gemini-cli",
        gemini_binary,
        GeminiCliAdapter,
        "AIzaSy" + "G3miniKey" * 4,
        lambda server: server.url,
        lambda root: tool_call("activate_skill", {"name": "result-writer"}),
        lambda root, content: tool_call(
            "write_file", {"file_path": str(root / "RESULT.md"), "content": f"{content}\n"}
        ),
        lambda command: tool_call("run_shell_command", {"command": command, "description": "run"}),
    ),
}


@pytest.fixture(params=sorted(CLIS), scope="module")
def cli(request) -> Cli:
    spec = CLIS[request.param]
    spec.binary()  # install once per module, or skip without npm
    return spec


@pytest.fixture
def skill(tmp_path: Path):
    return load_skill(make_skill(tmp_path / "skills", [], name="result-writer", body=SKILL_BODY))


def adapter(cli: Cli, server, **kwargs) -> CliAgent:
    kwargs.setdefault("max_retries", 0)
    model = "gpt-5-mini" if cli.name == "codex" else "gemini-2.5-flash"
    return cli.adapter(cli.binary(), api_key=cli.key, model=model, base_url=cli.url(server), **kwargs)


def request(workspace, skill=None) -> ArmRequest:
    return ArmRequest(
        case=Case(name="task", prompt="Do the task."),
        arm="with_skill" if skill else "without_skill",
        skill=skill,
        workspace=workspace.root,
        max_turns=6,
    )


def skill_aware_model(cli: Cli, root: Path):
    """Loads the skill when the CLI offers it, writes what it says (or plainly), then stops.
    Every reply reports the same scripted token counts."""
    state = {"wrote": False}

    def reply(req):
        step = len(req.tool_results)
        if step == 0 and "result-writer" in req.raw:
            scripted = cli.read_skill(root)
        elif not state["wrote"]:
            state["wrote"] = True
            scripted = cli.write(root, "SKILL-FOLLOWED" if SKILL_BODY in req.raw else "plain")
        else:
            scripted = text("Finished.")
        scripted.input_tokens, scripted.output_tokens = IN_TOKENS, OUT_TOKENS
        return scripted

    return reply


def test_with_skill_arm_is_offered_the_skill_and_its_file_write_lands(cli, server, workspace, skill):
    server.handler = skill_aware_model(cli, workspace.root)
    result = adapter(cli, server).run(request(workspace, skill))

    assert result.error is None, result.error
    sent = server.model_requests()
    assert "result-writer" in sent[0].raw and "A skill made for a test." in sent[0].raw
    assert (workspace.root / "RESULT.md").read_text() == "SKILL-FOLLOWED\n"
    assert result.skill_activated is True
    assert result.final_output == "Finished."
    assert len(result.trajectory.tool_calls) == 2
    # Token counts are the script's, summed over the CLI's requests.
    assert (result.usage.input_tokens, result.usage.output_tokens) == (
        IN_TOKENS * len(sent),
        OUT_TOKENS * len(sent),
    )
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 0
    assert not (workspace.root / cli.adapter.skills_dir).exists()


def test_without_skill_arm_is_never_offered_the_skill_nor_the_key(cli, server, workspace, skill):
    model = skill_aware_model(cli, workspace.root)

    def reply(req):
        # First the commands' environment is dumped, then the task is worked plainly.
        if not req.tool_results:
            return cli.shell("env > env.txt")
        return model(req)

    server.handler = reply
    result = adapter(cli, server).run(request(workspace))
    assert result.error is None, result.error
    assert result.skill_activated is None
    for sent in server.model_requests():
        assert "result-writer" not in sent.raw and SKILL_BODY not in sent.raw
        # The CLI holds a placeholder; the credential proxy adds the real key on the host.
        assert sent.auth in (cli.key, f"Bearer {cli.key}") and cli.key not in sent.raw
    assert (workspace.root / "RESULT.md").read_text() == "plain\n"
    dumped = (workspace.root / "env.txt").read_text()
    assert "HOME=" in dumped and cli.key not in dumped
    assert cli.key not in json.dumps(result.trajectory.to_dict())
    assert not (workspace.root / ".home" / f".skillab-{cli.name}").exists()


def test_an_agent_that_swaps_its_skills_folder_for_a_link_deletes_nothing_outside(cli, server, workspace, skill,
                                                                                   tmp_path):
    # The workspace is bound at its host path, so the link names a real host directory (the
    # checkout's skills/, say) holding a folder of the skill's name; unstaging must not follow it.
    host = tmp_path / "checkout-skills"
    (host / "result-writer").mkdir(parents=True)
    (host / "result-writer" / "SKILL.md").write_text("the original")
    # (codex refuses ``rm -rf`` on its own; a move does the same here)
    swap = f"mv {cli.adapter.skills_dir} moved && ln -s {host} {cli.adapter.skills_dir}"
    server.handler = lambda req: cli.shell(swap) if not req.tool_results else text("Finished.")
    result = adapter(cli, server).run(request(workspace, skill))
    assert result.error is None, result.error
    assert os.path.islink(workspace.root / cli.adapter.skills_dir)  # the swap ran
    assert (host / "result-writer" / "SKILL.md").read_text() == "the original"


def test_the_agents_commands_reach_only_the_model_api_with_the_key(cli, server, workspace):
    # The proxy adds the real key on the host: a command the agent runs could otherwise use it
    # on any path of the provider (the account's files, batches, stored completions).
    probe = ("python3 -c \"import urllib.request as u\nfor p in ('/v1/files', '/files', '/v1beta/files'):\n"
             "  try: u.urlopen('http://127.0.0.1:38080' + p)\n  except Exception as e: print(p, e)\"")
    server.handler = lambda req: cli.shell(probe) if not req.tool_results else text("Finished.")
    result = adapter(cli, server).run(request(workspace))
    assert result.error is None, result.error
    assert "Forbidden" in json.dumps(result.trajectory.to_dict())  # the probe ran, and was refused
    assert not [r.path for r in server.requests if "files" in r.path]


def test_outage_errors_the_arm(cli, server, workspace):
    server.handler = lambda req: server_error(retry_after_ms=1)
    result = adapter(cli, server).run(request(workspace))
    assert result.error is not None
    assert 1 <= len(server.model_requests()) <= 2


def test_rejected_key_stops_the_run(cli, server, workspace):
    server.handler = lambda req: unauthorized()
    with pytest.raises(ProviderAuthError, match=cli.adapter.key_env):
        adapter(cli, server).run(request(workspace))


def test_from_config_records_the_cli_version_and_needs_the_key(cli, monkeypatch, tmp_path):
    alone_on_path(cli.adapter.cli, tmp_path / "bin", monkeypatch)
    monkeypatch.delenv(cli.adapter.key_env, raising=False)
    config = run_config(adapter=cli.name, model="some-model")
    with pytest.raises(ProviderAuthError, match=cli.adapter.key_env):
        cli.adapter.from_config(config)
    monkeypatch.setenv(cli.adapter.key_env, cli.key)
    # Credentials are read from the environment once, when the settings are made.
    identity = cli.adapter.from_config(run_config(adapter=cli.name, model="some-model")).identity()
    assert identity["adapter"] == cli.name and identity["cli_version"][0].isdigit()
    assert identity["skills_dir"] == cli.adapter.skills_dir and cli.key not in json.dumps(identity)


@pytest.mark.parametrize("adapter_class", [CodexAdapter, GeminiCliAdapter])
def test_missing_binary_says_how_to_install(adapter_class, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(adapter_class.key_env, "k")
    with pytest.raises(MissingDependencyError, match=adapter_class.package):
        adapter_class.from_config(run_config(adapter=adapter_class.name, model="m"))


def test_codex_events_become_turns_tools_usage_and_errors(tmp_path):
    agent = CodexAdapter("codex", api_key="k", model="gpt-5-mini")
    lines = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"type": "error", "message": "metadata not found"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Looking."}},
        {
            "type": "item.completed",
            "item": {
                "type": "command_execution",
                "command": f"cat {tmp_path}/.agents/skills/x/SKILL.md",
                "aggregated_output": "body",
                "exit_code": 0,
            },
        },
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 120, "cached_input_tokens": 100, "output_tokens": 7},
        },
    ]
    summary = parse_codex_events(agent, "\n".join(map(json.dumps, lines)), tmp_path, "x")
    assert [t.text for t in summary.turns] == ["Looking.", "Done."]
    assert summary.turns[0].tool_calls[0].output == "body" and summary.skill_activated
    assert summary.final_text == "Done." and summary.finished and summary.error is None
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (120, 100)
    failed = {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}
    summary = parse_codex_events(agent, json.dumps(failed), tmp_path, None)
    assert summary.auth_status == 401 and not summary.finished


def test_gemini_events_become_turns_tools_usage_and_errors(tmp_path):
    agent = GeminiCliAdapter("gemini", api_key="k", model="gemini-2.5-flash")
    lines = [
        {"type": "init", "model": "gemini-2.5-flash"},
        {"type": "message", "role": "user", "content": "Do it."},
        {"type": "message", "role": "assistant", "content": "Rea", "delta": True},
        {"type": "message", "role": "assistant", "content": "ding.", "delta": True},
        {
            "type": "tool_use",
            "tool_name": "read_file",
            "tool_id": "r1",
            "parameters": {"file_path": f"{tmp_path}/.gemini/skills/x/SKILL.md"},
        },
        {"type": "tool_result", "tool_id": "r1", "status": "success", "output": "body"},
        {"type": "message", "role": "assistant", "content": "Done.", "delta": True},
        {
            "type": "result",
            "status": "success",
            "stats": {"input_tokens": 50, "output_tokens": 5, "cached": 20, "duration_ms": 9},
        },
    ]
    summary = parse_gemini_events(agent, "\n".join(map(json.dumps, lines)), tmp_path, "x")
    assert [t.text for t in summary.turns] == ["Reading.", "Done."]
    assert summary.turns[0].tool_calls[0].output == "body" and summary.skill_activated
    assert summary.paths_touched == [".gemini/skills/x/SKILL.md"]
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (50, 20)
    assert summary.finished and summary.duration_ms == 9
    failed = {"type": "result", "status": "error", "error": {"message": "[API Error: status 403]"}}
    summary = parse_gemini_events(agent, json.dumps(failed), tmp_path, None)
    assert summary.auth_status == 403 and summary.error


def test_codex_is_held_to_max_turns_by_the_credential_proxy(server, workspace):
    """``codex exec`` has no turn cap: a model that never stops calling tools gets exactly
    ``max_turns`` answers, the next request is refused on the host, and the arm is graded on
    the work of those turns, marked as stopped at the cap."""
    cli = CLIS["codex"]
    cli.binary()

    def endless(req):
        return _one_step(_codex_shell("echo step >> steps.txt"))

    server.handler = endless
    arm = _capped_task(workspace)
    result = adapter(cli, server).run(arm)

    assert len(server.model_requests()) == 3
    assert (workspace.root / "steps.txt").read_text() == "step\n" * 3
    assert result.error is None and result.stop_reason == "max_turns"
    assert result.turns == 3 and len(result.trajectory.tool_calls) == 3
    # Codex reports no usage for a capped session: the answered responses' own usage counts.
    assert (result.usage.input_tokens, result.usage.output_tokens) == (3 * IN_TOKENS, 3 * OUT_TOKENS)
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 0


def test_a_cut_codex_stream_costs_no_turn_under_the_cap(server, workspace):
    """A stream the endpoint cuts is a provider fault Codex retries, not a model turn: with a
    cap of 3 the model still gets 3 answers, instead of a session ended at the cap after 2 and
    graded as the agent's own failure."""
    cli = CLIS["codex"]
    cli.binary()
    answered = {"n": 0}

    def cut_once(req):
        scripted = _one_step(_codex_shell("echo step >> steps.txt"))
        answered["n"] += 1
        if answered["n"] == 1:
            scripted.cut_after_events = 3  # created, in_progress, the call's item: no completion
        return scripted

    server.handler = cut_once
    arm = _capped_task(workspace)
    result = adapter(cli, server, max_retries=2).run(arm)

    assert len(server.model_requests()) == 4
    assert (workspace.root / "steps.txt").read_text() == "step\n" * 3
    assert result.error is None and result.stop_reason == "max_turns"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (3 * IN_TOKENS, 3 * OUT_TOKENS)


def test_gemini_at_its_session_turn_cap_is_graded_not_errored(server, workspace):
    """Gemini CLI ends a session at ``maxSessionTurns`` (set to max_turns) with an error result;
    that is the turn cap, as for the other agents: graded on its work, ``stop_reason``
    ``max_turns``, not an errored arm dropped from the lift on one agent only."""
    cli = CLIS["gemini-cli"]
    cli.binary()

    def endless(req):
        return _one_step(cli.shell("echo step >> steps.txt"))

    server.handler = endless
    arm = _capped_task(workspace)
    result = adapter(cli, server).run(arm)

    assert len(server.model_requests()) == 3
    assert (workspace.root / "steps.txt").read_text() == "step\n" * 3
    assert result.error is None and result.stop_reason == "max_turns"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (3 * IN_TOKENS, 3 * OUT_TOKENS)


def _capped_task(workspace) -> ArmRequest:
    """A task whose model never stops calling tools, capped at 3 turns."""
    return ArmRequest(case=Case(name="task", prompt="Do the task."), arm="without_skill", skill=None,
                      workspace=workspace.root, max_turns=3)


def _one_step(scripted):
    """``scripted`` (one shell step) with the usage every answered turn reports."""
    scripted.input_tokens, scripted.output_tokens = IN_TOKENS, OUT_TOKENS
    return scripted
