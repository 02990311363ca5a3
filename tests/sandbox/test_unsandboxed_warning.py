"""A mock run on a host where bubblewrap does not work falls back to no sandbox: it says so
before its first case, with the install command (the CLI) or the input to set (the Action)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from ..skillgen import answers, grep_case, make_skill

NO_BWRAP = {"SKILLAB_BWRAP": "/nonexistent/bwrap"}


def test_the_cli_warns_before_the_first_case_with_the_install_command(tmp_path: Path):
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")],
                       responses={"a": answers("SKILLED", "no"), "b": answers("SKILLED", "no")})
    done = subprocess.run([sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
                           "--no-history", "--output", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **NO_BWRAP})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    warning = next(i for i, line in enumerate(lines) if "UNSANDBOXED" in line)
    first_case = next(i for i, line in enumerate(lines) if line.startswith("[1/2]"))
    assert warning < first_case
    assert "apt-get install bubblewrap" in lines[warning]


def test_the_action_warns_first_naming_the_input_to_set(tmp_path: Path, github):
    repo = tmp_path / "repo"
    make_skill(repo / "skills", [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    result = run_action(repo, event_name="workflow_dispatch", event_file="workflow_dispatch.json",
                        api_url=github.url, inputs={"adapter": "mock", "path": "skills"}, env=NO_BWRAP)
    assert result.code == 0, result.log
    warnings = [line for line in result.stdout.splitlines() if line.startswith("::warning::") and "UNSANDBOXED" in line]
    assert warnings, result.stdout
    assert "`sandbox: none` input" in warnings[0] and "--sandbox" not in warnings[0]
    assert result.stdout.index(warnings[0]) < result.stdout.index("skills/demo-skill")


def test_the_readme_quickstart_says_how_to_get_the_sandbox_it_claims():
    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("```", 1)[0]
    assert "sandboxed" in quickstart and "apt-get install bubblewrap" in quickstart
    assert "before its first case" in quickstart
