"""Run ``skillab action`` as a subprocess in the environment a container action gets.

GitHub starts the action's container with the checkout as ``GITHUB_WORKSPACE`` (and working
directory), the event payload on disk, ``INPUT_*`` variables for every input (defaults filled
in), and files for ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY``. The harness builds the same,
with ``GITHUB_API_URL`` pointing at the fake GitHub server.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillab.github.entrypoint import main
from skillab.github.inputs import INPUTS

from .fakes.github_server import GitHubServer

EVENTS = Path(__file__).parent / "events"
REPO = "octo-org/skills-repo"


@pytest.fixture
def github():
    """A fake GitHub REST API for one test."""
    with GitHubServer() as server:
        yield server


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """In-process runs keep their baseline cache out of the real home directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@dataclass
class ActionResult:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    workspace: Path

    @property
    def log(self) -> str:
        return self.stdout + self.stderr

    def results(self) -> dict:
        return json.loads((self.workspace / self.outputs["results-path"]).read_text())


def parse_output_file(text: str) -> dict[str, str]:
    """``GITHUB_OUTPUT`` as the runner reads it: ``name=value`` lines and ``name<<DELIM`` blocks."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


def run_action(
    workspace: Path,
    *,
    event_name: str,
    event_file: str,
    api_url: str,
    inputs: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    home: Path | None = None,
    in_process: bool = False,
) -> ActionResult:
    """Run the action once. ``in_process`` calls ``main`` with the same environment instead of
    starting a process (faster; for checks that do not depend on the process boundary)."""
    runner_dir = workspace.parent / f"runner-{event_name}"
    runner_dir.mkdir(exist_ok=True)
    output = runner_dir / "output"
    summary = runner_dir / "summary.md"
    for path in (output, summary):
        path.write_text("")
    home = home or workspace.parent / "home"
    home.mkdir(exist_ok=True)
    values = {spec.name: spec.default for spec in INPUTS}
    values["github-token"] = "write-token"
    values.update(inputs or {})
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(EVENTS / event_file),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_RUN_ID": "4242",
        "GITHUB_SHA": "9049f1265b7d61be4a8904a9a27120d2064dab3b",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(runner_dir),
    }
    environment.update({spec.env_name: values[spec.name] for spec in INPUTS})
    if os.environ.get("PYTHONPATH"):
        # The skillab under test: a checkout on PYTHONPATH wins over an editable install elsewhere.
        environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
    environment.update(env or {})
    if in_process:
        log = io.StringIO()
        code = main([], env=environment, stdout=log)
        stdout, stderr = log.getvalue(), ""
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "skillab", "action"],
            cwd=workspace,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    return ActionResult(
        code, stdout, stderr, parse_output_file(output.read_text()), summary.read_text(), workspace
    )
