"""Resource limits of one sandboxed command: a cgroup where the host lets us make one, rlimits always.

A process-count limit only holds as a cgroup's ``pids.max``: ``RLIMIT_NPROC`` counts every
process of the uid on the host and bounds nothing for root. So each command gets its own child
cgroup (v1 ``pids`` and ``memory`` hierarchies, or a v2 cgroup whose parent delegates those
controllers), joined by the shell that ``exec``s the sandbox, so every descendant is counted; a
few are made ahead of need and used ones removed behind, off the command's path
(``cgroup_keeper``). Where
no cgroup can be made, the recorded guarantees say the process count is bounded by
``RLIMIT_NPROC`` (not for root) and memory by the address-space rlimit only.
"""

from __future__ import annotations

import atexit
import functools
import math
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .cgroup_keeper import Keeper, after_fork
from .disk_budget import describe_budget

CGROUP_ROOT = Path("/sys/fs/cgroup")
MAX_PIDS_ENV = "SKILLAB_SANDBOX_MAX_PIDS"
MEMORY_MB_ENV = "SKILLAB_SANDBOX_MEMORY_MB"
DEFAULT_MAX_PIDS = 1024
DEFAULT_MEMORY_MB = 4096
_FILE_SIZE_BLOCKS = 1 << 20  # 1 GiB, in the 1024-byte blocks of bash's ulimit -f
_ADDRESS_SPACE_KIB = 8 << 20  # 8 GiB of address space; the cgroup bounds resident memory
_OPEN_FILES = 1024
_CPUS = os.cpu_count() or 1
# A killed process leaves cgroup.procs once it has exited: looked at again until it has, for
# at most a second. After its command ended a sandbox's pid namespace is torn down in about a
# millisecond (median; 5.5 ms at p90 on a loaded 2-core machine), and the arm waits for it: a
# 5 ms poll made most commands wait 5 ms, a 1 ms poll ends the wait within one of it.
_KILL_WAIT_S = 1.0
_KILL_POLL_S = 0.001
_OWN_NAME = re.compile(r"^skillab-(\d+)-[0-9a-f]{12}$")
_KEEPER: Keeper[CommandCgroup, tuple[int, int]] | None = None
_KEEPER_LOCK = threading.Lock()


@dataclass(frozen=True)
class CgroupSupport:
    """Where per-command cgroups are made: ``(controller file prefix, parent dir)`` pairs."""

    version: int
    # controller name -> the directory new cgroups for it are made in.
    parents: dict[str, Path]

    def describe(self) -> str:
        return f"cgroup v{self.version} ({', '.join(sorted(self.parents))})"


class CommandCgroup:
    """The cgroups of one command; ``join_paths`` are the ``cgroup.procs`` files to join."""

    def __init__(self, support: CgroupSupport, limits: tuple[int, int]):
        name = f"skillab-{os.getpid()}-{os.urandom(6).hex()}"
        self.limits = limits
        pids, memory = limits
        self.dirs: list[Path] = []
        for controller, parent in sorted(support.parents.items()):
            directory = parent / name
            directory.mkdir()
            self.dirs.append(directory)
            if controller == "pids":
                (directory / "pids.max").write_text(str(pids))
            elif support.version == 1:
                (directory / "memory.limit_in_bytes").write_text(str(memory))
            else:
                (directory / "memory.max").write_text(str(memory))

    @property
    def join_paths(self) -> list[str]:
        return [str(directory / "cgroup.procs") for directory in self.dirs]

    def kill(self) -> None:
        """SIGKILL every process in the command's cgroups, whatever its session or pid namespace:
        a sandbox whose ``bwrap`` was killed while starting it is outside the command's process
        group and may not have set its parent-death signal yet. Nothing new can fork meanwhile
        (``pids.max`` 0)."""
        for directory in self.dirs:
            try:
                (directory / "pids.max").write_text("0")
            except OSError:  # not the pids hierarchy
                pass
        give_up = time.monotonic() + _KILL_WAIT_S
        while time.monotonic() < give_up:
            alive = {int(pid) for d in self.dirs for pid in _read(d / "cgroup.procs").split()}
            if not alive:
                return
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(_KILL_POLL_S)

    def release(self) -> None:
        """The command is over: its cgroups are removed in the background (``cgroup_keeper``)."""
        keeper().release(self)

    def try_remove(self) -> bool:
        """Remove the cgroups; False while one's last processes are still being torn down."""
        self.dirs = [d for d in self.dirs if not _rmdir(d)]
        return not self.dirs


def _rmdir(directory: Path) -> bool:
    try:
        directory.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def sweep_cgroups() -> None:
    """Remove cgroups left behind: every one this process holds, and those of dead skillab runs."""
    with _KEEPER_LOCK:
        held = _KEEPER
    if held is not None:
        held.close()
    support = cgroup_support()
    if support is not None:
        _sweep_dead(support)


