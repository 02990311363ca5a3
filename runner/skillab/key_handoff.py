"""Keys live in skillab's memory, never in an environment a suite's code can read.

``/proc/<pid>/environ`` shows the environment a process was *started* with, whatever it later
removes from ``os.environ``; any process of the same user that may inspect skillab (an
unsandboxed validator, a path staged from ``/proc``) reads it there. So when skillab starts with
a key in its environment, it writes the keys to an anonymous memory file, and replaces itself
(``execve``, the same pid and command line) with an image started without them, which reads the
keys back from that inherited descriptor, closes it and puts them into ``os.environ`` of its
own: every provider finds its key as before, and ``/proc/<pid>/environ`` never held one. Children
get the allowlisted environment (``sandbox.environment``), never ``os.environ``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from .secrets import is_secret_env_var

HANDOFF_ENV = "SKILLAB_KEYS_FD"
_MEMFD_NAME = "skillab-keys"


def held_keys(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that hold a credential (``secrets.is_secret_env_var``)."""
    return {name: value for name, value in environ.items() if value and is_secret_env_var(name)}


def isolate_keys() -> None:
    """Take the keys over from a handoff, or hand them over to a fresh image of this process.

    Returns at once where there is nothing to hand over or no way to (no ``memfd_create``, no
    original command line); ``execve`` does not return when it works."""
    handed = _take_handoff()
    if handed is not None:
        os.environ.update(handed)
        return
    keys = held_keys(os.environ)
    argv = list(getattr(sys, "orig_argv", []) or [])
    if not keys or not argv or not sys.executable or not hasattr(os, "memfd_create"):
        return
    fd = os.memfd_create(_MEMFD_NAME, 0)
    os.set_inheritable(fd, True)
    os.write(fd, json.dumps(keys).encode())
    env = {name: value for name, value in os.environ.items() if name not in keys}
    env[HANDOFF_ENV] = str(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, argv, env)
    except OSError:
        os.close(fd)


def _take_handoff() -> dict[str, str] | None:
    """The keys in the descriptor ``SKILLAB_KEYS_FD`` names, when it is skillab's own memfd."""
    value = os.environ.pop(HANDOFF_ENV, None)
    if value is None or not value.isdigit():
        return None
    fd = int(value)
    try:
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(f"/memfd:{_MEMFD_NAME} "):
            return None
    except OSError:
        return None
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        keys = json.loads(b"".join(chunks))
    except ValueError:
        return None
    if not isinstance(keys, dict):
        return None
    return {str(name): str(value) for name, value in keys.items()}
