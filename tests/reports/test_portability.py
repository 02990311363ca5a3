"""``skillab run --adapter claude-code,codex,gemini-cli``: one example suite under three real agent
CLIs, each talking its own wire protocol to the fake server, and the portability table.

The scripted model loads the skill when the CLI offers it and edits CHANGELOG.md the house way
only once it has read the skill's body; otherwise it writes a generic entry. The suite's own
validators (``scripts/check_changelog.py``) grade the file each CLI's shell tool wrote.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.reports.markdown_view import FailedSuite
from skillab.reports.portability import is_portability_run, render_markdown

from ..fakes.model_server import text, tool_call
from ..node_cli import claude_binary, codex_binary, gemini_binary
from .test_markdown_report import document, record

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "changelog-entry"
OFFERED = "Use when writing or updating CHANGELOG.md entries from merged pull requests"
BODY = "never pick a version number or a date"
HOUSE = (
    "## [Unreleased]\n\n### Added\n- `export --since DATE` exports only reports created on or "
    "after DATE (#418)\n\n### Fixed\n- The daily digest is sent in your own timezone (#421)\n"
)
GENERIC = "## [Unreleased]\n\n### Features\n- Added a --since option\n\n### Bug fixes\n- Digest timezone\n"
KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "P0rt" * 10,
    "OPENAI_API_KEY": "sk-proj-" + "P0rtab1e" * 5,
    "GEMINI_API_KEY": "AIzaSy" + "P0rtab1e" * 4,
}


def edit_command(entry: str) -> str:
    code = (
        "import pathlib; p = pathlib.Path('CHANGELOG.md'); "
        f"p.write_text(p.read_text().replace('## [Unreleased]\\n', {entry!r}, 1))"
    )
    return f"python3 -c {shlex.quote(code)} && echo edited"


def shell(api: str, command: str):
    if api == "anthropic":
        return tool_call("Bash", {"command": command, "description": "edit the changelog"})
    if api == "responses":
        return tool_call("exec_command", {"cmd": command})
    return tool_call("run_shell_command", {"command": command, "description": "edit"})


def load_skill(api: str):
    if api == "anthropic":
        return tool_call("Skill", {"skill": "changelog-entry"})
    if api == "responses":
        return tool_call("exec_command", {"cmd": "cat .agents/skills/changelog-entry/SKILL.md"})
    return tool_call("activate_skill", {"name": "changelog-entry"})


def changelog_model(req):
    if req.api == "anthropic" and "Skill" not in req.tool_names:
        return text("ok")  # Claude Code's side requests (titles, summaries)
    results = req.tool_results
    if OFFERED in req.raw and not results:
        return load_skill(req.api)
    if not any("edited" in r for r in results):
        return shell(req.api, edit_command(HOUSE if BODY in req.raw else GENERIC))
    return text("Updated the Unreleased section.")


@pytest.fixture
def agents_on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, binary in (
        ("claude", claude_binary()),
        ("codex", codex_binary()),
        ("gemini", gemini_binary()),
    ):
        (bin_dir / name).symlink_to(binary)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")


def test_three_agents_one_suite_one_table(server, agents_on_path, monkeypatch, tmp_path, capsys):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    server.handler = changelog_model
    out, report = tmp_path / "results.json", tmp_path / "comment.md"

    code = main(
        [
            "run", str(EXAMPLE),
            "--adapter", "claude-code,codex,gemini-cli",
            "--model", "claude-haiku-4-5,gpt-5-mini,gemini-2.5-flash",
            "--case", "update-changelog-file",
            "--no-cache", "--no-history", "--quiet",
            "--output", str(out), "--markdown", str(report),
        ]
    )

    printed = capsys.readouterr().out
    assert code == 0, printed
    documents = json.loads(out.read_text())["suites"]
    assert [d["adapter"]["name"] for d in documents] == ["claude-code", "codex", "gemini-cli"]
    assert {r.api for r in server.model_requests()} >= {"anthropic", "responses", "gemini"}
    for doc in documents:
        assert doc["pass_rate"] == {"with_skill": 1.0, "without_skill": 0.0, "delta_pts": 100.0}
        assert doc["activation"]["with_skill"] == 1.0 and doc["contaminated_arms"] == 0
        assert doc["usage"]["total"]["cost_usd"] > 0
        assert doc["adapter"]["identity"].get("cli_version", doc["adapter"]["identity"].get("claude_code_version"))[0].isdigit()
    logs = [RunLog.from_json(doc) for doc in documents]
    assert is_portability_run(logs)
    table = printed[printed.index("portability · one row per agent"):]
    for agent, offered in (
        ("claude-code", "discover (.claude/skills)"),
        ("codex", "discover (.agents/skills)"),
        ("gemini-cli", "discover (.gemini/skills)"),
    ):
        row = next(line for line in table.splitlines() if f" {agent} " in line)
        assert offered in row and "100%" in row and "+100.0" in row
    markdown = report.read_text()
    section = render_markdown(logs)
    assert section in markdown
    rows = [line for line in section.splitlines() if line.startswith("| changelog-entry |")]
    assert len(rows) == 3
    for value in KEYS.values():
        assert value not in markdown and value not in out.read_text()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--adapter", "mock,nope"], "choose one or more of"),
        (["--adapter", "codex,codex", "--model", "gpt-5"], "each once"),
        (["--adapter", "codex,gemini-cli", "--model", "a,b,c"], "one model for all"),
    ],
)
def test_bad_adapter_lists_exit_2_before_any_case(argv, message, capsys):
    assert main(["run", str(EXAMPLE), *argv]) == 2
    assert message in capsys.readouterr().err


def test_one_agent_gets_no_portability_section():
    log = _agent_log("mock", 10.0)
    # A suite that never ran names no agent: it does not make a second one.
    assert not is_portability_run([log, log], [FailedSuite("broken")]) and render_markdown([log]) == ""
    assert is_portability_run([log], [FailedSuite("broken", "codex")])


def _agent_log(name: str, delta: float, *, withheld: str | None = None) -> RunLog:
    doc = document([record("a", "pass_kept")], skill="s")
    doc["adapter"] = {"name": name, "identity": {"skill_loading": "discover"}}
    doc["pass_rate"] = {"with_skill": 0.9, "without_skill": 0.9 - delta / 100, "delta_pts": delta}
    doc["statistics"].update(ci95=None if withheld else [delta - 20, delta + 20], withheld=withheld)
    doc["usage"]["total"].update(total_tokens=10, cost_usd=0.01)
    return RunLog.from_json(doc)


def test_a_lift_withheld_for_one_agent_is_not_shown_beside_the_others():
    """The judge disagreed with itself under codex: that run withholds its lift (no interval), so
    the table must not print its raw delta as if it compared with claude-code's."""
    reason = "the judge agreed with itself on only 3 of 5 re-asked verdicts (below 80%)"
    table = render_markdown([_agent_log("claude-code", 10.0), _agent_log("codex", 40.0, withheld=reason)])
    codex_row = next(line for line in table.splitlines() if "| codex" in line)
    assert "+40.0" not in codex_row and "withheld" in codex_row
    assert "+10.0 (-10.0 to +30.0)" in table


