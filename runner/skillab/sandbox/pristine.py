"""Graders grade from a pristine copy of the skill's bundled files, and tampering is seen.

A suite's grader is usually a bundled file (``python3 scripts/check_changelog.py``), and it runs
in the arm's workspace after the agent worked there. An agent could rewrite it, or plant a
module beside it that the grader imports (``scripts/argparse.py``), and so forge the verdict of
either arm. Two defences, each enough for the grade:

* **Pinned**: the bundled files are copied, before the agent starts, to a directory beside the
  workspace that no command can reach. Grading commands get each top-level bundled entry
  (``scripts/``, or a file at the skill's top) bound read-only over the workspace's, so what
  the agent left there (an edited grader, a sibling module, a ``__pycache__``) is not in their
  view, and Python skips the user site directory the agent could have put a ``.pth`` file in.
* **Watched**: the tree under each top-level bundled entry is fingerprinted when the agent is
  given the workspace and again when it is done. Any difference (a file changed, added,
  removed, replaced by a link) is tampering: the arm is ``errored``, never graded, and every
  report names the paths. ``__pycache__`` is left out: running a bundled script writes one,
  and the pinned view hides it anyway.

A bundled file at the skill's top level is pinned and watched alone, not its siblings: they
are the agent's work.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from .trees import walk

PRISTINE_DIR = ".pristine"
# Files up to this size are hashed as well as described.
_HASH_LIMIT = 256 * 1024
_SKIPPED = frozenset({"__pycache__"})
# Tampering paths named in a record, at most.
MAX_NAMED = 20


def tops(rels: Iterable[str]) -> list[str]:
    """The top-level entries (``scripts``, ``check.py``) that hold these bundled paths."""
    found: list[str] = []
    for rel in rels:
        top = rel.strip("/").split("/", 1)[0]
        if top and top not in found:
            found.append(top)
    return found


def fingerprint(root: Path, entries: Iterable[str]) -> dict[str, str]:
    """What lies at each entry below ``root`` and under it, links never followed: relative
    path to a description (type, mode, size, inode and its times, link target)."""
    found: dict[str, str] = {}
    for top in entries:
        path = os.path.join(root, top)
        described = _describe(path)
        if described is None:
            continue
        found[top] = described
        if not described.startswith("dir"):
            continue
        for directory, dirnames, filenames in walk(path):
            dirnames[:] = [d for d in dirnames if d not in _SKIPPED]
            for name in (*dirnames, *filenames):
                full = os.path.join(directory, name)
                entry = _describe(full)
                if entry is not None:
                    found[os.path.relpath(full, root)] = entry
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The paths whose description differs between two fingerprints, sorted."""
    return sorted(rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel))


def _describe(path: str) -> str | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISLNK(info.st_mode):
        try:
            return f"link {os.readlink(path)}"
        except OSError:
            return "link ?"
    if not stat.S_ISREG(info.st_mode):
        return f"special {stat.S_IFMT(info.st_mode):o}"
    # Any write, chmod, link or rename moves the inode's ctime, which no process without
    # CAP_SYS_TIME can set back; a small file (a grader) is hashed too, in case a write fell in
    # the same clock tick as the first look.
    described = f"file {mode:o} {info.st_size} {info.st_ino} {info.st_mtime_ns} {info.st_ctime_ns}"
    return described + (f" {_digest(path)}" if info.st_size <= _HASH_LIMIT else "")


def _digest(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "unreadable"
    with open(fd, "rb") as handle:
        return hashlib.sha256(handle.read(_HASH_LIMIT + 1)).hexdigest()


def describe_tampering(paths: list[str]) -> str:
    """The arm's error for tampering with the graders' files."""
    named = ", ".join(paths[:MAX_NAMED]) + (f" and {len(paths) - MAX_NAMED} more" if len(paths) > MAX_NAMED else "")
    return (f"tampering: the agent changed the skill's bundled files the graders run, or files "
            f"beside them ({named}); the arm is not graded")
