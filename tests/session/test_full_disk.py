"""A full disk at the end of a run: a clear error naming the file, never a traceback, and the
checkpoint journal kept whole so ``--resume`` loses nothing.

The disk is a real one: a tmpfs of a few hundred KiB, mounted in a private mount namespace
(``unshare``) around a ``skillab run`` process, so writes past its size fail with ENOSPC.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..skillgen import answers, grep_case, make_skill

ARM_BYTES = 40_000  # each answer; a record (answer and transcript) is about twice that
CASES = 4


def _can_mount(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", f"mount -t tmpfs -o size=8k tmpfs {probe}"],
                          capture_output=True, timeout=30)
    return done.returncode == 0


@pytest.fixture
def big_skill(tmp_path):
    if not _can_mount(tmp_path):
        pytest.skip("no private mount namespace here (unshare -Urm)")
    return make_skill(tmp_path, [grep_case(f"c{i}") for i in range(CASES)], name="big",
                      responses={f"c{i}": answers("SKILLED " + "x" * ARM_BYTES, "plain " + "y" * ARM_BYTES)
                                 for i in range(CASES)})


def run_on_small_disk(tmp_path: Path, size_k: int, args: list[str]) -> tuple[subprocess.CompletedProcess, Path]:
    """``skillab run ARGS`` with a tmpfs of ``size_k`` KiB at ``disk/``; what the disk held when
    the run ended is copied to ``kept/``."""
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "skillab", "run", *args])
    script = (f"mount -t tmpfs -o size={size_k}k tmpfs {disk} || exit 99; {command}; code=$?; "
              f"cp -a {disk}/. {kept}/; exit $code")
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 99, done.stderr
    return done, kept


def journal_lines(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]  # every line whole


COMMON = ["--adapter", "mock", "--no-cache", "--no-history", "--quiet"]


def test_no_room_for_the_results_document_keeps_every_arm_in_the_journal(tmp_path, big_skill):
    # 1000 KiB: the journal (about 650 KiB) fits, the results document beside it does not.
    done, kept = run_on_small_disk(tmp_path, 1000, [str(big_skill), *COMMON, "--output", "disk/results.json"])
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert ("skillab: cannot write disk/results.json (No space left on device): every finished arm is kept "
            "in disk/results.checkpoint.jsonl") in done.stderr
    assert not (kept / "results.json").exists()
    assert [p.name for p in kept.iterdir()] == ["results.checkpoint.jsonl"]  # no temp file left
    entries = journal_lines(kept / "results.checkpoint.jsonl")
    assert len(entries) == 1 + 2 * CASES
    # With room again, --resume runs no arm again (report says so first).
    out = kept / "results.json"
    report = subprocess.run([sys.executable, "-m", "skillab", "report", str(out)], capture_output=True,
                            text=True, timeout=60)
    assert report.returncode == 2 and "Traceback" not in report.stderr, report.stderr
    assert "only the checkpoint journal of an unfinished run is there" in report.stderr
    resume = [sys.executable, "-m", "skillab", "run", str(big_skill), *COMMON, "--resume", str(out),
              "--output", str(out)]
    plan = subprocess.run([*resume, "--dry-run"], capture_output=True, text=True, timeout=120).stdout
    assert f"{2 * CASES} finished arms kept from --resume" in plan and re.search(r"arms to run\s+0\b", plan), plan
    assert subprocess.run(resume, capture_output=True, timeout=120).returncode == 0
    assert json.loads(out.read_text())["total_cases"] == CASES


def test_a_journal_line_the_disk_cannot_hold_is_taken_back(tmp_path, big_skill):
    # 300 KiB: the journal fills the disk after a few arms.
    done, kept = run_on_small_disk(tmp_path, 300, [str(big_skill), *COMMON, "--output", "disk/results.json"])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "the checkpoint journal disk/results.checkpoint.jsonl stopped taking arms (No space left" in done.stderr
    entries = journal_lines(kept / "results.checkpoint.jsonl")
    assert 2 <= len(entries) < 1 + 2 * CASES


def test_no_room_for_a_report_says_so_and_the_results_stand(tmp_path, big_skill):
    done, kept = run_on_small_disk(tmp_path, 64, [str(big_skill), *COMMON, "--output", "results.json",
                                                  "--html", "disk/report.html"])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "cannot write disk/report.html (No space left on device); results.json is whole" in done.stderr
    assert json.loads((tmp_path / "results.json").read_text())["total_cases"] == CASES


def test_progress_on_a_full_disk_does_not_stop_the_run(tmp_path):
    """The progress lines go to a stream the kernel refuses (stderr on /dev/full, ENOSPC): like
    any subscriber that cannot write, the display costs a warning, never the run, which writes
    its results document. (The command's own last words go to that stderr too; it cannot say
    them, so its exit status is not asked here.)"""
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "plain")})
    out = tmp_path / "results.json"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock",
                               "--no-cache", "--no-history", "--output", str(out)],
                              stdout=subprocess.DEVNULL, stderr=full, timeout=120)
    assert out.is_file(), done.returncode
    doc = json.loads(out.read_text())
    assert doc["cases"][0]["outcome"] == "flip_to_pass"
    assert "a progress display could not be written (No space left on device); the run went on" in doc["warnings"]
