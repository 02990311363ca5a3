"""A run's workspaces live on a tmpfs with room when there is one, and never outlive the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile

import pytest

from skillab.sandbox import scratch
from skillab.sandbox.scratch import SCRATCH_ENV, roomy_tmpfs, run_scratch, sweep_dead_runs

from ..signals import signal_when
from ..skillgen import answers, grep_case, make_skill


def test_a_tmpfs_with_room_holds_the_workspaces(monkeypatch):
    monkeypatch.delenv(SCRATCH_ENV, raising=False)
    if not roomy_tmpfs(scratch.TMPFS):
        pytest.skip(f"{scratch.TMPFS} is not a tmpfs with {scratch.MIN_FREE >> 30} GiB free here")
    with run_scratch() as directory:
        assert directory.parent == scratch.TMPFS
        assert directory.stat().st_mode & 0o777 == 0o700
    assert not directory.exists()


def test_a_tmpfs_without_room_is_not_used(monkeypatch, tmp_path):
    monkeypatch.delenv(SCRATCH_ENV, raising=False)
    monkeypatch.setattr(scratch, "MIN_FREE", 1 << 60)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with run_scratch() as directory:
        assert directory.parent == tmp_path


def test_the_environment_names_the_parent(monkeypatch, tmp_path):
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path / "disk"))
    with run_scratch() as directory:
        assert directory.parent == tmp_path / "disk"
    assert list((tmp_path / "disk").iterdir()) == []


def test_the_scratch_of_a_killed_run_is_removed_by_the_next_and_a_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    left = tmp_path / f"skillab-run-{dead.stdout.strip()}-abc123"
    (left / "arm-x" / "workspace").mkdir(parents=True)
    (left / "arm-x" / "workspace" / "big.bin").write_bytes(b"x" * 1024)
    os.chmod(left / "arm-x" / "workspace", 0o500)  # read-only, as a command may leave it
    live = tmp_path / f"skillab-run-{os.getpid()}-def456"
    live.mkdir()
    other = tmp_path / "skillab-run-notapid"
    other.mkdir()
    assert sweep_dead_runs(tmp_path) == 1
    assert not left.exists() and live.exists() and other.exists()


def test_an_interrupted_run_leaves_no_workspace_behind(tmp_path):
    names = [f"c{i:02d}" for i in range(20)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out, parent = tmp_path / "results.json", tmp_path / "workspaces"
    env_before = os.environ.get(SCRATCH_ENV)
    os.environ[SCRATCH_ENV] = str(parent)
    try:
        code, _, stderr = signal_when(
            [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
             "--mock-latency-ms", "150", "--concurrency", "2", "--output", str(out), "--quiet"],
            lambda: parent.exists() and any(parent.iterdir()) and (tmp_path / "results.checkpoint.jsonl").exists(),
            sig=signal.SIGTERM, what="the run never made its scratch directory")
    finally:
        if env_before is None:
            os.environ.pop(SCRATCH_ENV, None)
        else:
            os.environ[SCRATCH_ENV] = env_before
    assert code == 130, stderr
    assert list(parent.iterdir()) == []
