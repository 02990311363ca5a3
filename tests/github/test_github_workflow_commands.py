"""Workflow commands, step outputs and the event payloads, as the GitHub runner reads them."""

from __future__ import annotations

import io
import re

import pytest

from skillab.errors import UsageError
from skillab.github.event import ActionContext, read_event
from skillab.github.workflow_commands import (
    Annotation,
    Log,
    append_summary,
    format_output,
    neutralize,
    write_outputs,
)

from ..action_harness import EVENTS, parse_output_file


def test_annotation_escapes_message_and_properties():
    line = Annotation("error", "bad 100%\nsecond line", file="skills/a,b/eval.yaml", line=12,
                      title="x: y").render()
    assert line == ("::error file=skills/a%2Cb/eval.yaml,line=12,title=x%3A y::bad 100%25%0Asecond line")
    assert "\n" not in line


def test_log_lines_cannot_smuggle_commands():
    out = io.StringIO()
    log = Log(out)
    log.line("case ok\n::add-mask::hunter2\n  ::error::fake")
    with log.group("suite: a\n::warning::x"):
        log.notice("done")
    text = out.getvalue().splitlines()
    assert text[0] == "case ok"
    assert not any(re.match(r"\s*::(add-mask|error)::", line) for line in text[:3])
    assert text[3] == "::group::suite: a%0A::warning::x"
    assert text[4:] == ["::notice::done", "::endgroup::"]
    assert neutralize("plain") == "plain"


def test_outputs_survive_multiline_values_and_lookalike_delimiters(tmp_path):
    path = tmp_path / "output"
    path.write_text("earlier=step\n")
    tricky = "line one\nEOF\nghadelimiter_not_ours\nname<<EOF\n"
    write_outputs(path, {"verdict": "pass", "report": tricky, "suites": '["skills/a"]'})
    parsed = parse_output_file(path.read_text())
    assert parsed == {"earlier": "step", "verdict": "pass", "report": tricky, "suites": '["skills/a"]'}
    with pytest.raises(ValueError):
        format_output("x", "value with D in it", delimiter="D")


def test_summary_is_appended(tmp_path):
    path = tmp_path / "summary.md"
    append_summary(path, "# one")
    append_summary(path, "two\n")
    assert path.read_text() == "# one\ntwo\n"


@pytest.mark.parametrize("name,number,fork", [
    ("pull_request_opened.json", 7, False),
    ("pull_request_synchronize.json", 7, False),
    ("pull_request_fork.json", 12, True),
])
def test_pull_request_events(name, number, fork):
    event = read_event("pull_request", str(EVENTS / name))
    assert event.is_pull_request
    assert event.pull_request.number == number
    assert event.pull_request.base_repo == "octo-org/skills-repo"
    assert event.pull_request.is_fork is fork


@pytest.mark.parametrize("name,file", [("schedule", "schedule.json"), ("workflow_dispatch", "workflow_dispatch.json"),
                                       ("push", "push.json")])
def test_other_events_have_no_pull_request(name, file):
    event = read_event(name, str(EVENTS / file))
    assert not event.is_pull_request and event.pull_request is None


def test_context_reads_the_runner_environment(tmp_path):
    env = {
        "GITHUB_EVENT_NAME": "pull_request_target",
        "GITHUB_EVENT_PATH": str(EVENTS / "pull_request_fork.json"),
        "GITHUB_REPOSITORY": "octo-org/skills-repo",
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_SERVER_URL": "https://ghe.example",
        "GITHUB_RUN_ID": "99",
    }
    ctx = ActionContext.from_env(env)
    assert ctx.event.is_pull_request and ctx.event.pull_request.is_fork
    assert ctx.api_url == "https://api.github.com"
    assert ctx.run_url == "https://ghe.example/octo-org/skills-repo/actions/runs/99"
    assert ctx.output_path is None and ctx.workspace == tmp_path.resolve()
    with pytest.raises(UsageError, match="GITHUB_EVENT_NAME"):
        ActionContext.from_env({})
    bad = tmp_path / "event.json"
    bad.write_text("[1, 2]")
    with pytest.raises(UsageError, match="not a JSON object"):
        read_event("push", str(bad))
