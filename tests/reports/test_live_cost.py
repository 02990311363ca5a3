"""The live cost on the progress lines counts the judge's calls too: at the end of a run (no
consistency re-asks) it equals the document's total, agent and judge together."""

from __future__ import annotations

import json
import re

from skillab.cli import main

from ..fakes.model_server import text
from ..skillgen import grep_case, make_skill

ANTHROPIC_KEY = "sk-ant-test-" + "a" * 24
OPENAI_KEY = "sk-test-" + "o" * 24


def test_the_last_progress_line_costs_what_the_document_does(tmp_path, server, monkeypatch, capsys):
    server.serve_sdks(monkeypatch, anthropic_key=ANTHROPIC_KEY, openai_key=OPENAI_KEY)

    def answer(request):
        if request.api == "openai":  # the judge, gpt-4.1-mini
            return text(json.dumps({"passed": True, "reason": "It says SKILLED, as asked in the prompt."}))
        return text("SKILLED")

    server.handler = answer
    skill = make_skill(tmp_path, [grep_case(f"c{i}", expectations=["It says SKILLED."]) for i in range(3)])
    out = tmp_path / "r.json"
    code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--judge-consistency", "0",
                 "--no-cache", "--no-history", "--concurrency", "1", "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    doc = json.loads(out.read_text())
    judge = doc["usage"]["judge"]["cost_usd"]
    assert judge and judge > 0
    last = [line for line in err.splitlines() if line.startswith("[3/3]")][-1]
    shown = float(re.search(r"\$(\d+\.\d+)", last).group(1))
    agent = sum(c[arm]["usage"]["cost_usd"] for c in doc["cases"] for arm in ("with_skill", "without_skill"))
    assert round(agent + judge, 4) == shown, (last, agent, judge)
