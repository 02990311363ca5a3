"""The REST client against the fake GitHub server: pagination, rate limits, token handling."""

from __future__ import annotations

import pytest

from skillab.github.client import GitHubClient, GitHubError

from ..action_harness import REPO, github  # noqa: F401 (the fixture)
from ..fakes.github_server import FakeGitHub, GitHubServer


def client(server: GitHubServer, token: str | None = "write-token", **kwargs) -> tuple[GitHubClient, list[float]]:
    slept: list[float] = []
    return GitHubClient(server.url, token, sleep=slept.append, **kwargs), slept


def files(n: int) -> list[dict]:
    return [{"filename": f"skills/s{i}/SKILL.md", "status": "modified"} for i in range(n)]


def test_paginate_follows_link_headers_to_the_last_page(github):
    github.state.pr_files[(REPO, 7)] = files(250)
    gh, _ = client(github)
    got = list(gh.paginate(f"repos/{REPO}/pulls/7/files"))
    assert [f["filename"] for f in got] == [f["filename"] for f in files(250)]
    calls = github.state.calls("GET", "/pulls/7/files")
    assert [c.query.get("page", "1") for c in calls] == ["1", "2", "3"]
    assert all(c.query["per_page"] == "100" for c in calls)
    assert all(c.authorization == "Bearer write-token" for c in calls)


def test_secondary_rate_limit_is_waited_out_with_retry_after(github):
    github.state.pr_files[(REPO, 7)] = files(3)
    github.state.rate_limited = 2
    github.state.retry_after = "7"
    gh, slept = client(github)
    assert len(list(gh.paginate(f"repos/{REPO}/pulls/7/files"))) == 3
    assert slept == [7.0, 7.0]
    assert [c.status for c in github.state.calls("GET")] == [403, 403, 200]


def test_rate_limit_retries_are_bounded(github):
    github.state.pr_files[(REPO, 7)] = files(3)
    github.state.rate_limited = 10
    github.state.retry_after = "1"
    gh, slept = client(github, max_retries=3)
    with pytest.raises(GitHubError) as info:
        list(gh.paginate(f"repos/{REPO}/pulls/7/files"))
    assert info.value.status == 403 and "secondary rate limit" in str(info.value)
    assert not info.value.forbidden  # a rate limit is not a permission problem
    assert len(slept) == 3 and len(github.state.requests) == 4


def test_secondary_limit_without_retry_after_waits_a_minute_unless_too_long(github):
    github.state.pr_files[(REPO, 7)] = files(1)
    github.state.rate_limited = 1
    github.state.retry_after = None
    gh, slept = client(github)
    assert len(list(gh.paginate(f"repos/{REPO}/pulls/7/files"))) == 1
    assert slept == [60.0]
    github.state.rate_limited = 1
    impatient, slept = client(github, max_wait_s=30)
    with pytest.raises(GitHubError):
        list(impatient.paginate(f"repos/{REPO}/pulls/7/files"))
    assert slept == []


def test_bad_token_and_read_only_token_are_permission_errors(github):
    gh, _ = client(github, token="nonsense")
    with pytest.raises(GitHubError) as info:
        gh.get(f"repos/{REPO}/issues/7/comments")
    assert info.value.status == 401 and info.value.forbidden
    reader, _ = client(github, token="read-token")
    assert reader.get(f"repos/{REPO}/issues/7/comments") == []
    with pytest.raises(GitHubError) as info:
        reader.post(f"repos/{REPO}/issues/7/comments", {"body": "hi"})
    assert info.value.status == 403 and info.value.forbidden
    assert "Resource not accessible by integration" in str(info.value)


def test_the_token_is_never_sent_outside_the_api_root(github):
    gh, _ = client(github)
    with pytest.raises(GitHubError, match="outside the API root"):
        gh.get("http://198.51.100.7/steal")
    assert github.state.requests == []
    assert "write-token" not in repr(gh)


def test_api_root_with_a_path_like_github_enterprise_server():
    state = FakeGitHub(prefix="/api/v3")
    state.pr_files[(REPO, 3)] = files(150)
    with GitHubServer(state) as server:
        gh = GitHubClient(server.url + "/api/v3", "write-token")
        assert len(list(gh.paginate(f"/repos/{REPO}/pulls/3/files"))) == 150
    assert [r.path for r in state.requests] == [f"/api/v3/repos/{REPO}/pulls/3/files"] * 2
    assert all(r.status == 200 for r in state.requests)


def test_server_errors_are_retried_with_growing_backoff(github):
    from ..fakes.github_server import Fault

    github.state.pr_files[(REPO, 7)] = files(3)
    github.state.faults += [Fault(500, {"message": "boom"}), Fault(502, b"<html>bad gateway</html>",
                            {"Content-Type": "text/html"}), Fault(503, b"", times=1)]
    gh, slept = client(github)
    assert len(list(gh.paginate(f"repos/{REPO}/pulls/7/files"))) == 3
    assert slept == [1.0, 2.0, 4.0]


def test_a_rate_limit_storm_waits_until_the_reset_and_no_longer_than_the_cap(github):
    import time

    from ..fakes.github_server import Fault

    github.state.pr_files[(REPO, 7)] = files(1)
    reset = str(int(time.time()) + 5)
    github.state.faults.append(Fault(403, {"message": "API rate limit exceeded"},
                                     {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}))
    github.state.faults.append(Fault(429, {"message": "slow down"}, {"retry-after": "3"}))
    gh, slept = client(github)
    assert len(list(gh.paginate(f"repos/{REPO}/pulls/7/files"))) == 1
    assert 4.0 <= slept[0] <= 7.0 and slept[1] == 3.0
    # A reset an hour away is not waited for: the call fails at once and says why.
    github.state.faults.append(Fault(403, {"message": "API rate limit exceeded"},
                                     {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 3600)}))
    gh, slept = client(github)
    with pytest.raises(GitHubError, match=r"HTTP 403 — API rate limit exceeded \(asked to wait \d+s, more than"):
        list(gh.paginate(f"repos/{REPO}/pulls/7/files"))
    assert slept == []


def test_a_body_that_is_not_json_is_a_github_error(github):
    from ..fakes.github_server import Fault

    github.state.faults.append(Fault(200, b"<html>maintenance</html>", {"Content-Type": "text/html"}))
    gh, _ = client(github)
    with pytest.raises(GitHubError, match=r"HTTP 200 with a body that is not JSON \(text/html\)"):
        list(gh.paginate(f"repos/{REPO}/pulls/7/files"))
