"""``skillab action`` on pull request events, end to end against the fake GitHub server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ..action_harness import REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..fakes.github_server import GitHubServer
from ..skillgen import answers, grep_case, make_skill

KEY = "sk-ant-api03-" + "Z" * 40


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    skills = workspace / "skills"
    make_skill(
        skills, [grep_case("rescued"), grep_case("kept")], name="alpha",
        responses={"rescued": answers("SKILLED", "plain"), "kept": answers("SKILLED", "SKILLED")},
        files={"scripts/grade.py": "print('grading')\n"},
    )
    make_skill(
        skills, [grep_case("one"), grep_case("two")], name="beta",
        responses={"one": answers("SKILLED", "plain"), "two": answers("SKILLED", "plain")},
    )
    (workspace / "README.md").write_text("# skills\n")
    return workspace


def pr_files(github: GitHubServer, number: int, paths: list[str], status: str = "modified") -> None:
    github.state.pr_files[(REPO, number)] = [
        {"sha": "e69de29b", "filename": p, "status": status, "additions": 1, "deletions": 0, "changes": 1}
        for p in paths
    ]


def script(skill: Path, responses: dict) -> None:
    (skill / "mock-responses.yaml").write_text(yaml.safe_dump(responses))


def pr_run(repo: Path, github: GitHubServer, event_file: str = "pull_request_opened.json", **kwargs):
    inputs = {"adapter": "mock", **kwargs.pop("inputs", {})}
    return run_action(repo, event_name="pull_request", event_file=event_file, api_url=github.url,
                      inputs=inputs, **kwargs)


def test_two_runs_on_one_pr_leave_one_comment_with_the_second_report(repo, github):
    pr_files(github, 7, ["skills/alpha/SKILL.md"])
    first = pr_run(repo, github)
    assert first.code == 0, first.log
    script(repo / "skills" / "alpha", {"rescued": answers("plain", "SKILLED"), "kept": answers("SKILLED", "SKILLED")})
    second = pr_run(repo, github, "pull_request_synchronize.json",
                    inputs={"fail-on-verdict": "error"})
    assert second.code == 0, second.log
    comments = github.state.comments_on(REPO, 7)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith("<!-- skillab:report path=. -->\n")
    # One flip over two cases is within noise: listed, not called broken.
    assert "−50.0 pts" in body and "**Worse with the skill, within noise**" in body and "**Rescued" not in body
    assert [r.method for r in github.state.requests if "/comments" in r.path] == ["GET", "POST", "GET", "PATCH"]
    assert second.outputs["verdict"] == "mixed" and second.outputs["delta-pts"] == "-50"
    assert body[body.index("\n") + 1:].rstrip() == second.summary.rstrip()


def test_a_pr_touching_only_a_bundled_grader_runs_that_skills_suite(repo, github):
    # 150 changed files: the grader is on the second page of the files API.
    pr_files(github, 7, [f"docs/page-{i}.md" for i in range(149)] + ["skills/alpha/scripts/grade.py"])
    result = pr_run(repo, github)
    assert result.code == 0, result.log
    assert json.loads(result.outputs["suites"]) == ["skills/alpha"]
    assert [d["suite"]["skill"] for d in result.results()["suites"]] == ["alpha"]
    pages = [r.query.get("page", "1") for r in github.state.calls("GET", "/pulls/7/files")]
    assert pages == ["1", "2"]
    assert all(r.authorization == "Bearer write-token" for r in github.state.requests)
    assert (repo / "skillab-results" / "junit.xml").is_file()
    assert result.outputs["report-path"] == "skillab-results/report.md"


def test_a_pr_touching_no_skill_succeeds_and_says_so(repo, github):
    pr_files(github, 7, ["README.md", "skills/README.md"])
    result = pr_run(repo, github, in_process=True)
    assert result.code == 0, result.log
    assert "touches no skill suite" in result.summary
    assert json.loads(result.outputs["suites"]) == [] and result.outputs["verdict"] == "none"
    assert github.state.calls("POST") == []  # no noise comment on unrelated PRs


def test_a_pr_that_stops_touching_skills_replaces_its_old_report(repo, github):
    pr_files(github, 7, ["skills/beta/SKILL.md"])
    assert pr_run(repo, github, in_process=True).code == 0
    pr_files(github, 7, ["README.md"])
    assert pr_run(repo, github, "pull_request_synchronize.json").code == 0
    comments = github.state.comments_on(REPO, 7)
    assert len(comments) == 1 and "touches no skill suite" in comments[0]["body"]


def test_a_deleted_skill_is_skipped_with_a_note(repo, github):
    pr_files(github, 7, ["skills/retired/SKILL.md", "skills/retired/eval.yaml"], status="removed")
    github.state.pr_files[(REPO, 7)].append({"filename": "skills/beta/SKILL.md", "status": "modified"})
    result = pr_run(repo, github, in_process=True)
    assert result.code == 0, result.log
    assert json.loads(result.outputs["suites"]) == ["skills/beta"]
    assert "Skill skills/retired is deleted in this pull request: skipped." in result.summary


def test_a_suite_parse_error_is_annotated_on_its_line_and_fails_the_check(repo, github):
    broken = repo / "skills" / "broken"
    make_skill(repo / "skills", [grep_case("a")], name="broken")
    lines = (broken / "eval.yaml").read_text().splitlines()
    bad_line = next(i for i, line in enumerate(lines, 1) if "cmd:" in line)
    lines.insert(bad_line, "    surprise: true")
    (broken / "eval.yaml").write_text("\n".join(lines) + "\n")
    pr_files(github, 7, ["skills/broken/eval.yaml", "skills/alpha/SKILL.md"])
    result = pr_run(repo, github)
    assert result.code == 1
    annotation = re.search(r"^::error file=skills/broken/eval\.yaml,line=(\d+)::(.*)$", result.stdout, re.M)
    assert annotation, result.stdout
    assert int(annotation.group(1)) == bad_line + 1 and "surprise" in annotation.group(2)
    assert str(repo) not in annotation.group(2)  # the runner's paths stay out of the message
    assert re.search(r"^::error::skillab: check failed: skills/broken/eval\.yaml:\d+", result.stdout, re.M)
    # The healthy suite still ran and is reported next to the broken one's note.
    assert "alpha" in result.summary and "skills/broken/eval.yaml" in result.summary
    assert "Traceback" not in result.log


def test_a_fork_pr_with_a_read_only_token_gets_a_warning_not_a_crash(repo, github):
    pr_files(github, 12, ["skills/beta/SKILL.md"])
    result = pr_run(repo, github, "pull_request_fork.json", inputs={"github-token": "read-token"})
    assert result.code == 0, result.log
    assert re.search(r"^::warning::No PR comment: the token may not write", result.stdout, re.M)
    assert "No PR comment" in result.summary and "beta" in result.summary
    assert [r.status for r in github.state.calls("POST")] == [403]
    assert "Traceback" not in result.log


def test_a_secondary_rate_limit_on_the_files_api_is_retried(repo, github):
    pr_files(github, 7, ["skills/beta/SKILL.md"])
    github.state.rate_limited = 1
    github.state.retry_after = "0"  # the wait itself is covered in test_github_client
    result = pr_run(repo, github, in_process=True)
    assert result.code == 0, result.log
    assert [r.status for r in github.state.calls("GET", "/files")] == [403, 200]
    assert json.loads(result.outputs["suites"]) == ["skills/beta"]


def test_model_text_reaches_the_comment_inert(repo, github):
    evil = f"@octocat <img src=x> | {KEY}"
    make_skill(repo / "skills", [grep_case("hostile")], name="gamma",
               responses={"hostile": answers(f"SKILLED {evil}", evil)})
    pr_files(github, 7, ["skills/gamma/SKILL.md"])
    result = pr_run(repo, github, inputs={"anthropic-api-key": KEY})
    assert result.code == 0, result.log
    body = github.state.comments_on(REPO, 7)[0]["body"]
    prose = re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", "", body, flags=re.S | re.M)
    assert "@octocat" not in prose and "<img" not in prose
    for text in (body, result.summary, result.log, json.dumps(result.outputs),
                 *(p.read_text() for p in (repo / "skillab-results").rglob("*") if p.is_file())):
        assert KEY not in text


def test_gates_fail_with_a_one_line_reason(repo, github):
    pr_files(github, 7, ["skills/alpha/SKILL.md"])
    result = pr_run(repo, github, inputs={"min-delta-pts": "60"}, in_process=True)
    assert result.code == 1
    errors = re.findall(r"^::error::(.*)$", result.stdout, re.M)
    assert errors == ["skillab: check failed: alpha: delta +50.00 pts is below the minimum +60.00"]
    assert "> Check failed: alpha: delta +50.00 pts is below the minimum +60.00" in result.summary
    assert result.outputs["verdict"] == "pass" and result.outputs["delta-pts"] == "50"
    # The point gate says what it cannot show, as a notice beside the failure.
    [note] = re.findall(r"^::notice::(alpha: --min-delta-pts \+60 .*)$", result.stdout, re.M)
    assert "not that it is beyond noise" in note and "--gate-on lower-bound" in note


def test_a_run_that_measured_nothing_fails(repo, github):
    make_skill(repo / "skills", [grep_case("a", setup={"commands": ["exit 3"]})], name="doomed")
    pr_files(github, 7, ["skills/doomed/SKILL.md"])
    result = pr_run(repo, github, inputs={"fail-on-verdict": ""}, in_process=True)
    assert result.code == 1
    assert "skills/doomed: measured nothing (1 of 1 cases errored)" in result.stdout
    group = re.search(r"^::group::skills/doomed: 2 errored arm\(s\)\n(.*?)^::endgroup::", result.stdout, re.M | re.S)
    assert group and "setup command 'exit 3' failed" in group.group(1)


def test_a_large_suite_still_fits_one_comment(repo, github):
    long_answer = ("SKILLED " + "a long and winding answer " * 60 + "\n") * 4
    cases = [grep_case(f"case-{i:02d}") for i in range(64)]
    make_skill(repo / "skills", cases, name="big",
               responses={f"case-{i:02d}": answers(long_answer if i % 2 else "plain", "plain " * 200)
                          for i in range(64)})
    pr_files(github, 7, ["skills/big/eval.yaml"])
    result = pr_run(repo, github, inputs={"fail-on-verdict": ""})
    assert result.code == 0, result.log
    body = github.state.comments_on(REPO, 7)[0]["body"]
    assert len(body.encode("utf-16-le")) // 2 < 65536
    assert re.search(r"^\| big \| 64 \| 50% \| 0% \| \+50\.0 ", body, re.M)
    assert "left out to stay under GitHub's comment limit" in body
    assert body.count("<details>") == body.count("</details>") > 0
