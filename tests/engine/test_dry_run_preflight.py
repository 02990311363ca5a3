"""``--dry-run`` is a preflight: it fails exactly where the run would, names every model and
key, and counts every model call the run then makes (trigger trials and judge re-asks too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main

from ..fakes.model_server import text
from ..skillgen import grep_case, make_skill

ANTHROPIC_KEY = "sk-ant-test-" + "a" * 24
OPENAI_KEY = "sk-test-" + "o" * 24


def judged_skill(tmp_path: Path) -> Path:
    cases = [grep_case(f"c{i}", expectations=["The answer says SKILLED."]) for i in range(3)]
    cases.append({"name": "asks-for-it", "prompt": "Please run the demo skill.", "should_trigger": True})
    return make_skill(tmp_path, cases)


def run(*args: str, capsys) -> tuple[int, str, str]:
    code = main(["run", *args, "--no-cache", "--no-history", "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("keys", [{}, {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}], ids=["no-key", "no-judge-key"])
def test_the_dry_run_fails_where_the_run_would(tmp_path, monkeypatch, capsys, keys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    skill = str(judged_skill(tmp_path))
    dry = run(skill, "--model", "claude-haiku-4-5", "--dry-run", capsys=capsys)
    real = run(skill, "--model", "claude-haiku-4-5", "--output", str(tmp_path / "r.json"), capsys=capsys)
    assert real[0] == 2
    assert dry[0] == real[0]
    assert dry[2] == real[2]  # the same message: the key to set
    assert ("OPENAI_API_KEY" if keys else "ANTHROPIC_API_KEY") in dry[2]


def test_the_dry_run_counts_every_call_the_run_makes(tmp_path, server, monkeypatch, capsys):
    server.serve_sdks(monkeypatch, anthropic_key=ANTHROPIC_KEY, openai_key=OPENAI_KEY)

    def answer(request):
        # The judge (gpt-4.1-mini, the default of another family) gets a verdict; the agent text.
        if request.api == "openai":
            return text(json.dumps({"passed": True, "reason": "It says SKILLED."}))
        return text("SKILLED")

    server.handler = answer
    skill = str(judged_skill(tmp_path))
    common = ["--model", "claude-haiku-4-5", "--adapter", "agent", "--max-turns", "1"]
    code, plan, err = run(skill, *common, "--dry-run", capsys=capsys)
    assert code == 0, err
    assert server.count == 0  # nothing was run
    assert "claude-haiku-4-5 via anthropic" in plan and "ANTHROPIC_API_KEY (set)" in plan
    assert "gpt-4.1-mini via openai" in plan and "OPENAI_API_KEY (set)" in plan
    planned = int(next(line for line in plan.splitlines() if "model calls" in line).split()[2])
    code, _, err = run(skill, *common, "--output", str(tmp_path / "r.json"), capsys=capsys)
    assert code == 0, err
    made = len(server.model_requests())
    assert "1 trigger trial" in plan and "consistency re-ask" in plan
    assert planned == made, plan


def test_judge_model_help_states_the_real_default(capsys):
    assert main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "another family than the agent's: gpt-4.1-mini for a claude-* agent" in out


def test_the_dry_run_names_the_key_copilot_reads_for_its_model(tmp_path, monkeypatch, capsys):
    from ..node_cli import alone_on_path

    alone_on_path("copilot", tmp_path / "bin", monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    code, out, err = run(str(judged_skill(tmp_path)), "--adapter", "copilot", "--model", "gpt-5-mini",
                         "--dry-run", capsys=capsys)
    assert code == 0, err
    assert "copilot CLI · model gpt-5-mini · key OPENAI_API_KEY (set)" in out + err
