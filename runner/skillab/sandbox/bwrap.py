"""The ``bwrap`` backend: bubblewrap, the sandbox Flatpak and Claude Code use on Linux.

A command's mount namespace is built from nothing: the read-only system directories (``/etc``
without what only root may read), a private
``/tmp`` and ``/dev``, ``/proc`` of its own pid namespace, its arm's workspace (the only writable
host path) and, for an agent CLI, its installation (read-only) and the proxy's socket. The
runner's HOME, checkout, virtualenv, cache, history, other arms and (for the baseline) the
skill are never mounted, so there is nothing to unmount. It runs in its own user, pid, network,
IPC, UTS and cgroup namespaces, with every capability dropped, ``no_new_privs``, no nested user
namespaces, a new session, ``PR_SET_PDEATHSIG`` so it dies with skillab, and a seccomp filter
(``seccomp``) over the kernel state namespaces do not cover (keyrings above all).

bwrap is started from an empty environment: ``--clearenv`` alone would leave skillab's
environment readable through bwrap's own process 1 (``/proc/1/environ``) inside the sandbox.
The command's (allowlisted) environment is set with ``--setenv``.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import seccomp
from .limits import command_cgroup, describe_limits
from .trees import walk
from .view import View, Wrapped

# Where bwrap is, when not in the system's directories (tests point it at nothing).
BWRAP_ENV = "SKILLAB_BWRAP"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
TRUSTED_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PROBE_TIMEOUT_S = 20.0
# Joins the cgroups named by the first N arguments, then becomes the sandbox.
_JOIN_CGROUPS = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; '
    'exec "$@"'
)


class BwrapBackend:
    name = "bwrap"

    def __init__(self, binary: str | None = None):
        self.binary = binary or _find_bwrap()

    def problem(self) -> str | None:
        if self.binary is None:
            return "the bwrap command (bubblewrap) is not installed"
        return _probe(self.binary)

    def wrap(self, argv: Sequence[str], view: View, env: Mapping[str, str]) -> Wrapped:
        assert self.binary is not None
        args = [self.binary, *_namespace_args(self.binary)]
        args += self.system_view()
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        bound = [*self.system_sources(), *(os.path.realpath(p) for p in view.read_only)]
        for path in view.read_only:
            args += ["--ro-bind", str(path), str(path)]
        for host, inside in view.read_only_at:
            args += ["--ro-bind", str(host), inside]
        for cover in _covers(view, bound):
            args += ["--tmpfs", cover]
        workspace = str(view.workspace)
        args += ["--bind", workspace, workspace]
        for host, inside in view.pinned:
            args += ["--ro-bind", str(host), inside]
        if view.network is not None:
            socket = str(view.network.socket)
            args += ["--bind", socket, socket]
        args += ["--chdir", str(view.cwd)]
        for name, value in env.items():
            args += ["--setenv", name, value]
        fds: tuple[int, ...] = ()
        if seccomp.supported():
            fds = (seccomp.filter_fd(),)
            args += ["--seccomp", str(fds[0])]
        args += ["--", *argv]
        closing = [functools.partial(os.close, fd) for fd in fds]
        cgroup = command_cgroup()
        if cgroup is None:
            return Wrapped(args, {}, closing, signal_as_exit=True, pass_fds=fds, seccomp=bool(fds))
        joined = [_sh(), "-c", _JOIN_CGROUPS, "sh", str(len(cgroup.join_paths)), *cgroup.join_paths]
        return Wrapped([*joined, *args], {}, [*closing, cgroup.release], signal_as_exit=True,
                       kill=cgroup.kill, pass_fds=fds, seccomp=bool(fds))

    def system_view(self) -> list[str]:
        """The read-only root the command sees: the host's system directories."""
        return _system_view()

    def system_sources(self) -> list[str]:
        """Host directories ``system_view`` mounts (a hidden path inside one gets covered)."""
        return _system_sources()

    def describe_root(self) -> str:
        return "read-only " + ", ".join(d for d in SYSTEM_DIRS if os.path.lexists(d))

    def guarantees(self) -> dict[str, Any]:
        return {
            "enforced_by": f"kernel namespaces set up by {bwrap_version(self.binary)}",
            "view": "the arm's workspace (the only writable path), "
                    + self.describe_root()
                    + ", a private /tmp and /dev, /proc of its own pid namespace; nothing else of "
                      "the host is mounted (no HOME, checkout, virtualenv, cache, history, other "
                      "arms, and no skill for the without-skill arm)",
            "secrets": "started from an empty environment; the command's environment is an "
                       "allowlist with no credentials; skillab's /proc is outside its pid namespace",
            "network": "none (own network namespace, loopback only); agent CLIs reach only the "
                       "credential proxy through a Unix socket",
            "privileges": "own user namespace, all capabilities dropped, no_new_privs, no nested "
                          "user namespaces, own session, a fresh session keyring, and a seccomp "
                          "filter refusing the key, mount, namespace, bpf, perf, kexec, module "
                          "and io_uring calls" + ("" if seccomp.supported() else
                                                  " (not on this architecture: no filter)"),
            "lifetime": "killed with skillab (die-with-parent); its pid namespace ends with it",
            "limits": describe_limits(),
        }


def _namespace_args(binary: str) -> list[str]:
    args = ["--unshare-all", "--unshare-user"]
    if _supports(binary, "--disable-userns"):
        args.append("--disable-userns")
    return [*args, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]


