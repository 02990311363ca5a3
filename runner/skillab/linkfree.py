"""Files below a directory, reached one directory descriptor at a time and never through a link.

A path a suite names (``fixtures/data.csv``) or a file an agent leaves in its workspace is
opened from its root down: each directory with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one
above it, the file itself with ``O_NOFOLLOW``, so the kernel refuses a symbolic link at any
component, and a link swapped in after a check is refused too. Files are opened ``O_NONBLOCK``
(a FIFO never blocks the runner) and used only if they are regular. Nothing here imports the
rest of skillab: suites, graders and the sandbox share it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# What a link, a missing entry or a non-directory on the way raises.
NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


@contextmanager
def directories(root: str | Path, names: Sequence[str]) -> Iterator[list[int] | None]:
    """File descriptors of ``root`` and each of ``names`` below it in turn; None when one of
    them is missing, a link or not a directory (``root`` included: pass its real path when the
    caller's own choice of it may go through a link)."""
    fds: list[int] = []
    try:
        try:
            fds.append(os.open(root, _DIR_FLAGS))
            for name in names:
                fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
        except OSError as exc:
            if exc.errno not in NOT_THERE:
                raise
            yield None
            return
        yield fds
    finally:
        for fd in fds:
            os.close(fd)


def open_regular(path: str | Path, *, dir_fd: int | None = None) -> int | None:
    """A read-only descriptor of the regular file at ``path`` (its last component is never
    followed if it is a link), or None when it is missing, a link or anything else."""
    try:
        fd = os.open(path, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (*NOT_THERE, errno.ENXIO):  # ENXIO: a socket
            return None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def open_below(root: str | Path, parts: Sequence[str]) -> int | None:
    """A read-only descriptor of the regular file ``root/parts...``, or None when it is missing,
    not a regular file, or reached through a link at any component below ``root``."""
    if not parts:
        return None
    with directories(root, parts[:-1]) as fds:
        return None if fds is None else open_regular(parts[-1], dir_fd=fds[-1])


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


def first_link(root: str | Path, parts: Sequence[str]) -> int | None:
    """How many components of ``parts`` lead to the first symbolic link below ``root`` (1: the
    first one is a link), or None when none of them is (missing ones end the look)."""
    here = Path(root)
    for depth, name in enumerate(parts, start=1):
        here = here / name
        try:
            info = os.lstat(here)
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode):
            return depth
        if not stat.S_ISDIR(info.st_mode):
            return None
    return None
