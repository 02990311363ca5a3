"""docs/real-model.md's recipe, run as written: its ``skillab serve-local`` command in one process,
its ``skillab run`` command in a shell beside it, on the example it names (copied, so the run's
files land in a scratch directory). The page's port is fixed, so a machine already serving on it
skips with that reason rather than testing someone else's server."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from skillab.commands.serve_local import DEFAULT_PORT

from .conftest import _why_skip

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "real-model.md"


def recipe() -> tuple[str, str]:
    """The page's serve command and run command, as its bash blocks hold them."""
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(), re.S)
    serve = [b.strip() for b in blocks if b.startswith("skillab serve-local")]
    run = [b.strip() for b in blocks if b.startswith("skillab run examples/team-facts")]
    assert len(serve) == 1 and len(run) == 1, "the recipe lost a block"
    return serve[0], run[0]


def test_the_recipe_is_the_commands_this_test_runs():
    serve, run = recipe()
    assert serve == "skillab serve-local"
    assert f"--base-url http://127.0.0.1:{DEFAULT_PORT}/v1" in run


def test_the_documented_recipe_runs_as_written(tmp_path):
    reason = _why_skip()
    if reason:
        pytest.skip(reason)
    with socket.socket() as sock:
        if sock.connect_ex(("127.0.0.1", DEFAULT_PORT)) == 0:
            pytest.skip(f"127.0.0.1:{DEFAULT_PORT}, the page's port, is already serving")
    serve, run = recipe()
    shutil.copytree(ROOT / "examples" / "team-facts", tmp_path / "examples" / "team-facts")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    server = subprocess.Popen(["bash", "-c", f"exec {serve}"], cwd=tmp_path, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=open(tmp_path / "serve.log", "w"))
    try:
        assert server.stdout is not None
        announced = server.stdout.readline()
        assert f"http://127.0.0.1:{DEFAULT_PORT}/v1" in announced, (tmp_path / "serve.log").read_text()
        done = subprocess.run(["bash", "-c", run], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 130
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "results.json").read_text())
    assert not [c for c in doc["cases"] for arm in ("with_skill", "without_skill") if c[arm]["errored"]]
    assert doc["statistics"]["lift_pts"] > 0, doc["statistics"]["summary"]
