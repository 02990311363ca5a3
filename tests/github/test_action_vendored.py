"""The Action used from a vendored copy (`uses: ./.github/actions/skillab`), before any release
exists: the copy made as docs/action.md says, the workflow ``skillab init`` writes for it, and the
step GitHub runs from it, building the image from the copy's own Dockerfile."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from skillab.cli import main

from .test_action_composite import FAKE_DOCKER, container_env, evaluate, options

ROOT = Path(__file__).resolve().parent.parent.parent


def vendor(workspace: Path) -> Path:
    """docs/action.md's recipe: a copy of the skillab repository's files at .github/actions/skillab."""
    target = workspace / ".github" / "actions" / "skillab"
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True,
                             check=True).stdout.split("\0")
    for rel in filter(None, tracked):
        source = ROOT / rel
        if source.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    return target


@pytest.mark.parametrize(("variant", "dockerfile"), [("", "Dockerfile"), ("/claude-code", "claude-code.Dockerfile")],
                         ids=["slim", "claude-code"])
def test_a_vendored_copy_is_what_init_writes_and_its_step_builds_from_the_copy(tmp_path, variant, dockerfile):
    workspace = tmp_path / "workspace"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    copy = vendor(workspace)
    ref = ["--action-ref", f"./.github/actions/skillab{variant}"] if variant else []
    assert main(["init", str(workspace / "skills" / "mine"), *ref]) == 0
    steps = yaml.safe_load((workspace / ".github" / "workflows" / "skillab.yml").read_text())["jobs"]["skillab"]["steps"]
    [ours] = [s for s in steps if str(s.get("uses", "")).startswith("./")]
    assert ours["uses"] == f"./.github/actions/skillab{variant}"
    # GitHub resolves a local action against the workspace and runs the action.yml it finds there.
    action_dir = (workspace / ours["uses"]).resolve()
    assert action_dir == (copy / variant.lstrip("/")).resolve()
    [step] = yaml.safe_load((action_dir / "action.yml").read_text())["runs"]["steps"]
    bin_dir, log = tmp_path / "bin", tmp_path / "docker-calls"
    bin_dir.mkdir()
    log.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    commands = tmp_path / "_temp" / "_runner_file_commands"
    commands.mkdir(parents=True)
    (tmp_path / "_temp" / "event.json").write_text("{}")
    with_ = {k: str(v) for k, v in ours["with"].items()}
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": "/home/runner", "CI": "true",
        "RUNNER_TEMP": str(tmp_path / "_temp"), "GITHUB_ACTION_PATH": str(action_dir),
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_REPOSITORY": "acme/skills",
        "GITHUB_EVENT_PATH": str(tmp_path / "_temp" / "event.json"), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_OUTPUT": str(commands / "set_output_1"), "GITHUB_STEP_SUMMARY": str(commands / "step_summary_1"),
        "GITHUB_API_URL": "https://api.github.com", "DOCKER_LOG": str(log),
        **evaluate(step["env"], with_, action_dir),
    }
    done = subprocess.run([step["shell"], "-c", step["run"]], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = sorted(log.glob("*.argv"), key=lambda p: int(p.stem))
    build, run = (p.read_bytes().decode().split("\0")[:-1] for p in calls)
    assert build[0] == "build" and Path(build[-1]).resolve() == copy.resolve()
    assert Path(options(build, "--file")[0]).resolve() == copy.resolve() / dockerfile
    assert run[0] == "run" and run[-1] == "skillab-action:local"
    docker_env = dict(kv.split("=", 1) for kv in (log / f"{calls[1].stem}.env").read_bytes().decode().split("\0") if "=" in kv)
    inside = container_env(run, docker_env)
    assert inside["INPUT_PATH"] == "skills" and inside["INPUT_CACHE-DIR"] == ".skillab/cache"
