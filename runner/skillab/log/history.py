"""Run history: one compact JSON line per run, appended under a lock.

The history file (default ``.skillab/history.jsonl`` in the current directory) is shared by
every run that points at it, possibly at once: each append holds an exclusive ``flock`` and
writes its line with one ``write`` on an ``O_APPEND`` descriptor, so lines never interleave. A
line that is not an entry (a crash mid-write, a hand edit, a newer skillab) is skipped with a
warning; the history is a convenience and never fails a run.

The history may sit in a checkout, where a pull request can edit any line and make the trend say
the skill "moved 0.0% → 100.0%". Each line carries the HMAC of the key that signs the baseline
cache (``signing``: never in a checkout), and a line without this key's signature is ignored,
with one notice that counts them.

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

from ..signing import cache_key, entry_mac, signed
from .history_entry import HistoryEntry

T = TypeVar("T")

# Warnings about unreadable lines are capped so a mangled file does not flood the report.
_MAX_LINE_WARNINGS = 3


def parse_history(data: bytes, source: str, key: bytes | str | None = None) -> tuple[list[HistoryEntry], list[str]]:
    """Every readable entry signed with ``key`` (default: ``signing.cache_key()``), one warning
    per skipped line (capped), and one notice counting the lines no signature vouches for."""
    key = cache_key() if key is None else key
    if not isinstance(key, bytes):
        return [], [f"{source}: history not used: {key}"]
    entries: list[HistoryEntry] = []
    skipped: list[str] = []
    unsigned = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            if isinstance(line, dict) and not signed(key, line):
                unsigned += 1
                continue
            entries.append(HistoryEntry.from_dict(line))
        except (ValueError, TypeError, RecursionError) as exc:  # JSON and Unicode errors are ValueErrors
            reason = ("not JSON" if isinstance(exc, json.JSONDecodeError) else
                      "nested too deep" if isinstance(exc, RecursionError) else str(exc))
            skipped.append(f"{source}:{number}: not a history entry ({reason}); line skipped")
    warnings = skipped[:_MAX_LINE_WARNINGS]
    if len(skipped) > _MAX_LINE_WARNINGS:
        warnings.append(f"{source}: {len(skipped) - _MAX_LINE_WARNINGS} more unreadable lines skipped")
    if unsigned:
        warnings.append(f"{source}: {unsigned} line(s) ignored: not signed with this user's key (edited, "
                        "or written with another key)")
    return entries, warnings


def signed_line(entry: HistoryEntry, key: bytes | str) -> bytes:
    """``entry``'s line, with ``key``'s HMAC over it when there is a key."""
    line = json.loads(entry.to_line())
    if isinstance(key, bytes):
        line["mac"] = entry_mac(key, line)
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def read_history(path: Path, key: bytes | str | None = None) -> tuple[list[HistoryEntry], list[str]]:
    """The signed entries of ``path`` (none when it does not exist yet), and warnings."""
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
        return parse_history(_read_all(fd), str(path), key)
    finally:
        os.close(fd)


def append_entry(path: Path, entry: HistoryEntry, judge: Callable[[list[HistoryEntry]], T],
                 key: bytes | str | None = None) -> tuple[T | None, list[str]]:
    """Append ``entry`` to ``path``, signed with ``key`` (default: ``signing.cache_key()``);
    ``judge`` is told the signed entries before it and its answer is returned (None when the
    history could not be opened); problems become warnings.

    The read of the earlier entries and the append happen under one exclusive lock, so two runs
    finishing together each see a whole file and add a whole line.
    """
    signing_key = cache_key() if key is None else key

    def decide(data: bytes) -> tuple[T, bytes, list[str]]:
        entries, warnings = parse_history(data, str(path), signing_key)
        return judge(entries), signed_line(entry, signing_key), warnings

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
