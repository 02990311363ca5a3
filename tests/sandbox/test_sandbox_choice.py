"""--sandbox: bwrap by default, none only by name and then reported unsandboxed, fail closed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.reports.markdown import render_markdown
from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.bwrap import BWRAP_ENV

from ..skillgen import answers, grep_case, make_skill

bwrap_works = pytest.mark.skipif(choose_sandbox(None).backend.name != "bwrap" and choose_sandbox(None).fallback,
                                 reason="bwrap does not work on this host")


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "plain")})


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setenv(BWRAP_ENV, "/nonexistent/bwrap")
    yield
    monkeypatch.delenv(BWRAP_ENV)


def run(args: list[str], tmp_path: Path) -> tuple[int, dict | None]:
    out = tmp_path / "r.json"
    code = main(["run", *args, "--no-history", "--no-cache", "--quiet", "--output", str(out)])
    return code, json.loads(out.read_text()) if out.exists() else None


@bwrap_works
def test_bwrap_is_the_default_and_recorded_per_arm(skill, tmp_path, capsys):
    code, doc = run([str(skill), "--adapter", "mock"], tmp_path)
    assert code == 0
    assert doc["isolation"]["backend"] == "bwrap" and doc["isolation"]["unsandboxed"] is False
    assert "pids" in doc["isolation"]["guarantees"]["limits"]["processes"] or \
        "RLIMIT_NPROC" in doc["isolation"]["guarantees"]["limits"]["processes"] or \
        "NOT bounded" in doc["isolation"]["guarantees"]["limits"]["processes"]
    assert doc["cases"][0]["with_skill"]["extra"]["sandbox"] == "bwrap"
    assert "sandbox: bwrap" in capsys.readouterr().out


def test_none_by_name_says_unsandboxed_everywhere(skill, tmp_path, capsys):
    code, doc = run([str(skill), "--adapter", "mock", "--sandbox", "none"], tmp_path)
    assert code == 0
    assert doc["isolation"]["unsandboxed"] is True and doc["isolation"]["backend"] == "none"
    assert capsys.readouterr().out.startswith("UNSANDBOXED")
    assert "unsandboxed" in render_markdown([RunLog.from_json(doc)]).splitlines()[0]


def test_a_real_agent_fails_closed_without_a_backend(skill, tmp_path, capsys, no_bwrap):
    code, doc = run([str(skill), "--model", "claude-haiku-4-5"], tmp_path)
    assert code == 2 and doc is None
    err = capsys.readouterr().err
    assert "no sandbox backend works" in err and "apt-get install bubblewrap" in err


def test_asking_for_bwrap_where_it_does_not_work_is_a_usage_error(skill, tmp_path, capsys, no_bwrap):
    code, _ = run([str(skill), "--adapter", "mock", "--sandbox", "bwrap"], tmp_path)
    assert code == 2 and "bubblewrap" in capsys.readouterr().err


def test_the_mock_quickstart_falls_back_and_says_unsandboxed(skill, tmp_path, capsys, no_bwrap):
    code, doc = run([str(skill), "--adapter", "mock"], tmp_path)
    assert code == 0 and doc["isolation"]["unsandboxed"] is True
    assert "bwrap does not work here" in doc["isolation"]["guarantees"]["reason"]


@bwrap_works
def test_sigterm_stops_every_sandboxed_process(tmp_path):
    marker = f"skillab-sigterm-{os.getpid()}"
    case = {
        "name": "slow", "prompt": "p",
        "setup": {"commands": [f"bash -c 'exec -a {marker} sleep 300' & sleep 300"]},
        "validators": [{"cmd": "true"}],
    }
    skill = make_skill(tmp_path, [case], responses={})
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
         "--no-history", "--quiet", "--output", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not _running(marker):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    deadline = time.monotonic() + 10
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(marker)


def _running(marker: str) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        return True
            except OSError:
                continue
    return False


def test_the_runner_makes_itself_non_dumpable():
    probe = ("import ctypes; from skillab.sandbox.guard import set_non_dumpable; "
             "libc = ctypes.CDLL(None); before = libc.prctl(3, 0, 0, 0, 0); "
             "assert set_non_dumpable(); print(before, libc.prctl(3, 0, 0, 0, 0))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1", "0"], done.stderr


def test_a_baseline_cached_unsandboxed_is_not_reused_under_bwrap(skill, tmp_path, capsys):
    cache = tmp_path / "cache"
    args = ["run", str(skill), "--adapter", "mock", "--no-history", "--quiet", "--cache-dir", str(cache)]
    assert main([*args, "--sandbox", "none", "--output", str(tmp_path / "a.json")]) == 0
    assert main([*args, "--output", str(tmp_path / "b.json")]) == 0
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["cache"]["hits"] == (0 if choose_sandbox(None).backend.name != "none" else 1)


def test_image_needs_a_suite_that_brings_a_dockerfile(skill, tmp_path, capsys):
    code, _ = run([str(skill), "--adapter", "mock", "--sandbox", "image"], tmp_path)
    assert code == 2 and "brings no image" in capsys.readouterr().err
