"""The OpenAI-compatible path against a server read as llama.cpp reads it (the fake's
``llama.cpp`` dialect, which copies what llama-cpp-python 0.3.36's server did with skillab's
requests): tools shown, tool turns accepted, structured judge output, the context window, the
sampling recorded, truncated answers, a validator's word over an errored judge, a stop."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import pytest

from skillab.agents.agent import AgentAdapter
from skillab.agents.base import ArmRequest
from skillab.cli import main
from skillab.core import stop
from skillab.core.messages import Message
from skillab.errors import ProviderError, UsageError
from skillab.grading.judge import Judge
from skillab.providers import RetryPolicy
from skillab.providers.anthropic import AnthropicClient
from skillab.providers.openai_compat import OpenAICompatClient
from skillab.providers.sdk_client import call_seed
from skillab.suite.model import Case

from ..fakes.model_server import FakeModelServer, Hang, text, tool_call
from ..skillgen import make_skill

KEY = "sk-test-" + "z" * 20


def client(server: FakeModelServer, **kwargs) -> OpenAICompatClient:
    return OpenAICompatClient("smollm2", api_key=KEY, base_url=server.openai_url,
                              policy=RetryPolicy(max_attempts=2, base_delay_s=0.001), **kwargs)


def agent_arm(tmp_path: Path) -> ArmRequest:
    return ArmRequest(case=Case(name="write", prompt="Write hi to hello.txt."), arm="without_skill",
                      skill=None, workspace=tmp_path, max_turns=3)


def test_the_agent_reaches_its_tools_on_a_llama_cpp_server(tmp_path):
    with FakeModelServer(dialect="llama.cpp") as server:
        server.push(tool_call("write_file", {"path": "hello.txt", "content": "hi"}), text("Done."))
        result = AgentAdapter(client(server)).run(agent_arm(tmp_path))
        first, second = server.model_requests()
    # Without tool_choice llama.cpp never shows the tools; with content null it answers 500.
    assert first.body["tool_choice"] == "auto"
    assert second.messages[1]["role"] == "assistant" and second.messages[1]["content"] == ""
    assert result.error is None and result.tool_call_count == 1
    assert (tmp_path / "hello.txt").read_text() == "hi" and result.final_output == "Done."


def test_the_fakes_llama_cpp_dialect_refuses_what_the_real_server_refuses():
    import openai

    sdk = openai.OpenAI(api_key=KEY, max_retries=0)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with FakeModelServer(dialect="llama.cpp") as server:
        sdk = sdk.with_options(base_url=server.openai_url)
        server.push(tool_call("f", {}), tool_call("f", {}))
        # No tool_choice: llama.cpp renders no tools, so the model answers in text.
        hidden = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}], tools=tools)
        shown = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}], tools=tools,
                                            tool_choice="auto")
        with pytest.raises(openai.InternalServerError, match="validation error"):
            sdk.chat.completions.create(model="m", messages=[
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "ok"}])
    assert hidden.choices[0].message.tool_calls is None and hidden.choices[0].message.content
    assert shown.choices[0].message.tool_calls[0].function.name == "f"


def test_tool_calls_left_in_the_text_are_read(tmp_path):
    with FakeModelServer() as server:
        server.push(text('<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}\n'
                         "</tool_call>"),
                    text('{"name": "read_file", "arguments": "{\\"path\\": \\"a.txt\\"}"}'),
                    text('Done: {"name": "nobody", "arguments": {}}'))
        result = AgentAdapter(client(server)).run(agent_arm(tmp_path))
    assert [c.name for c in result.trajectory.tool_calls] == ["write_file", "read_file"]
    assert result.trajectory.tool_calls[1].args == {"path": "a.txt"}
    # A JSON object naming no offered tool is prose, and the final answer.
    assert result.final_output.startswith("Done:") and (tmp_path / "a.txt").read_text() == "x"


@pytest.mark.parametrize("where", ["props", "models"])
def test_max_tokens_fits_the_context_the_server_tells(where):
    with FakeModelServer(context_tokens=1024, context_in=where) as server:
        server.push(text("ok"), text("ok"))
        llm = client(server)
        llm.create([Message.user("q")], system="S", max_tokens=4096)
        assert llm.context_window().tokens == 1024
        sent = server.model_requests()[0].body["max_tokens"]
    assert 16 <= sent < 1024


def test_a_server_that_tells_no_context_keeps_the_asked_max_tokens():
    with FakeModelServer(dialect="llama.cpp") as server:
        server.push(text("ok"))
        client(server).create([Message.user("q")], system="S", max_tokens=300)
        assert server.model_requests()[0].body["max_tokens"] == 300


def test_the_judge_asks_for_structured_output_and_falls_back_to_what_the_server_takes():
    with FakeModelServer(dialect="llama.cpp") as server:
        # What SmolLM2 wrote under llama.cpp's grammar: prose around it, a raw line break inside.
        server.handler = lambda req: text('The JSON object is: ```json\n{"passed": true, "reason": "It says\nhi."}\n```')
        judge = Judge(client(server))
        first = judge.grade("Says hi.", prompt="p", transcript="t", final_output="hi")
        second = judge.grade("Says bye.", prompt="p", transcript="t", final_output="hi")
        forms = [r.body.get("response_format", {}).get("type") for r in server.model_requests()]
    assert not first.errored and first.passed and not second.errored
    # json_schema refused once (HTTP 500, not retried), then json_object with the schema, kept.
    assert forms == ["json_schema", "json_object", "json_object"]
    assert server.model_requests()[1].body["response_format"]["schema"]["required"] == ["passed", "reason", "score"]


def test_sampling_per_role_is_sent_and_recorded(tmp_path, monkeypatch):
    cases = [{"name": "c1", "prompt": "Say hi.", "expectations": ["Says hi."],
              "validators": [{"cmd": "grep -q hi response.txt"}]}]
    skill = make_skill(tmp_path, cases)

    def handler(req):
        if "grader" in req.system_text:
            return text(json.dumps({"passed": True, "reason": "It does."}))
        return text("hi")

    with FakeModelServer(handler) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        code = main(["run", str(skill), "--adapter", "llm", "--model", "smollm2", "--provider", "openai",
                     "--judge-same-family", "--temperature", "0.7", "--seed", "11",
                     "--judge-temperature", "0.1", "--judge-seed", "5", "--max-tokens", "200",
                     "--no-cache", "--no-history", "--judge-consistency", "0", "--quiet",
                     "--output", str(tmp_path / "r.json")])
        bodies = [r.body for r in server.model_requests()]
    assert code == 0
    agent = [b for b in bodies if "grader" not in b["messages"][0]["content"]]
    judged = [b for b in bodies if "grader" in b["messages"][0]["content"]]
    assert {(b["temperature"], b["max_tokens"]) for b in agent} == {(0.7, 200)}
    assert {b["temperature"] for b in judged} == {0.1}
    # Each call's seed comes from --seed and its place: the arms differ, a rerun repeats them.
    assert sorted(b["seed"] for b in agent) == sorted(call_seed(11, "\0".join(("c1", arm, "0")))
                                                      for arm in ("with_skill", "without_skill"))
    # The judge's: from --judge-seed and its message (the same question, the same seed).
    assert judged and {b["seed"] for b in judged} <= {call_seed(5, s) for s in (sha16(b) for b in judged)}
    doc = json.loads((tmp_path / "r.json").read_text())
    identity = doc["adapter"]["identity"]
    assert (identity["temperature"], identity["seed"], identity["max_tokens"]) == (0.7, 11, 200)
    assert doc["models"]["judge_sampling"] == {"temperature": 0.1, "seed": 5}


def sha16(body: dict) -> str:
    return hashlib.sha256(body["messages"][-1]["content"].encode()).hexdigest()[:16]


def test_a_provider_without_a_seed_refuses_one():
    with pytest.raises(UsageError, match="no sampling seed"):
        AnthropicClient("claude-haiku-4-5", api_key=KEY, seed=3)


def run_doc(tmp_path: Path, monkeypatch, cases, handler) -> dict:
    skill = make_skill(tmp_path, cases)
    with FakeModelServer(handler) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        main(["run", str(skill), "--adapter", "llm", "--model", "smollm2", "--provider", "openai",
              "--judge-same-family", "--no-cache", "--no-history", "--judge-consistency", "0",
              "--quiet", "--output", str(tmp_path / "r.json")])
    return json.loads((tmp_path / "r.json").read_text())


def test_an_answer_cut_at_max_tokens_fails_as_truncated(tmp_path, monkeypatch):
    cases = [{"name": "c1", "prompt": "Say hi.", "validators": [{"cmd": "grep -q hi response.txt"}]}]
    doc = run_doc(tmp_path, monkeypatch, cases,
                  lambda req: text("hi hi hi hi", stop_reason="length"))
    arm = doc["cases"][0]["with_skill"]
    assert arm["passed"] is False and arm["errored"] is False
    assert arm["extra"]["stop_reason"] == "max_tokens"
    assert [g["kind"] for g in arm["extra"]["graders"]] == ["truncated"]


def test_a_failed_validator_decides_the_arm_when_the_judge_is_unreadable(tmp_path, monkeypatch):
    cases = [{"name": "c1", "prompt": "Say hi.", "expectations": ["Says hi."],
              "validators": [{"cmd": "grep -q SKILLED response.txt"}]}]

    def handler(req):
        return text("I cannot tell.") if "grader" in req.system_text else text("hello")

    doc = run_doc(tmp_path, monkeypatch, cases, handler)
    case = doc["cases"][0]
    for arm in (case["with_skill"], case["without_skill"]):
        assert arm["expectation_results"][0]["errored"] is True
        assert arm["errored"] is False and arm["passed"] is False
    assert case["outcome"] == "fail_kept"


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_a_stop_ends_a_model_call_in_flight():
    with FakeModelServer() as server:
        server.push(Hang(30))
        answerer = client(server)  # built first: importing the SDK cold is not the call's time
        timer = threading.Timer(0.3, stop.request)
        started = time.monotonic()
        timer.start()
        try:
            with pytest.raises(ProviderError, match="stopped while this model call was in flight"):
                answerer.create([Message.user("q")], system="S")
        finally:
            stop.clear()
    assert time.monotonic() - started < 3


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_sigterm_does_not_wait_for_the_model_call_in_flight(tmp_path):
    import os
    import signal
    import sys

    from ..signals import signal_when

    skill = make_skill(tmp_path, [{"name": "c1", "prompt": "Say hi.", "validators": [{"cmd": "true"}]}])
    with FakeModelServer(lambda req: Hang(60)) as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_url
        try:
            started = []
            code, _, stderr = signal_when(
                [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "llm", "--model", "smollm2",
                 "--provider", "openai", "--no-cache", "--no-history", "--quiet", "--output", str(tmp_path / "r.json")],
                lambda: server.count >= 1 and not started.append(time.monotonic()), sig=signal.SIGTERM)
        finally:
            del os.environ["OPENAI_BASE_URL"]
    # The server would hold the call 60 s; the run ends at once, the arm errored, not failed.
    assert time.monotonic() - started[0] < 15, stderr
    assert code == 130, stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["interrupted"] is True
