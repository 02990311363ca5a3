"""What one command may see (``View``), its one way out (``ProxyRoute``), and how a backend
starts it (``Wrapped``): the plain types every backend and the workspace share (``backend``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ProxyRoute:
    """The one way out of a sandbox with no network: a host-side proxy's Unix socket, which a
    bridge inside the sandbox serves on ``127.0.0.1:port``."""

    socket: Path
    port: int
    # The per-arm token the proxy requires, and the variable the bridge hands it to the CLI in.
    # It reaches the bridge on its stdin, never in an argv or environment another process reads.
    token: str | None = field(default=None, repr=False)
    token_env: str | None = None

    @property
    def endpoint(self) -> str:
        """The base URL a CLI inside the sandbox is pointed at."""
        return f"http://127.0.0.1:{self.port}"


@dataclass(frozen=True)
class View:
    """What one command sees: ``workspace`` (writable), the read-only system, ``read_only``
    host paths (an agent CLI's installation), and nothing else of the host. ``hide`` names host
    directories that must stay invisible even where a bound system directory contains them."""

    workspace: Path
    cwd: Path
    read_only: tuple[Path, ...] = ()
    # (host path, path inside): read-only binds placed elsewhere (a grader's Python packages).
    read_only_at: tuple[tuple[Path, str], ...] = ()
    hide: tuple[Path, ...] = ()
    network: ProxyRoute | None = None
    # (host path, path inside the workspace): read-only binds over the workspace's own entries
    # (a grader's pristine files, ``pristine.py``).
    pinned: tuple[tuple[Path, str], ...] = ()


@dataclass
class Wrapped:
    """How to start a command under a backend: argv, the environment of the process started,
    and files to write the started pid to (cgroups) before the sandbox itself starts."""

    argv: list[str]
    env: dict[str, str]
    cleanup: list[Any] = field(default_factory=list)
    # The backend reports death by signal N as exit code 128+N (so does a shell).
    signal_as_exit: bool = False
    # Kills every process the command started, beyond its process group (its cgroup), if it can.
    kill: Callable[[], None] | None = None
    # Descriptors the started process inherits (the seccomp filter bwrap reads).
    pass_fds: tuple[int, ...] = ()
    # Whether the command runs under the seccomp filter that refuses the key calls (``seccomp``).
    seccomp: bool = False
