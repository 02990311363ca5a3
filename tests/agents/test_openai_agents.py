"""``--adapter openai-agents``: the OpenAI Agents SDK (a ``SandboxAgent`` with the ``Skills``
capability, run inside the sandbox) against a fake OpenAI Responses server on 127.0.0.1,
through the credential proxy."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from skillab.agents import openai_agents_runner
from skillab.agents.openai_agents import OpenAIAgentsAgent
from skillab.cli import main

from ..documented_example import documented, run_example
from ..fakes.model_server import FakeModelServer, rate_limited, server_error, text, tool_call
from .test_python_agent import SECRET_WORD, write_suite

pytest.importorskip("agents.sandbox", reason="the openai-agents extra is not installed "
                                             "(pip install 'skillab[agents-sdk]')")
KEY = "sk-proj-" + "0pen4gents" * 5
LISTING = "- fruit: Names the house fruit. (file: .agents/skills/fruit)"
HUNT = ("find / -name SKILL.md -path '*fruit*' 2>/dev/null | head; ls -a .agents .agents/skills 2>&1; "
        "cat .agents/skills/fruit/SKILL.md 2>&1; env | grep -c -e sk-proj- -e skillab-arm- -e ^PYTHONPATH= ; echo done")


def sdk_model(req):
    """Loads the fruit skill when the SDK's instructions list it (``load_skill`` when lazy, then
    ``cat`` of its SKILL.md); without it, hunts the disk for any skill file and the key; answers
    with what the commands showed."""
    results = req.tool_results
    listed = LISTING in req.system_text
    if not results:
        if not listed:
            # Room for the walk of the whole disk on a busy machine (the tool yields after 10 s).
            return tool_call("exec_command", {"cmd": HUNT, "yield_time_ms": 120_000})
        if "load_skill" in req.tool_names:
            return tool_call("load_skill", {"skill_name": "fruit"})
    if listed and len(results) == ("load_skill" in req.tool_names):
        return tool_call("exec_command", {"cmd": "cat .agents/skills/fruit/SKILL.md"})
    return text(f"The house fruit is {SECRET_WORD}." if SECRET_WORD in results[-1] else "I do not know the house fruit.")


def run(tmp_path: Path, server: FakeModelServer, *extra: str, adapter: str = "openai-agents") -> dict:
    out = tmp_path / "r.json"
    code = main(["run", str(tmp_path / "fruit"), "--adapter", adapter, "--model", "gpt-4.1-mini",
                 "--base-url", server.openai_url, "--provider", "openai", "--no-cache", "--no-history",
                 "--quiet", "--output", str(out), *extra])
    doc = json.loads(out.read_text())
    doc["exit"] = code
    assert KEY not in out.read_text()
    return doc


@pytest.mark.parametrize("loading", ["discover", "lazy"])
def test_an_openai_agents_sdk_agent_is_offered_and_loads_the_skill_the_arm_without_finds_none(tmp_path, monkeypatch, loading):
    write_suite(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeModelServer(sdk_model) as server:
        doc = run(tmp_path, server, "--skill-loading", loading)
        requests = server.model_requests()
    [record] = doc["cases"]
    assert doc["exit"] == 0 and record["outcome"] == "flip_to_pass", json.dumps(record)[:2000]
    with_arm, without_arm = record["with_skill"], record["without_skill"]
    assert with_arm["error"] is None and without_arm["error"] is None
    # Loaded: load_skill (lazy) or the read of the staged SKILL.md (eager), as the runtime did it.
    assert with_arm["skill_activated"] is True
    # The with-skill arm's model requests carried the capability's listing, the other arm's none.
    listed = [r for r in requests if LISTING in r.system_text]
    assert listed and len(listed) < len(requests)
    assert ("load_skill" in listed[0].tool_names) == (loading == "lazy")
    # The arm without the skill: no SKILL.md anywhere it could look, no token or key in its env.
    hunted = [r.tool_results[0] for r in requests if r.tool_results and "done" in r.tool_results[0]]
    assert hunted and all(h.split("Output:\n")[-1].startswith("ls: ") for h in hunted), hunted
    assert all("No such file" in h and "\n0\ndone" in h for h in hunted), hunted
    # Every request went to the Responses API through the proxy, which added the key.
    assert requests and all(r.path == "/v1/responses" and r.auth == f"Bearer {KEY}" for r in requests)
    # Nothing kept server-side; no reasoning include for a model without reasoning.
    assert all(r.body["store"] is False and not r.body.get("include") for r in requests)
    assert with_arm["usage"]["input_tokens"] > 0 and without_arm["usage"]["input_tokens"] > 0
    assert doc["adapter"]["name"] == "openai-agents"


def test_beside_another_agent_it_gets_its_portability_row_and_the_must_use_note(tmp_path, monkeypatch):
    write_suite(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def model(req):  # skillab's own tool loop talks chat completions: it is not offered the skill here
        return sdk_model(req) if req.api == "responses" else text("I do not know the house fruit.")

    with FakeModelServer(model) as server:
        run(tmp_path, server, "--markdown", str(tmp_path / "r.md"),
                  adapter="agent,openai-agents")
    table = (tmp_path / "r.md").read_text()
    [row] = [line for line in table.splitlines() if line.startswith("| fruit | openai-agents")]
    assert "| discover (.agents/skills) | 100% |" in row
    assert 'Note: openai-agents: the OpenAI Agents SDK\'s Skills instructions tell the model it "must use"' in table


def test_without_the_sdk_in_the_agents_python_the_run_stops_before_any_arm_with_the_install_command(
        tmp_path, monkeypatch, capsys):
    bare = Path("/usr/bin/python3")
    if not bare.exists() or subprocess.run([str(bare), "-c", "import agents"], capture_output=True).returncode == 0:
        pytest.skip("no python3 without openai-agents on this machine")
    write_suite(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SKILLAB_GRADER_PYTHON", str(bare))
    with FakeModelServer(lambda req: text("unused")) as server:
        code = main(["run", str(tmp_path / "fruit"), "--adapter", "openai-agents", "--model", "gpt-4.1-mini",
                     "--base-url", server.openai_url, "--provider", "openai", "--no-cache", "--no-history"])
        assert server.count == 0
    err = capsys.readouterr().err
    assert code == 2 and "pip install 'skillab[agents-sdk]'" in err and "Traceback" not in err


def test_a_with_skill_arm_whose_model_requests_do_not_list_the_skill_is_invalid():
    """Staged on disk is not offered: the proof is the listing the SDK rendered into the
    instructions the model received. Without it the arm is an error, never a baseline."""
    agent = OpenAIAgentsAgent.__new__(OpenAIAgentsAgent)
    staged = json.dumps({"type": "offered", "skills": ["fruit"]}) + "\n"
    result = {"type": "result", "answer": "hi", "events": []}
    unlisted = agent.parse(staged + json.dumps({**result, "offered": []}) + "\n", Path("/w"), "fruit", offered=("fruit",))
    assert unlisted.error and "was not offered" in unlisted.error
    listed = agent.parse(staged + json.dumps({**result, "offered": ["fruit"]}) + "\n", Path("/w"), "fruit", offered=("fruit",))
    assert listed.error is None


@pytest.mark.parametrize("command, loaded", [
    ("cat .agents/skills/fruit/SKILL.md", True),
    ("sed -n 1,40p .home/.skillab-openai-agents/skill-source/fruit/SKILL.md", True),  # past load_skill
    ("cat .agents/skills/fruitcake/SKILL.md", False),
    ("ls .agents/skills/fruit", False),
])
def test_a_shell_read_of_the_staged_skill_is_its_load(command, loaded):
    agent = OpenAIAgentsAgent.__new__(OpenAIAgentsAgent)
    event = {"tool": "exec_command", "args": {"cmd": command}, "output": ""}
    stdout = json.dumps({"type": "result", "answer": "hi", "events": [event], "offered": ["fruit"]}) + "\n"
    summary = agent.parse(stdout, Path("/w"), "fruit", offered=("fruit",))
    assert summary.skill_activated is loaded and summary.skills_loaded == (["fruit"] if loaded else [])


def test_an_agent_held_at_the_turn_cap_is_graded_on_what_it_did_not_errored(tmp_path, monkeypatch):
    write_suite(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeModelServer(lambda req: tool_call("exec_command", {"cmd": "echo again"})) as server:
        doc = run(tmp_path, server, "--max-turns", "2")
    [record] = doc["cases"]
    assert record["outcome"] == "fail_kept", json.dumps(record)[:1500]
    for arm in (record["with_skill"], record["without_skill"]):
        assert arm["error"] is None and arm["extra"]["stop_reason"] == "max_turns"


@pytest.mark.parametrize("status", [500, 429])
def test_a_model_api_outage_is_an_error_of_the_arm_never_a_failed_case(tmp_path, monkeypatch, status):
    write_suite(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    down = server_error(retry_after_ms=5) if status == 500 else rate_limited(retry_after_ms=5)
    with FakeModelServer(lambda req: down) as server:
        doc = run(tmp_path, server)
        tried = server.count
    [record] = doc["cases"]
    assert record["outcome"] == "error", json.dumps(record)[:1500]
    for arm in (record["with_skill"], record["without_skill"]):
        assert f"HTTP {status}" in arm["error"]
    assert tried == 2 * 5  # each arm's client retried as the run's attempts allow, then gave up


class _Egress(BaseHTTPRequestHandler):
    """An HTTPS proxy that lets nothing through and remembers every host asked for."""

    asked: ClassVar[list[str]] = []

    def do_CONNECT(self) -> None:
        self.asked.append(self.path)
        self.send_response(403)
        self.end_headers()

    do_GET = do_POST = do_CONNECT

    def log_message(self, *args: object) -> None:
        pass


def run_runner(tmp_path: Path, agent: str, model, env: dict[str, str] | None = None, reasoning: bool = False):
    """The runner on its own, as the adapter starts it but with no sandbox around it: its
    result line, and the model requests the fake server saw."""
    runner_dir = Path(openai_agents_runner.__file__).parent
    with FakeModelServer(model) as server:
        task = {"prompt": "hi", "workspace": ".", "skills_dir": None, "skills": [], "base_url": server.openai_url,
                "token_env": "OPENAI_API_KEY", "provider": "openai", "model": "gpt-4.1-mini", "max_turns": 4,
                "purpose": "grade", "agent": agent, "loading": "eager", "skills_path": ".agents/skills",
                "max_retries": 0, "reasoning": reasoning}
        done = subprocess.run(
            [sys.executable, "-S", str(runner_dir / "python_runner.py"), "openai_agents_runner", "run"],
            input=json.dumps(task), capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "SKILLAB_AGENT_SITES": ":".join(site.getsitepackages()),
                 "PYTHONPATH": f"{runner_dir}:{tmp_path}", "OPENAI_API_KEY": "skillab-arm-token", **(env or {})})
        requests = server.model_requests()
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = next((line for line in lines if line["type"] in ("result", "error")), None)
    assert result is not None, done.stdout + done.stderr
    return result, requests


def test_no_trace_leaves_the_machine_even_when_the_team_turns_tracing_on(tmp_path):
    """The team's agent turns the SDK's tracing on with an export key; every connection the
    process opens that is not the model call goes to an HTTPS proxy that records it. None does:
    the runner turns tracing off after the team's code."""
    (tmp_path / "traced_agent.py").write_text(
        "from agents import Agent, set_tracing_disabled, set_tracing_export_api_key\n"
        "def agent():\n"
        "    set_tracing_disabled(False)\n"
        "    set_tracing_export_api_key('sk-team-tracing-key')\n"
        "    return Agent(name='traced', instructions='Answer.')\n")
    egress = ThreadingHTTPServer(("127.0.0.1", 0), _Egress)
    threading.Thread(target=egress.serve_forever, daemon=True).start()
    try:
        result, requests = run_runner(tmp_path, "traced_agent:agent", lambda req: text("done"),
                                      {"HTTPS_PROXY": f"http://127.0.0.1:{egress.server_port}", "NO_PROXY": "127.0.0.1"})
    finally:
        egress.shutdown()
    assert result["type"] == "result" and requests and all(r.path == "/v1/responses" for r in requests)
    assert _Egress.asked == []


