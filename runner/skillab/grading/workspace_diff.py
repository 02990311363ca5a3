"""What an agent changed in its workspace: a snapshot before it works, and the files created,
changed or deleted since, rendered for a judge that scores the work (not just the answer)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..linkfree import open_regular, read_upto
from ..sandbox.nofollow import read_inside
from ..sandbox.trees import walk
from .graders import JUDGE_DIR, VERIFIER_DIR

# What the judge sees of the files an arm changed.
WORK_FILE_CHARS = 8000
WORK_TOTAL_CHARS = 48000
SNAPSHOT_MAX_FILES = 5000
HASH_MAX_BYTES = 256 * 1024
# Workspace entries that are not the agent's work: sandbox homes, staged skills, graders.
_NOT_WORK = frozenset({".home", ".tmp", ".skills", ".claude", ".git", JUDGE_DIR, VERIFIER_DIR})


def snapshot(root: Path) -> dict[str, str]:
    """Relative path → digest of every regular file that is the agent's to change.

    The agent made these files: links are never followed, FIFOs and devices are skipped, and a
    file is read only up to ``HASH_MAX_BYTES`` (its size and modification time stand for the
    rest), so a tree of sparse gigabyte files costs what a small one does.
    """
    found: dict[str, str] = {}
    for directory, dirnames, filenames in walk(root):
        if Path(directory) == root:
            dirnames[:] = [d for d in dirnames if d not in _NOT_WORK]
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not os.path.islink(os.path.join(directory, d))]
        for name in filenames:
            path = os.path.join(directory, name)
            fd = open_regular(path)
            if fd is None:
                continue
            info = os.fstat(fd)
            digest = hashlib.sha256(read_upto(fd, HASH_MAX_BYTES))
            if info.st_size > HASH_MAX_BYTES:
                digest.update(f"\0{info.st_size}\0{info.st_mtime_ns}".encode())
            found[os.path.relpath(path, root)] = digest.hexdigest()
            if len(found) >= SNAPSHOT_MAX_FILES:
                return found
    return found


def changes(root: Path, before: dict[str, str]) -> tuple[list[str], list[str]]:
    """The files created or changed since ``before``, and the ones deleted, sorted."""
    after = snapshot(root)
    return (sorted(rel for rel, digest in after.items() if before.get(rel) != digest),
            sorted(set(before) - set(after)))


def render_changes(root: Path, before: dict[str, str],
                   found: tuple[list[str], list[str]] | None = None) -> str:
    """The files created or changed since ``before`` with their text, and the ones deleted
    (``found``: what ``changes`` returned, when the caller has it already)."""
    changed, deleted = found if found is not None else changes(root, before)
    if not changed and not deleted:
        return "(the agent created, changed and deleted no files)"
    parts: list[str] = []
    budget = WORK_TOTAL_CHARS
    for rel in changed:
        state = "changed" if rel in before else "new"
        content = _text_of(root, rel)
        if len(content) > WORK_FILE_CHARS:
            content = content[:WORK_FILE_CHARS] + f"\n[... cut at {WORK_FILE_CHARS} characters]"
        block = f"=== {shown(rel)} ({state}) ===\n{content}"
        if len(block) > budget:
            parts.append(f"[... {len(changed) - len(parts)} more changed files left out]")
            break
        budget -= len(block)
        parts.append(block)
    parts.extend(f"=== {shown(rel)} (deleted) ===" for rel in deleted)
    return "\n\n".join(parts)


def shown(rel: str) -> str:
    """A file name as the judge sees it: bytes that are not UTF-8 (which no request could
    encode) replaced, control characters (a newline faking another file's header) escaped."""
    text = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _text_of(root: Path, rel: str) -> str:
    # A character is at most 4 bytes: this many bytes always hold more than the judge is shown.
    limit = 4 * WORK_FILE_CHARS + 4
    data = read_inside(root, rel, limit)
    if data is None:
        return "(not a regular file)"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) == limit and exc.start >= len(data) - 3:  # the cut split a character
            return data[: exc.start].decode("utf-8", errors="replace")
        return f"(binary file, {os.lstat(root / rel).st_size} bytes)"
