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

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .trees import remove_tree
from .workspace import relative_parts

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# What a link, a missing entry or a non-directory on the way raises.
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


@contextmanager
def _directories(root: Path, names: list[str]) -> Iterator[list[int] | None]:
    """File descriptors of ``root`` and each of ``names`` below it in turn; None when one of
    them is missing, a link or not a directory."""
    fds: list[int] = []
    try:
        try:
            fds.append(os.open(root, _DIR_FLAGS))
            for name in names:
                fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
        except OSError as exc:
            if exc.errno not in _NOT_THERE:
                raise
            yield None
            return
        yield fds
    finally:
        for fd in fds:
            os.close(fd)


def read_inside(root: Path, rel: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``root/rel``; None when it is missing, not a
    regular file, or reached only through a link."""
    parts = relative_parts(rel)
    with _directories(root, parts[:-1]) as fds:
        if fds is None:
            return None
        fd = open_regular(parts[-1], dir_fd=fds[-1])
        return None if fd is None else read_upto(fd, limit)


def open_regular(path: str | Path, *, dir_fd: int | None = None) -> int | None:
    """A read-only descriptor of the regular file at ``path`` (its last component is never
    followed if it is a link), or None when it is missing, a link or anything else."""
    try:
        fd = os.open(path, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (*_NOT_THERE, errno.ENXIO):  # ENXIO: a socket
            return None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def read_upto(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd``'s start, read in bounded chunks; closes ``fd``."""
    with open(fd, "rb", buffering=0) as handle:
        chunks, left = [], limit
        while left > 0:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    return b"".join(chunks)


def remove_inside(root: Path, rel: str, *, prune: bool = False) -> None:
    """Remove ``root/rel`` (a file, a link or a tree) without following a link on the way: if a
    directory on the path was replaced by a link, nothing outside is touched. ``prune`` also
    removes the directories above it that are left empty, up to ``root``."""
    parts = relative_parts(rel)
    with _directories(root, parts[:-1]) as fds:
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
