"""Process-wide protection of the runner itself, set up once by the CLI.

* ``PR_SET_DUMPABLE`` 0: no other process of the same uid can ptrace skillab or read its
  ``/proc/<pid>/environ`` and memory (where the provider keys live), even on a host where the
  sandbox is weaker than bwrap's pid namespace.
* SIGINT and SIGTERM stop every sandboxed command at once and refuse new ones, then unwind as
  ``KeyboardInterrupt`` so partial results are kept and the exit code is 130.
* A fresh, empty session keyring of its own (``keyring``): whatever keys the container or the
  login session that started skillab holds are out of reach of every command it runs.
"""

from __future__ import annotations

import ctypes
import signal
import sys
from typing import Any

from ..core import stop

_PR_SET_DUMPABLE = 4


def guard_process() -> bool:
    """Apply all three; returns whether the process is now non-dumpable."""
    from .keyring import join_fresh

    join_fresh()
    try:
        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)
    except ValueError:
        pass  # not the main thread (skillab called as a library): only that one may set them
    return set_non_dumpable()


def set_non_dumpable() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stop(signum: int, _frame: Any) -> None:
    # The process runner loads with the first command: before that nothing runs to stop, and
    # ``--help`` or ``validate`` never pay for importing it.
    process = sys.modules.get(f"{__package__}.process")
    if process is not None:
        process.stop_all_commands()
    stop.request()
    raise KeyboardInterrupt
