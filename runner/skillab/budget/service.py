"""``skillab budget serve``: the run-wide budget (``ledger.RunBudget``) over HTTP, for N shards.

The service never sees an API key, a prompt or an answer: a shard sends the provider's name, a
request's upper cost and, once answered, what it cost. Keys stay on each shard, so a service
reachable by every shard (a private address, a cluster Service) is no new place a key can leak
from, and a shard that cannot reach it still runs, under its own cap.

Every request carries the run token (``Authorization: Bearer``, from ``SKILLAB_BUDGET_TOKEN``);
one without it is answered 401 and changes nothing. The endpoints, JSON in and out:

    POST /v1/admit     {"provider", "upper_usd", "shard"} -> {"ticket"} | {"wait_s"} | {"refused"}
    POST /v1/settle    {"ticket", "spent_usd"}            -> {"settled": bool}
    POST /v1/throttle  {"provider", "retry_after_s"}      -> {}
    GET  /v1/status                                       -> the ledger (``BudgetStatus``)
"""

from __future__ import annotations

import hmac
import json
import threading
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .client import TOKEN_ENV
from .ledger import RunBudget

# A token shorter than this is refused at start: it would be guessable from the network.
MIN_TOKEN_CHARS = 16
MAX_BODY_BYTES = 4096


class BudgetServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], budget: RunBudget, token: str):
        super().__init__(address, _Handler)
        self.budget = budget
        self.token = token

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def start(self) -> BudgetServer:
        """Serve from a daemon thread (tests, a shard that hosts the service)."""
        threading.Thread(target=self.serve_forever, daemon=True, name="skillab-budget").start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: BudgetServer
    protocol_version = "HTTP/1.1"
    timeout = 30.0

    def log_message(self, format: str, *args: Any) -> None:  # nothing per request on stderr
        pass

    def do_GET(self) -> None:
        if not self._authorized():
            return
        if self.path != "/v1/status":
            self._answer(404, {"error": "no such endpoint"})
            return
        self._answer(200, asdict(self.server.budget.status()))

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = self._body()
        if body is None:
            return
        budget = self.server.budget
        try:
            if self.path == "/v1/admit":
                decision = budget.admit(_text(body, "provider"), _number(body, "upper_usd"),
                                        _text(body, "shard", required=False))
                answer: dict[str, Any] = ({"ticket": decision.ticket} if decision.kind == "grant" else
                                          {"wait_s": decision.wait_s} if decision.kind == "wait" else
                                          {"refused": decision.reason})
            elif self.path == "/v1/settle":
                answer = {"settled": budget.settle(_text(body, "ticket"), _number(body, "spent_usd"))}
            elif self.path == "/v1/throttle":
                budget.throttle(_text(body, "provider"), _number(body, "retry_after_s"))
                answer = {}
            else:
                self._answer(404, {"error": "no such endpoint"})
                return
        except ValueError as exc:
            self._answer(400, {"error": str(exc)})
            return
        self._answer(200, answer)

    def _authorized(self) -> bool:
        offered = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if offered and hmac.compare_digest(offered.encode(), self.server.token.encode()):
            return True
        self._answer(401, {"error": f"the run token ({TOKEN_ENV}) is missing or wrong"})
        return False

    def _body(self) -> dict[str, Any] | None:
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self._answer(400, {"error": f"a body of 0 to {MAX_BODY_BYTES} bytes is expected"})
            return None
        try:
            parsed = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, UnicodeDecodeError):
            parsed = None
        if not isinstance(parsed, dict):
            self._answer(400, {"error": "the body is not a JSON object"})
            return None
        return parsed

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _text(body: dict[str, Any], name: str, *, required: bool = True) -> str:
    value = body.get(name, None if required else "")
    if not isinstance(value, str) or len(value) > 200:
        raise ValueError(f"{name}: a string of at most 200 characters is expected")
    return value


def _number(body: dict[str, Any], name: str) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
        raise ValueError(f"{name}: a finite number of at least 0 is expected")
    return float(value)
