"""Walking and removing directory trees that sandboxed commands made.

A command can nest directories thousands deep in a second (``mkdir d; cd d`` in a loop). Python's
``os.walk`` and ``shutil.rmtree`` recurse once per level, so such a tree raised ``RecursionError``
on the host: an arm's grading crashed, the clean-up thread died, and the run's scratch directory
(and the next run's sweep of it) failed. Both here keep their own stack instead, never follow a
link, and hold at most two directory descriptors at a time.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Callable, Iterator

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def walk(top: str | os.PathLike[str], onerror: Callable[[OSError], None] | None = None,
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` (top-down, links never followed, ``dirnames`` prunable in place) without
    recursion; unreadable directories are skipped, each passed to ``onerror`` when given."""
    stack = [os.fspath(top)]
    while stack:
        directory = stack.pop()
        dirnames: list[str] = []
        filenames: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        yield directory, dirnames, filenames
        stack.extend(os.path.join(directory, name) for name in reversed(dirnames))


def remove_tree(path: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """Remove the directory ``path`` and everything below it, however deep, without following a
    link; directories a command made unreadable or unwritable (chmod 000) are opened up first.

    Each directory below the top is emptied in turn: its subdirectories are renamed up into the
    top directory (one level, so no stack grows with the depth), its other entries unlinked.
    """
    _unlock(path, dir_fd)
    top = _open_dir(path, dir_fd)
    try:
        names = itertools.count()
        pending = _empty(top, top, names)
        while pending:
            name = pending.pop()
            try:
                _unlock(name, top)
                fd = _open_dir(name, top)
            except FileNotFoundError:
                continue
            try:
                pending += _empty(fd, top, names)
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    os.rmdir(path, dir_fd=dir_fd)


def _empty(fd: int, top: int, names: Iterator[int]) -> list[str]:
    """Unlink ``fd``'s non-directories and move its directories into ``top`` (returning their
    names there); the directories of ``top`` itself stay where they are."""
    moved: list[str] = []
    with os.scandir(fd) as entries:
        listing = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_dir in listing:
        if not is_dir:
            os.unlink(name, dir_fd=fd)
        elif fd == top:
            moved.append(name)
        else:
            moved.append(_move_up(fd, name, top, names))
    return moved


def _move_up(fd: int, name: str, top: int, names: Iterator[int]) -> str:
    while True:
        target = f".skillab-rm-{next(names)}"
        try:
            os.stat(target, dir_fd=top, follow_symlinks=False)
        except FileNotFoundError:
            break
    try:
        os.rename(name, target, src_dir_fd=fd, dst_dir_fd=top)
    except PermissionError:
        # Moving a directory rewrites its "..": it must be writable (not so for root).
        os.chmod(name, stat.S_IRWXU, dir_fd=fd)
        os.rename(name, target, src_dir_fd=fd, dst_dir_fd=top)
    return target


def _unlock(name: str | os.PathLike[str], dir_fd: int | None) -> None:
    """Give the owner full access to the real directory ``name`` if a command took it away."""
    mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    if stat.S_ISDIR(mode) and stat.S_IMODE(mode) & stat.S_IRWXU != stat.S_IRWXU:
        os.chmod(name, stat.S_IRWXU, dir_fd=dir_fd)


def _open_dir(name: str | os.PathLike[str], dir_fd: int | None) -> int:
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
