"""The HTML report's "files changed" is the workspace diff the run took, not a reading of the
transcript: a real agent's multi-line tool call still shows the file it wrote."""

from __future__ import annotations

import json
import re

from skillab.cli import main

from ..fakes.model_server import text, tool_call
from ..skillgen import grep_case, make_skill

KEY = "sk-ant-test-" + "f" * 24


def test_a_file_written_by_a_multi_line_tool_call_is_listed(tmp_path, server, monkeypatch, capsys):
    server.serve_sdks(monkeypatch, anthropic_key=KEY)
    def agent(request):
        if not request.tool_results:
            # The content comes first and spans lines, as real agents write files.
            return tool_call("write_file", {"content": "# Notes\nline two\n", "path": "notes/summary.md"})
        return text("SKILLED: wrote notes/summary.md")

    server.handler = agent
    skill = make_skill(tmp_path, [grep_case("writes-notes")])
    out, html = tmp_path / "r.json", tmp_path / "r.html"
    code = main(["run", str(skill), "--adapter", "agent", "--model", "claude-haiku-4-5",
                 "--judge-consistency", "0", "--no-cache", "--no-history", "--quiet",
                 "--output", str(out), "--html", str(html)])
    assert code in (0, 1), capsys.readouterr().err
    page = html.read_text()
    sections = re.findall(r'data-arm="with_skill".*?<b>files changed</b> (.*?)(?:<p|<b>|</div>)', page, re.S)
    assert sections and "notes/summary.md" in sections[0], sections
    arm = json.loads(out.read_text())["cases"][0]["with_skill"]
    assert arm["extra"]["files_changed"] == ["notes/summary.md"]
