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
  cap of its own is capped here, on the host, where the CLI cannot lift it;
* with ``model``, a request for any other model is refused (403): the run measures that model,
  and the proxy prices every answer at its price (``metering``);
* every model request reserves its upper cost on the run's ``SpendMeter`` at admission and is
  charged what its answer cost (counted in ``tally``) when relayed; a request that cannot fit
  under the cap is refused (400), so the requests in flight together stay under it;
* with ``shared`` (the run-wide budget every shard shares, ``--budget-url``), each model request
  is also admitted by the budget service after the run's own meter: reserved there at the same
  upper cost, settled at the same charge, and a 429 from upstream holds the provider for every
  shard;
* with ``token``, only a client that authenticates with that per-arm token is served (403
  otherwise): the CLI holds it, the commands it runs are not given it;
* the request is framed strictly (``framing``) and its path made normal before the allowlist
  sees it; at most ``MAX_CONNECTIONS`` are served at once, each with a timeout.

Any CLI agent uses it the same way::

    with CredentialProxy(upstream, {"x-api-key": key}) as proxy:   # or Authorization: Bearer
        route = proxy.route()
        run_in(root, [resolved_binary(binary), ...], network=route,
               read_only=install_paths(binary), hide=request.hide, backend=request.sandbox)

with the CLI configured to use ``route.endpoint`` as its base URL; with a ``token``,
``proxy.route(token_env=...)`` has the bridge hand it to the CLI as its key.
"""

from __future__ import annotations

import hmac
import http.client
import os
import re
import shutil
import socketserver
import ssl
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..budget.client import BudgetRefused, Lane, Ticket
from ..budget.estimate import upper_cost
from ..core.inert_text import neutralize
from ..core.retry_after import retry_after_seconds
from .framing import BadFraming, TooLarge, normal_target, read_body
from .metering import DuplicateKey, Price, SpendMeter, Tally, UsageReader, requested_model
from .turn_budget import OVER_BUDGET_STATUS, RequestBudget
from .view import ProxyRoute

# Where the bridge inside the sandbox listens (its own network namespace: no clash possible).
BRIDGE_PORT = 38080
UPSTREAM_TIMEOUT_S = 600.0
_HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "host", "content-length", "proxy-connection",
})
# The client's own credentials: dropped, the real ones added. Its accept-encoding too: the
# proxy reads each answer's usage, so it asks for an unencoded one.
_CLIENT_ONLY = frozenset({"x-api-key", "authorization", "x-goog-api-key", "accept-encoding"})
# Connections served at once (the others get a 503 at once), and how long a client may keep
# one silent: a sandbox cannot hold the runner's threads or memory.
MAX_CONNECTIONS = 16
CLIENT_TIMEOUT_S = 120.0
_CHUNK = 65536
# How much of each answered model response the budget keeps: its closing event (where the
# usage is) for a session that never reports it because it ended at the cap.
_TAIL = 256 << 10
# The largest request body forwarded: far above a full context window with images, far below
# what would strain the runner, which holds each body in memory before sending it on.
MAX_BODY_BYTES = 64 << 20


class CredentialProxy:
    """A reverse proxy on a private Unix socket that forwards to ``upstream`` with ``credentials``
    (header name -> value) in place of whatever the client sent."""

    def __init__(self, upstream: str, credentials: Mapping[str, str],
                 budget: RequestBudget | None = None, paths: Sequence[str] | None = None,
                 *, model: str | None = None, meter: SpendMeter | None = None,
                 price: Price | None = None, token: str | None = None, shared: Lane | None = None):
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
        self.model = model
        self.meter = meter or SpendMeter()
        self.price = price
        self._token = token
        self.shared = shared
        self.tally = Tally()
        self._directory: str | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:  # never show the credential
        return f"CredentialProxy({self.upstream!r})"

    @property
    def socket_path(self) -> Path:
        assert self._directory is not None, "start the proxy first"
        return Path(self._directory) / "proxy.sock"

    def route(self, port: int = BRIDGE_PORT, token_env: str | None = None) -> ProxyRoute:
        """The route into the sandbox; with ``token_env``, the bridge hands the CLI this
        proxy's token in that variable."""
        if token_env is None or self._token is None:
            return ProxyRoute(self.socket_path, port)
        return ProxyRoute(self.socket_path, port, self._token, token_env)

    def start(self) -> CredentialProxy:
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

    def __enter__(self) -> CredentialProxy:
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
            and name.lower() not in _CLIENT_ONLY
        }
        forwarded["Host"] = self._host
        forwarded["Accept-Encoding"] = "identity"
        forwarded.update(self._credentials)
        return forwarded

    def authenticated(self, received: Any) -> bool:
        """Whether the client presented this arm's token (any client, without one)."""
        if self._token is None:
            return True
        bearer = (received.get("authorization") or "").removeprefix("Bearer ").strip()
        offered = [received.get("x-api-key"), received.get("x-goog-api-key"), bearer]
        return any(hmac.compare_digest(o.encode(), self._token.encode()) for o in offered if o)

    def refusal(self, method: str, path: str, body: bytes | None) -> tuple[int, str] | None:
        """Why a request may not be sent (status, message), or None; counted in the tally. A
        request that may cost (any POST) must ask for the run's model, and the run's spend must
        be under its cap."""
        refused = self._refusal(method, path, body)
        if refused is not None:
            self.tally.refuse(refused[2])
        return None if refused is None else refused[:2]

    def _refusal(self, method: str, path: str, body: bytes | None) -> tuple[int, str, str] | None:
        asked = None
        if self.model is not None and (method == "POST" or "/models/" in path):
            try:
                asked = requested_model(path, body)
            except DuplicateKey:
                return (400, "skillab: a request body that names a JSON key twice is refused",
                        "a request body named a JSON key twice")
        pinned = self.model is not None and (method == "POST" or asked is not None)
        if pinned and asked != self.model:
            return 403, (f"skillab: this run measures {self.model}; a request for "
                         f"{asked or 'no model'} is refused"), f"a request for another model than {self.model}"
        if method == "POST" and self.meter.exhausted():
            reached = f"the run's cost cap (${self.meter.cap_usd:g}) is reached"
            return OVER_BUDGET_STATUS, f"skillab: {reached}; no further model request is sent", reached
        return None


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    # Connections waiting to be accepted: the standard backlog of 5 makes a CLI's sixth
    # simultaneous connect fail with EAGAIN, well before ``MAX_CONNECTIONS`` are served.
    request_queue_size = 4 * MAX_CONNECTIONS

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler]):
        super().__init__(path, handler)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            try:  # every slot is busy: a quick answer, no thread
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                b"Connection: close\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # What failed may quote the sandbox's bytes: one line, never a workflow command.
        exc = sys.exc_info()[1]
        detail = neutralize(" ".join(f"{type(exc).__name__}: {exc}".split()))[:300]
        print(f"skillab: the credential proxy dropped a request ({detail})", file=sys.stderr)


