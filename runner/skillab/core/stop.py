"""The process-wide stop (SIGINT, SIGTERM, a stopped run), for work that waits on something
outside skillab: a model call in flight ends its wait at once instead of holding the process
until the server answers.

The sandbox sets it with ``stop_all_commands`` and clears it with ``allow_commands``; a waiter
registers its event and is woken by ``request``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_requested = threading.Event()
_waiters: set[threading.Event] = set()
_lock = threading.Lock()


def request() -> None:
    """Stop: wake every waiter, now and from now on (until ``clear``)."""
    with _lock:
        _requested.set()
        waiters = list(_waiters)
    for event in waiters:
        event.set()


def clear() -> None:
    _requested.clear()


def requested() -> bool:
    return _requested.is_set()


@contextmanager
def wakes_on_stop(event: threading.Event) -> Iterator[None]:
    """While inside, a stop sets ``event`` (at once when one was requested already)."""
    with _lock:
        _waiters.add(event)
        if _requested.is_set():
            event.set()
    try:
        yield
    finally:
        with _lock:
            _waiters.discard(event)


def sleep(seconds: float) -> None:
    """``time.sleep`` that a stop cuts short."""
    _requested.wait(seconds)
