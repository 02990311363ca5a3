"""The OpenAI Responses and Gemini providers through their official SDKs, against the fake
server speaking each wire protocol."""

from __future__ import annotations

import pytest

from skillab.errors import ProviderAuthError, ProviderError
from skillab.providers import (
    Message,
    RetryPolicy,
    ToolOutcome,
    ToolSpec,
    cost_usd,
    create_client,
    infer_provider,
)
from skillab.providers.gemini import GeminiClient
from skillab.providers.openai_responses import OpenAIResponsesClient

from ..configs import agent_settings_of, judge_settings_of, run_config
from ..fakes.model_server import rate_limited, server_error, text, tool_call, unauthorized

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
WRITE = ToolSpec(
    "write_file",
    "Write a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
OPENAI_KEY = "sk-proj-" + "r" * 30
GEMINI_KEY = "AIzaSy" + "g" * 33


def responses_client(server, **kwargs) -> OpenAIResponsesClient:
    kwargs.setdefault("policy", FAST)
    return OpenAIResponsesClient("gpt-4.1", api_key=OPENAI_KEY, base_url=server.openai_url, **kwargs)


def gemini_client(server, **kwargs) -> GeminiClient:
    kwargs.setdefault("policy", FAST)
    return GeminiClient("gemini-2.5-flash", api_key=GEMINI_KEY, base_url=server.url, **kwargs)


def history(first) -> list[Message]:
    return [
        Message.user("make a file"),
        Message("assistant", text=first.text, tool_calls=tuple(first.tool_calls)),
        Message("user", tool_results=(ToolOutcome(first.tool_calls[0].id, "wrote 0 bytes"),)),
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_tool_call_round_trip(server, stream):
    server.push(
        tool_call("write_file", {"path": "out.txt"}, text="Writing.", input_tokens=40, output_tokens=6),
        text("Done.", input_tokens=55, output_tokens=2),
    )
    client = responses_client(server, stream=stream)
    first = client.create([Message.user("make a file")], system="SYS", tools=[WRITE], temperature=0)
    assert first.text == "Writing." and first.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("write_file", {"path": "out.txt"})]
    assert (first.usage.input_tokens, first.usage.output_tokens) == (40, 6)
    assert first.usage.cost_usd == cost_usd("gpt-4.1", first.usage)

    second = client.create(history(first), system="SYS", tools=[WRITE])
    assert second.text == "Done." and second.stop_reason == "end_turn"

    sent = server.model_requests()
    assert [r.api for r in sent] == ["responses", "responses"]
    assert [r.streamed for r in sent] == [stream, stream]
    assert sent[0].auth == f"Bearer {OPENAI_KEY}"
    body = sent[0].body
    assert body["instructions"] == "SYS" and body["temperature"] == 0 and body["store"] is False
    assert body["tools"][0]["name"] == "write_file" and body["tools"][0]["type"] == "function"
    replayed = sent[1].body["input"]
    assert replayed[2]["type"] == "function_call" and replayed[2]["name"] == "write_file"
    assert replayed[3] == {
        "type": "function_call_output",
        "call_id": first.tool_calls[0].id,
        "output": "wrote 0 bytes",
    }


def test_gemini_tool_call_round_trip(server):
    server.push(
        tool_call("write_file", {"path": "out.txt"}, input_tokens=30, output_tokens=4),
        text("Done.", input_tokens=45, output_tokens=2),
    )
    client = gemini_client(server)
    first = client.create([Message.user("make a file")], system="SYS", tools=[WRITE], temperature=0)
    assert first.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("write_file", {"path": "out.txt"})]
    assert (first.usage.input_tokens, first.usage.output_tokens) == (30, 4)
    assert first.usage.cost_usd == cost_usd("gemini-2.5-flash", first.usage)

    second = client.create(history(first), system="SYS", tools=[WRITE])
    assert second.text == "Done." and second.stop_reason == "end_turn"

    sent = server.model_requests()
    assert [r.api for r in sent] == ["gemini", "gemini"]
    assert sent[0].path.split("/models/")[1] == "gemini-2.5-flash:generateContent"
    assert sent[0].auth == GEMINI_KEY
    body = sent[0].body
    assert body["systemInstruction"]["parts"][0]["text"] == "SYS"
    assert body["generationConfig"]["temperature"] == 0
    assert sent[0].tool_names == ["write_file"]
    assert sent[1].tool_results == ['{"output": "wrote 0 bytes"}']
    response_part = sent[1].body["contents"][2]["parts"][0]["functionResponse"]
    assert response_part["name"] == "write_file"


@pytest.mark.parametrize("make", [responses_client, gemini_client], ids=["responses", "gemini"])
def test_transient_failures_are_retried_then_error(server, make):
    server.push(rate_limited(retry_after_ms=1), text("ok"))
    assert make(server).create([Message.user("q")], system="S").text == "ok"
    server.handler = lambda req: server_error(retry_after_ms=1)
    with pytest.raises(ProviderError, match="500"):
        make(server).create([Message.user("q")], system="S")
    assert len(server.model_requests()) == 2 + FAST.max_attempts


@pytest.mark.parametrize("make", [responses_client, gemini_client], ids=["responses", "gemini"])
def test_rejected_key_stops(server, make):
    server.push(unauthorized())
    with pytest.raises(ProviderAuthError):
        make(server).create([Message.user("q")], system="S")
    assert len(server.model_requests()) == 1


def test_gemini_models_are_chosen_by_name_and_read_their_own_key(server, monkeypatch):
    assert infer_provider("gemini-2.5-pro") == "gemini"
    judged = run_config(adapter="agent", model="claude-haiku-4-5", judge_model="gemini-2.5-pro")
    assert judge_settings_of(judged).provider == "gemini"
    config = run_config(adapter="agent", model="gemini-2.5-flash")
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    server.push(text("hello"))
    client = create_client(agent_settings_of(config))
    assert client.create([Message.user("q")], system="S").text == "hello"
    responses = agent_settings_of(run_config(adapter="agent", model="gpt-5", provider="openai-responses"))
    assert responses.key_env == "OPENAI_API_KEY"
