"""The credential proxy: one upstream, the key added on the host, nothing else reachable."""

from __future__ import annotations

import json
import socket

from skillab.sandbox.proxy import MAX_BODY_BYTES, OVER_BUDGET_STATUS, CredentialProxy, RequestBudget

from ..fakes.model_server import server_error, text

KEY = "sk-ant-api03-" + "Pr0xy" * 9


def exchange(proxy: CredentialProxy, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(proxy.socket_path))
        client.sendall(request)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    return data


def post(path: str, body: dict, headers: str = "") -> bytes:
    raw = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"{headers}Content-Length: {len(raw)}\r\n\r\n").encode() + raw


MESSAGE = {"model": "claude-haiku-4-5", "max_tokens": 10,
           "messages": [{"role": "user", "content": "hi"}]}


def test_the_key_is_added_on_the_host_and_the_clients_is_dropped(server):
    server.push(text("hello"))
    with CredentialProxy(server.url, {"x-api-key": KEY}) as proxy:
        reply = exchange(proxy, post("/v1/messages", MESSAGE, "x-api-key: placeholder\r\n"
                                                              "Authorization: Bearer stolen\r\n"))
    assert reply.startswith(b"HTTP/1.1 200") and b"hello" in reply
    [sent] = server.model_requests()
    assert sent.auth == KEY
    assert "placeholder" not in json.dumps(sent.headers) and "stolen" not in json.dumps(sent.headers)
    assert KEY not in repr(proxy)


def test_other_hosts_and_tunnels_are_refused(server):
    with CredentialProxy(server.url, {"x-api-key": KEY}) as proxy:
        absolute = exchange(proxy, post("http://169.254.169.254/latest/meta-data", MESSAGE))
        tunnel = exchange(proxy, b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n")
    for reply in (absolute, tunnel):
        assert reply.startswith(b"HTTP/1.1 403")
    assert server.count == 0


def test_the_socket_lives_in_a_private_directory_removed_on_close(server):
    proxy = CredentialProxy(server.url, {"x-api-key": KEY}).start()
    directory = proxy.socket_path.parent
    assert directory.stat().st_mode & 0o777 == 0o700
    proxy.close()
    assert not directory.exists()


def test_a_request_budget_answers_its_limit_and_refuses_the_rest(server):
    # An outage's answer is not a turn; other paths are not counted at all.
    server.push(text("one"), server_error(), text("two"), text("three"))
    budget = RequestBudget(2, "/v1/messages")
    with CredentialProxy(server.url, {"x-api-key": KEY}, budget) as proxy:
        replies = [exchange(proxy, post(path, MESSAGE)) for path in
                   ("/v1/messages", "/v1/messages", "/v1/messages", "/v1/other", "/v1/messages")]
    assert [r.split(b" ", 2)[1] for r in replies] == [b"200", b"500", b"200", b"404",
                                                     str(OVER_BUDGET_STATUS).encode()]
    assert b"turn cap (2 model requests)" in replies[-1]
    assert (budget.used, budget.refused, len(server.model_requests())) == (2, 1, 3)
    assert b"one" in budget.tails[0] and b"two" in budget.tails[1] and len(budget.tails) == 2


def test_a_request_body_too_large_for_the_runners_memory_is_refused_unread(server):
    # The sandboxed client announces (and would stream) more than the cap: the proxy, which
    # holds a body in the runner's memory, answers 413 at once and forwards nothing.
    with CredentialProxy(server.url, {"x-api-key": KEY}) as proxy:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(10)
            client.connect(str(proxy.socket_path))
            client.sendall(f"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
                           f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode() + b"x" * 4096)
            answer = client.recv(65536)
        chunked = exchange(proxy, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  + f"{MAX_BODY_BYTES + 1:x}\r\n".encode() + b"x" * 4096)
    assert answer.startswith(b"HTTP/1.1 413") and chunked.startswith(b"HTTP/1.1 413")
    assert server.model_requests() == []


def test_with_api_paths_only_those_paths_get_the_key(server):
    server.push(text("hello"))
    with CredentialProxy(server.url, {"x-api-key": KEY}, paths=(r"/v1/messages(/count_tokens)?",)) as proxy:
        files = exchange(proxy, b"GET /v1/files HTTP/1.1\r\nHost: x\r\n\r\n")
        batches = exchange(proxy, post("/v1/messages/batches", MESSAGE))
        answered = exchange(proxy, post("/v1/messages?beta=true", MESSAGE))
    assert files.startswith(b"HTTP/1.1 403") and batches.startswith(b"HTTP/1.1 403")
    assert answered.startswith(b"HTTP/1.1 200")
    assert [r.path for r in server.requests] == ["/v1/messages?beta=true"]


def test_a_password_in_the_upstream_url_is_never_shown_to_the_sandbox(server):
    secret_url = server.url.replace("://", "://gateway-user:Hunter2Hunter2@")
    with CredentialProxy(secret_url, {"x-api-key": KEY}) as proxy:
        refused = exchange(proxy, b"GET http://elsewhere/ HTTP/1.1\r\nHost: elsewhere\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 403") and b"Hunter2" not in refused
    assert "Hunter2" not in repr(proxy)
