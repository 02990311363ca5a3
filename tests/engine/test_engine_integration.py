"""What the engine adds around a real agent: a sealed baseline, judge accounting, warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.grading.judge import SYSTEM_PROMPT as JUDGE_SYSTEM
from skillab.grading.judge import fenced_blocks
from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.isolation import detect_isolation

from ..fakes.model_server import FakeModelServer, text, tool_call

KEY = "sk-ant-api03-" + "Integr8" * 7
BODY = "The secret house answer is PAPAYA."


def skill_dir(root: Path) -> Path:
    skill = root / "sealed-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text(f"---\nname: sealed-skill\ndescription: d\n---\n{BODY}\n")
    cases = [{"name": "peek", "prompt": "What is the house answer?",
              "validators": [{"cmd": "grep -q PAPAYA response.txt"}],
              "expectations": ["The answer names \"PAPAYA\"."]}]
    (skill / "eval.yaml").write_text(yaml.safe_dump({"cases": cases}))
    return skill


def scripted(skill: Path):
    """The agent tries to read SKILL.md straight from the skill's host directory, then repeats
    whatever it found; the judge passes an answer that names PAPAYA."""

    def reply(req):
        if req.system_text == JUDGE_SYSTEM:
            passed = "PAPAYA" in fenced_blocks(req.last_user_text)["FINAL_OUTPUT"]
            return text(json.dumps({"passed": passed, "reason": "checked for PAPAYA"}))
        if not req.tool_results:
            return tool_call("run_shell", {"command": f"cat {skill}/SKILL.md"})
        # The skill reaches the with-skill agent through its system prompt, never the host.
        known = " (and my instructions say PAPAYA)" if BODY in req.system_text else ""
        return text("I found: " + req.tool_results[-1][-200:] + known)

    return reply


@pytest.fixture
def run(tmp_path, monkeypatch):
    skill = skill_dir(tmp_path)

    def go(*extra: str) -> dict:
        with FakeModelServer(scripted(skill.resolve())) as server:
            server.serve_sdks(monkeypatch, anthropic_key=KEY)
            code = main(["run", str(skill), "--model", "claude-haiku-4-5", "--no-cache", "--quiet",
                         "--judge-same-family",
                         "--no-history", "--output", str(tmp_path / "r.json"), *extra])
        assert code == 0
        return json.loads((tmp_path / "r.json").read_text())

    return go


@pytest.mark.skipif(not detect_isolation(choose_sandbox(None)).pid_namespace,
                    reason="this host gives commands no mount namespace, so paths cannot be hidden")
def test_the_without_skill_agent_cannot_read_the_skill_from_the_host(run):
    doc = run()
    record = doc["cases"][0]
    # Both arms ran the same `cat` on the skill's own directory: it is in neither arm's view.
    assert "PAPAYA" in record["with_skill"]["final_output"]
    assert "No such file" in record["with_skill"]["final_output"]
    assert "PAPAYA" not in record["without_skill"]["final_output"]
    assert record["outcome"] == "flip_to_pass"
    # Reaching for SKILL.md is itself flagged, even though nothing came back.
    assert record["without_skill"]["contaminated"] is True
    assert doc["contaminated_arms"] == 1


def test_judge_tokens_are_counted_and_a_same_family_judge_is_flagged(run):
    doc = run()  # --judge-same-family: the agent model judges, and every report says so
    assert doc["models"]["judge"] == "claude-haiku-4-5" and doc["models"]["judge_same_family"] is True
    assert any("judge" in w.lower() for w in doc["warnings"])
    judge = doc["usage"]["judge"]
    assert judge is not None and judge["total_tokens"] > 0
    arms = doc["usage"]["with_skill"]["total_tokens"] + doc["usage"]["without_skill"]["total_tokens"]
    assert doc["usage"]["total"]["total_tokens"] == arms + judge["total_tokens"]


def test_neither_the_agent_nor_the_judge_is_told_which_arm_it_is(tmp_path, monkeypatch):
    # The arm's workspace path is the agent's working directory (Claude Code puts it in its
    # system prompt, file tools echo it) and so reaches the transcript the judge reads.
    skill = skill_dir(tmp_path)

    def reply(req):
        if req.system_text == JUDGE_SYSTEM:
            return text(json.dumps({"passed": True, "reason": "ok"}))
        if not req.tool_results:
            return tool_call("run_shell", {"command": "pwd"})
        return text("I work in " + req.tool_results[-1])

    with FakeModelServer(reply) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code = main(["run", str(skill), "--model", "claude-haiku-4-5", "--no-cache", "--quiet",
                     "--judge-same-family", "--no-history", "--output", str(tmp_path / "r.json")])
        judged = [r.raw for r in server.model_requests() if r.system_text == JUDGE_SYSTEM]
    record = json.loads((tmp_path / "r.json").read_text())["cases"][0]
    assert code in (0, 1) and len(judged) >= 2
    for arm in ("with_skill", "without_skill"):
        assert "/workspace" in record[arm]["final_output"]  # the pwd ran
        assert not any(name in record[arm]["final_output"] for name in ("with_skill", "without_skill"))
    assert not any(name in raw for raw in judged for name in ("with_skill", "without_skill"))
