"""Claude Code's `claude plugin eval` cases (format `claude-plugin-eval`), read from the schema the
pinned CLI (2.1.330) validates and graded as it grades them, on any agent skillab drives."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.errors import SuiteError
from skillab.formats.plugin_eval.graders import grade_plugin_case
from skillab.formats.plugin_eval.specs import CaseGrader, PluginCaseGrader, ToolRef
from skillab.grading.graders import GradingInput
from skillab.suite import load_suite

from ..node_cli import npm_binary

SKILL_MD = "---\nname: changelog\ndescription: Keep a Changelog entries.\n---\nGroup under ### Added.\n"


def plugin(root: Path, cases: dict[str, dict[str, str]]) -> Path:
    """A skills-dir plugin: SKILL.md, and evals/<case>/<file> for each case's files."""
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    for case, files in cases.items():
        for rel, text in files.items():
            (root / "evals" / case / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "evals" / case / rel).write_text(text)
    return root


CASE_YAML = {
    "schema_version": "1.0", "name": "added-entry", "tags": ["core"], "runs": 2,
    "execution": {"prompt": "Add the --json entry to CHANGELOG.md.", "max_turns": 7, "timeout_seconds": 90},
    "graders": [{"type": "regex", "name": "twice", "pattern": "json", "flags": "i", "match": "count:2"},
                {"type": "tool_used", "name": "skill-fired", "tool": "Skill"},
                {"type": "file_exists", "name": "no-stray", "path": "stray.txt", "exists": False, "weight": 2}],
}


def test_case_yaml_is_read_whole_runs_tags_turns_timeout_and_graders(tmp_path):
    root = plugin(tmp_path / "p", {"added-entry": {"case.yaml": yaml.safe_dump(CASE_YAML)}})
    suite = load_suite(root)
    assert suite.format == "claude-plugin-eval" and suite.path == root / "evals" and suite.skill_dir == root
    (case,) = suite.cases
    assert (case.name, case.tags, case.max_turns, case.timeout_s) == ("added-entry", ("core",), 7, 90.0)
    assert any("runs: 2" in w and "--runs 2" in w for w in suite.warnings)
    (spec,) = case.graders
    assert [(g.name, g.indicator, g.weight) for g in spec.graders] == [
        ("twice", False, 1.0), ("skill-fired", True, 1.0), ("no-stray", False, 2.0)]


def test_prompt_md_and_graders_md_lay_over_case_yaml_as_the_cli_does(tmp_path):
    root = plugin(tmp_path / "p", {"routing": {
        "case.yaml": yaml.safe_dump({**CASE_YAML, "name": "routing"}),
        "prompt.md": "---\nmax_turns: 4\ntags: [routing]\n---\nSearch for SSH hosts.\n",
        "graders/correct.md": "---\ntype: regex\ntarget: trace\nflags: i\n---\nhost\\.services.*ssh\n",
        "graders/notes.md": "Prose beside the graders, not a grader.\n"}})
    (case,) = load_suite(root).cases
    assert (case.prompt, case.max_turns, case.tags, case.timeout_s) == ("Search for SSH hosts.", 4, ("routing",), 90.0)
    graders = case.graders[0].graders
    assert [g.name for g in graders] == ["twice", "skill-fired", "no-stray", "correct"]
    assert (graders[-1].target, graders[-1].pattern) == ("trace", "host\\.services.*ssh")


def test_every_grader_with_only_is_scored_as_the_cli_scores_it(tmp_path):
    root = plugin(tmp_path / "p", {"c": {"prompt.md": "Do it.\n",
                                         "graders/fired.md": "---\ntype: tool_used\ntool: Skill\n---\n"}})
    (grader,) = load_suite(root).cases[0].graders[0].graders
    assert not grader.indicator


@pytest.mark.parametrize("files, message", [
    ({"case.yaml": yaml.safe_dump({**CASE_YAML, "schema_version": "2.0"})}, "newer than the 1.x"),
    ({"case.yaml": yaml.safe_dump({**CASE_YAML, "graders": [{"type": "shell", "name": "x"}]})}, "not one of regex"),
    ({"case.yaml": yaml.safe_dump({**CASE_YAML, "graders": [CASE_YAML["graders"][0]] * 2})}, 'duplicate grader name "twice"'),
    ({"prompt.md": "---\nmodel_name: x\n---\nDo it.\n", "graders/g.md": "---\ntype: llm\n---\nok\n"}, "unknown frontmatter key"),
    ({"prompt.md": "Do it.\n", "graders/g.md": "---\nweight: 1\n---\nok\n"}, 'frontmatter must include "type:"'),
    ({"case.yaml": yaml.safe_dump({**CASE_YAML, "execution": {"prompt": "p", "max_turns": 500}})}, "from 1 to 200"),
])
def test_each_problem_names_the_file_and_field(tmp_path, files, message):
    root = plugin(tmp_path / "p", {"c": files})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert message in str(caught.value)


