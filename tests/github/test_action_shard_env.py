"""The composite Action hands a matrix shard's settings to the container: SKILLAB_SHARD_INDEX and
_COUNT (``--shard auto``), SKILLAB_BUDGET_URL and the run token reach ``skillab action`` by name
(``docker run -e NAME``), so no value, the token least of all, is on docker's command line."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "matrix-budget-token-" + "M" * 20

FAKE_DOCKER = """#!/bin/sh
printf '%s\\n' "$@" > "$DOCKER_ARGV"
"""


def test_the_launcher_passes_the_shard_and_budget_variables_by_name(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    commands = tmp_path / "_runner_file_commands"
    commands.mkdir()
    event = tmp_path / "_github_workflow" / "event.json"
    event.parent.mkdir()
    event.write_text("{}")
    argv_file = tmp_path / "argv"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "RUNNER_TEMP": str(tmp_path),
           "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_EVENT_PATH": str(event),
           "GITHUB_OUTPUT": str(commands / "set_output"), "SKILLAB_IMAGE": "skillab:test",
           "DOCKER_ARGV": str(argv_file), "SKILLAB_SHARD_INDEX": "2", "SKILLAB_SHARD_COUNT": "4",
           "SKILLAB_BUDGET_URL": "http://10.1.2.3:8765", "SKILLAB_BUDGET_TOKEN": TOKEN,
           "INPUT_SHARD": "auto"}
    subprocess.run(["bash", str(ROOT / "docker" / "run-action.sh")], env=env, check=True, timeout=60)
    argv = argv_file.read_text().splitlines()
    passed = {argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "-e"}
    assert {"SKILLAB_SHARD_INDEX", "SKILLAB_SHARD_COUNT", "SKILLAB_BUDGET_URL", "SKILLAB_BUDGET_TOKEN",
            "INPUT_SHARD"} <= passed
    assert TOKEN not in "\n".join(argv) and "10.1.2.3" not in "\n".join(argv)
