"""``--base-url`` with a model whose name says its provider: the provider is kept, named in the
header, and a 404 every arm would repeat stops the run at the first call."""

from __future__ import annotations

from pathlib import Path

from skillab.cli import main

from ..fakes.model_server import http_error, text
from ..skillgen import grep_case, make_skill

KEY = "sk-ant-test-" + "k" * 24


def four_cases(tmp_path: Path) -> Path:
    return make_skill(tmp_path, [grep_case(f"c{i}") for i in range(4)])


def test_a_claude_model_behind_base_url_keeps_the_anthropic_protocol(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.handler = lambda request: text("SKILLED")
    code = main(["run", str(four_cases(tmp_path)), "--adapter", "llm", "--model", "claude-haiku-4-5",
                 "--base-url", server.url, "--no-cache", "--no-history", "--quiet",
                 "--output", str(tmp_path / "r.json")])
    out, err = capsys.readouterr()
    assert code == 0, err
    apis = {r.api for r in server.model_requests()}
    assert apis == {"anthropic"}, apis
    header = out.splitlines()[0]
    assert "model claude-haiku-4-5 (anthropic)" in header


def test_a_404_every_arm_would_repeat_stops_the_run_at_the_first_call(tmp_path, server, capsys):
    server.handler = lambda request: http_error(404, "The model `gpt-nope` does not exist", "not_found_error")
    code = main(["run", str(four_cases(tmp_path)), "--adapter", "llm", "--model", "gpt-nope",
                 "--base-url", server.openai_url, "--concurrency", "1", "--no-cache", "--no-history",
                 "--quiet", "--output", str(tmp_path / "r.json")])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert len(server.model_requests()) == 1
    assert "404" in err and "--base-url" in err
