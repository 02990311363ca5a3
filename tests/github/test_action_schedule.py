"""``skillab action`` on schedule, workflow_dispatch and push, and with or without model keys."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ..action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from ..fakes.model_server import FakeModelServer, text
from ..skillgen import answers, grep_case, make_skill

KEY = "sk-ant-api03-input-" + "K" * 32


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a"), grep_case("b")], name="alpha",
               responses={"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    make_skill(workspace / "skills", [grep_case("c")], name="beta",
               responses={"c": answers("SKILLED", "SKILLED")})
    make_skill(workspace / "other", [grep_case("d")], name="gamma", responses={"d": answers("SKILLED", "plain")})
    return workspace


@pytest.mark.parametrize("event_name,event_file,in_process", [
    ("schedule", "schedule.json", False),
    ("workflow_dispatch", "workflow_dispatch.json", True),
    ("push", "push.json", True),
])
def test_non_pr_events_run_every_suite_under_path_and_report_in_the_summary(repo, github, event_name,
                                                                           event_file, in_process):
    result = run_action(repo, event_name=event_name, event_file=event_file, api_url=github.url,
                        inputs={"adapter": "mock", "path": "skills"}, in_process=in_process)
    assert result.code == 0, result.log
    assert json.loads(result.outputs["suites"]) == ["skills/alpha", "skills/beta"]
    assert result.outputs["verdict"] == "pass"
    assert result.outputs["delta-pts"] == str(round(100 * 2 / 3, 2))
    assert result.summary.startswith("## ✅ skillab: pass — 2 suites")
    assert "[workflow run](https://github.com/octo-org/skills-repo/actions/runs/4242)" in result.summary
    assert github.state.requests == []  # no PR: no files API, no comment
    results_dir = repo / "skillab-results"
    assert sorted(p.relative_to(results_dir).as_posix() for p in results_dir.rglob("*") if p.is_file()) == [
        "junit.xml", "report.html", "report.md", "results.json", "skills__alpha/results.json",
        "skills__beta/results.json",
    ]
    assert result.outputs["html-path"] == "skillab-results/report.html"
    html = (results_dir / "report.html").read_text()
    assert "alpha" in html and "beta" in html and "<script" not in html
    assert result.outputs["results-path"] == "skillab-results/results.json"
    assert (results_dir / "report.md").read_text() == result.summary


def test_mode_changed_outside_a_pull_request_runs_everything_with_a_notice(repo, github):
    result = run_action(repo, event_name="push", event_file="push.json", api_url=github.url,
                        inputs={"adapter": "mock", "mode": "changed", "path": "other"}, in_process=True)
    assert result.code == 0, result.log
    assert "::notice::mode 'changed' needs a pull request event" in result.stdout
    assert json.loads(result.outputs["suites"]) == ["other/gamma"]


def test_a_path_with_no_suite_fails_on_a_schedule(repo, github):
    (repo / "empty").mkdir()
    result = run_action(repo, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock", "path": "empty"}, in_process=True)
    assert result.code == 1
    assert "::error::skillab: check failed: no skill suite (SKILL.md with a suite file) under 'empty'" in result.stdout


def test_no_model_and_no_mock_is_a_usage_error_with_advice(repo, github):
    result = run_action(repo, event_name="schedule", event_file="schedule.json", api_url=github.url, in_process=True)
    assert result.code == 2
    assert re.search(r"^::error::the action needs a model .*adapter: mock", result.stdout, re.M)
    assert "Traceback" not in result.log


def test_bad_input_values_name_the_input(repo, github):
    result = run_action(repo, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock", "runs": "many"}, in_process=True)
    assert result.code == 2
    assert "::error::input 'runs': expected an integer, got 'many'" in result.stdout
    assert result.summary.startswith("## ⚠️ skillab could not run") and "input 'runs'" in result.summary


def test_a_fork_pr_without_secrets_gets_a_notice_not_a_red_check_it_cannot_fix(repo, github):
    result = run_action(repo, event_name="pull_request", event_file="pull_request_fork.json",
                        api_url=github.url, inputs={"model": "claude-sonnet-4-5", "path": "skills",
                                                    "github-token": "read-token"}, in_process=True)
    assert result.code == 0, result.log
    notice = re.search(r"^::notice::skillab did not run: (.*)$", result.stdout, re.M)
    assert notice and "ANTHROPIC_API_KEY" in notice.group(1) and "forks" in notice.group(1)
    assert "No suite ran" in result.summary
    assert "Traceback" not in result.log


def test_a_missing_key_is_said_in_workflow_terms_and_fails_where_secrets_are_passed(repo, github):
    # A run that gets the secrets: a missing one is the workflow's to fix, so the check fails,
    # and the message names the input, not a shell export.
    result = run_action(repo, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"model": "claude-sonnet-4-5", "path": "skills"}, in_process=True)
    assert result.code == 1, result.log
    notice = re.search(r"^::notice::skillab did not run: (.*)$", result.stdout, re.M)
    assert notice, result.stdout
    assert "pass the `anthropic-api-key` input (`anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}`)" in notice.group(1)
    assert "export" not in notice.group(1) and "forks" not in notice.group(1)


def test_an_api_key_input_reaches_the_provider_and_nothing_else(repo, github):
    def answer(request):
        return text("SKILLED" if "SKILLED" in request.system_text else "plain")

    with FakeModelServer(answer) as model:
        result = run_action(
            repo, event_name="workflow_dispatch", event_file="workflow_dispatch.json",
            api_url=github.url,
            inputs={"adapter": "llm", "model": "claude-sonnet-4-5", "path": "skills",
                    "anthropic-api-key": KEY},
            env={"ANTHROPIC_BASE_URL": model.url},
        )
        assert result.code == 0, result.log
        auths = {r.auth for r in model.model_requests()}
    assert auths <= {KEY, f"Bearer {KEY}"} and auths  # x-api-key, or Authorization: Bearer
    for produced in [result.log, result.summary, json.dumps(result.outputs),
                     *(p.read_text() for p in (repo / "skillab-results").rglob("*") if p.is_file())]:
        assert KEY not in produced


def test_results_that_cannot_be_written_fail_the_check(repo, github):
    (repo / "skillab-results").write_text("a file where the results directory should be\n")
    result = run_action(repo, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock", "path": "skills"}, in_process=True)
    assert result.code == 1
    assert re.search(r"^::error::skillab: check failed: skills/alpha: results could not be written or read back",
                     result.stdout, re.M)
    assert result.outputs["verdict"] == "error" and result.outputs["results-path"] == ""
    # Each suite is a row whose verdict is error, and the reason is in the notes.
    assert re.search(r"^\| skills/alpha \| 0 \| n/a .*⚠️ error \|$", result.summary, re.M)
    assert "Check failed: skills/alpha: results could not be written" in result.summary


def test_the_claude_code_adapter_without_the_cli_points_at_the_variant_that_has_it(tmp_path, github, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no `claude` anywhere
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha")
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "claude-code", "model": "claude-haiku-4-5"}, in_process=True)
    assert result.code == 2
    assert "uses: OWNER/skillab/claude-code@v1" in result.stdout
