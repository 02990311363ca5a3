"""Run history: one compact JSON line per run, appended under a lock, with this run's trend.

The history file (default ``.skillab/history.jsonl`` in the current directory) is shared by
every run that points at it, possibly at once: each append holds an exclusive ``flock`` and
writes its line with one ``write`` on an ``O_APPEND`` descriptor, so lines never interleave. A
line that is not an entry (a crash mid-write, a hand edit, a newer skillab) is skipped with a
warning; the history is a convenience and never fails a run.

An entry is a ``history_entry.HistoryEntry``; the trend (``scoring.trend``) compares it with the
previous comparable one.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.runlog import RunLog
from ..core.trend import Trend
from .history_entry import HistoryEntry
from .trend import compute_trend, previous_comparable, same_skill_comparisons

# Warnings about unreadable lines are capped so a mangled file does not flood the report.
_MAX_LINE_WARNINGS = 3


@dataclass
class Recorded:
    """What recording a run gave: its trend (None when the history could not be used)."""

    trend: Trend | None
    warnings: list[str] = field(default_factory=list)


def parse_history(data: bytes, source: str) -> tuple[list[HistoryEntry], list[str]]:
    """Every readable entry, and one warning per skipped line (capped)."""
    entries: list[HistoryEntry] = []
    skipped: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            entries.append(HistoryEntry.from_dict(json.loads(raw)))
        except (ValueError, TypeError, RecursionError) as exc:  # JSON and Unicode errors are ValueErrors
            reason = ("not JSON" if isinstance(exc, json.JSONDecodeError) else
                      "nested too deep" if isinstance(exc, RecursionError) else str(exc))
            skipped.append(f"{source}:{number}: not a history entry ({reason}); line skipped")
    warnings = skipped[:_MAX_LINE_WARNINGS]
    if len(skipped) > _MAX_LINE_WARNINGS:
        warnings.append(f"{source}: {len(skipped) - _MAX_LINE_WARNINGS} more unreadable lines skipped")
    return entries, warnings


def read_history(path: Path) -> tuple[list[HistoryEntry], list[str]]:
    """The entries of ``path`` (none when it does not exist yet), and warnings."""
    path = Path(path)
    try:
        # Non-blocking: a FIFO committed in its place must not hang the run (see ``_not_a_file``).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{path}: history cannot be read ({exc.strerror})"]
    try:
        if problem := _not_a_file(fd, path):
            return [], [problem]
        fcntl.flock(fd, fcntl.LOCK_SH)
        return parse_history(_read_all(fd), str(path))
    finally:
        os.close(fd)


def record_into(log: RunLog, path: Path) -> RunLog:
    """Record a finished run; its log with the trend and any history warnings."""
    recorded = record_run(log.to_json(), path)
    settings = dataclasses.replace(log.settings, trend=recorded.trend,
                                   warnings=(*log.settings.warnings, *recorded.warnings))
    return dataclasses.replace(log, settings=settings)


def record_run(document: dict[str, Any], path: Path) -> Recorded:
    """Append the run's entry to ``path`` and return its trend; problems become warnings.

    The read of the previous entry and the append happen under one exclusive lock, so two runs
    finishing together each see a whole file and add a whole line.
    """
    path = Path(path)
    entry = HistoryEntry.from_document(document)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        return Recorded(None, [f"{path}: history cannot be opened ({exc.strerror}); this run is not recorded"])
    try:
        if problem := _not_a_file(fd, path):
            return Recorded(None, [problem + "; this run is not recorded"])
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = _read_all(fd)
        entries, warnings = parse_history(data, str(path))
        trend = compute_trend(entry, previous_comparable(entries, entry), str(path),
                              same_skill=same_skill_comparisons(entries, entry))
        line = entry.to_line()
        # A line cut short by a crash must not swallow this one.
        if data and not data.endswith(b"\n"):
            line = b"\n" + line
        try:
            _write_all(fd, line)
        except OSError as exc:
            warnings.append(f"{path}: history cannot be written ({exc.strerror}); this run is not recorded")
        return Recorded(trend, warnings)
    finally:
        os.close(fd)


def _not_a_file(fd: int, path: Path) -> str | None:
    """Why ``fd`` is no history file: the history may sit in a checkout, where a pull request can
    commit a link to ``/dev/zero`` (read forever) or a FIFO (no writer) in its place."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return None
    return f"{path}: history is not a regular file; not used"


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    # One write: with O_APPEND the line lands whole at the end. The loop only covers a short
    # write (a full disk), still under the lock.
    written = os.write(fd, data)
    while written < len(data):
        written += os.write(fd, data[written:])
