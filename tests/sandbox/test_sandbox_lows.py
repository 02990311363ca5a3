"""The low findings of issue #23 on the sandbox side, each as the attack: a token in an ``LC_``
variable, root-only files under ``/etc``, a relative PATH entry, a FIFO among the skill's files."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.workspace import Workspace, run_in

TOKEN = "ghp_" + "LocaleSmuggled" * 3
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "changelog-entry"
needs_bwrap = pytest.mark.skipif(
    choose_sandbox(None).backend.name != "bwrap", reason=f"bwrap does not work here: {choose_sandbox(None).reason}"
)


def test_only_locale_categories_with_locale_values_reach_a_command(tmp_path, monkeypatch):
    monkeypatch.setenv("LC_MY_PAT", TOKEN)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("LC_TIME", f"en_US.UTF-8 {TOKEN}")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    workspace = Workspace.create(tmp_path, "arm")
    env = workspace.env()
    assert "LC_MY_PAT" not in env and "LC_TIME" not in env
    assert env["LC_ALL"] == "C.UTF-8" and env["LANG"] == "en_US.UTF-8"
    result = run_in(workspace.root, "env", timeout_s=20)
    assert TOKEN not in result.stdout and "LC_ALL=C.UTF-8" in result.stdout


def test_a_relative_path_entry_never_finds_a_program_in_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f".:bin::{os.environ['PATH']}")
    workspace = Workspace.create(tmp_path, "arm")
    (workspace.root / "bin").mkdir()
    for rel in ("python3", "bin/python3"):
        planted = workspace.root / rel
        planted.write_text("#!/bin/sh\necho planted\n")
        planted.chmod(0o755)
    result = run_in(workspace.root, "python3 -c 'print(\"real\")'", timeout_s=20)
    assert result.stdout.strip() == "real", result
    assert all(entry.startswith("/") for entry in workspace.env()["PATH"].split(":"))


@needs_bwrap
@pytest.mark.skipif(not os.path.exists("/etc/shadow"), reason="no /etc/shadow here")
def test_files_only_root_may_read_under_etc_are_not_in_view(tmp_path):
    unreadable = [p for p in ("/etc/shadow", "/etc/gshadow")
                  if os.path.exists(p) and not os.stat(p).st_mode & stat.S_IROTH]
    assert unreadable, "no root-only file to look for"
    workspace = Workspace.create(tmp_path, "arm")
    result = run_in(workspace.root, f"cat {' '.join(unreadable)}; echo END; head -c 4 /etc/passwd",
                    timeout_s=20)
    assert result.stdout.startswith("END\n"), result  # covered: empty, not refused
    assert result.stdout.endswith("root"), result  # what everyone may read stays
    if os.path.isdir("/etc/ssl/private") and os.listdir("/etc/ssl/private"):
        listing = run_in(workspace.root, "ls -A /etc/ssl/private", timeout_s=20)
        assert listing.stdout.strip() == "", listing


@needs_bwrap
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_among_the_skills_files_is_skipped_with_a_warning(tmp_path):
    skill = tmp_path / "changelog-entry"
    shutil.copytree(EXAMPLE, skill)
    os.mkfifo(skill / "scripts" / "pipe")
    done = subprocess.run(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-history",
         "--cache-dir", str(tmp_path / "cache"), "--output", str(tmp_path / "results.json")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "scripts/pipe: not a regular file" in done.stdout + done.stderr
