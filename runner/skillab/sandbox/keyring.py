"""Fresh, empty session keyrings: one for skillab itself, and one per command run without the
seccomp filter.

Keyrings are not namespaced: a process inherits its parent's session keyring, so every sandbox
of a run would share skillab's, which is a container's (runc gives each one a session keyring)
or a systemd session's. skillab joins a new anonymous one when it starts (``guard``), so what
its parent holds never reaches a command, and the seccomp filter (``seccomp``) refuses every key
call inside the sandbox, so no command can plant a key another reads. A command run without the
filter (``--sandbox none``, an architecture the filter does not know) gets a new keyring of its
own between fork and exec; that costs a fork instead of a vfork, about 4 ms a command here,
which is why the filtered commands do without.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
KEYCTL_JOIN_SESSION_KEYRING = 1


def _syscall() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None


# Looked up once, here: the child calls it between fork and exec, where nothing may be imported.
_CALL = _syscall() if _KEYCTL is not None else None


def join_fresh() -> None:
    """Replace the calling process's session keyring with a new anonymous one (nothing where
    the kernel has no keys)."""
    if _CALL is not None:
        _CALL(_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None)
