"""Live progress in a real terminal (a pty) and plain ``[n/N]`` lines in a pipe or in CI."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from ..skillgen import answers, grep_case, make_skill

SKILLAB = str(Path(sys.executable).parent / "skillab")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+)m")


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    names = ["a1", "a2", "a3", "bad"]
    responses = {n: answers("SKILLED", "plain") for n in names[:3]}
    responses["bad"] = answers("plain", "plain")
    return make_skill(tmp_path, [grep_case(n) for n in names], responses=responses)


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "GITHUB_ACTIONS")}
    env.update(TERM="xterm-256color", COLUMNS="120", **extra)
    return env


def run_in_pty(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([SKILLAB, *args], stdin=follower, stdout=follower, stderr=follower,
                            cwd=cwd, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode(errors="replace")


ARGS = ["--adapter", "mock", "--no-history", "--no-cache", "--mock-latency-ms", "150", "--concurrency", "1"]


def test_a_terminal_gets_a_live_bar_with_counts_eta_usage_and_failures(tmp_path, skill):
    code, out = run_in_pty(["run", str(skill), *ARGS], tmp_path, base_env())
    assert code == 0, out
    plain = ANSI.sub("", out)
    assert "4/4" in plain and "ETA" in plain and "tokens" in plain
    assert "1 failed, 0 errored" in plain
    assert "fail_kept bad" in plain  # a failure is printed above the bar as it happens
    assert "[1/4]" not in plain  # not the plain-line format
    assert COLOUR.search(out), "no colour on a colour terminal"
    assert "\x1b[2K" in out or "\r" in out  # redrawn in place


def test_no_color_keeps_the_bar_and_drops_the_colour(tmp_path, skill):
    code, out = run_in_pty(["run", str(skill), *ARGS], tmp_path, base_env(NO_COLOR="1"))
    assert code == 0, out
    assert "4/4" in ANSI.sub("", out)
    assert not COLOUR.search(out)


def test_a_pipe_gets_plain_numbered_lines(tmp_path, skill):
    proc = subprocess.run([SKILLAB, "run", str(skill), *ARGS], capture_output=True, text=True,
                          cwd=tmp_path, env=base_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] + "]" for line in lines] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    assert "elapsed" in lines[0] and "ETA" in lines[0] and "tokens" in lines[0]
    assert lines[-1].endswith("1 failed, 0 errored")
    assert "\x1b" not in proc.stderr + proc.stdout


def test_ci_gets_plain_lines_even_on_a_terminal(tmp_path, skill):
    code, out = run_in_pty(["run", str(skill), *ARGS], tmp_path, base_env(CI="true"))
    assert code == 0, out
    assert "[4/4] " in out and "\x1b[2K" not in out
