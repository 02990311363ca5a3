"""The trust model: skillab evaluates the pull request's own commit, or refuses with one message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ..action_harness import EVENTS, REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..engine.test_against import commit_all, git
from ..skillgen import answers, grep_case, make_skill

CASES = [grep_case("a")]
RESPONSES = {"a": answers("SKILLED", "plain")}


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with a base commit and a pull request's head commit editing the skill."""
    repo = tmp_path / "workspace"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    make_skill(repo / "skills", CASES, name="alpha", body="Version one.", responses=RESPONSES)
    base = commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    make_skill(repo / "skills", CASES, name="alpha", body="Version two: say SKILLED.", responses=RESPONSES)
    head = commit_all(repo, "head")
    return repo, base, head


def event(tmp_path: Path, base: str, head: str) -> str:
    payload = json.loads((EVENTS / "pull_request_fork.json").read_text())
    payload["pull_request"]["base"]["sha"] = base
    payload["pull_request"]["head"]["sha"] = head
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


def run(repo: Path, github, event_file: str, name: str = "pull_request_target"):
    github.state.pr_files[(REPO, 12)] = [{"filename": "skills/alpha/SKILL.md", "status": "modified"}]
    return run_action(repo, event_name=name, event_file=event_file, api_url=github.url,
                      inputs={"adapter": "mock"}, in_process=True)


def test_pull_request_target_on_the_base_checkout_is_refused(tmp_path, history, github):
    repo, base, head = history
    git(repo, "checkout", "-q", base)  # what a plain actions/checkout gives on pull_request_target
    result = run(repo, github, event(tmp_path, base, head))
    assert result.code == 2, result.log
    refusals = re.findall(r"^::error::.*refusing to evaluate: the pull request's head is "
                          rf"{head[:12]} but the workspace holds {base[:12]}.*head\.sha", result.stdout, re.M)
    assert len(refusals) == 1 and len(re.findall("^::error::", result.stdout, re.M)) == 1
    assert result.outputs["verdict"] == "error" and json.loads(result.outputs["suites"]) == []
    assert "refusing to evaluate" in result.summary
    assert not (repo / "skillab-results" / "results.json").exists()


def test_pull_request_target_on_the_head_checkout_runs_with_a_warning(tmp_path, history, github):
    repo, base, head = history
    result = run(repo, github, event(tmp_path, base, head))
    assert result.code == 0, result.log
    assert re.search(r"^::warning::skillab runs on pull_request_target: .* with this repository's secrets",
                     result.stdout, re.M)
    assert json.loads(result.outputs["suites"]) == ["skills/alpha"]
    assert result.results()["suites"][0]["comparison"]  # the original arm read the base commit


def test_the_test_merge_commit_of_a_shallow_clone_is_the_pull_requests_code(tmp_path, history, github):
    repo, base, head = history
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "main moved on")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge head into main", "feature")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{repo}", str(clone))  # as actions/checkout
    result = run(clone, github, event(tmp_path, base, head), name="pull_request")
    assert result.code == 0, result.log
    assert "refusing" not in result.log


def test_pull_request_target_without_a_git_checkout_is_refused(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", CASES, name="alpha", responses=RESPONSES)
    result = run(workspace, github, "pull_request_fork.json")
    assert result.code == 2
    assert "the workspace is not a git checkout" in result.stdout
