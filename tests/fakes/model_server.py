"""A scripted model server on 127.0.0.1 speaking the real wire protocols.

It answers Anthropic Messages (``POST /v1/messages``, JSON or SSE streaming, tool_use blocks,
``/v1/messages/count_tokens``) and OpenAI chat completions (``POST /v1/chat/completions``, JSON
or SSE, tool_calls). The real SDK clients and the real ``claude`` CLI talk to it through their
base URL; nothing inside them is patched.

Scripting: replies are provider-neutral (``text``, ``tool_call``...) and rendered in whichever
protocol the request used. Each request takes the next reply from the queue (``push``), else
asks ``handler(request)``, else gets a 400 saying nothing was scripted. Failure replies:
``rate_limited`` (429 with retry-after), ``overloaded`` (529), ``server_error`` (500),
``http_error`` (any status), ``Hang`` (no answer until the client gives up), ``Malformed``
(200 with a broken JSON body).

``dialect="llama.cpp"`` reads chat completions as llama-cpp-python's server does: a ``null``
assistant content or a ``json_schema`` response format is an HTTP 500 with validation errors,
and tools sent without ``tool_choice`` are never shown to the model (a scripted tool call comes
back as text). ``GET /v1/models`` and ``/props`` tell ``context_tokens`` where ``context_in``
says, and are kept in ``probes``, apart from the model requests.

Every request is recorded (headers without the credential, which is kept apart in ``auth``, and
the parsed body) so tests can assert what the client sent and that it sent nothing extra.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import gemini_wire, responses_wire

AUTH_HEADERS = ("x-api-key", "authorization", "x-goog-api-key")


# --- scripted replies -------------------------------------------------------------------------


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] | str
    id: str | None = None


@dataclass
class Reply:
    """One model turn: optional text, then tool calls. Usage is estimated unless given."""

    text: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    # Seconds to wait before answering (fixed latency for benchmarks).
    delay_s: float = 0.0
    # Streamed replies: close the connection after this many events (a cut stream), and wait
    # this long before each event (a trickle).
    cut_after_events: int | None = None
    event_gap_s: float = 0.0
    # The model id the response says was served (default: the one requested).
    served_model: str | None = None


@dataclass
class HttpError:
    status: int
    body: dict[str, Any] | str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hang:
    """Answer nothing for ``seconds`` (or until the server closes), then drop the connection."""

    seconds: float = 30.0


@dataclass
class Malformed:
    """A 200 whose JSON body is cut short."""

    body: str = '{"id": "msg_broken", "type": "message", "content": [{"type": "te'


Scripted = Reply | HttpError | Hang | Malformed
Handler = Callable[["RecordedRequest"], Scripted]


def text(value: str, **kwargs: Any) -> Reply:
    return Reply(text=value, **kwargs)


def tool_call(
    name: str, arguments: dict[str, Any] | str, *, text: str = "", **kwargs: Any
) -> Reply:
    return Reply(text=text, tool_calls=[ToolCallSpec(name, arguments)], **kwargs)


def _error_body(kind: str, message: str) -> dict[str, Any]:
    # Both protocols put {"error": {"type"/"code", "message"}} in the body; the SDKs read either.
    return {"type": "error", "error": {"type": kind, "code": kind, "message": message}}


def http_error(
    status: int, message: str = "error", kind: str = "api_error", **headers: str
) -> HttpError:
    return HttpError(status, _error_body(kind, message), dict(headers))


def rate_limited(
    retry_after_s: float | None = None, retry_after_ms: float | None = None
) -> HttpError:
    headers = {}
    if retry_after_s is not None:
        headers["retry-after"] = f"{retry_after_s:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    return HttpError(429, _error_body("rate_limit_error", "Number of requests exceeded"), headers)


def overloaded(retry_after_ms: float | None = None) -> HttpError:
    headers = {"retry-after-ms": f"{retry_after_ms:g}"} if retry_after_ms is not None else {}
    return HttpError(529, _error_body("overloaded_error", "Overloaded"), headers)


def server_error(retry_after_ms: float | None = None) -> HttpError:
    headers = {"retry-after-ms": f"{retry_after_ms:g}"} if retry_after_ms is not None else {}
    return HttpError(500, _error_body("api_error", "Internal server error"), headers)


def unauthorized() -> HttpError:
    return HttpError(401, _error_body("authentication_error", "invalid x-api-key"))


# --- recorded requests ------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    method: str
    path: str
    api: str  # "anthropic", "openai", "responses", "gemini" or "other"
    headers: dict[str, str]
    auth: str | None
    raw: str
    body: Any

    @property
    def streamed(self) -> bool:
        if self.api == "gemini":
            return gemini_wire.method(self.path) == "streamGenerateContent"
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def system_text(self) -> str:
        """The system prompt, whichever protocol carried it."""
        if not isinstance(self.body, dict):
            return ""
        if self.api == "anthropic":
            system = self.body.get("system") or ""
            if isinstance(system, list):
                return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
            return str(system)
        if self.api == "responses":
            return str(self.body.get("instructions") or "")
        return "\n".join(
            _content_text(m.get("content"))
            for m in self.body.get("messages", [])
            if m.get("role") in ("system", "developer")
        )

    @property
    def messages(self) -> list[dict[str, Any]]:
        if not isinstance(self.body, dict):
            return []
        return [
            m for m in self.body.get("messages", []) if m.get("role") not in ("system", "developer")
        ]

    @property
    def tool_names(self) -> list[str]:
        if self.api == "gemini" and isinstance(self.body, dict):
            return gemini_wire.declared_tools(self.body)
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        return [t.get("name") or t.get("function", {}).get("name") for t in tools]

    @property
    def tool_results(self) -> list[str]:
        """Every tool result the request carries, in order, as text."""
        if self.api == "responses" and isinstance(self.body, dict):
            return responses_wire.tool_outputs(self.body)
        if self.api == "gemini" and isinstance(self.body, dict):
            return gemini_wire.function_responses(self.body)
        found = []
        for m in self.messages:
            if m.get("role") == "tool":
                found.append(_content_text(m.get("content")))
            elif isinstance(m.get("content"), list):
                found += [
                    _content_text(b.get("content"))
                    for b in m["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"
                ]
        return found

    @property
    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return _content_text(m.get("content"))
        return ""

    def mentions(self, needle: str) -> bool:
        return needle in self.raw


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _content_text(b.get("text") if b.get("type") == "text" else b.get("content"))
            for b in content
            if isinstance(b, dict)
        )
    return "" if content is None else str(content)


# --- the server -------------------------------------------------------------------------------


class _Listener(ThreadingHTTPServer):
    # A hosted API takes hundreds of connections at once; the standard library's backlog of 5
    # drops the rest's first SYN, and the client retries a second later.
    request_queue_size = 512


class FakeModelServer:
    """Start with ``with FakeModelServer() as server:``; point SDKs at ``server.url``."""

    def __init__(self, handler: Handler | None = None, *, latency_s: float = 0.0,
                 dialect: str = "openai", context_tokens: int | None = None,
                 context_in: str | None = None):
        self.handler = handler
        self.latency_s = latency_s
        # "llama.cpp": chat completions read as llama-cpp-python's server reads them (see
        # ``_refusal`` and ``_tools_shown``).
        self.dialect = dialect
        # The context window the server tells (``context_in``: "models", "props" or None).
        self.context_tokens = context_tokens
        self.context_in = context_in
        # GET /v1/models and /props, kept apart from the model requests.
        self.probes: list[str] = []
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._cached_prefixes: set[str] = set()
        self._in_flight = 0
        # The most completion requests the server was answering at once.
        self.max_in_flight = 0
        self._httpd = _Listener(("127.0.0.1", 0), _handler_class(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # lifecycle
    def start(self) -> FakeModelServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def url(self) -> str:
        """Anthropic base URL (the SDK appends ``/v1/messages``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        """OpenAI base URL (the SDK appends ``/chat/completions``)."""
        return f"{self.url}/v1"

    def serve_sdks(self, monkeypatch, *, anthropic_key: str, openai_key: str | None = None) -> None:
        """Point the Anthropic SDK (and, given a key, the OpenAI one) at this server, for the
        duration of the test."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", self.url)
        if openai_key is not None:
            monkeypatch.setenv("OPENAI_API_KEY", openai_key)
            monkeypatch.setenv("OPENAI_BASE_URL", self.openai_url)

    # scripting
    def push(self, *replies: Scripted) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Requests for a completion (messages or chat completions), in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.api != "other"]

    # internals used by the request handler
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next(self, request: RecordedRequest) -> Scripted:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.handler is not None:
            return self.handler(request)
        return HttpError(
            400, _error_body("invalid_request_error", "fake model server: no scripted reply left")
        )

    def _refusal(self, request: RecordedRequest) -> dict[str, Any] | None:
        """llama-cpp-python's answer to a body its pydantic types refuse: HTTP 500 with the
        validation errors (an assistant turn with ``content: null``, a ``response_format``
        other than ``text``/``json_object``)."""
        if self.dialect != "llama.cpp" or request.api != "openai" or not isinstance(request.body, dict):
            return None
        errors = [
            f"{{'type': 'string_type', 'loc': ('body', 'messages', {index}, "
            "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid string'}"
            for index, m in enumerate(request.body.get("messages", []))
            if m.get("role") == "assistant" and "content" in m and m["content"] is None
        ]
        form = request.body.get("response_format")
        if isinstance(form, dict) and form.get("type") not in ("text", "json_object"):
            errors.append("{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                          "'msg': \"Input should be 'text' or 'json_object'\"}")
        if not errors:
            return None
        message = f"{len(errors)} validation error{'s' if len(errors) > 1 else ''}:\n  " + "\n  ".join(errors)
        return {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}

    def tools_shown(self, body: dict[str, Any]) -> bool:
        """Whether the model sees the tools: llama.cpp's function-calling handler renders none
        when ``tool_choice`` is missing or "none", so its model can never call one."""
        if not body.get("tools"):
            return False
        return self.dialect != "llama.cpp" or body.get("tool_choice") not in (None, "none")

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    def _cache_tokens(self, body: dict[str, Any]) -> tuple[int, int]:
        """(cache read, cache write) for a request whose system prompt asks to be cached."""
        system = body.get("system")
        if not isinstance(system, list) or not any(
            isinstance(b, dict) and b.get("cache_control") for b in system
        ):
            return 0, 0
        prefix = json.dumps([body.get("tools"), system], sort_keys=True)
        tokens = max(1, len(prefix) // 4)
        digest = hashlib.sha256(prefix.encode()).hexdigest()
        with self._lock:
            if digest in self._cached_prefixes:
                return tokens, 0
            self._cached_prefixes.add(digest)
        return 0, tokens


def _handler_class(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as separate writes; Nagle would hold the body for an ACK.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            raw = self._read_body()
            request = _recorded(self.command, self.path, dict(self.headers.items()), raw)
            route = self.path.split("?")[0]
            if self.command == "GET" and route in ("/v1/models", "/props"):
                server.probes.append(route)
                return self._describe(route)
            server._record(request)
            if route == "/v1/messages/count_tokens":
                return self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            if gemini_wire.method(route) == "countTokens":
                return self._json(200, {"totalTokens": max(1, len(raw) // 4)})
            if request.api == "other":
                return self._json(404, _error_body("not_found_error", f"no route {route}"))
            server._enter()
            try:
                self._answer(request, len(raw))
            finally:
                server._leave()

        def _describe(self, route: str) -> None:
            """What a server says about itself: vLLM's ``max_model_len`` in ``/v1/models`` or
            llama-server's ``/props``, per ``context_in``; llama-cpp-python's says nothing."""
            entry: dict[str, Any] = {"id": "fake-model", "object": "model", "owned_by": "me"}
            if route == "/v1/models":
                if server.context_in == "models":
                    entry["max_model_len"] = server.context_tokens
                return self._json(200, {"object": "list", "data": [entry]})
            if server.context_in == "props":
                return self._json(200, {"default_generation_settings": {"n_ctx": server.context_tokens}})
            return self._json(404, {"detail": "Not Found"})

        def _answer(self, request: RecordedRequest, raw_len: int) -> None:
            refused = server._refusal(request)
            if refused is not None:
                return self._json(500, refused)
            scripted = server._next(request)
            delay = server.latency_s + (scripted.delay_s if isinstance(scripted, Reply) else 0.0)
            if delay and server._closing.wait(delay):
                return self._drop()
            if isinstance(scripted, Hang):
                server._closing.wait(scripted.seconds)
                return self._drop()
            if isinstance(scripted, Malformed):
                return self._send(200, scripted.body.encode(), "application/json")
            if isinstance(scripted, HttpError) and request.api == "gemini":
                body = gemini_wire.error_body(scripted.status, scripted.body)
                return self._send(
                    scripted.status, json.dumps(body).encode(), "application/json", scripted.headers
                )
            if isinstance(scripted, HttpError):
                body = (
                    scripted.body if isinstance(scripted.body, str) else json.dumps(scripted.body)
                )
                return self._send(
                    scripted.status, body.encode(), "application/json", scripted.headers
                )
            body = request.body if isinstance(request.body, dict) else {}
            if request.api in ("responses", "gemini"):
                return self._answer_new_wire(request, body, scripted, raw_len)
            if request.api == "anthropic":
                message = _anthropic_message(server, body, scripted, raw_len)
                if request.streamed:
                    events = _anthropic_events(message)[: scripted.cut_after_events]
                    return self._sse(events, gap_s=scripted.event_gap_s)
                return self._json(200, message)
            completion = _openai_completion(server, body, scripted, raw_len)
            if request.streamed:
                return self._sse(_openai_chunks(completion), named_events=False)
            return self._json(200, completion)

        def _answer_new_wire(
            self, request: RecordedRequest, body: dict[str, Any], reply: Reply, raw_len: int
        ) -> None:
            tokens = dict(
                next_id=server._next_id,
                input_tokens=reply.input_tokens if reply.input_tokens is not None else max(1, raw_len // 4),
                output_tokens=reply.output_tokens if reply.output_tokens is not None else _estimate(reply),
            )
            if request.api == "responses":
                response = responses_wire.response_object(body, reply, **tokens)
                if request.streamed:
                    events = responses_wire.response_events(response)[: reply.cut_after_events]
                    return self._sse(events)
                return self._json(200, response)
            response = gemini_wire.response_object(request.path, reply, **tokens)
            if request.streamed:
                chunks = gemini_wire.response_chunks(response)
                return self._sse([("", c) for c in chunks], named_events=False)
            return self._json(200, response)

        def _read_body(self) -> str:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(chunks).decode("utf-8", "replace")
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length).decode("utf-8", "replace") if length else ""

        def _json(self, status: int, payload: Any) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _send(
            self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", server._next_id("req"))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _sse(
            self, events: list[tuple[str, dict[str, Any] | str]], named_events: bool = True,
            gap_s: float = 0.0,
        ) -> None:
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in events:
                    if gap_s and server._closing.wait(gap_s):
                        break
                    payload = data if isinstance(data, str) else json.dumps(data)
                    prefix = f"event: {name}\n" if named_events else ""
                    self.wfile.write(f"{prefix}data: {payload}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def _drop(self) -> None:
            self.close_connection = True

    return Handler


def _recorded(method: str, path: str, headers: dict[str, str], raw: str) -> RecordedRequest:
    lowered = {k.lower(): v for k, v in headers.items()}
    auth = next((lowered[h] for h in AUTH_HEADERS if h in lowered), None)
    kept = {k: v for k, v in lowered.items() if k not in AUTH_HEADERS}
    try:
        body = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        body = None
    route = path.split("?")[0]
    api = {
        "/v1/messages": "anthropic",
        "/v1/chat/completions": "openai",
        "/v1/responses": "responses",
    }.get(route, "other")
    if gemini_wire.method(route) in ("generateContent", "streamGenerateContent"):
        api = "gemini"
    return RecordedRequest(method, path, api, kept, auth, raw, body)


# --- Anthropic rendering ----------------------------------------------------------------------


def _anthropic_message(
    server: FakeModelServer, body: dict[str, Any], reply: Reply, raw_len: int
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
        content.append(
            {
                "type": "tool_use",
                "id": call.id or server._next_id("toolu"),
                "name": call.name,
                "input": arguments,
            }
        )
    cache_read, cache_write = _anthropic_cache(server, body)
    input_tokens = reply.input_tokens if reply.input_tokens is not None else max(1, raw_len // 4)
    stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
    return {
        "id": server._next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": reply.served_model or body.get("model", "fake-model"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(0, input_tokens - cache_read - cache_write),
            "output_tokens": (
                reply.output_tokens if reply.output_tokens is not None else _estimate(reply)
            ),
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


def _anthropic_cache(server: FakeModelServer, body: dict[str, Any]) -> tuple[int, int]:
    return server._cache_tokens(body)


def _anthropic_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            text = block["text"]
            for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                if piece:
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "text_delta", "text": piece},
                            },
                        )
                    )
        else:
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    },
                )
            )
            encoded = json.dumps(block["input"])
            for piece in (encoded[: len(encoded) // 2], encoded[len(encoded) // 2 :]):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
                )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# --- OpenAI rendering -------------------------------------------------------------------------


def _openai_completion(
    server: FakeModelServer, body: dict[str, Any], reply: Reply, raw_len: int
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls and server.dialect == "llama.cpp" and not server.tools_shown(body):
        # The model never saw the tools: what it says is text.
        reply = Reply(text=reply.text or "I would call a tool, but none is offered.",
                      stop_reason=reply.stop_reason)
        message["content"] = reply.text
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or server._next_id("call"),
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": (
                        call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments)
                    ),
                },
            }
            for call in reply.tool_calls
        ]
    finish = reply.stop_reason or ("tool_calls" if reply.tool_calls else "stop")
    prompt_tokens = reply.input_tokens if reply.input_tokens is not None else max(1, raw_len // 4)
    completion_tokens = reply.output_tokens if reply.output_tokens is not None else _estimate(reply)
    return {
        "id": server._next_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.served_model or body.get("model", "fake-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }


def _openai_chunks(completion: dict[str, Any]) -> list[tuple[str, dict[str, Any] | str]]:
    choice = completion["choices"][0]
    base = {k: completion[k] for k in ("id", "created", "model")} | {
        "object": "chat.completion.chunk"
    }
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if choice["message"].get("tool_calls"):
        delta["tool_calls"] = [
            dict(c, index=i) for i, c in enumerate(choice["message"]["tool_calls"])
        ]
    return [
        ("", {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (
            "",
            {
                **base,
                "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
                "usage": completion["usage"],
            },
        ),
        ("", "[DONE]"),
    ]


def _estimate(reply: Reply) -> int:
    size = len(reply.text) + sum(len(json.dumps(c.arguments)) for c in reply.tool_calls)
    return max(1, size // 4)