class _ProxyHandler(BaseHTTPRequestHandler):
    """One sandbox request: checked (path, credential, framing, model, budget), then forwarded
    to the run's model endpoint with the key added, and its answer relayed and metered."""

    proxy: CredentialProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # nothing about requests on stderr
        pass

    def address_string(self) -> str:  # a Unix socket has no client address
        return "sandbox"

    def do_CONNECT(self) -> None:
        self._refuse("this proxy reaches only the run's model endpoint")

    def _forward(self) -> None:
        admitted = self._admitted()
        if admitted is not None:
            self._send(*admitted)

    def _admitted(self) -> tuple[str, bytes | None] | None:
        """The request's upstream path and body when every check passes; else it is answered."""
        if self.proxy.target(self.path) is None:
            self._refuse(f"only {self.proxy.upstream} is reachable from the sandbox")
            return None
        try:
            normal = normal_target(self.path)
        except BadFraming as exc:
            self._fail(400, f"skillab: {exc}")
            return None
        path = self.proxy.target(normal)
        assert path is not None
        if not self.proxy.allows(normal):
            self._refuse("skillab: this agent's key reaches only the model API it uses")
            return None
        if not self.proxy.authenticated(self.headers):
            self._refuse("skillab: only the agent CLI's own requests are forwarded")
            return None
        try:
            body = read_body(self.headers, self.rfile, MAX_BODY_BYTES)
        except TooLarge:
            self._fail(413, f"skillab: a request body over {MAX_BODY_BYTES >> 20} MiB is refused")
            return None
        except BadFraming as exc:
            self._fail(400, f"skillab: {exc}")
            return None
        refused = self.proxy.refusal(self.command, path, body)
        if refused is not None:
            self._fail(*refused)
            return None
        return path, body

    def _send(self, path: str, body: bytes | None) -> None:
        """Forward an admitted request within the turn cap, relay the answer and meter it."""
        budget = self.proxy.budget if self.proxy.budget and self.proxy.budget.counts(self.command, path) else None
        if budget is not None and not budget.admit():
            self._fail(OVER_BUDGET_STATUS, f"skillab: the turn cap ({budget.limit} model "
                                           "requests) is reached; no further request is sent")
            return
        upper = upper_cost(body, self.proxy.price) if self.command == "POST" else None
        if self.command == "POST" and not self.proxy.meter.reserve(upper):
            reached = f"the run's cost cap (${self.proxy.meter.cap_usd:g}) leaves no room for this request"
            self.proxy.tally.refuse(reached)
            self._fail(OVER_BUDGET_STATUS, f"skillab: {reached}; no further model request is sent")
            return
        charged: float | None = None
        ticket = self._shared_ticket(upper)
        if ticket is None:
            self.proxy.meter.settle(upper, None)
            return
        upstream = self.proxy.connection()
        try:
            upstream.request(self.command, path, body=body, headers=self.proxy.headers(self.headers))
            response = upstream.getresponse()
            if budget is not None:
                budget.settle(response.status)
            if response.status == 429 and self.proxy.shared is not None:
                self.proxy.shared.throttle(retry_after_seconds(dict(response.getheaders())))
            answered = self.command == "POST" and 200 <= response.status < 300
            reader = UsageReader(response.getheader("Content-Type") or "",
                                 response.getheader("Content-Encoding") or "") if answered else None
            try:
                tail = self._relay(response, reader, keep=budget is not None)
            finally:
                if reader is not None:  # what was relayed is counted, even if the client left
                    cost = self.proxy.tally.add(reader, self.proxy.price)
                    # An answer whose usage cannot be read is charged its reservation.
                    charged = cost if cost is not None or reader.usage() is not None else upper
            if budget is not None and 200 <= response.status < 300:
                budget.keep(tail)
        except (OSError, http.client.HTTPException) as exc:
            self._fail(502, f"the model endpoint could not be reached: {type(exc).__name__}")
        finally:
            upstream.close()
            if self.command == "POST":
                self.proxy.meter.settle(upper, charged)
            if self.proxy.shared is not None and ticket.remote is not None:
                self.proxy.shared.settle(ticket, charged)

    def _shared_ticket(self, upper: float | None) -> Ticket | None:
        """The shared budget's admission of a model request (a local ticket without one, or
        for a request that costs nothing); None when the run-wide cap refused it (answered)."""
        shared = self.proxy.shared
        if shared is None or self.command != "POST":
            return Ticket(None)
        try:
            return shared.admit(upper)
        except BudgetRefused as exc:
            self.proxy.tally.refuse(str(exc))
            self._fail(OVER_BUDGET_STATUS, f"skillab: {exc}; no further model request is sent")
            return None

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

    def _relay(self, response: http.client.HTTPResponse, reader: UsageReader | None,
               keep: bool = False) -> bytes:
        """Stream the response back, feeding ``reader``; with ``keep``, returns the last
        bytes of its body. A client that leaves does not end the reading: the answer is
        billed whole, so its usage is read to the end."""
        tail = bytearray()
        gone = False
        try:
            self.send_response_only(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
        except OSError:
            gone = True
        self.close_connection = True
        while True:
            chunk = response.read1(_CHUNK) if self.command != "HEAD" else b""
            if not chunk:
                break
            if reader is not None:
                reader.feed(chunk)
            elif gone:
                break
            if not gone:
                try:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                except OSError:
                    gone = True
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



def _handler(proxy: CredentialProxy) -> type[BaseHTTPRequestHandler]:
    # The timeout is read when the proxy starts, as the rest of its settings are.
    return type("Handler", (_ProxyHandler,), {"proxy": proxy, "timeout": CLIENT_TIMEOUT_S})