def _sweep_dead(support: CgroupSupport) -> None:
    for parent in set(support.parents.values()):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            match = _OWN_NAME.match(name)
            if match and not _alive(int(match.group(1))):
                _rmdir(parent / name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def max_pids() -> int:
    """Processes per command (``SKILLAB_SANDBOX_MAX_PIDS``, default 1024)."""
    return _positive_env(MAX_PIDS_ENV, DEFAULT_MAX_PIDS)


def memory_bytes() -> int:
    """Memory per command (``SKILLAB_SANDBOX_MEMORY_MB``, default 4096 MiB)."""
    return _positive_env(MEMORY_MB_ENV, DEFAULT_MEMORY_MB) << 20


def _positive_env(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def command_cgroup() -> CommandCgroup | None:
    """A fresh cgroup for one command, or None where the host gives none (``cgroup_support``)."""
    if cgroup_support() is None:
        return None
    try:
        cgroup = keeper().take()
    except OSError:
        return None
    assert isinstance(cgroup, CommandCgroup)
    return cgroup


def keeper() -> Keeper[CommandCgroup, tuple[int, int]]:
    """This process's keeper of per-command cgroups (made on first use; needs cgroup support)."""
    global _KEEPER
    with _KEEPER_LOCK:
        if _KEEPER is None or _KEEPER.closed:
            support = cgroup_support()
            assert support is not None
            _KEEPER = Keeper(lambda limits: CommandCgroup(support, limits), _wanted)
        return _KEEPER


def _wanted() -> tuple[int, int]:
    return max_pids(), memory_bytes()


def _forget_keeper() -> None:
    global _KEEPER, _KEEPER_LOCK
    _KEEPER, _KEEPER_LOCK = None, threading.Lock()


after_fork(_forget_keeper)


@functools.cache
def cgroup_support() -> CgroupSupport | None:
    """Probe once whether this process can make child cgroups with a pids controller."""
    support = _probe_cgroups()
    if support is not None:
        _sweep_dead(support)
        atexit.register(sweep_cgroups)
    return support


def _probe_cgroups() -> CgroupSupport | None:
    own = _own_cgroups()
    v1: dict[str, Path] = {}
    for controller in ("pids", "memory"):
        base = CGROUP_ROOT / controller
        if controller in own and (base / "cgroup.procs").exists():
            for parent in (base / own[controller].lstrip("/"), base):
                if _can_make_child(parent):
                    v1[controller] = parent
                    break
    if "pids" in v1:
        return CgroupSupport(1, v1)
    if "" in own and (CGROUP_ROOT / "cgroup.controllers").exists():
        parent = CGROUP_ROOT / own[""].lstrip("/")
        enabled = _read(parent / "cgroup.subtree_control").split()
        if "pids" in enabled and _can_make_child(parent):
            parents: dict[str, Path] = {c: parent for c in ("pids", "memory") if c in enabled}
            return CgroupSupport(2, parents)
    return None


def _own_cgroups() -> dict[str, str]:
    found = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            found[controller] = path
    return found


def _can_make_child(parent: Path) -> bool:
    probe = parent / f"skillab-probe-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return os.access(probe / "cgroup.procs", os.W_OK)
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def nproc_rlimit_applies() -> bool:
    """RLIMIT_NPROC bounds a non-root uid; for root the kernel ignores it."""
    return os.geteuid() != 0


def ulimit_script(timeout_s: float) -> str:
    """Shell that lowers soft and hard limits before the command runs.

    One ``ulimit`` per limit, because bash stops at the first one it cannot set. The CPU cap
    only stops a process that escaped the wall-clock kill, so it allows every core for the whole
    timeout. Core dumps are off: a dump of an agent's process is a copy of its memory on disk.
    """
    cpu_s = math.ceil(max(timeout_s, 1)) * _CPUS + 10
    nproc = f"ulimit -u {max_pids() * 4}; " if nproc_rlimit_applies() and cgroup_support() is None else ""
    return (
        f"{{ ulimit -c 0; ulimit -f {_FILE_SIZE_BLOCKS}; ulimit -v {_ADDRESS_SPACE_KIB}; "
        f"ulimit -n {_OPEN_FILES}; ulimit -t {cpu_s}; {nproc}:; }} 2>/dev/null; "
    )


def describe_limits() -> dict[str, str]:
    """The limits in force, for the results document: what enforces each one."""
    support = cgroup_support()
    if support is not None and "pids" in support.parents:
        processes = f"at most {max_pids()} per command ({support.describe()} pids.max)"
    elif nproc_rlimit_applies():
        processes = f"RLIMIT_NPROC {max_pids() * 4} for the whole uid (no writable pids cgroup)"
    else:
        processes = "NOT bounded: no writable pids cgroup, and RLIMIT_NPROC does not bind root"
    if support is not None and "memory" in support.parents:
        memory = f"{memory_bytes() >> 20} MiB per command ({support.describe()} memory limit)"
    else:
        memory = f"address space {_ADDRESS_SPACE_KIB >> 10} MiB per process (RLIMIT_AS only)"
    return {
        "processes": processes,
        "memory": memory,
        "cpu": "RLIMIT_CPU per process (timeout x cores + 10 s)",
        "wall": "the command's timeout; then its whole process tree is killed",
        "output": "captured output capped per stream (head and tail kept)",
        "disk": describe_budget(),
    }
