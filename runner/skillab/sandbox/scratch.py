"""Where a run's workspaces live: a tmpfs with room when the host has one, else ``TMPDIR``.

Creating an arm's tree and removing it costs a few milliseconds of journalled disk work per
directory on ext4 or overlayfs, and well under one on a tmpfs. ``/dev/shm`` is used when it is
a tmpfs with at least ``MIN_FREE`` bytes free (a container's default 64 MiB is not), so a run
never trades a spurious full-disk failure for speed; ``SKILLAB_WORKSPACE_DIR`` names the parent
instead (a disk, for suites that write gigabytes). The run's directory is private (0700) and
removed at the end, on an interrupt too; one left by a run that was killed outright holds memory
until removed, so each run on the tmpfs first removes those of its uid's dead runs.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .disk_budget import unmount_below
from .limits import _alive
from .workspace import _remove

SCRATCH_ENV = "SKILLAB_WORKSPACE_DIR"
TMPFS = Path("/dev/shm")
MIN_FREE = 4 << 30
_OWN_NAME = re.compile(r"^skillab-run-(\d+)-[A-Za-z0-9_]+$")


def scratch_parent() -> Path | None:
    """The parent of the run's scratch directory; None: ``tempfile``'s default (``TMPDIR``)."""
    explicit = os.environ.get(SCRATCH_ENV, "").strip()
    if explicit:
        return Path(explicit)
    return TMPFS if roomy_tmpfs(TMPFS) else None


@contextmanager
def run_scratch() -> Iterator[Path]:
    """A private directory for the run's workspaces, removed when the block ends."""
    parent = scratch_parent()
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
        sweep_dead_runs(parent)
    with private_dir(f"skillab-run-{os.getpid()}-", parent) as scratch:
        yield scratch


@contextmanager
def private_dir(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A fresh 0700 directory, removed with whatever commands left in it (``TemporaryDirectory``
    uses ``shutil.rmtree``, which recurses: a tree nested deep enough breaks it)."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield scratch
    finally:
        try:
            unmount_below(scratch)
            _remove(scratch)
        except OSError:
            pass  # best effort: what is left is litter (the next run on a tmpfs sweeps it)


def roomy_tmpfs(path: Path) -> bool:
    """Whether ``path`` is a writable tmpfs mount with at least ``MIN_FREE`` bytes free."""
    if _fs_type(path) != "tmpfs" or not os.access(path, os.W_OK | os.X_OK):
        return False
    try:
        stats = os.statvfs(path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize >= MIN_FREE


def sweep_dead_runs(parent: Path) -> int:
    """Remove scratch directories this uid's killed runs left in ``parent``; how many went."""
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    removed = 0
    for name in names:
        match = _OWN_NAME.match(name)
        path = parent / name
        if match is None or _alive(int(match.group(1))):
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid != os.geteuid() or not os.path.isdir(path) or os.path.islink(path):
            continue
        _remove(path)
        removed += 1
    return removed


def _fs_type(path: Path) -> str | None:
    """The type of the filesystem mounted at ``path`` (the last mount there wins), if any."""
    found = None
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) >= 3 and fields[1] == str(path):
                    found = fields[2]
    except OSError:
        return None
    return found