def test_a_case_resuming_a_recorded_session_is_refused_in_one_line(tmp_path):
    doc = {**CASE_YAML, "context": {"history_file": "session.jsonl"}}
    (case,) = load_suite(plugin(tmp_path / "p", {"c": {"case.yaml": yaml.safe_dump(doc)}})).cases
    assert "context.history_file" in case.unsupported and "claude plugin eval" in case.unsupported


def test_the_blank_case_the_pinned_cli_writes_is_refused_until_it_is_filled(tmp_path):
    claude = npm_binary("SKILLAB_CLAUDE_BIN", "claude", "@anthropic-ai/claude-code")
    root = tmp_path / "p"
    root.mkdir()
    (root / "SKILL.md").write_text(SKILL_MD)
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    made = subprocess.run([claude, "plugin", "eval", "init", "--bare", "blank"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert (root / "evals" / "blank" / "prompt.md").is_file()
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    text = str(caught.value)
    assert "blank `init` template" in text and "execution.prompt" in text
    # Filled in, the same files load: the CLI's own frontmatter (max_turns, allowed_tools) is read.
    prompt = root / "evals" / "blank" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("TODO: describe what the agent should do", "Write a haiku."))
    criteria = root / "evals" / "blank" / "graders" / "criteria.md"
    criteria.write_text(criteria.read_text().replace("TODO: describe what a successful response looks like",
                                                     "A haiku of three lines."))
    (case,) = load_suite(root).cases
    assert case.prompt == "Write a haiku." and case.max_turns == 10 and case.graders[0].graders[0].type == "llm"


def grading(workspace, *, final="", transcript="", calls=(), activated=None) -> GradingInput:
    return GradingInput(workspace=workspace, prompt="p", final_output=final, transcript=transcript,
                        tool_calls=tuple(calls), skill_activated=activated)


def test_tool_graders_read_the_agents_calls_under_claude_codes_names(workspace):
    spec = PluginCaseGrader((
        CaseGrader("wrote", "tool_used", tool=ToolRef("Write")),
        CaseGrader("no-rm", "tool_used", tool=ToolRef("Bash", r"rm -rf"), minimum=0, maximum=0),
        CaseGrader("read-first", "tool_order", before=ToolRef("Read"), after=ToolRef("Write")),
        CaseGrader("fired", "tool_used", indicator=True, tool=ToolRef("Skill")),
    ))
    calls = [("read_file", '{"path": "a"}'), ("run_shell", '{"command": "ls"}'), ("write_file", '{"path": "b"}')]
    result = grade_plugin_case(spec, grading(workspace, calls=calls, activated=True))
    assert result.passed and result.score == 1.0
    assert "Skill called 1x" in result.dimensions[-1].reason  # opened another way: one use
    rm = [*calls, ("run_shell", '{"command": "rm -rf /tmp/x"}')]
    assert not grade_plugin_case(spec, grading(workspace, calls=rm)).passed
    swapped = [calls[2], calls[0]]
    late = grade_plugin_case(spec, grading(workspace, calls=swapped))
    assert not late.passed and "does NOT precede" in late.dimensions[2].reason


def test_regex_targets_flags_and_counts_and_a_weighted_score(workspace):
    (workspace.root / "CHANGELOG.md").write_text("### Added\n- json\n")
    spec = PluginCaseGrader((
        CaseGrader("two", "regex", pattern="json", flags="gi", match="count:2"),
        CaseGrader("file", "regex", target="file", target_file="CHANGELOG.md", pattern="^### added", flags="im",
                   weight=3.0),
        CaseGrader("quiet", "regex", target="trace", pattern="sorry", match="not_contains"),
    ))
    result = grade_plugin_case(spec, grading(workspace, final="JSON and json", transcript="ok"))
    assert result.passed and result.score == 1.0
    once = grade_plugin_case(spec, grading(workspace, final="json", transcript="ok"))
    assert not once.passed and once.score == 0.8  # 4 of 5 weight
    mocked = PluginCaseGrader((CaseGrader("mock", "regex", target="mock_calls", pattern="x"),))
    refused = grade_plugin_case(mocked, grading(workspace))
    assert refused.errored and "MCP mocks" in refused.reason


def test_a_plugin_runs_ab_with_the_mock_agent_and_reports_each_grader(tmp_path):
    root = plugin(tmp_path / "p", {"added-entry": {"case.yaml": yaml.safe_dump(CASE_YAML)}})
    (root / "mock-responses.yaml").write_text(yaml.safe_dump({"added-entry": {
        "with": "Added the json flag; see --json.", "without": {"text": "json", "files": {"stray.txt": "x"}}}}))
    out = tmp_path / "r.json"
    assert main(["run", str(root), "--adapter", "mock", "--no-history", "--no-cache", "--quiet",
                 "--output", str(out)]) == 0
    (record,) = json.loads(out.read_text())["cases"]
    assert record["outcome"] == "flip_to_pass"
    (without,) = record["without_skill"]["extra"]["graders"]
    assert without["score"] == 0.0 and "skill-fired [with-only, not scored]" in [d["name"] for d in without["dimensions"]]


# --- host-side graders read only regular files inside the arm's workspace --------------------

CANARY = "CANARY-5e1d-host-key"


def host_secret(tmp_path: Path) -> Path:
    host = tmp_path / "host"
    host.mkdir()
    (host / "key").write_text(CANARY + "\n")
    return host


@pytest.mark.parametrize("rel", ["key", "d/key"])
def test_a_link_the_agent_leaves_gets_no_host_content_into_any_grader(workspace, tmp_path, rel):
    from .test_graders import Recording

    host = host_secret(tmp_path)
    if rel == "key":
        os.symlink(host / "key", workspace.root / "key")  # the last component a link
    else:
        os.symlink(host, workspace.root / "d")  # a folder on the way a link
    judge_model = Recording(lambda system, user: '{"passed": true, "reason": "ok"}')
    spec = PluginCaseGrader((
        CaseGrader("probe", "regex", target="file", target_file=rel, pattern=r"^CANARY-5"),
        CaseGrader("there", "file_exists", path=rel),
        CaseGrader("focus", "llm", target="file", target_file=rel, criteria="Looks right."),
    ))
    from skillab.grading.judge import Judge

    result = grade_plugin_case(spec, GradingInput(workspace=workspace, prompt="p", final_output="", transcript="",
                                                  judge=Judge(judge_model)))
    assert not result.passed
    assert all(CANARY not in user for _system, user in judge_model.calls)
    assert CANARY not in json.dumps([result.reason, [(d.name, d.reason, d.score) for d in result.dimensions]])
    assert "probe" not in [d.name for d in result.dimensions if d.score]  # the regex never matched it
    assert "there" not in [d.name for d in result.dimensions if d.score]  # a link is not a file there


def test_a_regex_target_file_is_read_as_a_bounded_prefix(workspace):
    from skillab.formats.plugin_eval.graders import FILES_MAX_CHARS

    (workspace.root / "big.txt").write_text("a" * (FILES_MAX_CHARS + 10) + "TAIL")
    spec = PluginCaseGrader((CaseGrader("tail", "regex", target="file", target_file="big.txt", pattern="TAIL",
                                        match="not_contains"),))
    assert grade_plugin_case(spec, grading(workspace)).passed  # past the cap is never read


def test_a_redos_pattern_ends_in_an_error_within_seconds(workspace):
    import time

    (workspace.root / "target.txt").write_text("a" * 100_000 + "!")
    spec = PluginCaseGrader((CaseGrader("redos", "regex", target="file", target_file="target.txt",
                                        pattern=r"^(a+)+$"),))
    started = time.monotonic()
    result = grade_plugin_case(spec, grading(workspace))
    assert time.monotonic() - started < 30
    assert result.errored and "redos" in result.reason and "timed out" in result.reason


@pytest.mark.parametrize("grader,field", [
    ({"type": "regex", "name": "r", "pattern": "x", "target": {"source": "file", "path": "/etc/passwd"}}, "target"),
    ({"type": "regex", "name": "r", "pattern": "x", "target": {"source": "file", "path": "../up/key"}}, "target"),
    ({"type": "llm", "name": "l", "criteria": "ok", "focus": {"path": "/proc/self/environ"}}, "focus"),
    ({"type": "file_exists", "name": "f", "path": "/root/.ssh/id_rsa"}, "path"),
    ({"type": "file_exists", "name": "f", "path": "a/../../b"}, "path"),
])
def test_a_grader_path_outside_the_workspace_is_refused_by_validate(tmp_path, capsys, grader, field):
    case = {"schema_version": "1.0", "name": "c", "execution": {"prompt": "p"}, "graders": [grader]}
    root = plugin(tmp_path / "p", {"c": {"case.yaml": yaml.safe_dump(case)}})
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"graders[0].{field}" in err and "inside the workspace" in err and "Traceback" not in err


def test_a_stop_request_ends_a_redos_pattern_at_once(workspace):
    import threading
    import time

    from skillab.sandbox.process import allow_commands, stop_all_commands

    (workspace.root / "target.txt").write_text("a" * 100_000 + "!")
    spec = PluginCaseGrader((CaseGrader("redos", "regex", target="file", target_file="target.txt",
                                        pattern=r"^(a+)+$"),))
    threading.Timer(1.0, stop_all_commands).start()
    started = time.monotonic()
    try:
        result = grade_plugin_case(spec, grading(workspace))
    finally:
        allow_commands()
    assert time.monotonic() - started < 4  # well inside the 5 s timeout: the stop killed it
    assert result.errored and "killed" in result.reason
