"""The agent's commands see their own workspace and nothing else of the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.isolation import detect_isolation
from skillab.sandbox.workspace import Workspace, run_in

needs_mount_ns = pytest.mark.skipif(
    not detect_isolation(choose_sandbox(None)).pid_namespace,
    reason="this host gives commands no mount namespace, so paths cannot be hidden",
)


@pytest.fixture
def arms(tmp_path: Path) -> tuple[Workspace, Workspace]:
    run_dir = tmp_path / "run"
    a, b = Workspace.create(run_dir, "with_skill"), Workspace.create(run_dir, "without_skill")
    a.write_files({"mine.txt": "arm A"})
    b.write_files({"theirs.txt": "arm B", ".skills/demo/SKILL.md": "secret instructions"})
    return a, b


@needs_mount_ns
def test_an_agent_command_cannot_reach_the_other_arm(arms, tmp_path):
    a, b = arms
    other = b.root / ".skills" / "demo" / "SKILL.md"
    result = run_in(a.root, f"cat mine.txt; cat {other}; ls -a ../..; find {tmp_path} 2>/dev/null; "
                            "true", timeout_s=30)
    assert "arm A" in result.stdout
    assert "secret instructions" not in result.stdout
    assert "theirs.txt" not in result.stdout
    assert b.root.parent.name not in result.stdout


@needs_mount_ns
def test_the_agent_still_writes_its_own_workspace(arms):
    a, _ = arms
    result = run_in(a.root, "echo written > out.txt && pwd", timeout_s=30)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(a.root.resolve())
    assert (a.root / "out.txt").read_text() == "written\n"


@needs_mount_ns
def test_hidden_paths_are_empty_to_the_agent(arms, tmp_path):
    a, _ = arms
    skill = tmp_path / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("the skill")
    result = run_in(a.root, f"cat {skill}/SKILL.md; ls -A {skill}; echo done", timeout_s=30,
                    hide=[skill])
    assert "the skill" not in result.stdout and "SKILL.md" not in result.stdout
    assert result.stdout.strip().endswith("done")
    assert (skill / "SKILL.md").read_text() == "the skill"  # hidden from the agent, not removed


def test_validators_and_setup_still_run_without_confinement(arms):
    a, _ = arms
    result = a.run("cat mine.txt", timeout_s=30)
    assert result.stdout == "arm A"
