"""A fake GitHub REST API on 127.0.0.1: the pull request files and issue comments endpoints.

It speaks the real wire protocol the client depends on: ``Link`` pagination with ``per_page`` and
``page``, bearer tokens (unknown → 401, read-only → 403 on writes, the way a fork PR's
``GITHUB_TOKEN`` is refused), ``GET /user`` (a personal token's login; an installation token is
refused with 403, as GitHub refuses ``GITHUB_TOKEN``, and writes comments as
``github-actions[bot]``), secondary rate limits (403 with ``retry-after``), and scripted faults
(``Fault``: any status, headers and raw body for the next matching requests). Every request is
recorded so tests can assert on what was sent.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
NOT_ACCESSIBLE = "Resource not accessible by integration"
SECONDARY_LIMIT = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    authorization: str | None
    body: Any
    status: int = 0


@dataclass
class Fault:
    """The next ``times`` requests whose path contains ``path_contains`` get this answer."""

    status: int
    body: bytes | Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    path_contains: str = ""
    times: int = 1
    # Only requests of this method (any when empty).
    method: str = ""
    # The request is carried out first and only the answer is lost: a gateway that timed out
    # after GitHub wrote the comment.
    after_applying: bool = False


@dataclass
class FakeGitHub:
    """State behind the server. Tokens map to "write" or "read"."""

    tokens: dict[str, str] = field(default_factory=lambda: {"write-token": "write", "read-token": "read"})
    # Personal tokens: token -> login. Tokens not named here act as GITHUB_TOKEN does.
    users: dict[str, str] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    pr_files: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    comments: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    # The next N requests are refused with a secondary rate limit and this retry-after value.
    rate_limited: int = 0
    retry_after: str | None = "1"
    next_comment_id: int = 1000
    # The API root's path, as on GitHub Enterprise Server ("/api/v3"); "" for api.github.com.
    prefix: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_comment(self, repo: str, number: int, body: str, user: str = "someone") -> dict[str, Any]:
        with self.lock:
            comment = {
                "id": self.next_comment_id,
                "body": body,
                "user": {"login": user, "type": "User" if user != "github-actions[bot]" else "Bot"},
                "html_url": f"https://github.example/{repo}/pull/{number}#issuecomment-{self.next_comment_id}",
            }
            self.next_comment_id += 1
            self.comments.setdefault((repo, number), []).append(comment)
            return comment

    def comments_on(self, repo: str, number: int) -> list[dict[str, Any]]:
        return list(self.comments.get((repo, number), []))

    def calls(self, method: str | None = None, path_contains: str = "") -> list[Recorded]:
        return [r for r in self.requests
                if (method is None or r.method == method) and path_contains in r.path]


class GitHubServer:
    """Run a ``FakeGitHub`` on an ephemeral port: ``with GitHubServer() as gh: gh.url``."""

    def __init__(self, state: FakeGitHub | None = None):
        self.state = state or FakeGitHub()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> GitHubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


_PR_FILES = re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/files$")
_ISSUE_COMMENTS = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
_COMMENT = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")


class _Handler(BaseHTTPRequestHandler):
    state: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    # -- dispatch --------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        record = Recorded(method, parts.path, query, self.headers.get("Authorization"), body)
        with self.state.lock:
            self.state.requests.append(record)
        prefix = self.state.prefix
        if prefix and not parts.path.startswith(prefix + "/"):
            status, payload, headers = 404, {"message": "Not Found"}, {}
        else:
            status, payload, headers = self._route(method, parts.path[len(prefix):], query, body)
        record.status = status
        self._send(status, payload, headers)

    def _route(self, method: str, path: str, query: dict[str, str], body: Any):
        state = self.state
        with state.lock:
            for fault in state.faults:
                if fault.times > 0 and fault.path_contains in path and fault.method in ("", method):
                    fault.times -= 1
                    if not fault.after_applying:
                        return fault.status, fault.body, dict(fault.headers)
                    lost = fault
                    break
            else:
                lost = None
        if lost is not None:
            self._handle(method, path, query, body)
            return lost.status, lost.body, dict(lost.headers)
        with state.lock:
            if state.rate_limited > 0:
                state.rate_limited -= 1
                headers = {"retry-after": state.retry_after} if state.retry_after is not None else {}
                return 403, {"message": SECONDARY_LIMIT}, headers
        return self._handle(method, path, query, body)

    def _handle(self, method: str, path: str, query: dict[str, str], body: Any):
        state = self.state
        permission = self._permission()
        if permission is None:
            return 401, {"message": "Bad credentials"}, {}
        login = state.users.get(self._token())
        if path == "/user" and method == "GET":
            if login is None:
                return 403, {"message": NOT_ACCESSIBLE}, {}
            return 200, {"login": login, "id": 1, "type": "User"}, {}
        if m := _PR_FILES.match(path):
            if method != "GET":
                return 404, {"message": "Not Found"}, {}
            files = state.pr_files.get((m.group(1), int(m.group(2))))
            if files is None:
                return 404, {"message": "Not Found"}, {}
            return self._page(path, query, files)
        if m := _ISSUE_COMMENTS.match(path):
            key = (m.group(1), int(m.group(2)))
            if method == "GET":
                return self._page(path, query, state.comments_on(*key))
            if method == "POST":
                if permission != "write":
                    return 403, {"message": NOT_ACCESSIBLE}, {}
                comment = state.add_comment(key[0], key[1], str((body or {}).get("body", "")),
                                            user=login or "github-actions[bot]")
                return 201, comment, {}
        if (m := _COMMENT.match(path)) and method == "PATCH":
            if permission != "write":
                return 403, {"message": NOT_ACCESSIBLE}, {}
            wanted = int(m.group(2))
            with state.lock:
                for comments in state.comments.values():
                    for comment in comments:
                        if comment["id"] == wanted:
                            comment["body"] = str((body or {}).get("body", ""))
                            return 200, comment, {}
            return 404, {"message": "Not Found"}, {}
        return 404, {"message": "Not Found"}, {}

    def _token(self) -> str:
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        return token if scheme.lower() in ("bearer", "token") else ""

    def _permission(self) -> str | None:
        return self.state.tokens.get(self._token())

    def _page(self, path: str, query: dict[str, str], items: list[Any]):
        per_page = min(int(query.get("per_page", DEFAULT_PER_PAGE)), MAX_PER_PAGE)
        page = max(int(query.get("page", 1)), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        host = self.headers.get("Host")
        links = []

        def link(number: int, rel: str) -> str:
            return f'<http://{host}{self.state.prefix}{path}?{urlencode({"per_page": per_page, "page": number})}>; rel="{rel}"'

        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})

    def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", headers.pop("Content-Type", "application/json; charset=utf-8"))
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
