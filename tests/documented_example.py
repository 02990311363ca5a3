"""An example's documented commands, run as a new user runs them: the scripted model in one
process, then the ``skillab`` command verbatim but for the mock's port and the results path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def documented(doc: str, *commands: str) -> bool:
    """Whether each command is in ``docs/<doc>`` as given (continuation lines joined)."""
    text = " ".join((ROOT / "docs" / doc).read_text().replace("\\\n", " ").split())
    return all(command in text for command in commands)


def start_mock(mock_command: str) -> tuple[subprocess.Popen[str], str]:
    """The mock on a free port, and the base URL it prints."""
    mock = subprocess.Popen([sys.executable, *mock_command.split()[1:], "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert mock.stdout is not None
    return mock, mock.stdout.readline().split()[-1]


def run_example(mock_command: str, example_command: str, documented_url: str, output: Path) -> dict[str, Any]:
    """Runs ``example_command`` (``VAR=value ... skillab run ...``) against the mock; asserts it
    exits 0 and returns the one case record it wrote."""
    mock, base_url = start_mock(mock_command)
    try:
        env_part, _, command = example_command.partition(" skillab ")
        env = {**os.environ, **dict(pair.split("=", 1) for pair in env_part.split())}
        env["PYTHONPATH"] = f"{env['PYTHONPATH']}:{os.environ.get('PYTHONPATH', '')}"
        argv = [sys.executable, "-m", "skillab", *command.replace(documented_url, base_url).split(),
                "--no-cache", "--no-history", "--output", str(output)]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = json.loads(output.read_text())["cases"]
    return record
