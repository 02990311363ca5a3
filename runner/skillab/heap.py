"""The process heap under many threads: glibc's malloc arenas.

glibc gives each thread that allocates its own malloc arena (up to eight per core), and memory
freed in one arena is not reused by another. The engine's arm threads each allocate a little
(records, validator output, JSON), so a long run's resident size grows with the thread count
rather than with what it holds: at 1,000 cases, 87 MiB with per-thread arenas against 46 MiB
with one (``MALLOC_ARENA_MAX=1``). The GIL already serialises Python's allocations, so one
shared arena costs no contention worth measuring. A ``MALLOC_ARENA_MAX`` the user set wins.
"""

from __future__ import annotations

import os

# mallopt's parameter number for the arena cap (glibc malloc.h).
_M_ARENA_MAX = -8
ARENAS = 1


def limit_arenas(count: int = ARENAS) -> bool:
    """Cap glibc's arenas for threads started from now on; False where that is not glibc."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None).mallopt(_M_ARENA_MAX, count) == 1
    except (OSError, AttributeError):
        return False
