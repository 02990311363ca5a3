"""A fresh, empty session keyring for every command skillab starts.

Keyrings are not namespaced: a process inherits its parent's session keyring, so without this
every sandbox of a run would share skillab's (a container's, or a systemd session's). The
seccomp filter (``seccomp``) already refuses the key calls inside the sandbox; this keeps the
runner's own keys out of a command's reach wherever the filter is not loaded (``--sandbox
none``) and gives each command nothing to share in the first place.
"""

from __future__ import annotations

import ctypes
import os

_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
KEYCTL_JOIN_SESSION_KEYRING = 1


def _syscall():  # type: ignore[no-untyped-def]
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