# The host's system directories do not change under a run: looked at once, not per command.
@functools.cache
def _system_view_args() -> tuple[str, ...]:
    args: list[str] = []
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):
            args += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            args += ["--ro-bind", directory, directory]
            if directory == "/etc":
                args += _root_only_covers(directory)
    return tuple(args)


def _root_only_covers(top: str) -> list[str]:
    """Cover what under ``top`` not everyone may read but the command could, as its owner or
    group (``/etc/shadow``, sudoers, ``ssl/private``, host keys when skillab runs as root). A
    file gets ``/dev/null`` over it, a directory an empty read-only tmpfs; what everyone may
    read stays, since any tool a task installs may want its own file there. The command has no
    capabilities, so what its uid cannot read by the mode bits needs no cover (as a non-root
    user, nothing here does: every cover is a mount each command pays for)."""
    covers: list[str] = []
    groups = {os.getegid(), *os.getgroups()}
    for directory, dirnames, filenames in walk(top):
        for name in list(dirnames):
            path = os.path.join(directory, name)
            if _private_but_readable(path, groups, directory=True):
                covers += ["--tmpfs", path, "--remount-ro", path]
                dirnames.remove(name)
        for name in filenames:
            path = os.path.join(directory, name)
            if _private_but_readable(path, groups):
                covers += ["--ro-bind", "/dev/null", path]
    return covers


def _private_but_readable(path: str, groups: set[int], directory: bool = False) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if directory != stat.S_ISDIR(info.st_mode) or not (directory or stat.S_ISREG(info.st_mode)):
        return False  # a link is covered, or not, where it points; a device is no secret
    read = (stat.S_IROTH, stat.S_IRGRP, stat.S_IRUSR)
    search = (stat.S_IXOTH, stat.S_IXGRP, stat.S_IXUSR) if directory else (0, 0, 0)
    if info.st_mode & (read[0] | search[0]) == read[0] | search[0]:
        return False  # everyone may
    if info.st_uid == os.geteuid():
        return info.st_mode & (read[2] | search[2]) == read[2] | search[2]
    return info.st_gid in groups and info.st_mode & (read[1] | search[1]) == read[1] | search[1]


def _system_view() -> list[str]:
    return list(_system_view_args())


@functools.cache
def _system_source_dirs() -> tuple[str, ...]:
    return tuple(d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d))


def _system_sources() -> list[str]:
    return list(_system_source_dirs())


def _covers(view: View, bound: list[str]) -> list[str]:
    """Host paths that must stay invisible but lie inside a bound directory: each gets an empty
    tmpfs over it. The command has no capabilities, so it cannot unmount one."""
    # skillab's virtualenv, never the system Python it is based on (that one is the system), and
    # not when the command is given it on purpose: the grader python of a caller who installed
    # skillab into the virtualenv their tools (pytest) live in is that virtualenv.
    given = {os.path.realpath(p) for p in view.read_only}
    venv = [sys.prefix] if sys.prefix != sys.base_prefix and _runner_real(sys.prefix) not in given else []
    runner = [_runner_real(str(p)) for p in (Path.home(), *venv, *_cwd())]
    covers = []
    sources = _system_source_dirs()
    for real in [*runner, *(os.path.realpath(p) for p in view.hide)]:
        inside = any(_below(real, source) for source in bound)
        system_root = any(_below(source, real) for source in sources)
        if inside and not system_root and real not in covers:
            covers.append(real)
    return covers


# The runner's own HOME, virtualenv and working directory, resolved once each (as named now):
# every command of a run covers them, and they are the runner's, not a command's, to change.
@functools.lru_cache(maxsize=32)
def _runner_real(path: str) -> str:
    return os.path.realpath(path)


def _cwd() -> list[Path]:
    try:
        return [Path(os.getcwd())]
    except OSError:  # the runner's working directory was removed: nothing to cover
        return []


def _below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@functools.cache
def _sh() -> str:
    return shutil.which("sh", path=TRUSTED_PATH) or "/bin/sh"


def _find_bwrap() -> str | None:
    # A fixed system PATH, so a bwrap planted in the virtualenv's bin/ is never the sandbox.
    explicit = os.environ.get(BWRAP_ENV)
    found = explicit if explicit is not None else shutil.which("bwrap", path=TRUSTED_PATH)
    return os.path.realpath(found) if found and os.access(found, os.X_OK) else None


@functools.cache
def _supports(binary: str, option: str) -> bool:
    try:
        done = subprocess.run([binary, "--help"], capture_output=True, env={}, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return option.encode() in done.stdout + done.stderr


@functools.cache
def bwrap_version(binary: str | None) -> str:
    if binary is None:
        return "bubblewrap (not installed)"
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, env={}, timeout=10)
        return done.stdout.decode().strip() or "bubblewrap"
    except (OSError, subprocess.SubprocessError):
        return "bubblewrap"


@functools.cache
def _probe(binary: str) -> str | None:
    """Run ``true`` in a full sandbox; None when it works, else the reason."""
    scratch = tempfile.mkdtemp(prefix="skillab-probe-")
    try:
        root = Path(scratch)
        wrapped = BwrapBackend(binary).wrap(["true"], View(root, root), {"PATH": TRUSTED_PATH})
        try:
            done = subprocess.run(
                wrapped.argv, capture_output=True, env=wrapped.env, timeout=_PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL, pass_fds=wrapped.pass_fds,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        finally:
            for step in wrapped.cleanup:
                step()
        if done.returncode == 0:
            return None
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {done.returncode}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
