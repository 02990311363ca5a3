"""Small things a new user hit: counts in words, a suggestion for a misspelt flag, a bare
``action --help``, the footer of a suite that could not run, ``-v`` for a rescued case, and
silent 529 retries."""

from __future__ import annotations

import json
from pathlib import Path

from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.reports.markdown import render_markdown
from skillab.reports.markdown_view import FailedSuite
from skillab.reports.terminal import render_table

from .action_harness import github, private_cache  # noqa: F401 (fixtures)
from .fakes.model_server import overloaded, text
from .skillgen import answers, grep_case, make_skill

KEY = "sk-ant-test-" + "p" * 24


def test_one_graded_case_is_singular(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case("only")])
    assert main(["validate", str(skill)]) == 0
    assert "(1 graded case, 0 trigger-only)" in capsys.readouterr().out


def test_one_tool_call_is_singular_in_the_html_report(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case("only")],
                       responses={"only": {"with": {"text": "SKILLED", "files": {"a.md": "x"}}, "without": "no"}})
    main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
          "--output", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")])
    html = (tmp_path / "r.html").read_text()
    assert "1 tool call ·" in html and "1 turn ·" in html and "1 tool calls" not in html


def test_a_misspelt_flag_gets_the_nearest_one(capsys):
    assert main(["run", "x", "--adpater", "mock"]) == 2
    assert "did you mean --adapter?" in capsys.readouterr().err


def test_action_help_lists_inputs_and_exit_codes(capsys):
    assert main(["action", "--help"]) == 0
    out = capsys.readouterr().out
    assert "INPUT_FAIL-ON-VERDICT" in out and "max-cost-usd" in out and "130" in out


def test_the_footer_of_a_suite_that_could_not_run_has_no_question_marks():
    footer = render_markdown([], failed=[FailedSuite("skills/bad")]).rstrip().split("\n")[-1]
    assert "?" not in footer and "skillab " in footer


def test_verbose_shows_the_failing_arm_of_a_rescued_case(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case("rescued")], responses={"rescued": answers("SKILLED", "plain")})
    main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
          "--output", str(tmp_path / "r.json")])
    doc = json.loads((tmp_path / "r.json").read_text())
    table = render_table(RunLog.from_json(doc), verbose=True)
    assert "rescued: flip_to_pass" in table
    assert "without skill:" in table and "validator 'mentions SKILLED'" in table


def test_a_529_retry_wait_is_told_as_it_happens(tmp_path: Path, server, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.push(overloaded(retry_after_ms=1100))
    server.handler = lambda request: text("SKILLED")
    skill = make_skill(tmp_path, [grep_case("a")])
    code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--base-url", server.url,
                 "--no-cache", "--no-history", "--concurrency", "1", "--output", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "waiting: anthropic claude-haiku-4-5: HTTP 529" in err and "retrying in 1.1s" in err


def test_the_action_log_names_suites_as_the_repository_does(tmp_path: Path, github):
    from .action_harness import run_action

    repo = tmp_path / "repo"
    make_skill(repo / "skills", [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    result = run_action(repo, event_name="workflow_dispatch", event_file="workflow_dispatch.json",
                        api_url=github.url, inputs={"adapter": "mock", "path": "skills"})
    assert result.code == 0, result.log
    assert "running skills/demo-skill/eval.yaml" in result.stdout
    assert str(repo.resolve()) not in result.stdout
