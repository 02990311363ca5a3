"""``skillab run --watch`` with a real file change: one run, then a second after SKILL.md is
edited, the second taking its baseline from the cache (only the with-skill arms run again).
Bounded by ``--watch-max-runs``; a Ctrl-C while watching exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..skillgen import answers, grep_case, make_skill

LIMIT_S = 90


def start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path, Path, Path]:
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")],
                       responses={"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    out, log = tmp_path / "results.json", tmp_path / "stderr.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--watch", "--no-history",
         "--cache-dir", str(tmp_path / "cache"), "--output", str(out), "--quiet", *extra],
        stdout=subprocess.DEVNULL, stderr=log.open("w"), cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return proc, skill, out, log


def wait_for(log: Path, text: str, count: int = 1, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + LIMIT_S
    while log.read_text().count(text) < count:
        assert proc is None or proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def test_an_edit_to_skill_md_runs_again_with_the_cached_baseline(tmp_path):
    proc, skill, out, log = start(tmp_path, "--watch-max-runs", "2")
    try:
        wait_for(log, "watching", proc=proc)
        first = json.loads(out.read_text())
        assert not any(c["without_skill"]["cached"] for c in first["cases"])  # the cache was empty
        time.sleep(0.05)
        (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nAlso be brief.\n")
        assert proc.wait(timeout=LIMIT_S) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    second = json.loads(out.read_text())
    assert "SKILL.md changed: run 2" in log.read_text()
    assert second["suite"]["skill_hash"] != first["suite"]["skill_hash"]  # the edited skill ran
    assert all(c["without_skill"]["cached"] for c in second["cases"])  # baseline from the cache
    assert not any(c["with_skill"]["cached"] for c in second["cases"])  # only the with-skill arms ran
    assert second["cache"]["hits"] == 2


def test_what_the_run_writes_does_not_trigger_a_run_and_ctrl_c_stops_with_130(tmp_path):
    proc, skill, out, log = start(tmp_path, "--html", "report.html")
    try:
        wait_for(log, "watching", proc=proc)
        (tmp_path / "report.html").write_text("rewritten")  # an output: no reason to run
        (skill / "results.json").write_text("{}")  # a file in the skill directory: a change
        wait_for(log, "run 2", proc=proc)
        wait_for(log, "watching", count=2, proc=proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=LIMIT_S) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "results.json changed: run 2" in text and "report.html" not in text.split("watching", 1)[1].split("changed")[0]
    assert "Traceback" not in text and "stopped watching" in text


def test_a_broken_edit_is_reported_and_watched_past(tmp_path):
    proc, skill, out, log = start(tmp_path, "--watch-max-runs", "3")
    try:
        wait_for(log, "watching", proc=proc)
        good = (skill / "eval.yaml").read_text()
        (skill / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: Say: hi\n")
        wait_for(log, "invalid YAML", proc=proc)
        wait_for(log, "watching", count=2, proc=proc)
        (skill / "eval.yaml").write_text(good)
        assert proc.wait(timeout=LIMIT_S) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert log.read_text().count("wrote") >= 2


def test_watch_refuses_no_cache(tmp_path, capsys):
    from skillab.cli import main

    skill = make_skill(tmp_path, [grep_case("a")])
    assert main(["run", str(skill), "--adapter", "mock", "--watch", "--no-cache"]) == 2
    assert "drop --no-cache" in capsys.readouterr().err


def deep_tree(root: Path, levels: int) -> Path:
    """``levels`` nested folders under ``root`` (deeper than Python's recursion limit)."""
    root.mkdir(exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):  # one folder at a time, each opened from its parent
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    leaf = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(leaf, b"x")
    os.close(leaf)
    os.close(fd)
    return root.joinpath(*["d"] * levels)


def remove_deep_tree(root: Path, levels: int) -> None:
    """What ``deep_tree`` made, removed from the bottom up (``shutil.rmtree`` recurses)."""
    fds = [os.open(root, os.O_RDONLY)]
    for _ in range(levels):
        fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
    os.unlink("leaf.txt", dir_fd=fds[-1])
    os.close(fds.pop())
    while fds:
        fd = fds.pop()
        os.rmdir("d", dir_fd=fd)
        os.close(fd)


def test_a_deep_tree_the_run_refuses_is_watched_without_a_crash(tmp_path):
    proc, skill, out, log = start(tmp_path, "--watch-max-runs", "3")
    try:
        wait_for(log, "watching", proc=proc)
        deep_tree(skill / "nest", 1200)  # a change: the second run refuses it in one line
        wait_for(log, "nest too deep", proc=proc)
        wait_for(log, "watching", count=2, proc=proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=LIMIT_S) == 130, log.read_text()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        if (skill / "nest").exists():
            remove_deep_tree(skill / "nest", 1200)
    assert "Traceback" not in log.read_text() and "RecursionError" not in log.read_text()


def test_the_snapshot_sees_a_file_below_a_deep_tree(tmp_path):
    from skillab.commands.watch import snapshot

    leaf = deep_tree(tmp_path / "nest", 1200) / "leaf.txt"
    try:
        assert str(leaf) in snapshot([tmp_path], set())
    finally:
        remove_deep_tree(tmp_path / "nest", 1200)
