"""Exit codes users can trust, through the installed ``skillab`` console script: usage errors
exit 2 before any case runs, a run that measured nothing exits 1, and ``--help`` teaches."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .skillgen import answers, grep_case, make_skill

SKILLAB = str(Path(sys.executable).parent / "skillab")


def skillab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([SKILLAB, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return make_skill(tmp_path, [grep_case("alpha"), grep_case("beta")],
                      responses={"alpha": answers("SKILLED", "plain"), "beta": answers("SKILLED", "x")})


def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("not a directory")
    return path


BAD_DESTINATIONS = {
    "--junit under /proc": (lambda t: ["--junit", "/proc/x.xml"], "/proc/x.xml"),
    "--output is a directory": (lambda t: ["--output", str(t)], "is a directory"),
    "--markdown under a file": (lambda t: ["--markdown", str(a_file(t) / "r.md")], "is a file"),
    "--html under /proc": (lambda t: ["--html", "/proc/sub/r.html"], "/proc"),
    "--trajectories is a file": (lambda t: ["--trajectories", str(a_file(t))], "not a directory"),
    "--cache-dir is a file": (lambda t: ["--cache-dir", str(a_file(t))], "--cache-dir"),
    "--cache-dir under /proc": (lambda t: ["--cache-dir", "/proc/skillab-cache"], "--cache-dir"),
    "nan --min-delta-pts": (lambda t: ["--min-delta-pts", "nan"], "finite"),
    "inf --max-cost-usd": (lambda t: ["--max-cost-usd", "inf"], "finite"),
    "negative --max-cost-usd": (lambda t: ["--max-cost-usd", "-1"], "greater than zero"),
}


@pytest.mark.parametrize("name", list(BAD_DESTINATIONS))
def test_usage_errors_exit_2_before_any_case_runs(tmp_path, skill, name):
    make, expected = BAD_DESTINATIONS[name]
    work = tmp_path / "work"
    work.mkdir()
    proc = skillab("run", str(skill), "--adapter", "mock", "--no-history", *make(work), cwd=work)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr
    # Nothing ran: no progress line, no results document.
    assert "[1/" not in proc.stderr and not (work / "results.json").exists()


def test_a_mock_key_that_names_no_case_is_an_error_with_a_suggestion(tmp_path, skill):
    (skill / "mock-responses.yaml").write_text(yaml.safe_dump({
        "alpha": answers("SKILLED", "plain"), "betta": answers("SKILLED", "x")}))
    proc = skillab("run", str(skill), "--adapter", "mock", "--no-history", cwd=tmp_path)
    assert proc.returncode == 2
    assert "'betta' (did you mean 'beta'?)" in proc.stderr
    assert not (tmp_path / "results.json").exists()


def test_a_run_that_measured_nothing_exits_1_unless_allowed(tmp_path):
    skill = make_skill(tmp_path, [grep_case("broken", setup=["exit 3"])],
                       responses={"broken": answers("SKILLED", "x")})
    proc = skillab("run", str(skill), "--adapter", "mock", "--no-history", cwd=tmp_path)
    assert proc.returncode == 1
    assert "skillab: gate failed: demo-skill: verdict is error" in proc.stderr
    # The reason is on the terminal, after the table.
    assert "why cases failed" in proc.stdout and "setup failed" in proc.stdout
    allowed = skillab("run", str(skill), "--adapter", "mock", "--no-history", "--allow-error-verdict",
                      cwd=tmp_path)
    assert allowed.returncode == 0


def test_every_written_file_is_announced_in_one_style(tmp_path, skill):
    proc = skillab("run", str(skill), "--adapter", "mock", "--no-history", "--junit", "out/j.xml",
                   "--markdown", "out/r.md", "--html", "out/r.html", "--trajectories", "out/t",
                   "--output", "out/results.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for announced in ("wrote out/j.xml", "wrote out/r.md", "wrote out/r.html", "wrote out/t/",
                      "wrote out/results.json"):
        assert f"skillab: {announced}" in proc.stderr
    # One prefix for every message line on stderr (progress lines are [n/N]).
    for line in proc.stderr.splitlines():
        assert line.startswith(("skillab: ", "[")), line


def test_why_cases_failed_names_the_validator_and_its_output(tmp_path):
    case = grep_case("loud", validators=[{"label": "says SKILLED", "cmd": "echo 'looked for SKILLED'; "
                                          "cat response.txt; exit 1"}])
    skill = make_skill(tmp_path, [case], responses={"loud": answers("the final words", "x")})
    proc = skillab("run", str(skill), "--adapter", "mock", "--no-history", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0  # fail_kept is a measurement, not a gate
    why = proc.stdout.split("why cases failed", 1)[1]
    assert "loud: fail_kept" in why
    assert "validator 'says SKILLED': exit 1, expected 0" in why
    assert "| the final words" in why
    assert "without skill" not in why  # -v adds the other arm
    verbose = skillab("run", str(skill), "--adapter", "mock", "--no-history", "--quiet", "-v", cwd=tmp_path)
    assert "without skill:" in verbose.stdout.split("why cases failed", 1)[1]


def test_run_help_documents_every_option_its_default_and_the_exit_codes(tmp_path):
    proc = skillab("run", "--help", cwd=tmp_path)
    assert proc.returncode == 0
    from skillab.cli import build_parser

    run = build_parser()._subparsers._group_actions[0].choices["run"]
    for action in run._actions:
        assert action.help, f"{action.option_strings or action.dest} has no help"
        if action.default not in (None, False, [], argparse_suppress()) and action.option_strings:
            assert "default" in action.help, f"{action.option_strings} does not state its default"
    text = proc.stdout
    for needed in ("exit codes:", "130", "--allow-error-verdict", "examples:", "efficiency",
                   "both-correct", "trigger-only", "contaminated", "A[,B...]", "gemini-cli"):
        assert needed in text, needed
    for command in ("report", "diff", "init", "validate"):
        sub = skillab(command, "--help", cwd=tmp_path)
        assert sub.returncode == 0 and "exit codes:" in sub.stdout, command


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


def test_readme_quickstart_exports_every_key_its_commands_need():
    root = Path(__file__).parent.parent
    readme = (root / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh|console)?\n(.*?)```", readme, re.S)
    for block in blocks:
        if "--model" in block and "--judge-model gpt" in block:
            assert "OPENAI_API_KEY" in block and "ANTHROPIC_API_KEY" in block, block
    concepts = (root / "docs" / "concepts.md").read_text()
    for term in ("efficiency", "both-correct", "trigger-only", "contaminated"):
        assert re.search(rf"\*\*`?{term}`?\*\*", concepts), f"docs/concepts.md does not define {term}"


def test_report_rerenders_and_checks_its_paths(tmp_path, skill):
    assert skillab("run", str(skill), "--adapter", "mock", "--no-history", "--quiet",
                   cwd=tmp_path).returncode == 0
    proc = skillab("report", "results.json", "--markdown", "r.md", "--junit", "j.xml", "--html", "r.html",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "alpha" in proc.stdout and "pass rate" in proc.stdout
    assert "skillab · demo-skill" in (tmp_path / "r.md").read_text() or \
        "demo-skill" in (tmp_path / "r.md").read_text()
    assert "<testsuite" in (tmp_path / "j.xml").read_text()
    assert "<svg" in (tmp_path / "r.html").read_text()
    assert skillab("report", "nope.json", cwd=tmp_path).returncode == 2
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    bad = skillab("report", "bad.json", cwd=tmp_path)
    assert bad.returncode == 2 and "not a skillab results document" in bad.stderr
    assert skillab("report", "results.json", "--junit", "/proc/j.xml", cwd=tmp_path).returncode == 2


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(tmp_path):
    # `skillab validate . | head -1`: the reader has gone by the time skillab writes.
    make_skill(tmp_path / "s", [grep_case("alpha")], responses={"alpha": answers("SKILLED", "x")})
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        writer = subprocess.run([SKILLAB, "validate", str(tmp_path)], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, timeout=120)
    finally:
        os.close(write_end)
    assert "Traceback" not in writer.stderr
    assert writer.returncode == 141


def test_a_case_selection_that_names_no_case_suggests_the_close_one(tmp_path):
    skill = make_skill(tmp_path, [grep_case("bugfix-entry")], responses={"bugfix-entry": answers("SKILLED", "x")})
    proc = skillab("run", str(skill), "--adapter", "mock", "--no-history", "--case", "bugfix-entr", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no case named 'bugfix-entr' (did you mean 'bugfix-entry'?)" in proc.stderr
