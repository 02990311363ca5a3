"""The credential proxy: how an agent CLI in a sandbox reaches its model API without the key.

The design of ``@anthropic-ai/sandbox-runtime`` (which Claude Code uses with bubblewrap): the
sandbox has no network at all, only a Unix socket bound in from the host, and a host-side proxy
on that socket decides what gets out. Here the proxy is pinned to one upstream, the provider
endpoint of the run, and holds the credential itself:

* every request goes to ``upstream`` and nowhere else; a request in absolute form (``GET
  http://elsewhere/``) or a ``CONNECT`` is refused with 403;
* with ``paths``, only those API paths are forwarded (the completions the agent needs, not the
  account's files, batches or stored responses, which its key would also reach);
* the client's own credential headers are dropped and the real ones added on the host, so the
  key never enters the sandbox (its environment, its files, its ``/proc``);
* responses stream back as they arrive (server-sent events), with the connection closed at the
  end of each one;
* with a ``RequestBudget``, at most its limit of model requests are answered: a CLI with no turn
  cap of its own is capped here, on the host, where the CLI cannot lift it.

Any CLI agent uses it the same way::

    with CredentialProxy(upstream, {"x-api-key": key}) as proxy:   # or Authorization: Bearer
        route = proxy.route()
        run_in(root, [resolved_binary(binary), ...], network=route,
               read_only=install_paths(binary), hide=request.hide)

with the CLI configured to use ``route.endpoint`` as its base URL and a placeholder key.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socketserver
import ssl
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

from .backend import ProxyRoute

# Where the bridge inside the sandbox listens (its own network namespace: no clash possible).
BRIDGE_PORT = 38080
UPSTREAM_TIMEOUT_S = 600.0
_HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "host", "content-length", "proxy-connection",
})
_CHUNK = 65536
# How much of each answered model response the budget keeps: its closing event (where the
# usage is) for a session that never reports it because it ended at the cap.
_TAIL = 256 << 10
# What a request over the budget gets: a client error the CLIs do not retry, and not 401/403,
# which mean a rejected key.
OVER_BUDGET_STATUS = 400
# The largest request body forwarded: far above a full context window with images, far below
# what would strain the runner, which holds each body in memory before sending it on.
MAX_BODY_BYTES = 64 << 20


@dataclass
class RequestBudget:
    """At most ``limit`` answered model requests (``POST`` to a path ending in ``path_suffix``)
    per session. A request counts once the upstream answered it with a 2xx, so a retried outage
    does not use up turns; once the limit is reached, each further one is refused (``refused``).
    ``tails`` holds the end of each answered response body."""

    limit: int
    path_suffix: str
    used: int = 0
    refused: int = 0
    tails: list[bytes] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def counts(self, method: str, path: str) -> bool:
        return method == "POST" and path.split("?", 1)[0].endswith(self.path_suffix)

    def admit(self) -> bool:
        with self._lock:
            if self.used < self.limit:
                return True
            self.refused += 1
            return False

    def settle(self, status: int) -> None:
        if 200 <= status < 300:
            with self._lock:
                self.used += 1

    def keep(self, tail: bytes) -> None:
        with self._lock:
            self.tails.append(tail)


class CredentialProxy:
    """A reverse proxy on a private Unix socket that forwards to ``upstream`` with ``credentials``
    (header name -> value) in place of whatever the client sent."""

    def __init__(self, upstream: str, credentials: Mapping[str, str],
                 budget: RequestBudget | None = None, paths: Sequence[str] | None = None):
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the proxy needs an http(s) upstream URL, not {upstream!r}")
        # Shown to the sandbox in refusals, and sent as Host: never a user:password@ of the URL.
        self._host = parts.netloc.rpartition("@")[2]
        self.upstream = f"{parts.scheme}://{self._host}{parts.path}".rstrip("/")
        self._parts = parts
        self._credentials = {name.lower(): value for name, value in credentials.items()}
        self.budget = budget
        # The API paths the client may use (regular expressions over its path, before the
        # upstream's own prefix and without the query); None: any path of the upstream.
        self._paths = None if paths is None else re.compile("|".join(f"(?:{p})" for p in paths))
        self._directory: str | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:  # never show the credential
        return f"CredentialProxy({self.upstream!r})"

    @property
    def socket_path(self) -> Path:
        assert self._directory is not None, "start the proxy first"
        return Path(self._directory) / "proxy.sock"

    def route(self, port: int = BRIDGE_PORT) -> ProxyRoute:
        return ProxyRoute(self.socket_path, port)

    def start(self) -> "CredentialProxy":
        self._directory = tempfile.mkdtemp(prefix="skillab-proxy-")
        os.chmod(self._directory, 0o700)
        self._server = _Server(str(self.socket_path), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="skillab-credential-proxy")
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def __enter__(self) -> "CredentialProxy":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- forwarding ---------------------------------------------------------------------------

    def connection(self) -> http.client.HTTPConnection:
        host, port = self._parts.hostname or "", self._parts.port
        if self._parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=UPSTREAM_TIMEOUT_S,
                                               context=ssl.create_default_context())
        return http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT_S)

    def target(self, path: str) -> str | None:
        """The upstream path for a request target, or None when it names another host."""
        if not path.startswith("/") or path.startswith("//"):
            return None
        return (self._parts.path.rstrip("/") or "") + path

    def allows(self, path: str) -> bool:
        """Whether ``path`` is one of the API paths the client may use: the key reaches the
        completions the agent needs, not the account's files, batches or stored responses."""
        return self._paths is None or self._paths.fullmatch(path.split("?", 1)[0]) is not None

    def headers(self, received: Any) -> dict[str, str]:
        forwarded = {
            name: value
            for name, value in received.items()
            if name.lower() not in _HOP_BY_HOP and name.lower() not in self._credentials
            and name.lower() not in ("x-api-key", "authorization")
        }
        forwarded["Host"] = self._host
        forwarded.update(self._credentials)
        return forwarded


