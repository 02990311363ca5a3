"""Run history: one compact JSON line per run, appended under a lock.

The history file (default ``.skillab/history.jsonl`` in the current directory) is shared by
every run that points at it, possibly at once: each append holds an exclusive ``flock`` and
writes its line with one ``write`` on an ``O_APPEND`` descriptor, so lines never interleave. A
line that is not an entry (a crash mid-write, a hand edit, a newer skillab) is skipped with a
warning; the history is a convenience and never fails a run.

An entry is a ``history_entry.HistoryEntry``; the trend (``scoring.trend``) compares it with the
previous comparable one, read under the same lock as the append (``append_entry``).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .history_entry import HistoryEntry

T = TypeVar("T")

# Warnings about unreadable lines are capped so a mangled file does not flood the report.
_MAX_LINE_WARNINGS = 3


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


def append_entry(path: Path, entry: HistoryEntry,
                 judge: Callable[[list[HistoryEntry]], T]) -> tuple[T | None, list[str]]:
    """Append ``entry`` to ``path``; ``judge`` is told the entries before it and its answer is
    returned (None when the history could not be opened); problems become warnings.

    The read of the earlier entries and the append happen under one exclusive lock, so two runs
    finishing together each see a whole file and add a whole line.
    """
    def decide(data: bytes) -> tuple[T, bytes, list[str]]:
        entries, warnings = parse_history(data, str(path))
        return judge(entries), entry.to_line(), warnings

    return locked_append(Path(path), decide, "history", "this run is not recorded")


def locked_append(path: Path, decide: Callable[[bytes], tuple[T, bytes | None, list[str]]], what: str,
                  unrecorded: str) -> tuple[T | None, list[str]]:
    """Append to the JSON-lines file ``path`` the line ``decide`` makes from the file's content
    (None: nothing), read and written under one exclusive lock; ``decide``'s answer is returned
    (None when the file could not be opened) with any problems as warnings, each naming ``what``
    the file is and ending with ``unrecorded``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        return None, [f"{path}: {what} cannot be opened ({exc.strerror}); {unrecorded}"]
    try:
        if problem := _not_a_file(fd, path, what):
            return None, [problem + f"; {unrecorded}"]
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = _read_all(fd)
        answer, line, warnings = decide(data)
        if line is None:
            return answer, warnings
        # A line cut short by a crash must not swallow this one.
        if data and not data.endswith(b"\n"):
            line = b"\n" + line
        try:
            _write_all(fd, line)
        except OSError as exc:
            warnings.append(f"{path}: {what} cannot be written ({exc.strerror}); {unrecorded}")
        return answer, warnings
    finally:
        os.close(fd)


def _not_a_file(fd: int, path: Path, what: str = "history") -> str | None:
    """Why ``fd`` is no history file: the history may sit in a checkout, where a pull request can
    commit a link to ``/dev/zero`` (read forever) or a FIFO (no writer) in its place."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return None
    return f"{path}: {what} is not a regular file; not used"


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
