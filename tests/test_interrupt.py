"""Ctrl-C mid-run keeps what finished, marks the document interrupted, and exits 130."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .signals import signal_when
from .skillgen import answers, grep_case, make_skill


def test_sigint_keeps_finished_cases_and_marks_the_document(tmp_path: Path):
    names = [f"c{i:02d}" for i in range(30)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out = tmp_path / "results.json"
    # The first checkpoint lands as soon as the first case finishes.
    code, _, stderr = signal_when(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
         "--mock-latency-ms", "150", "--concurrency", "1", "--output", str(out), "--quiet"],
        out.exists, what="no checkpoint was written")
    assert code == 130, stderr
    assert "Traceback" not in stderr
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True
    finished = [c["case_name"] for c in doc["cases"]]
    assert 1 <= len(finished) < len(names)
    assert finished == names[: len(finished)]  # concurrency 1: the finished ones are a prefix
    assert all(c["outcome"] == "flip_to_pass" for c in doc["cases"])
    assert doc["total_cases"] == len(finished)
    assert doc["statistics"] is not None  # the final document, not a checkpoint


def test_a_full_disk_at_a_checkpoint_warns_and_the_run_goes_on(tmp_path: Path):
    import errno

    from skillab.engine.config import RunConfig
    from skillab.engine.runner import run_suite

    names = ["a", "b", "c"]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    attempts = []

    def full_disk(log) -> None:
        attempts.append(log)
        raise OSError(errno.ENOSPC, "No space left on device")

    config = RunConfig(adapter="mock", cache_enabled=False, concurrency=1,
                       mock_responses=skill / "mock-responses.yaml")
    report = run_suite(skill, config, checkpoint=full_disk)
    assert attempts, "no checkpoint was attempted"
    assert not report.log.interrupted
    assert [c.outcome for c in report.log.records] == ["flip_to_pass"] * 3
    assert any("checkpoint could not be written (No space left on device)" in w
               for w in report.log.settings.warnings)
