"""Each arm's disk budget on a disk workspace (issue #23): the attack is a suite or agent command
writing far past it. Files on a disk are page cache, which a memory cgroup reclaims rather than
refuses, so only the arm's size-limited tmpfs (``sandbox.disk_budget``) stops it.

skillab runs as a program of its own here: it takes its private mount namespace at start, while
it is one thread, which the test process (not one thread) cannot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from skillab.sandbox.backend import choose_sandbox

pytestmark = pytest.mark.skipif(
    choose_sandbox(None).backend.name != "bwrap", reason=f"bwrap does not work here: {choose_sandbox(None).reason}"
)
BUDGET_MB = 64


def run_skill(tmp_path: Path, case: dict, **env: str) -> dict:
    skill = tmp_path / "disk-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: disk-skill\ndescription: d\n---\nWrite files.\n")
    (skill / "eval.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    disk = tmp_path / "disk-workspaces"
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-history",
         "--cache-dir", str(tmp_path / "cache"), "--output", str(out), "--quiet"],
        env={**os.environ, "SKILLAB_WORKSPACE_DIR": str(disk), "SKILLAB_SANDBOX_DISK_MB": str(BUDGET_MB), **env},
        capture_output=True, text=True, timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )
    assert out.is_file(), done.stderr[-2000:]
    return json.loads(out.read_text())


def test_commands_of_an_arm_cannot_write_past_its_disk_budget(tmp_path):
    # Three commands, each trying 300 MB in a file of its own; the validator measures what stayed.
    case = {
        "name": "fill-the-disk",
        "prompt": "Say hi.",
        "setup": [*(f"head -c 300M /dev/zero > big{n} || true" for n in range(3)),
                  "n=$(du -sm . | cut -f1); rm -f big*; echo $n > size"],
        "validators": [{"label": f"under {BUDGET_MB + 2} MB", "cmd": f"cat size; test $(cat size) -le {BUDGET_MB + 2}"}],
    }
    doc = run_skill(tmp_path, case)
    [record] = doc["cases"]
    for arm in ("with_skill", "without_skill"):
        result = record[arm]["validator_results"][0]
        assert result["passed"], (arm, result["stdout"], result["stderr"], record[arm].get("error"))
    assert doc["isolation"]["guarantees"]["limits"]["disk"].startswith(f"{BUDGET_MB} MiB per arm")
    assert not any((tmp_path / "disk-workspaces").glob("*/*/workspace/big0"))  # nothing left behind


def test_an_arm_that_fills_its_budget_is_errored_with_a_clear_reason(tmp_path):
    case = {"name": "full", "prompt": "Say hi.", "setup": ["head -c 300M /dev/zero > big || true"],
            "validators": [{"cmd": "true"}]}
    doc = run_skill(tmp_path, case)
    [record] = doc["cases"]
    assert record["outcome"] == "error"
    assert f"disk budget of {BUDGET_MB} MiB" in record["with_skill"]["error"], record["with_skill"]["error"]


def test_a_budget_of_zero_says_the_workspace_is_unbounded(tmp_path):
    case = {"name": "small", "prompt": "Say hi.", "validators": [{"cmd": "true"}]}
    doc = run_skill(tmp_path, case, SKILLAB_SANDBOX_DISK_MB="0")
    assert doc["isolation"]["guarantees"]["limits"]["disk"].startswith("NOT bounded per arm: turned off")


def test_a_trigger_trials_commands_cannot_write_past_its_disk_budget(tmp_path):
    # The trial's agent runs three commands of 300 MB each, then measures what stayed.
    from ..fakes.model_server import FakeModelServer, text, tool_call

    fill = "; ".join(f"head -c 300M /dev/zero > big{n} || true" for n in range(3))

    def reply(req):
        if not req.tool_results:
            return tool_call("run_shell", {"command": f"{fill}; du -sm . | cut -f1; rm -f big*"})
        return text("done")

    skill = tmp_path / "disk-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: disk-skill\ndescription: d\n---\nWrite files.\n")
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps([{"query": "Fill it", "should_trigger": True}]))
    out = tmp_path / "results.json"
    with FakeModelServer(reply) as server:
        done = subprocess.run(
            [sys.executable, "-m", "skillab", "run", str(skill), "--model", "claude-haiku-4-5", "--no-history",
             "--no-cache", "--output", str(out), "--quiet"],
            env={**os.environ, "ANTHROPIC_API_KEY": "sk-ant-api03-" + "D1sk" * 10, "ANTHROPIC_BASE_URL": server.url,
                 "SKILLAB_WORKSPACE_DIR": str(tmp_path / "disk-workspaces"),
                 "SKILLAB_SANDBOX_DISK_MB": str(BUDGET_MB)},
            capture_output=True, text=True, timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL,
        )
        looks = [r.tool_results[0] for r in server.model_requests() if r.tool_results]
    assert out.is_file(), done.stderr[-2000:]
    assert json.loads(out.read_text())["triggers"]["trials"] == 1
    [look] = looks
    kept = int(look.split("stdout:\n", 1)[1].split()[0])
    assert kept <= BUDGET_MB + 2, look
