"""The credential proxy as a hostile sandbox meets it: strict framing, a normal path, bounded
threads, and every model call metered, priced, pinned to the run's model and capped."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from skillab.providers.pricing import cost_usd
from skillab.sandbox import proxy as proxy_module
from skillab.sandbox.metering import SpendMeter, UsageReader
from skillab.sandbox.proxy import MAX_CONNECTIONS, OVER_BUDGET_STATUS, CredentialProxy

from ..fakes.model_server import text
from .test_sandbox_proxy import KEY, MESSAGE, post

MODEL = "claude-haiku-4-5"
CLAUDE_PATHS = (r"/v1/messages(/count_tokens)?", r"/v1/models(/[^/]+)?")


def metered(server, **kwargs) -> CredentialProxy:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("price", lambda usage: cost_usd(MODEL, usage))
    return CredentialProxy(server.url, {"x-api-key": KEY}, paths=CLAUDE_PATHS, **kwargs)


def exchange(proxy: CredentialProxy, request: bytes) -> bytes:
    """Send ``request`` whole, then end the client's side: a body cut short ends there."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(proxy.socket_path))
        client.sendall(request)
        client.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    return data


def status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


# --- framing ----------------------------------------------------------------------------------


def chunked(size_line: bytes, rest: bytes = b"") -> bytes:
    return (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + size_line + b"\r\n" + rest)


@pytest.mark.parametrize("size", [b"-1", b"+5", b"0x10", b" ", b"1" * 17, b"5 5", b"\xff"])
def test_a_chunk_size_that_is_not_1_to_16_hex_digits_gets_a_400_and_nothing_is_forwarded(server, size):
    # A size of -1 used to read the stream to its end: 200 MiB went into the runner's memory.
    with metered(server) as proxy:
        reply = exchange(proxy, chunked(size, json.dumps(MESSAGE).encode() + b"\r\n0\r\n\r\n"))
    assert status(reply) == 400 and b"chunk size" in reply
    assert server.requests == []


