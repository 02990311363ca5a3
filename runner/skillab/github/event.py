"""What GitHub tells the step about its run: the triggering event and the runner's context."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


@dataclass(frozen=True)
class PullRequest:
    """The pull request an event is about. ``head_repo`` is None when the fork was deleted."""

    number: int
    base_repo: str
    head_repo: str | None
    head_sha: str | None = None

    @property
    def is_fork(self) -> bool:
        return self.head_repo != self.base_repo


@dataclass(frozen=True)
class Event:
    """The triggering event: its name and, for pull request events, the pull request."""

    name: str
    payload: dict[str, Any] = field(repr=False, default_factory=dict)
    pull_request: PullRequest | None = None

    @property
    def is_pull_request(self) -> bool:
        return self.name in PULL_REQUEST_EVENTS and self.pull_request is not None


@dataclass(frozen=True)
class ActionContext:
    """The runner's environment for this step, read once."""

    event: Event
    repository: str
    workspace: Path
    api_url: str
    server_url: str
    run_id: str | None
    output_path: Path | None
    summary_path: Path | None

    @property
    def run_url(self) -> str | None:
        if not self.run_id or not self.repository:
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionContext:
        name = env.get("GITHUB_EVENT_NAME", "")
        if not name:
            raise UsageError(
                "GITHUB_EVENT_NAME is not set: `skillab action` runs inside GitHub Actions "
                "(use `skillab run` locally)"
            )
        workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
        return cls(
            event=read_event(name, env.get("GITHUB_EVENT_PATH")),
            repository=env.get("GITHUB_REPOSITORY", ""),
            workspace=workspace,
            api_url=env.get("GITHUB_API_URL") or "https://api.github.com",
            server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
            run_id=env.get("GITHUB_RUN_ID") or None,
            output_path=_optional_path(env.get("GITHUB_OUTPUT")),
            summary_path=_optional_path(env.get("GITHUB_STEP_SUMMARY")),
        )


def read_event(name: str, path: str | None) -> Event:
    """The event named ``name`` with its payload from ``path`` (GITHUB_EVENT_PATH)."""
    payload: dict[str, Any] = {}
    if path:
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"GITHUB_EVENT_PATH {path}: cannot be read ({exc.strerror})") from None
        except ValueError:
            raise UsageError(f"GITHUB_EVENT_PATH {path}: not a JSON event payload") from None
        if not isinstance(payload, dict):
            raise UsageError(f"GITHUB_EVENT_PATH {path}: the payload is not a JSON object")
    pull_request = _pull_request(payload) if name in PULL_REQUEST_EVENTS else None
    return Event(name, payload, pull_request)


def _pull_request(payload: dict[str, Any]) -> PullRequest | None:
    pr = payload.get("pull_request")
    if not isinstance(pr, dict):
        return None
    number = pr.get("number", payload.get("number"))
    if not isinstance(number, int):
        return None
    base_repo = ((pr.get("base") or {}).get("repo") or {}).get("full_name") or (
        (payload.get("repository") or {}).get("full_name", "")
    )
    head = pr.get("head") or {}
    head_repo = (head.get("repo") or {}).get("full_name")
    return PullRequest(number, base_repo, head_repo, head.get("sha"))


def _optional_path(value: str | None) -> Path | None:
    return Path(value) if value else None
