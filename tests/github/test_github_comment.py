"""One comment per pull request: found again by its marker across pages, edited in place."""

from __future__ import annotations

import pytest

from skillab.github.client import GitHubClient, GitHubError
from skillab.github.comment import find_comment, marker, upsert_comment

from ..action_harness import REPO, github  # noqa: F401 (the fixture)


def test_first_run_creates_and_second_run_updates_the_same_comment(github):
    gh = GitHubClient(github.url, "write-token")
    first = upsert_comment(gh, REPO, 7, "first report")
    second = upsert_comment(gh, REPO, 7, "second report")
    assert (first.action, second.action) == ("created", "updated")
    assert first.id == second.id
    comments = github.state.comments_on(REPO, 7)
    assert len(comments) == 1
    assert comments[0]["body"] == marker() + "\nsecond report"
    assert len(github.state.calls("POST")) == 1 and len(github.state.calls("PATCH")) == 1


def test_the_marker_is_found_beyond_the_first_page(github):
    for i in range(130):
        github.state.add_comment(REPO, 7, f"chatter {i}")
    ours = github.state.add_comment(REPO, 7, marker() + "\nold report", user="github-actions[bot]")
    for i in range(5):
        github.state.add_comment(REPO, 7, f"later chatter {i}")
    gh = GitHubClient(github.url, "write-token")
    result = upsert_comment(gh, REPO, 7, "new report")
    assert result.action == "updated" and result.id == ours["id"]
    assert len(github.state.comments_on(REPO, 7)) == 136
    assert [c.query.get("page", "1") for c in github.state.calls("GET", "/comments")] == ["1", "2"]


def test_quoted_marker_and_another_paths_comment_are_left_alone(github):
    github.state.add_comment(REPO, 7, "> " + marker() + "\n> quoted by a human")
    other = github.state.add_comment(REPO, 7, marker("other/skills") + "\nother job's report")
    gh = GitHubClient(github.url, "write-token")
    assert find_comment(gh, REPO, 7) is None
    upsert_comment(gh, REPO, 7, "mine")
    bodies = [c["body"] for c in github.state.comments_on(REPO, 7)]
    assert len(bodies) == 3 and other["body"] in bodies


def test_read_only_token_cannot_comment(github):
    gh = GitHubClient(github.url, "read-token")
    with pytest.raises(GitHubError) as info:
        upsert_comment(gh, REPO, 12, "report")
    assert info.value.forbidden
    assert github.state.comments_on(REPO, 12) == []


def test_marker_key_cannot_end_the_html_comment():
    assert marker("my-skills/x") == "<!-- skillab:report path=my-skills/x -->"
    inner = marker("a --> <b>")[len("<!-- "):-len(" -->")]
    assert "--" not in inner and "<" not in inner and ">" not in inner
    assert marker("") == marker(".") == "<!-- skillab:report path=. -->"


def test_a_users_comment_with_the_marker_is_never_edited(github):
    hostile = github.state.add_comment(REPO, 7, marker() + "\nfake: skillab says pass", user="mallory")
    gh = GitHubClient(github.url, "write-token")
    result = upsert_comment(gh, REPO, 7, "the real report")
    assert result.action == "created" and result.id != hostile["id"]
    assert not github.state.calls("PATCH")
    comments = {c["id"]: c for c in github.state.comments_on(REPO, 7)}
    assert comments[hostile["id"]]["body"] == marker() + "\nfake: skillab says pass"
    assert comments[result.id]["user"]["login"] == "github-actions[bot]"
    # The second run finds its own comment, not mallory's.
    assert upsert_comment(gh, REPO, 7, "second").id == result.id


def test_a_personal_token_owns_the_comments_its_user_wrote(github):
    github.state.tokens["pat"] = "write"
    github.state.users["pat"] = "maintainer"
    bot = github.state.add_comment(REPO, 7, marker() + "\nby the actions bot", user="github-actions[bot]")
    mine = github.state.add_comment(REPO, 7, marker() + "\nby the token's user", user="maintainer")
    gh = GitHubClient(github.url, "pat")
    result = upsert_comment(gh, REPO, 7, "updated")
    assert result.action == "updated" and result.id == mine["id"]
    assert github.state.comments_on(REPO, 7)[0]["body"] == bot["body"]


@pytest.mark.parametrize("broken", [{"body": "x"}, {"id": "seven", "user": {"login": "github-actions[bot]"}}])
def test_a_comment_response_without_an_id_is_a_clear_error(github, broken):
    from ..fakes.github_server import Fault

    # The listing is empty; the answer to the POST lacks a usable id.
    github.state.faults += [Fault(200, [], path_contains="/issues/7/comments"),
                            Fault(201, broken, path_contains="/issues/7/comments")]
    gh = GitHubClient(github.url, "write-token")
    with pytest.raises(GitHubError, match="malformed API response: the new comment without a valid 'id'"):
        upsert_comment(gh, REPO, 7, "report")


def test_a_comment_written_before_its_answer_was_lost_is_not_written_twice(github):
    """GitHub can write a comment and still answer 502 (its gateway timed out): retrying the POST
    blindly leaves two reports on the PR, and every later run updates only the first."""
    from ..fakes.github_server import Fault

    github.state.faults.append(Fault(502, b"<html>bad gateway</html>", {"Content-Type": "text/html"},
                                     path_contains="/issues/7/comments", method="POST",
                                     after_applying=True))
    gh = GitHubClient(github.url, "write-token", sleep=lambda s: None)
    first = upsert_comment(gh, REPO, 7, "first report")
    assert len(github.state.comments_on(REPO, 7)) == 1
    upsert_comment(gh, REPO, 7, "second report")
    comments = github.state.comments_on(REPO, 7)
    assert [c["body"] for c in comments] == [marker() + "\nsecond report"]
    assert first.id == comments[0]["id"]


def test_a_comment_refused_by_a_server_error_is_written_once_it_recovers(github):
    from ..fakes.github_server import Fault

    github.state.faults.append(Fault(503, {"message": "unavailable"}, path_contains="/issues/7/comments",
                                     method="POST"))
    gh = GitHubClient(github.url, "write-token", sleep=lambda s: None)
    assert upsert_comment(gh, REPO, 7, "report").action == "created"
    assert [c["body"] for c in github.state.comments_on(REPO, 7)] == [marker() + "\nreport"]