class _TooLarge(Exception):
    """A request body over ``MAX_BODY_BYTES``."""


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def _handler(proxy: CredentialProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # nothing about requests on stderr
            pass

        def address_string(self) -> str:  # a Unix socket has no client address
            return "sandbox"

        def do_CONNECT(self) -> None:
            self._refuse("this proxy reaches only the run's model endpoint")

        def _forward(self) -> None:
            path = proxy.target(self.path)
            if path is None:
                self._refuse(f"only {proxy.upstream} is reachable from the sandbox")
                return
            if not proxy.allows(self.path):
                self._refuse("skillab: this agent's key reaches only the model API it uses")
                return
            try:
                body = self._body()
            except _TooLarge:
                self._fail(413, f"skillab: a request body over {MAX_BODY_BYTES >> 20} MiB is refused")
                return
            budget = proxy.budget if proxy.budget and proxy.budget.counts(self.command, path) else None
            if budget is not None and not budget.admit():
                self._fail(OVER_BUDGET_STATUS, f"skillab: the turn cap ({budget.limit} model "
                                               "requests) is reached; no further request is sent")
                return
            upstream = proxy.connection()
            try:
                upstream.request(self.command, path, body=body, headers=proxy.headers(self.headers))
                response = upstream.getresponse()
                if budget is not None:
                    budget.settle(response.status)
                tail = self._relay(response, keep=budget is not None)
                if budget is not None and 200 <= response.status < 300:
                    budget.keep(tail)
            except (OSError, http.client.HTTPException) as exc:
                self._fail(502, f"the model endpoint could not be reached: {type(exc).__name__}")
            finally:
                upstream.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

        def _body(self) -> bytes | None:
            """The request body, held in the runner's memory: never more than ``MAX_BODY_BYTES``
            (the sandboxed client could otherwise stream gigabytes into it)."""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks, total = [], 0
                while True:
                    size = int(self.rfile.readline(64).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline(64)
                        break
                    total += size
                    if total > MAX_BODY_BYTES:
                        raise _TooLarge
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline(64)
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                raise _TooLarge
            return self.rfile.read(length) if length > 0 else None

        def _relay(self, response: http.client.HTTPResponse, keep: bool = False) -> bytes:
            """Stream the response back; with ``keep``, returns the last bytes of its body."""
            tail = bytearray()
            self.send_response_only(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            while True:
                chunk = response.read1(_CHUNK) if self.command != "HEAD" else b""
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
                if keep:
                    tail += chunk
                    if len(tail) > 2 * _TAIL:
                        del tail[:-_TAIL]
            return bytes(tail[-_TAIL:])

        def _refuse(self, message: str) -> None:
            self._fail(403, message)

        def _fail(self, status: int, message: str) -> None:
            data = message.encode()
            try:
                self.send_response_only(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass
            self.close_connection = True

    return Handler
