"""Execute-only copies of the executables that hold an arm's proxy token.

An agent CLI's tools run as its children: the same uid, in the same sandbox. The kernel still
keeps one process's environment, memory and file descriptors from another of the same uid when
the first is not *dumpable* and the reader lacks ``CAP_SYS_PTRACE`` (every capability is dropped
in the sandbox). A process is not dumpable after it ``execve``s a file it may not read: so the
CLI's executable is bound, at its own path, from a copy whose mode is ``0111``. The CLI runs as
before; ``/proc/<cli>/environ``, ``mem`` and ``fd/*`` are refused to everything it starts.

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

from .backend import active
from .programs import in_system

_LOCK = threading.Lock()


def sealed_binds(executables: Iterable[Path]) -> tuple[tuple[Path, str], ...]:
    """(execute-only copy, path inside) for each of ``executables``, bound at its own path. A
    task image has its own system: only what lies outside it (the CLI's installation) is
    replaced there; unsandboxed, nothing is."""
    backend = active().backend.name
    if backend == "none":
        return ()
    return tuple((sealed_copy(path), str(path)) for path in executables
                 if backend == "bwrap" or not in_system(path))


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
