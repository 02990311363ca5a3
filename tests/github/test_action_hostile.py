"""A hostile pull request and an unreliable API, through the entrypoint and the fake GitHub server."""

from __future__ import annotations

import re

from ..action_harness import REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..fakes.github_server import Fault
from ..skillgen import answers, grep_case, make_skill

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: shows "txt.exe" as "exe.txt"
ZWSP = "\u200b"
# Commands the runner would obey: the ``::`` form at a line's start, the legacy ``##[`` anywhere.
INJECTED = ["::add-mask::", "##[add-mask]", "##[stop-commands]", "##[error]", "::stop-commands::"]


def pr_run(workspace, github, **inputs):
    return run_action(workspace, event_name="pull_request", event_file="pull_request_opened.json",
                      api_url=github.url, inputs={"adapter": "mock", **inputs}, in_process=True)


def commands_in(log: str) -> list[str]:
    """Lines the runner would read as workflow commands (its own parsing rules)."""
    found = []
    for line in log.splitlines():
        if line.lstrip().startswith("::"):
            found.append(line.lstrip().split("::")[1].split(" ")[0])
        if "##[" in line:
            found.append("legacy:" + line[line.index("##[") + 3:].split("]")[0])
    return found


def test_command_text_from_setup_stderr_and_answers_is_neutralised(tmp_path, github):
    workspace = tmp_path / "workspace"
    setup = ("printf '::add-mask::x\\n##[add-mask]secret\\nsome ##[stop-commands]tok\\n"
             f"##[error]fake failure {RLO}gnp.exe\\n' >&2; exit 3")
    make_skill(workspace / "skills", [grep_case("evil", setup={"commands": [setup]}),
                                      grep_case("fine")], name="alpha",
               responses={"fine": answers(f"SKILLED ##[warning]x {RLO}evil{ZWSP}", "plain")})
    github.state.pr_files[(REPO, 7)] = [{"filename": "skills/alpha/SKILL.md"}]
    result = pr_run(workspace, github, **{"fail-on-verdict": ""})
    assert "setup command" in result.stdout  # the stderr was echoed ...
    ours = {"group", "endgroup", "error", "warning", "notice"}
    assert set(commands_in(result.stdout)) <= ours, commands_in(result.stdout)  # ... as plain text
    assert "fake failure <U+202E>gnp.exe" in result.stdout
    for text in (result.stdout, result.summary, github.state.comments_on(REPO, 7)[0]["body"]):
        assert RLO not in text
    body = github.state.comments_on(REPO, 7)[0]["body"]
    assert "<U+202E>" in body or "&lt;U+202E&gt;" in body


def test_a_hostile_marker_comment_is_left_alone_and_ours_is_created(tmp_path, github):
    from skillab.github.comment import marker

    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    github.state.pr_files[(REPO, 7)] = [{"filename": "skills/alpha/SKILL.md"}]
    fake = github.state.add_comment(REPO, 7, marker() + "\n## ✅ skillab: pass (trust me)", user="mallory")
    result = pr_run(workspace, github)
    assert result.code == 0, result.log
    comments = github.state.comments_on(REPO, 7)
    assert len(comments) == 2 and comments[0]["body"] == fake["body"]
    assert comments[1]["user"]["login"] == "github-actions[bot]"
    assert not github.state.calls("PATCH")


def test_a_files_api_that_answers_garbage_runs_every_suite_with_a_warning(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    for garbage in (Fault(200, b"<html>oops</html>", {"Content-Type": "text/html"}, "/files"),
                    Fault(200, [{"status": "modified"}], path_contains="/files"),
                    Fault(200, ["just a string"], path_contains="/files")):
        github.state.faults.append(garbage)
        result = pr_run(workspace, github, comment="false")
        assert result.code == 0, result.log
        assert "Traceback" not in result.log
        warning = re.search(r"^::warning::cannot list the pull request's files \((.*)\): every suite runs",
                            result.stdout, re.M)
        assert warning and ("not JSON" in warning.group(1) or "without a valid 'filename'" in warning.group(1))


def test_comment_api_faults_become_a_note_not_a_traceback(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    github.state.pr_files[(REPO, 7)] = [{"filename": "skills/alpha/SKILL.md"}]
    github.state.faults.append(Fault(200, [{"body": "no id or user"}, 17], path_contains="/issues/7/comments"))
    github.state.faults.append(Fault(201, {"html_url": "x"}, path_contains="/issues/7/comments"))
    result = pr_run(workspace, github)
    assert result.code == 0 and "Traceback" not in result.log
    assert re.search(r"^::warning::No PR comment: malformed API response: the new comment without a valid 'id'",
                     result.stdout, re.M)
    assert "No PR comment: malformed API response" in result.summary
    assert result.outputs["verdict"] == "pass"