def test_a_chunk_not_ended_by_crlf_or_a_length_not_in_digits_or_both_framings_get_a_400(server):
    body = json.dumps(MESSAGE).encode()
    with metered(server) as proxy:
        no_crlf = exchange(proxy, chunked(f"{len(body):x}".encode(), body + b"XX0\r\n\r\n"))
        negative = exchange(proxy, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n" + body)
        both = exchange(proxy, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        short = exchange(proxy, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n{}")
    assert [status(r) for r in (no_crlf, negative, both, short)] == [400] * 4
    assert server.requests == []


def test_a_well_framed_chunked_body_is_still_forwarded(server):
    server.push(text("hi"))
    body = json.dumps(MESSAGE).encode()
    with metered(server) as proxy:
        reply = exchange(proxy, chunked(f"{len(body):X};ext=1".encode(), body + b"\r\n0\r\nX-Trailer: y\r\n\r\n"))
    assert status(reply) == 200 and server.model_requests()[0].body == MESSAGE


@pytest.mark.parametrize("target", [
    "/v1/models/..%2Ffiles", "/v1/models/%2e%2e/files", "/v1/models/../files", "/v1/messages/./x",
    "/v1//messages", "/v1/models/a%5Cb", "/v1/models/%3Fx", "/v1/messages%00",
])
def test_dot_segments_and_encoded_separators_are_refused_before_the_allowlist(server, target):
    # /v1/models/<id> is allowed; ..%2F in the id used to reach the account's files upstream.
    with metered(server) as proxy:
        reply = exchange(proxy, f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert status(reply) in (400, 403)
    assert server.requests == []


def proxy_handlers(before: set[int | None]) -> list[threading.Thread]:
    """Connection threads started since ``before`` (socketserver names them after their target)."""
    return [thread for thread in threading.enumerate()
            if thread.ident not in before and thread.name.endswith("(process_request_thread)")]


def test_connections_past_the_cap_get_a_503_and_a_silent_one_is_dropped(server, monkeypatch):
    # Long enough that no held connection times out before the one past the cap arrives, on a
    # loaded machine too; the proxy's own timeout then drops them all.
    monkeypatch.setattr(proxy_module, "CLIENT_TIMEOUT_S", 5.0)
    before = {thread.ident for thread in threading.enumerate()}
    with metered(server) as proxy:
        idle = []
        for _ in range(MAX_CONNECTIONS):
            held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.connect(str(proxy.socket_path))
            held.sendall(b"POST /v1/messages HTTP/1.1\r\n")  # never finished
            idle.append(held)
        deadline = time.monotonic() + 30
        while len(proxy_handlers(before)) < MAX_CONNECTIONS and time.monotonic() < deadline:
            time.sleep(0.01)  # accepted one by one: every slot is taken once each has its thread
        serving = proxy_handlers(before)
        assert len(serving) == MAX_CONNECTIONS
        running = set(threading.enumerate())
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as extra:
            extra.settimeout(10)
            extra.connect(str(proxy.socket_path))
            over = extra.recv(1000)  # answered at once, before it sends anything
        assert status(over) == 503
        assert set(threading.enumerate()) <= running  # no thread was started for it
        idle[0].settimeout(30)
        assert idle[0].recv(100) == b""  # closed by the proxy's timeout, not the client
        for thread in serving:
            thread.join(10)  # each frees its slot as it ends
        server.push(text("after"))
        again = exchange(proxy, post("/v1/messages", MESSAGE))
        for held in idle:
            held.close()
    assert status(again) == 200


def test_a_handler_failure_prints_no_workflow_command_on_stderr(server, capfd):
    # The sandbox's bytes in an error message must not become ::add-mask:: or ##[error] lines.
    with metered(server) as proxy:
        exchange(proxy, chunked(b"::add-mask::x ##[error]pwned"))
        exchange(proxy, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: ##[error]x\r\n\r\n")
    err = capfd.readouterr().err
    assert "##[" not in err and "::add-mask::" not in err


def test_a_failure_inside_the_proxy_is_one_line_that_is_no_workflow_command(server, capfd):
    with metered(server) as proxy:
        try:
            raise ValueError("bad bytes: ::add-mask::x\n  ::error::pwned ##[error]legacy")
        except ValueError:
            proxy._server.handle_error(None, None)
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skillab: the credential proxy dropped a request")
    # GitHub reads ``::`` only at a line's start, ``##[`` anywhere.
    assert "##[" not in err and not any(line.lstrip().startswith("::") for line in err.splitlines())


# --- metering ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_every_answer_is_counted_and_priced_from_its_own_usage(server, stream):
    server.push(text("one", input_tokens=1000, output_tokens=200),
                text("two", input_tokens=3000, output_tokens=400))
    with metered(server) as proxy:
        for _ in range(2):
            assert status(exchange(proxy, post("/v1/messages", {**MESSAGE, "stream": stream}))) == 200
    usage = proxy.tally.usage
    assert (usage.input_tokens, usage.output_tokens) == (4000, 600)
    assert usage.cost_usd == pytest.approx((4000 * 1.00 + 600 * 5.00) / 1e6)
    assert proxy.meter.spent_usd == pytest.approx(usage.cost_usd)
    assert proxy.tally.answered == 2 and proxy.tally.served_model == MODEL


WIRES = {
    # name: (model, path, body)
    "chat": ("gpt-4o-mini", "/v1/chat/completions",
             {"messages": [{"role": "user", "content": "hi"}]}),
    "responses": ("gpt-5-mini", "/v1/responses", {"input": "hi"}),
    "gemini": ("gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent",
               {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", sorted(WIRES))
def test_each_wire_protocols_usage_is_read_plain_and_streamed(server, wire, stream):
    model, path, body = WIRES[wire]
    if wire == "gemini" and stream:
        path = path.replace(":generateContent", ":streamGenerateContent") + "?alt=sse"
    elif stream:
        body = {**body, "stream": True}
    server.push(text("answer", input_tokens=700, output_tokens=90))
    with CredentialProxy(server.url, {"x-api-key": KEY}, model=model,
                         price=lambda usage: cost_usd(model, usage)) as proxy:
        payload = body if wire == "gemini" else {**body, "model": model}
        assert status(exchange(proxy, post(path, payload))) == 200
    usage = proxy.tally.usage
    assert (usage.input_tokens, usage.output_tokens, proxy.tally.unmetered) == (700, 90, 0)
    assert usage.cost_usd == pytest.approx(cost_usd(model, usage)) and usage.cost_usd > 0
    assert proxy.tally.served_model == model


def test_anthropic_cached_input_counts_once_and_split_events_are_read_whole():
    # The real API's shape: cached input apart from input_tokens, cumulative message_delta.
    events = [
        {"type": "message_start", "message": {"model": MODEL, "usage": {
            "input_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 200,
            "output_tokens": 1}}},
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "usage: 0"}},
        {"type": "message_delta", "usage": {"input_tokens": 10, "output_tokens": 55}},
    ]
    body = "".join(f"event: {e['type']}\r\ndata: {json.dumps(e)}\r\n\r\n" for e in events).encode()
    reader = UsageReader("text/event-stream; charset=utf-8")
    for start in range(0, len(body), 7):  # the network splits events anywhere
        reader.feed(body[start:start + 7])
    usage = reader.usage()
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
            usage.output_tokens) == (1210, 1000, 200, 55)
    assert reader.model == MODEL
    assert UsageReader("application/json", "gzip").usage() is None  # unreadable, not zero


def test_a_request_for_another_model_is_refused_and_never_sent(server):
    # The agent's own Bash asking the bridge for an expensive model, as the red team did.
    server.push(text("cheap"))
    with metered(server) as proxy:
        opus = [exchange(proxy, post("/v1/messages", {**MESSAGE, "model": "claude-opus-4-1"}))
                for _ in range(16)]
        unnamed = exchange(proxy, post("/v1/messages", {"max_tokens": 5, "messages": []}))
        pinned = exchange(proxy, post("/v1/messages", MESSAGE))
    assert {status(r) for r in opus} == {403} and status(unnamed) == 403
    assert b"claude-opus-4-1 is refused" in opus[0]
    assert status(pinned) == 200
    assert [r.model for r in server.model_requests()] == [MODEL]
    assert proxy.tally.refused == 17


def test_a_body_naming_the_model_twice_is_refused(server):
    # Parsers differ on which duplicate counts: the upstream might read the expensive one.
    raw = (b'{"model": "claude-haiku-4-5", "max_tokens": 5, "messages": [], '
           b'"model": "claude-opus-4-1"}')
    escaped = (b'{"model": "claude-opus-4-1", "max_tokens": 5, "messages": [], '
               b'"\\u006dodel": "claude-haiku-4-5"}')
    with metered(server) as proxy:
        replies = [exchange(proxy, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: "
                            + str(len(body)).encode() + b"\r\n\r\n" + body) for body in (raw, escaped)]
    assert [status(r) for r in replies] == [400, 400] and b"twice" in replies[0]
    assert server.requests == []


def test_once_the_runs_cost_cap_is_reached_every_arm_refuses_the_next_request(server):
    server.push(*(text("x", input_tokens=100_000, output_tokens=10_000) for _ in range(4)))
    meter = SpendMeter(cap_usd=0.15)  # each answer costs 0.15
    with metered(server, meter=meter) as first, metered(server, meter=meter) as second:
        answered = exchange(first, post("/v1/messages", MESSAGE))
        refused = [exchange(p, post("/v1/messages", MESSAGE)) for p in (first, second)]
    assert status(answered) == 200
    assert [status(r) for r in refused] == [OVER_BUDGET_STATUS] * 2 and b"cost cap" in refused[0]
    assert len(server.model_requests()) == 1 and meter.spent_usd == pytest.approx(0.15)


def test_requests_in_flight_together_stay_under_the_cap(server):
    """Sixteen requests of one arm at once (the proxy's ``MAX_CONNECTIONS``) all passed a cap
    checked against what was spent, before any answer was charged: $0.56 spent of a $0.20 cap.
    Each now reserves its upper cost at admission (its bytes as input, its max_tokens as output)
    and is charged its answer's cost when relayed, so the spend stays within the cap."""
    body = {**MESSAGE, "max_tokens": 1000, "messages": [{"role": "user", "content": "x" * 40_000}]}
    server.latency_s = 0.3
    server.push(*(text("x", input_tokens=30_000, output_tokens=1000) for _ in range(MAX_CONNECTIONS)))
    meter = SpendMeter(cap_usd=0.20)  # each answer costs $0.035, each request may cost $0.055
    with metered(server, meter=meter) as proxy:
        replies: list[bytes] = []
        threads = [threading.Thread(target=lambda: replies.append(exchange(proxy, post("/v1/messages", body))))
                   for _ in range(MAX_CONNECTIONS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    answered = [r for r in replies if status(r) == 200]
    assert meter.spent_usd <= 0.20 and meter.overshoot_usd == 0 and meter.reserved_usd == pytest.approx(0)
    assert len(answered) == 5  # $0.175: a sixth could cost up to $0.055 more
    assert all(status(r) == OVER_BUDGET_STATUS and b"cost cap" in r for r in replies if status(r) != 200)
    assert len(server.model_requests()) == 5


def test_an_answer_the_client_walked_away_from_is_still_counted(server):
    # Closing the connection after the headers must not make a billed answer free.
    server.push(text("long " * 50, input_tokens=500, output_tokens=250, event_gap_s=0.02))
    with metered(server) as proxy:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(proxy.socket_path))
            client.sendall(post("/v1/messages", {**MESSAGE, "stream": True}))
            client.recv(10)
        deadline = time.monotonic() + 10
        while proxy.tally.answered == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert (proxy.tally.usage.input_tokens, proxy.tally.usage.output_tokens) == (500, 250)


def test_a_per_arm_token_is_required_when_set(server):
    server.push(text("ok"))
    with metered(server, token="arm-token-1") as proxy:
        without = exchange(proxy, post("/v1/messages", MESSAGE, "x-api-key: placeholder\r\n"))
        wrong = exchange(proxy, post("/v1/messages", MESSAGE, "Authorization: Bearer arm-token-2\r\n"))
        right = exchange(proxy, post("/v1/messages", MESSAGE, "x-api-key: arm-token-1\r\n"))
    assert (status(without), status(wrong), status(right)) == (403, 403, 200)
    [sent] = server.model_requests()
    assert sent.auth == KEY and "arm-token" not in json.dumps(sent.headers)