def test_a_handoff_with_its_own_model_client_still_goes_through_the_proxy(tmp_path):
    """The team's sub-agent brings its own model and client (pointed elsewhere): the run's model
    replaces every agent's, so its turn too reaches the model only through the given endpoint."""
    (tmp_path / "handoff_agent.py").write_text(
        "from agents import Agent\n"
        "from agents.models.openai_responses import OpenAIResponsesModel\n"
        "from openai import AsyncOpenAI\n"
        "elsewhere = OpenAIResponsesModel('gpt-5', AsyncOpenAI(base_url='http://127.0.0.1:9/v1', api_key='sk-own'))\n"
        "def agent():\n"
        "    helper = Agent(name='helper', instructions='You are the helper.', model=elsewhere)\n"
        "    return Agent(name='front', instructions='Hand off.', handoffs=[helper], model=elsewhere)\n")

    def model(req):
        if "You are the helper." in req.system_text:
            return text("helped")
        return tool_call("transfer_to_helper", {})

    result, requests = run_runner(tmp_path, "handoff_agent:agent", model)
    assert result["type"] == "result" and result["answer"] == "helped", result
    assert len(requests) == 2 and all(r.model == "gpt-4.1-mini" and r.auth == "Bearer skillab-arm-token" for r in requests)


def test_a_reasoning_model_stores_nothing_and_gets_its_reasoning_back_encrypted(tmp_path):
    (tmp_path / "plain_agent.py").write_text("from agents import Agent\ndef agent():\n    return Agent(name='p')\n")
    result, [request] = run_runner(tmp_path, "plain_agent:agent", lambda req: text("ok"), reasoning=True)
    assert request.body["store"] is False and request.body["include"] == ["reasoning.encrypted_content"]


# The commands docs/agents-sdk.md gives for the example, verbatim.
MOCK_COMMAND = "python examples/openai-agents/mock_model.py"
EXAMPLE_COMMAND = ("OPENAI_API_KEY=sk-mock PYTHONPATH=examples/openai-agents skillab run examples/team-facts "
                   "--case release-code-name --adapter openai-agents:team_agent:agent --model gpt-4.1-mini "
                   "--base-url http://127.0.0.1:8765/v1 --provider openai")


def test_the_documented_example_runs_in_one_command_against_the_mock_model(tmp_path):
    assert documented("agents-sdk.md", MOCK_COMMAND, EXAMPLE_COMMAND)
    record = run_example(MOCK_COMMAND, EXAMPLE_COMMAND, "http://127.0.0.1:8765/v1", tmp_path / "r.json")
    assert record["outcome"] == "flip_to_pass" and record["with_skill"]["skill_activated"] is True
    assert "ZEPHYR" in record["with_skill"]["final_output"]
