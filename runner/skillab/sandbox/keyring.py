"""A fresh, empty session keyring for every command skillab starts.

Keyrings are not namespaced: a process inherits its parent's session keyring, so without this
every sandbox of a run would share skillab's (a container's, or a systemd session's). The
seccomp filter (``seccomp``) already refuses the key calls inside the sandbox; this keeps the
runner's own keys out of a command's reach wherever the filter is not loaded (``--sandbox
none``) and gives each command nothing to share in the first place.
"""

from __future__ import annotations

import ctypes
import functools
import os

_KEYCTL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1


@functools.cache
def _syscall():  # type: ignore[no-untyped-def]
    try:
        return ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None


def join_fresh() -> None:
    """Replace the calling process's session keyring with a new anonymous one (a no-op where
    the kernel has no keys). Runs in the child between fork and exec: no imports, no locks."""
    number, call = _NUMBER, _CALL
    if number is not None and call is not None:
        call(number, KEYCTL_JOIN_SESSION_KEYRING, None)


_NUMBER = _KEYCTL.get(os.uname().machine)
_CALL = _syscall() if _NUMBER is not None else None
