"""A run loads each suite once: the preflight's load is the one the run uses (a 5,000-case suite
takes seconds to parse, and parsing it two or three times grew faster than the suite)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType

from skillab.cli import main

from ..skillgen import answers, grep_case, make_skill

# Paths opened through the suite reader while a test listens (audit hooks cannot be removed:
# the hook stays, idle, for the rest of the session).
_READS: list[str] | None = None


def _suite_reads(event: str, args: tuple) -> None:
    if _READS is None or event != "open" or not str(args[0]).endswith("eval.yaml"):
        return
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "read_suite_text":
            _READS.append(str(args[0]))
            return
        frame = frame.f_back


sys.addaudithook(_suite_reads)


def test_a_run_reads_its_suite_once_to_parse_it(tmp_path: Path, capsys):
    global _READS
    skill = make_skill(tmp_path, [grep_case("one"), grep_case("two")],
                       responses={"one": answers("SKILLED", "plain"), "two": answers("SKILLED", "plain")})
    _READS = []
    try:
        code = main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                     "--output", str(tmp_path / "results.json")])
        reads = list(_READS)
    finally:
        _READS = None
    capsys.readouterr()
    assert code in (0, 1)
    # One read to parse the suite, one to see whether it is a skillgrade suite whose graders
    # are evaluation material (not parsed unless it could be); before, the run read it four
    # times and parsed it four times.
    assert len(reads) <= 2, reads
