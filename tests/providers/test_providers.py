"""Providers against the fake model server: wire shapes, retries, auth stops, caps, pricing."""

from __future__ import annotations

import threading
import time
from email.utils import formatdate

import pytest

from skillab.core.usage import Usage
from skillab.errors import ProviderAuthError, ProviderEndpointError, ProviderError, UsageError
from skillab.providers import (
    Message,
    RetryPolicy,
    ToolOutcome,
    ToolSpec,
    ToolUse,
    cost_usd,
    create_client,
    infer_provider,
    price_of,
)
from skillab.providers.anthropic import AnthropicClient
from skillab.providers.base import Price
from skillab.providers.openai_compat import OpenAICompatClient
from skillab.providers.rate import AdaptiveLimit
from skillab.providers.retry import (
    CallSite,
    call_with_retries,
    retry_after_seconds,
)

from ..configs import agent_settings_of, judge_settings_of, run_config
from ..fakes.model_server import (
    FakeModelServer,
    Hang,
    HttpError,
    Malformed,
    http_error,
    overloaded,
    rate_limited,
    server_error,
    text,
    tool_call,
    unauthorized,
)

KEY = "sk-ant-test-" + "k" * 24
FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
WRITE = ToolSpec(
    "write_file",
    "Write a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)



def anthropic_client(server, **kwargs) -> AnthropicClient:
    kwargs.setdefault("policy", FAST)
    return AnthropicClient("claude-haiku-4-5", api_key=KEY, base_url=server.url, **kwargs)


def openai_client(server, model="gpt-4o", **kwargs) -> OpenAICompatClient:
    kwargs.setdefault("policy", FAST)
    return OpenAICompatClient(model, api_key="sk-openai-test", base_url=server.openai_url, **kwargs)


# --- wire shapes --------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_tool_use_round_trip(server, stream):
    server.push(tool_call("write_file", {"path": "out.txt"}, text="Writing."), text("Done."))
    client = anthropic_client(server, stream=stream)
    first = client.create([Message.user("make a file")], system="SYS", tools=[WRITE], temperature=0)
    assert first.text == "Writing."
    assert first.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("write_file", {"path": "out.txt"})
    ]

    history = [
        Message.user("make a file"),
        Message("assistant", text=first.text, tool_calls=tuple(first.tool_calls)),
        Message("user", tool_results=(ToolOutcome(first.tool_calls[0].id, "wrote 0 bytes"),)),
    ]
    second = client.create(history, system="SYS", tools=[WRITE])
    assert second.text == "Done." and second.stop_reason == "end_turn"

    sent = server.model_requests()
    assert [r.streamed for r in sent] == [stream, stream]
    body = sent[0].body
    assert body["system"] == [
        {"type": "text", "text": "SYS", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["temperature"] == 0
    assert body["tools"][0]["input_schema"]["required"] == ["path"]
    assert "temperature" not in sent[1].body
    replayed = sent[1].body["messages"]
    assert replayed[1]["content"][1]["type"] == "tool_use"
    assert replayed[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": first.tool_calls[0].id,
        "content": "wrote 0 bytes",
        "is_error": False,
    }


def test_anthropic_reports_prompt_cache_reads_and_prices_them(server):
    server.push(text("a"), text("b"))
    client = anthropic_client(server)
    first = client.create([Message.user("q1")], system="STABLE SYSTEM PROMPT " * 20)
    second = client.create([Message.user("q2")], system="STABLE SYSTEM PROMPT " * 20)
    assert first.usage.cache_write_tokens > 0 and first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    # Input counts cached tokens too; the cached part is billed at the cache-read rate.
    assert second.usage.input_tokens >= second.usage.cache_read_tokens
    assert second.usage.cost_usd == cost_usd("claude-haiku-4-5", second.usage)
    assert second.usage.cost_usd < first.usage.cost_usd


def test_openai_tool_calls_and_tool_results(server):
    server.push(tool_call("write_file", {"path": "a.md"}), text("ok"))
    client = openai_client(server)
    first = client.create([Message.user("go")], system="SYS", tools=[WRITE], temperature=0)
    assert first.stop_reason == "tool_use"
    call = first.tool_calls[0]
    assert (call.name, call.arguments) == ("write_file", {"path": "a.md"})
    client.create(
        [
            Message.user("go"),
            Message("assistant", tool_calls=(call,)),
            Message("user", tool_results=(ToolOutcome(call.id, "done", is_error=False),)),
        ],
        system="SYS",
        tools=[WRITE],
    )
    first_body, second_body = (r.body for r in server.model_requests())
    assert first_body["messages"][0] == {"role": "system", "content": "SYS"}
    assert first_body["temperature"] == 0 and first_body["max_tokens"] == 4096
    assert first_body["tools"][0]["function"]["name"] == "write_file"
    assert (
        second_body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.md"}'
    )
    assert second_body["messages"][3] == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": "done",
    }


def test_openai_reasoning_models_get_completion_tokens_and_no_temperature(server):
    server.push(text("fine"))
    openai_client(server, model="o4-mini").create([Message.user("q")], system="S", temperature=0)
    body = server.model_requests()[0].body
    assert body["max_completion_tokens"] == 4096
    assert "max_tokens" not in body and "temperature" not in body


def test_openai_invalid_tool_arguments_stay_a_string(server):
    server.push(tool_call("write_file", "{not json"))
    response = openai_client(server).create([Message.user("q")], system="S", tools=[WRITE])
    assert response.tool_calls[0].arguments == "{not json"


def test_openai_compatible_arguments_sent_as_an_object_are_read(server):
    """Some OpenAI-compatible servers send ``function.arguments`` as a JSON object rather than
    the string OpenAI sends: the call is the same call, not an unreadable reply."""
    call = {"id": "call_1", "type": "function",
            "function": {"name": "write_file", "arguments": {"path": "a.txt"}}}
    server.push(HttpError(200, {
        "id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }))
    response = openai_client(server).create([Message.user("q")], system="S", tools=[WRITE])
    assert server.count == 1
    assert response.tool_calls[0].arguments == {"path": "a.txt"}


def test_temperature_refused_by_the_model_falls_back_to_its_default(server):
    def handler(request):
        if "temperature" in request.body:
            return http_error(
                400, "temperature is not supported for this model", "invalid_request_error"
            )
        return text("verdict")

    server.handler = handler
    client = anthropic_client(server)
    assert client.create([Message.user("q")], system="S", temperature=0).text == "verdict"
    assert client.create([Message.user("q")], system="S", temperature=0).text == "verdict"
    # One refusal, then the client stops sending it.
    assert ["temperature" in r.body for r in server.model_requests()] == [True, False, False]


# --- retries ------------------------------------------------------------------------------------


def test_transient_failures_are_retried_until_success(server):
    server.push(
        rate_limited(retry_after_ms=1),
        overloaded(retry_after_ms=1),
        server_error(retry_after_ms=1),
        text("ok"),
    )
    response = anthropic_client(
        server, policy=RetryPolicy(max_attempts=4, base_delay_s=0.001)
    ).create([Message.user("q")], system="S")
    assert response.text == "ok" and response.attempts == 4
    assert server.count == 4


def test_retries_are_bounded_and_the_error_carries_the_providers_message(server):
    server.push(*[overloaded(retry_after_ms=1)] * 5)
    with pytest.raises(ProviderError) as caught:
        anthropic_client(server).create([Message.user("q")], system="S")
    assert server.count == 3  # max_attempts, not one more
    assert "HTTP 529" in str(caught.value) and "Overloaded" in str(caught.value)
    assert "after 3 attempts" in str(caught.value)
    assert caught.value.retryable and caught.value.status == 529
    assert server.pending == 2


def wait_log(server, replies, policy=FAST, seed=""):
    """Run one Anthropic call under ``call_with_retries`` recording the waits it chose."""
    server.push(*replies)
    client = anthropic_client(server)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    # The slot's shared pause after a 429 runs on the same clock as the recorded waits.
    now = [0.0]
    try:
        call_with_retries(
            lambda: client._sdk.messages.create(
                model="claude-haiku-4-5", max_tokens=5, messages=[{"role": "user", "content": "q"}]
            ),
            site=CallSite("anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY"),
            policy=policy,
            slot=AdaptiveLimit(4, clock=lambda: now[0]),
            seed=seed,
            sleep=sleep,
        )
    except ProviderError:
        pass
    return waits


def test_retry_after_headers_are_honoured(server):
    waits = wait_log(
        server, [rate_limited(retry_after_s=7), rate_limited(retry_after_ms=250), text("ok")]
    )
    assert waits == [7.0, 0.25]


def test_retry_after_is_capped(server):
    policy = RetryPolicy(max_attempts=2, max_retry_after_s=30)
    assert wait_log(server, [rate_limited(retry_after_s=3600), text("ok")], policy) == [30.0]


def test_backoff_without_retry_after_is_exponential_jittered_and_seeded(server):
    policy = RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=30.0)
    first = wait_log(server, [server_error()] * 4, policy, seed="case-a")
    again = wait_log(server, [server_error()] * 4, policy, seed="case-a")
    other = wait_log(server, [server_error()] * 4, policy, seed="case-b")
    assert first == again != other
    for attempt, wait in enumerate(first, start=1):
        ceiling = 2 ** (attempt - 1)
        assert ceiling / 2 <= wait <= ceiling


def test_retry_after_http_date():
    assert (
        retry_after_seconds({"Retry-After": formatdate(1_000_030, usegmt=True)}, now=1_000_000)
        == 30
    )
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_stops_at_once_naming_the_variable(server, status):
    server.push(
        unauthorized() if status == 401 else http_error(403, "forbidden", "permission_error"),
        text("never"),
    )
    with pytest.raises(ProviderAuthError) as caught:
        anthropic_client(server).create([Message.user("q")], system="S")
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert server.count == 1


def test_client_errors_are_not_retried(server):
    server.push(http_error(400, "max_tokens: too large", "invalid_request_error"), text("never"))
    with pytest.raises(ProviderError) as caught:
        openai_client(server).create([Message.user("q")], system="S")
    assert "invalid_request_error: max_tokens: too large" in str(caught.value)
    assert not caught.value.retryable and server.count == 1


@pytest.mark.parametrize("make", [anthropic_client, openai_client], ids=["anthropic", "openai"])
def test_not_found_stops_the_run_like_a_rejected_key(server, make):
    """A 404 (no such model or endpoint) would repeat for every arm: it stops the run."""
    server.push(http_error(404, "model: nope not found", "not_found_error"), text("never"))
    with pytest.raises(ProviderEndpointError) as caught:
        make(server).create([Message.user("q")], system="S")
    assert "not_found_error: model: nope not found" in str(caught.value)
    assert "--base-url" in str(caught.value) and server.count == 1


@pytest.mark.parametrize("make", [anthropic_client, openai_client], ids=["anthropic", "openai"])
def test_malformed_json_is_retried_then_reported(server, make):
    server.push(Malformed(), Malformed(), Malformed())
    with pytest.raises(ProviderError) as caught:
        make(server).create([Message.user("q")], system="S")
    assert "unreadable response body" in str(caught.value)
    assert server.count == 3


# JSON the SDK reads, in a shape no reply has: a choice without its message, content that is
# not a list of blocks.
_WRONG_SHAPES = {
    "openai": {"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o",
               "choices": [{"index": 0, "message": None, "finish_reason": "stop"}]},
    "anthropic": {"id": "msg_x", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                  "content": [None], "stop_reason": "end_turn", "stop_sequence": None,
                  "usage": {"input_tokens": 1, "output_tokens": 1}},
}


@pytest.mark.parametrize("make, api", [(anthropic_client, "anthropic"), (openai_client, "openai")],
                         ids=["anthropic", "openai"])
def test_a_reply_of_the_wrong_shape_is_retried_then_a_provider_error(server, make, api):
    """Valid JSON the client cannot read as a reply is an unreadable answer, like a broken
    body: retried, then a ProviderError (an errored arm or expectation), never another
    exception that escapes the callers' handling (the judge's, the consistency check's)."""
    wrong = HttpError(200, _WRONG_SHAPES[api])
    server.push(wrong, wrong, wrong)
    with pytest.raises(ProviderError) as caught:
        make(server).create([Message.user("q")], system="S")
    assert "unreadable response" in str(caught.value) and server.count == 3
    server.push(wrong, text("fine"))
    assert make(server).create([Message.user("q")], system="S").text == "fine"


def test_malformed_then_good_reply_recovers(server):
    server.push(Malformed(), text("fine"))
    assert (
        anthropic_client(server, stream=True).create([Message.user("q")], system="S").text == "fine"
    )


def test_hang_past_the_timeout_is_a_retried_timeout(server):
    server.push(Hang(30), Hang(30))
    client = anthropic_client(
        server, timeout_s=0.3, policy=RetryPolicy(max_attempts=2, base_delay_s=0.001)
    )
    with pytest.raises(ProviderError) as caught:
        client.create([Message.user("q")], system="S")
    assert "timed out" in str(caught.value) and "after 2 attempts" in str(caught.value)
    assert server.count == 2


def test_connection_refused_is_a_connection_error():
    with FakeModelServer() as closed:
        url = closed.url
    client = AnthropicClient("claude-haiku-4-5", api_key=KEY, base_url=url, policy=FAST)
    with pytest.raises(ProviderError, match="connection error"):
        client.create([Message.user("q")], system="S")


def test_concurrency_cap_bounds_requests_in_flight(server):
    server.latency_s = 0.05
    server.handler = lambda request: text("ok")
    # A base URL of its own, so the cap is not shared with other tests' clients.
    client = OpenAICompatClient(
        "gpt-4o", api_key="x-test-key", base_url=server.openai_url + "/", policy=FAST, concurrency=2
    )
    threads = [
        threading.Thread(
            target=client.create, args=([Message.user(f"q{i}")],), kwargs={"system": "S"}
        )
        for i in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert server.count == 6
    assert server.max_in_flight == 2


# --- choosing a provider, keys ------------------------------------------------------------------


@pytest.mark.parametrize(
    "model, explicit, base_url, expected",
    [
        ("claude-haiku-4-5", None, None, "anthropic"),
        ("gpt-4o", None, None, "openai"),
        ("o3-mini", None, None, "openai"),
        ("o4-mini", None, None, "openai"),
        ("meta-llama/llama-3.3-70b", None, None, "openai"),
        ("anthropic/claude-sonnet-4.5", None, None, "openai"),
        ("llama3.2", None, "http://127.0.0.1:11434/v1", "openai"),
        ("claude-haiku-4-5", "openai", None, "openai"),
        ("my-model", "anthropic", "http://proxy", "anthropic"),
        # The name's own provider wins over --base-url: the URL is its proxy.
        ("claude-haiku-4-5", None, "http://127.0.0.1:8080", "anthropic"),
        ("gemini-2.5-pro", None, "http://127.0.0.1:8080", "gemini"),
        ("gpt-4o", None, "http://127.0.0.1:8080", "openai"),
    ],
)
def test_infer_provider(model, explicit, base_url, expected):
    assert infer_provider(model, explicit=explicit, base_url=base_url) == expected


def test_unknown_model_name_asks_for_a_provider():
    with pytest.raises(UsageError, match="--provider"):
        infer_provider("mystery-7b")
    with pytest.raises(UsageError, match="unknown provider"):
        infer_provider("gpt-4o", explicit="acme")


def test_missing_key_is_an_auth_error_naming_the_variable_before_any_request(server):
    settings = agent_settings_of(run_config(adapter="agent", model="claude-haiku-4-5"))
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        create_client(settings, environ={"ANTHROPIC_BASE_URL": server.url})
    settings = agent_settings_of(run_config(adapter="agent", model="gpt-4o"))
    with pytest.raises(ProviderAuthError, match="OPENAI_API_KEY"):
        create_client(settings, environ={})
    assert server.count == 0


def test_local_openai_compatible_server_runs_keyless(server):
    settings = agent_settings_of(
        run_config(adapter="agent", model="llama3.2", base_url=server.openai_url)
    )
    client = create_client(settings, environ={})
    server.push(text("hello from llama"))
    assert client.create([Message.user("hi")], system="S").text == "hello from llama"
    assert server.requests[0].auth == "Bearer skillab-keyless"


def test_anthropic_base_url_comes_from_the_environment(server):
    settings = agent_settings_of(run_config(adapter="agent", model="claude-haiku-4-5"))
    client = create_client(
        settings, environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
    )
    server.push(text("hi"))
    assert client.create([Message.user("q")], system="S").text == "hi"
    assert server.requests[0].auth in (KEY, f"Bearer {KEY}")


def test_judge_settings_follow_the_agent_unless_the_name_says_otherwise():
    local = run_config(adapter="agent", model="llama3.2", base_url="http://127.0.0.1:11434/v1",
                      judge_same_family=True)
    assert judge_settings_of(local).base_url == "http://127.0.0.1:11434/v1"
    assert judge_settings_of(local).model == "llama3.2"
    # Without the flag the judge is of another family, at its own provider.
    cross = judge_settings_of(run_config(adapter="agent", model="llama3.2", base_url="http://127.0.0.1:11434/v1"))
    assert (cross.model, cross.provider, cross.base_url) == ("claude-haiku-4-5", "anthropic", None)
    mixed = run_config(adapter="agent", model="gpt-4o", judge_model="claude-opus-4-5")
    assert (judge_settings_of(mixed).provider, judge_settings_of(mixed).base_url) == ("anthropic", None)
    router = run_config(
        adapter="agent",
        model="openai/gpt-4o",
        judge_model="anthropic/claude-sonnet-4.5",
        base_url="https://router/v1",
    )
    assert (judge_settings_of(router).provider, judge_settings_of(router).base_url) == (
        "openai",
        "https://router/v1",
    )
    proxy = run_config(
        adapter="agent",
        model="claude-haiku-4-5",
        provider="openai",
        judge_model="claude-opus-4-5",
        base_url="http://litellm/v1",
        judge_same_family=True,
    )
    assert (judge_settings_of(proxy).provider, judge_settings_of(proxy).base_url) == (
        "openai",
        "http://litellm/v1",
    )


def test_tuning_knobs_come_from_the_provider_tuning():
    config = run_config(
        adapter="agent",
        model="claude-haiku-4-5",
        max_attempts=2,
        retry_base_delay_s=0.5,
        request_timeout_s=9,
        provider_concurrency=3,
        stream=True,
    )
    settings = agent_settings_of(config)
    assert settings.policy.max_attempts == 2 and settings.policy.base_delay_s == 0.5
    assert (settings.timeout_s, settings.concurrency, settings.stream) == (9.0, 3, True)


# --- pricing ------------------------------------------------------------------------------------


def test_pricing_known_snapshot_and_unknown_models():
    assert price_of("claude-sonnet-4-5-20250929") == price_of("claude-sonnet-4-5")
    assert price_of("gpt-4o-2024-08-06") == price_of("gpt-4o")
    assert price_of("claude-sonnet-4-7") is None  # never guessed from a neighbour
    assert price_of("claude-sonnet-5-5") == Price(2.00, 10.00, 0.20, 2.50)  # the current Sonnet
    assert cost_usd("mystery-model", Usage(1000, 1000)) is None
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_tokens=400_000,
        cache_write_tokens=100_000,
    )
    # 500k uncached at $3, 400k cache reads at $0.30, 100k cache writes at $3.75, 1M output at $15.
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(1.5 + 0.12 + 0.375 + 15.0)


def test_tool_use_dataclass_keeps_string_arguments():
    assert ToolUse("id", "t", "raw").arguments == "raw"


def test_a_cut_stream_is_retried_not_graded(server):
    # The stream stops after the text but before message_delta/message_stop: no stop reason.
    server.push(text("half an ans", cut_after_events=4), text("the whole answer"))
    reply = anthropic_client(server, stream=True).create([Message.user("q")], system="S")
    assert reply.text == "the whole answer" and reply.attempts == 2
    server.push(*(text("cut", cut_after_events=4) for _ in range(3)))
    with pytest.raises(ProviderError, match="ended before the message was complete") as caught:
        anthropic_client(server, stream=True).create([Message.user("q")], system="S")
    assert caught.value.retryable


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_a_trickling_stream_ends_at_the_calls_deadline(server):
    # Every event arrives well within the read timeout, but the whole answer would take ~6 s.
    server.push(*(text("slow", event_gap_s=1.0) for _ in range(3)))
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.001, deadline_s=1.5)
    # Built first: importing the SDK (about 3 s cold for anthropic 2.x) is not the call's time.
    client = anthropic_client(server, stream=True, timeout_s=5.0, policy=policy)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"no complete answer within the 1.5s deadline"):
        client.create([Message.user("q")], system="S")
    assert time.monotonic() - started < 4.0


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_slow_attempts_share_one_deadline(server):
    server.push(Hang(30), Hang(30), Hang(30))
    # The second attempt gets what the first left (0.8 s of 1.6): room to start on a loaded
    # machine, and no time for a third.
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.001, deadline_s=1.6)
    # Built first: importing the SDK cold is not the call's time.
    client = openai_client(server, timeout_s=0.8, policy=policy)
    started = time.monotonic()
    with pytest.raises(ProviderError, match="deadline"):
        client.create([Message.user("q")], system="S")
    assert time.monotonic() - started < 3.0 and server.count == 2


def test_an_sdk_is_imported_out_of_the_collectors_reach_and_leaves_it_as_it_found_it():
    import gc

    from skillab.providers.sdk_client import importing_sdk

    # The providers above were imported under importing_sdk: their types are frozen.
    assert gc.isenabled() and gc.get_freeze_count() > 0
    with importing_sdk():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with importing_sdk():
            pass
        assert not gc.isenabled()  # a collector someone else turned off stays off
    finally:
        gc.enable()
