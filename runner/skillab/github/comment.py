"""The one pull request comment skillab keeps per PR: found again by a hidden marker, edited in place.

Anyone can write a comment that starts with the marker, so a comment is ours only when the
token's own identity wrote it: the login ``GET /user`` names, or, for the ``GITHUB_TOKEN`` (an
app installation token, which ``GET /user`` refuses), ``github-actions[bot]``, the login GitHub
gives the comments that token writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..secrets import redact
from .client import RETRYABLE_STATUS, GitHubClient, GitHubError, field_of
from .workflow_commands import Log

MARKER_PREFIX = "<!-- skillab:report"
ACTIONS_BOT = "github-actions[bot]"


def marker(key: str = ".") -> str:
    """The hidden first line of the comment. ``key`` (the action's ``path``) lets two jobs that
    evaluate different skill trees keep a comment each on the same PR."""
    # "--" could end the HTML comment early, so runs of hyphens collapse too.
    safe = re.sub(r"--+", "_", re.sub(r"[^A-Za-z0-9._/-]", "_", key.strip() or "."))
    return f"{MARKER_PREFIX} path={safe} -->"


def with_marker(body: str, key: str = ".") -> str:
    return f"{marker(key)}\n{body}"


@dataclass(frozen=True)
class CommentResult:
    action: Literal["created", "updated"]
    id: int
    url: str | None


def token_login(client: GitHubClient) -> str:
    """The login the token writes comments as."""
    try:
        user = client.get("user")
    except GitHubError as exc:
        if exc.status in (401, 403, 404):
            return ACTIONS_BOT  # an installation token: GET /user is not for apps
        raise
    return str(field_of(user, "login", str, "the authenticated user"))


def find_comment(client: GitHubClient, repository: str, number: int, key: str = ".",
                 author: str | None = None) -> dict[str, Any] | None:
    """The first comment on the PR that starts with our marker and was written by ``author``
    (the token's login, asked of the API when None), searching every page."""
    tag = marker(key)
    login = (author or token_login(client)).lower()
    for comment in client.paginate(f"repos/{repository}/issues/{number}/comments"):
        if not isinstance(comment, dict) or not str(comment.get("body") or "").startswith(tag):
            continue
        user = comment.get("user")
        if isinstance(user, dict) and str(user.get("login") or "").lower() == login:
            return comment
    return None


def upsert_comment(
    client: GitHubClient, repository: str, number: int, body: str, *, key: str = ".",
    create: bool = True,
) -> CommentResult | None:
    """Update our comment in place, or create it when the PR has none yet (unless ``create`` is
    False: then a PR without our comment is left alone and None comes back)."""
    text = with_marker(body, key)
    login = token_login(client)
    existing = find_comment(client, repository, number, key, login)
    if existing is not None:
        return _update(client, repository, existing, text)
    if not create:
        return None
    attempt = 0
    while True:
        try:
            data = client.post(f"repos/{repository}/issues/{number}/comments", {"body": text})
        except GitHubError as exc:
            if attempt == client.max_retries or not _maybe_applied(exc):
                raise
        else:
            return CommentResult("created", field_of(data, "id", int, "the new comment"), _url(data))
        # The answer was lost, perhaps after GitHub wrote the comment: look before writing again.
        client.back_off(attempt)
        attempt += 1
        existing = find_comment(client, repository, number, key, login)
        if existing is not None:
            return _update(client, repository, existing, text)


def _update(client: GitHubClient, repository: str, existing: dict[str, Any], text: str) -> CommentResult:
    comment_id = field_of(existing, "id", int, "a comment")
    data = client.patch(f"repos/{repository}/issues/comments/{comment_id}", {"body": text})
    return CommentResult("updated", comment_id, _url(data))


def _maybe_applied(exc: GitHubError) -> bool:
    """A server error or no answer at all: the request may have been carried out."""
    return exc.status is None or exc.status in RETRYABLE_STATUS


def _url(data: Any) -> str | None:
    url = data.get("html_url") if isinstance(data, dict) else None
    return url if isinstance(url, str) else None


def publish_report(client: GitHubClient | None, repository: str, number: int, report: str, log: Log,
                   *, key: str, create: bool, env: Mapping[str, str]) -> list[str]:
    """``upsert_comment`` for the Action: a comment that cannot be written is a warning and a
    note for the job summary (returned), never a failed step."""
    if client is None:
        note = "No PR comment: the github-token input is empty."
        log.warning(note)
        return [note]
    try:
        result = upsert_comment(client, repository, number, report, key=key, create=create)
    except GitHubError as exc:
        reason = redact(str(exc), env)
        if exc.forbidden:
            note = ("No PR comment: the token may not write to this pull request (pull requests "
                    "from forks get a read-only token). The report is in this job summary.")
            log.warning(f"{note} ({reason})")
        else:
            note = f"No PR comment: {reason}"
            log.warning(note)
        return [note]
    if result is not None:
        log.line(f"PR comment {result.action}: {result.url or result.id}")
    return []
