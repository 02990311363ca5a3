"""Execute-only copies of the executables that hold an arm's proxy token.

An agent CLI's tools run as its children: the same uid, in the same sandbox. The kernel still
keeps one process's environment, memory and file descriptors from another of the same uid when
the first is not *dumpable* and the reader lacks ``CAP_SYS_PTRACE`` (every capability is dropped
in the sandbox). A process is not dumpable after it ``execve``s a file it may not read: so the
CLI's executable is bound, at its own path, from a copy whose mode is ``0111``. The CLI runs as
before; ``/proc/<cli>/environ``, ``mem`` and ``fd/*`` are refused to everything it starts.

Under ``--sandbox image`` a CLI whose interpreter lies in the host's system directories runs
the image's own one (``#!/usr/bin/env node`` finds it on ``PATH``), so every file of that name
the image holds where ``PATH`` looks is sealed the same way, at its path in the image.

A copy is made once per executable version (path, size, mtime) into a private directory of the
runner's temporary directory, and reused by every arm and later run of the same user.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from .backend import Backend
from .bwrap import TRUSTED_PATH
from .image import ImageBackend
from .programs import in_system

_LOCK = threading.Lock()


def seals_tokens(backend: Backend) -> bool:
    """Whether ``backend`` seals token holders: unsandboxed, nothing is bound."""
    return backend.name != "none"


def sealed_binds(executables: Iterable[Path], backend: Backend) -> tuple[tuple[Path, str], ...]:
    """(execute-only copy, path inside) for each of ``executables`` under ``backend``, bound at
    its own path. In a task image, a system executable is the image's own: its namesakes there
    are sealed instead. Unsandboxed, nothing is."""
    if not seals_tokens(backend):
        return ()
    binds: dict[str, Path] = {}
    for path in executables:
        if not isinstance(backend, ImageBackend) or not in_system(path):
            binds[str(path)] = sealed_copy(path)
            continue
        for inside in _image_namesakes(backend.rootfs, path):
            binds.setdefault(inside, sealed_copy(backend.rootfs / inside.lstrip("/")))
    return tuple((copy, inside) for inside, copy in binds.items())


def _image_namesakes(rootfs: Path, executable: Path) -> list[str]:
    """The files of the image a command may run for ``executable``: at its own path and under
    its name in each directory a sandbox's ``PATH`` holds, links resolved inside the image."""
    directories = [str(executable.parent), *os.environ.get("PATH", "").split(":"), *TRUSTED_PATH.split(":")]
    found = (_resolve_in(rootfs, f"{d}/{executable.name}") for d in directories if d.startswith("/"))
    return list(dict.fromkeys(inside for inside in found if inside is not None))


def _resolve_in(rootfs: Path, inside: str) -> str | None:
    """``inside`` with every link followed as the image sees it (an absolute target is under
    ``rootfs``); None unless it is a regular file there."""
    pending = [part for part in inside.split("/") if part]
    resolved: list[str] = []
    links = 0
    while pending:
        name = pending.pop(0)
        if name == ".":
            continue
        if name == "..":
            resolved = resolved[:-1]
            continue
        here = rootfs.joinpath(*resolved, name)
        if not here.is_symlink():
            resolved.append(name)
            continue
        links += 1
        if links > 40:  # a loop, as the kernel's ELOOP
            return None
        target = os.readlink(here)
        if target.startswith("/"):
            resolved = []
        pending = [part for part in target.split("/") if part] + pending
    host = rootfs.joinpath(*resolved)
    return "/" + "/".join(resolved) if host.is_file() and not host.is_symlink() else None


def sealed_copy(executable: Path) -> Path:
    """An execute-only copy of ``executable`` (resolved), made once per version."""
    real = Path(os.path.realpath(executable))
    info = real.stat()
    key = hashlib.sha256(f"{real}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}".encode()).hexdigest()[:24]
    target = _directory() / f"{key}-{real.name}"
    with _LOCK:
        if not target.exists():
            partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
            shutil.copyfile(real, partial)
            os.chmod(partial, 0o111)
            os.replace(partial, target)  # whole or absent, also for another process
    return target


def _directory() -> Path:
    """``skillab-sealed-<uid>`` in the temporary directory: ours, private, never followed."""
    directory = Path(tempfile.gettempdir()) / f"skillab-sealed-{os.geteuid()}"
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(directory)
    if not os.path.isdir(directory) or os.path.islink(directory) or info.st_uid != os.geteuid() \
            or info.st_mode & 0o077:
        raise PermissionError(f"{directory} is not a private directory of this user")
    return directory
