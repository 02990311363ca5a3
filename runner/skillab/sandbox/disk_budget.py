"""Each arm's disk budget: its workspace is a tmpfs of ``SKILLAB_SANDBOX_DISK_MB`` MiB.

Files on a disk workspace are page cache, and a memory cgroup reclaims written-back page cache
instead of refusing it, so no per-command limit bounded what an arm left on a disk (one
command wrote 301 MB under a 64 MiB memory limit). A size-limited tmpfs is bounded by the
kernel: a write past it fails with ``ENOSPC``, whatever the command does, across every command
of the arm.

Mounting one needs ``CAP_SYS_ADMIN`` over a mount namespace. ``skillab run`` takes a private
mount namespace at start, while it is still one thread: with ``unshare(CLONE_NEWNS)`` where it
holds the capability (root on a host or in CI), else inside a user namespace of its own that
maps only its own uid and gid (the Action's container, which runs as the runner's uid with
every capability dropped). The mounts are invisible outside skillab and vanish with it. Where
neither works, or with ``--keep-workspaces`` (the kept workspace must outlive the run), an arm's
workspace has no budget of its own and the results say so.

A budgeted workspace's files are memory, like those of a workspace on ``/dev/shm``: the budget
is what one arm may take of it, and each command's memory cgroup counts what it wrote.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from pathlib import Path

DISK_MB_ENV = "SKILLAB_SANDBOX_DISK_MB"
DEFAULT_DISK_MB = 2048
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 1 << 18
_MNT_DETACH = 2
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_lock = threading.Lock()
# None: not tried yet; "" : mounts work; else why they do not.
_problem: str | None = None


def budget_bytes() -> int:
    """The per-arm budget in bytes; 0 turns it off."""
    raw = os.environ.get(DISK_MB_ENV, "").strip()
    try:
        megabytes = int(raw) if raw else DEFAULT_DISK_MB
    except ValueError:
        megabytes = DEFAULT_DISK_MB
    return max(0, megabytes) << 20


def enter_private_mounts() -> str | None:
    """Give this process a private mount namespace, once; None when budgets can be mounted,
    else the reason they cannot. Must run before the process starts a thread."""
    global _problem
    with _lock:
        if _problem is None:
            _problem = _enter()
        return _problem or None


def _enter() -> str:
    if budget_bytes() == 0:
        return f"turned off ({DISK_MB_ENV}=0)"
    if threading.active_count() > 1:
        return "skillab was already running threads when it could have taken a mount namespace"
    libc = _libc()
    if libc is None:
        return "no C library to call unshare(2) with"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWNS) != 0:
        if libc.unshare(_CLONE_NEWNS | _CLONE_NEWUSER) != 0:
            return f"unshare(2) refused a mount namespace: {os.strerror(ctypes.get_errno())}"
        # A non-dumpable process's /proc/self files belong to root (``guard``): the maps are
        # written while it is dumpable, for these three writes only.
        dumpable = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        try:
            Path("/proc/self/setgroups").write_text("deny")
            Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
            Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        except OSError as exc:
            return f"the user namespace's id maps could not be written: {exc.strerror}"
        finally:
            libc.prctl(_PR_SET_DUMPABLE, max(dumpable, 0), 0, 0, 0)
    # Nothing mounted here propagates back to the host's namespace.
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return f"the mounts could not be made private: {os.strerror(ctypes.get_errno())}"
    return ""


def mount_budget(directory: Path) -> bool:
    """Mount a tmpfs of the budget's size on ``directory`` (empty, private to skillab); False
    where budgets cannot be mounted."""
    with _lock:
        usable = _problem == ""
    size = budget_bytes()
    libc = _libc()
    if not usable or size == 0 or libc is None:
        return False
    options = f"size={size},mode=0700,uid={os.getuid()},gid={os.getgid()}".encode()
    if libc.mount(b"tmpfs", os.fsencode(directory), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        return False
    return True


def unmount_budget(directory: Path) -> None:
    """Detach the tmpfs: its files are freed at once, however many there are."""
    libc = _libc()
    if libc is not None and libc.umount2(os.fsencode(directory), _MNT_DETACH) != 0:
        if ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
            raise OSError(ctypes.get_errno(), f"umount {directory}")


def unmount_below(directory: Path) -> None:
    """Detach every budget still mounted under ``directory`` (arms abandoned at an interrupt),
    so the directory can be removed; detached, their files go when the last user lets go."""
    with _lock:
        if _problem != "":
            return
    prefix = os.fsencode(os.path.realpath(directory)).rstrip(b"/") + b"/"
    try:
        with open("/proc/self/mountinfo", "rb") as mounts:
            points = [line.split()[4] for line in mounts if len(line.split()) > 4]
    except OSError:
        return
    # The escapes mountinfo uses for spaces and such are left as they are: skillab's paths have none.
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        try:
            unmount_budget(Path(os.fsdecode(point)))
        except OSError:
            pass


def workspace_full() -> str:
    """Why an arm or trial whose workspace filled its budget ends in error."""
    return f"the workspace is full: it filled its disk budget of {budget_bytes() >> 20} MiB ({DISK_MB_ENV})"


def describe_budget() -> str:
    with _lock:
        problem = _problem
    if problem == "":
        return f"{budget_bytes() >> 20} MiB per arm (its workspace is a tmpfs of that size)"
    return f"NOT bounded per arm: {problem or 'no mount namespace was taken'}"


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
