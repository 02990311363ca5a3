"""Reading and removing what sandboxed commands left in a workspace, on the host, without ever
following a link they planted.

Inside the sandbox the workspace is bound at its host path, so a link a command makes there
(``logs -> /home/runner``, ``.skills -> /checkout/skills``) is harmless to the command but names
a real host path to skillab. These helpers walk down from the workspace root one directory file
descriptor at a time, each opened with ``O_NOFOLLOW | O_DIRECTORY``, so the kernel refuses any
link on the way; files are opened ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO never blocks the runner)
and read only if they are regular, and never past a byte cap (a sparse 1 GiB file stays cheap).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..linkfree import directories, open_below, read_upto
from .trees import remove_tree
from .workspace import relative_parts


def read_inside(root: Path, rel: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``root/rel``; None when it is missing, not a
    regular file, or reached only through a link."""
    fd = open_below(root, relative_parts(rel))
    return None if fd is None else read_upto(fd, limit)


def exists_inside(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is a file or folder reached with no link on the way, and not a link
    itself: a link an agent leaves names a host path, whose existence is no grade of its work."""
    parts = relative_parts(rel)
    with directories(root, parts[:-1]) as fds:
        if fds is None:
            return False
        try:
            info = os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False)
        except OSError:
            return False
    return not stat.S_ISLNK(info.st_mode)


def remove_inside(root: Path, rel: str, *, prune: bool = False) -> None:
    """Remove ``root/rel`` (a file, a link or a tree) without following a link on the way: if a
    directory on the path was replaced by a link, nothing outside is touched. ``prune`` also
    removes the directories above it that are left empty, up to ``root``."""
    parts = relative_parts(rel)
    with directories(root, parts[:-1]) as fds:
        if fds is None:
            return
        _remove_entry(fds[-1], parts[-1])
        if not prune:
            return
        for fd, name in zip(reversed(fds[:-1]), reversed(parts[:-1])):
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                return  # not empty (or no longer ours): the directories above stay too


def _remove_entry(dir_fd: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        remove_tree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)
