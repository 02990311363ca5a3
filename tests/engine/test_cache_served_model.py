"""The baseline cache is keyed on the model the provider served, the judge and its prompt."""

from __future__ import annotations

import json

from skillab.cli import main

from ..fakes.model_server import FakeModelServer, Reply
from ..skillgen import grep_case, make_skill


def run(tmp_path, capsys, skill, *extra: str) -> dict:
    out = tmp_path / "r.json"
    code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--quiet",
                 "--no-history", "--cache-dir", str(tmp_path / "cache"), "--output", str(out), *extra])
    capsys.readouterr()
    assert code in (0, 1)
    return json.loads(out.read_text())


def test_a_new_snapshot_behind_the_same_name_misses_the_cache(tmp_path, capsys, monkeypatch):
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")])
    served = {"id": "claude-haiku-4-5-20251001"}

    def answer(request):
        return Reply("SKILLED" if "SKILLED" in request.system_text else "plain", served_model=served["id"])

    with FakeModelServer(answer) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "S" * 40)
        first = run(tmp_path, capsys, skill)
        assert first["cache"]["hits"] == 0
        assert {c["without_skill"]["extra"]["served_model"] for c in first["cases"]} == {served["id"]}
        again = run(tmp_path, capsys, skill)
        assert again["cache"]["hits"] == 2  # same name, same snapshot served: reused
        served["id"] = "claude-haiku-4-5-20260301"
        moved = run(tmp_path, capsys, skill)
        assert moved["cache"]["hits"] == 0  # the provider now serves another model: a miss
        assert all(not c["without_skill"]["cached"] for c in moved["cases"])
        after = run(tmp_path, capsys, skill)
        assert after["cache"]["hits"] == 2


def test_claude_code_reports_the_model_its_answers_came_from(tmp_path, server):
    """Claude Code's assistant events carry the model id the API answered with: that is the
    served model the cache keys on, not the name the run asked for."""
    from skillab.agents.base import ArmRequest
    from skillab.agents.claude_code import ClaudeCodeAdapter
    from skillab.sandbox.workspace import Workspace
    from skillab.suite.model import Case

    from ..agents.test_claude_code import KEY
    from ..node_cli import claude_binary

    def answer(request):
        if "Skill" not in request.tool_names:
            return Reply("ok")  # a side request (titles, summaries)
        return Reply("Done.", served_model="claude-haiku-4-5-20251001")

    server.handler = answer
    workspace = Workspace.create(tmp_path / "arms", "arm")
    agent = ClaudeCodeAdapter(claude_binary(), api_key=KEY, model="claude-haiku-4-5",
                              base_url=server.url, max_retries=0)
    result = agent.run(ArmRequest(case=Case(name="t", prompt="Say done."), arm="without_skill",
                                  skill=None, workspace=workspace.root))
    assert result.error is None, result.error
    assert agent.reports_served_model and result.served_model == "claude-haiku-4-5-20251001"
