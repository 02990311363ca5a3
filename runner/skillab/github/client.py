"""The GitHub REST API seam: one small client over ``requests``, rooted at ``$GITHUB_API_URL``.

It follows ``Link: rel="next"`` pagination, retries server errors with exponential backoff and
waits out rate limits (``retry-after``, ``x-ratelimit-reset``) a bounded number of times, sends
the token only to the API root it was given, and turns anything malformed (a body that is not
JSON, an item without the field the caller needs) into a ``GitHubError``, never a traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from .. import __version__

API_VERSION = "2022-11-28"
MAX_RETRIES = 3
# Longer waits than this fail the call instead: a CI job should not hang on a rate limit.
MAX_WAIT_S = 120.0
# GitHub asks clients that hit a secondary limit without a retry-after header to wait a minute.
SECONDARY_DEFAULT_WAIT_S = 60.0
RETRYABLE_STATUS = (500, 502, 503, 504)
# Backoff between server-error retries: 1 s, 2 s, 4 s ... capped here.
MAX_BACKOFF_S = 16.0


class GitHubError(Exception):
    """A REST call failed. ``status`` is None when no response came back."""

    def __init__(self, message: str, *, status: int | None = None, method: str = "", url: str = ""):
        super().__init__(message)
        self.status = status
        self.method = method
        self.url = url

    @property
    def forbidden(self) -> bool:
        """The token lacks permission (a fork PR's read-only token, a missing scope)."""
        return self.status in (401, 403, 404) and "rate limit" not in str(self).lower()


class GitHubClient:
    """REST calls against one API root with one token. ``sleep`` is the seam tests speed up."""

    def __init__(
        self,
        api_url: str,
        token: str | None,
        *,
        session: requests.Session | None = None,
        timeout_s: float = 30.0,
        max_retries: int = MAX_RETRIES,
        max_wait_s: float = MAX_WAIT_S,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.api_url = api_url.rstrip("/") + "/"
        self._origin = _origin(self.api_url)
        self._token = token
        self._session = session or requests.Session()
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._max_wait_s = max_wait_s
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r})"

    def hurried(self, timeout_s: float = 3.0) -> GitHubClient:
        """The same client without retries or waits and with a short timeout: for the last
        calls of a run that was told to stop, which must end within seconds."""
        clone = GitHubClient(self.api_url, self._token, session=self._session, timeout_s=timeout_s,
                             max_retries=0, max_wait_s=0.0, sleep=self._sleep)
        return clone

    @property
    def max_retries(self) -> int:
        return self._max_retries

    def back_off(self, attempt: int) -> None:
        """The wait before retry ``attempt`` (0-based) after a server error: 1 s, 2 s, 4 s ..."""
        self._sleep(min(float(2**attempt), MAX_BACKOFF_S))

    # -- calls -----------------------------------------------------------------------------

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return _json(self.request("GET", path, params=params), "GET")

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """Not retried on a server error: GitHub may have carried it out before its gateway gave
        up, and a second POST would write a second comment (``comment.upsert_comment`` looks)."""
        return _json(self.request("POST", path, json=body, server_errors=False), "POST")

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        return _json(self.request("PATCH", path, json=body), "PATCH")

    def paginate(self, path: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
        """Every item of a list endpoint, page after page, following ``Link: rel="next"``."""
        url: str | None = path
        query = dict(params or {})
        query.setdefault("per_page", 100)
        while url:
            response = self.request("GET", url, params=query)
            items = _json(response, "GET")
            if not isinstance(items, list):
                raise GitHubError(f"GET {url}: expected a JSON list", status=response.status_code)
            yield from items
            url = (response.links.get("next") or {}).get("url")
            query = {}  # the next link carries the query already

    def request(self, method: str, path: str, *, server_errors: bool = True, **kwargs: Any) -> requests.Response:
        """One call, retried on rate limits and (unless ``server_errors`` is False) gateway
        errors, at most ``max_retries`` times."""
        url = self._url(path)
        gave_up = ""
        for attempt in range(self._max_retries + 1):
            response = self._send(method, url, **kwargs)
            wait = self._retry_wait(response, attempt)
            if not server_errors and response.status_code in RETRYABLE_STATUS:
                wait = None
            if response.ok or wait is None:
                break
            if wait > self._max_wait_s:
                gave_up = f" (asked to wait {wait:.0f}s, more than the {self._max_wait_s:.0f}s skillab waits)"
                break
            if attempt == self._max_retries:
                gave_up = f" (after {attempt + 1} attempts)"
                break
            self._sleep(wait)
        if not response.ok:
            raise GitHubError(_describe(method, url, response) + gave_up, status=response.status_code,
                              method=method, url=url)
        return response

    # -- plumbing --------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        url = urljoin(self.api_url, path.lstrip("/")) if "://" not in path else path
        if _origin(url) != self._origin:
            # A Link header pointing elsewhere must not receive the token.
            raise GitHubError(f"refusing to call {url}: outside the API root {self.api_url}")
        return url

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"skillab/{__version__}",
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            return self._session.request(
                method, url, headers=headers, timeout=self._timeout_s, **kwargs
            )
        except requests.RequestException as exc:
            raise GitHubError(f"{method} {url}: {type(exc).__name__}", method=method, url=url) from None

    def _retry_wait(self, response: requests.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when retrying cannot help."""
        status = response.status_code
        headers = response.headers
        retry_after = headers.get("retry-after")
        if status in RETRYABLE_STATUS:
            if retry_after is not None:
                return _seconds(retry_after, float(2**attempt))
            return min(float(2**attempt), MAX_BACKOFF_S)
        if status not in (403, 429):
            return None
        if retry_after is not None:
            return _seconds(retry_after, SECONDARY_DEFAULT_WAIT_S)
        if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
            try:
                return max(0.0, float(headers["x-ratelimit-reset"]) - time.time()) + 1.0
            except ValueError:
                return None
        if status == 429 or "secondary rate limit" in _message(response).lower():
            return SECONDARY_DEFAULT_WAIT_S * 2**attempt
        return None


def field_of(item: Any, name: str, kind: type, what: str) -> Any:
    """``item[name]`` when ``item`` is a JSON object holding a ``kind`` there, else a GitHubError
    naming what was malformed (``what``: the endpoint's items, e.g. "a pull request file")."""
    value = item.get(name) if isinstance(item, dict) else None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise GitHubError(f"malformed API response: {what} without a valid '{name}'")
    return value


def _json(response: requests.Response, method: str) -> Any:
    try:
        return response.json()
    except ValueError:
        kind = response.headers.get("content-type", "no content type")
        raise GitHubError(
            f"{method} {urlsplit(response.url).path}: HTTP {response.status_code} with a body that "
            f"is not JSON ({kind})", status=response.status_code, method=method, url=response.url,
        ) from None


def _seconds(value: str, fallback: float) -> float:
    try:
        return max(0.0, float(value))
    except ValueError:
        return fallback


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    return str(body.get("message", "")) if isinstance(body, dict) else ""


def _describe(method: str, url: str, response: requests.Response) -> str:
    message = _message(response) or response.reason or "request failed"
    return f"{method} {urlsplit(url).path}: HTTP {response.status_code} — {message}"