@pytest.mark.parametrize(
    "second, extra, message",
    [
        # The second agent's key (GEMINI_API_KEY) is missing.
        ("gemini-2.5-flash", [], "GEMINI_API_KEY"),
        # One --judge-model that is of the second agent's family.
        ("gpt-4o", ["--judge-model", "gpt-4.1"], "of the agent's family"),
    ],
)
def test_a_later_agent_that_cannot_run_stops_the_run_before_any_case(
    second, extra, message, server, monkeypatch, tmp_path, capsys
):
    """Each agent's set-up is checked before the first case of the first agent: otherwise the
    first agent's whole run is paid for, then the run exits 2 at the second."""
    monkeypatch.chdir(tmp_path)
    server.handler = lambda req: text(json.dumps({"passed": True, "reason": "fine"}))
    server.serve_sdks(monkeypatch, anthropic_key=KEYS["ANTHROPIC_API_KEY"], openai_key=KEYS["OPENAI_API_KEY"])
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    code = main(["run", str(EXAMPLE), "--adapter", "llm,agent", "--model", f"claude-haiku-4-5,{second}",
                 *extra, "--output", str(tmp_path / "results.json"), "--no-cache", "--quiet"])
    assert code == 2
    assert message in capsys.readouterr().err
    assert server.model_requests() == []


def test_an_agent_whose_runtime_says_must_use_a_skill_is_noted_under_the_table():
    """The OpenAI Agents SDK's own skill instructions say the model "must use" a matching skill:
    its trigger rate is partly that instruction, which the table says beside the other agents."""
    from skillab.agents.openai_agents import MUST_USE
    from skillab.reports.portability import render_terminal

    sdk = _agent_log("openai-agents", 10.0)
    sdk.settings.adapter.identity.update(skill_loading="lazy", skills_dir=".agents/skills", skill_prompt=MUST_USE)
    logs = [_agent_log("claude-code", 10.0), sdk]
    table, terminal = render_markdown(logs), render_terminal(logs)
    assert table.count('"must use"') == 1 and 'openai-agents: the OpenAI Agents SDK' in table
    assert "| lazy (.agents/skills) |" in table and "note: openai-agents:" in terminal
    assert '"must use"' not in render_markdown([_agent_log("claude-code", 10.0), _agent_log("codex", 5.0)])


def test_one_agent_whose_runtime_says_must_use_a_skill_is_noted_in_its_report():
    from skillab.agents.openai_agents import MUST_USE
    from skillab.reports.markdown import render_markdown as render_report

    sdk = _agent_log("openai-agents", 10.0)
    sdk.settings.adapter.identity.update(skill_prompt=MUST_USE)
    assert render_report([sdk]).count('"must use"') == 1
    assert '"must use"' not in render_report([_agent_log("claude-code", 10.0)])
