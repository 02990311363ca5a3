"""The process-wide stop (SIGINT, SIGTERM, a stopped run), for work that waits on something
outside skillab: a model call in flight ends its wait at once instead of holding the process
until the server answers.

The sandbox sets it with ``stop_all_commands`` and clears it with ``allow_commands``; a waiter
registers its event and is woken by ``request``.

Every model call registers and unregisters a waiter, so neither takes a lock: at 128 calls in
flight a lock shared by all of them was waited on for longer than the calls took. ``set.add``,
``set.discard`` and ``set.copy`` are each one step under the interpreter lock, and the order
makes a stop reach every waiter: ``request`` sets the flag before it copies the waiters, and a
waiter is added before it reads the flag, so either the copy holds it or it sees the flag.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_requested = threading.Event()
_waiters: set[threading.Event] = set()


def request() -> None:
    """Stop: wake every waiter, now and from now on (until ``clear``)."""
    _requested.set()
    for event in _waiters.copy():
        event.set()


def clear() -> None:
    _requested.clear()


def requested() -> bool:
    return _requested.is_set()


@contextmanager
def wakes_on_stop(event: threading.Event) -> Iterator[None]:
    """While inside, a stop sets ``event`` (at once when one was requested already)."""
    _waiters.add(event)
    if _requested.is_set():
        event.set()
    try:
        yield
    finally:
        _waiters.discard(event)


def sleep(seconds: float) -> None:
    """``time.sleep`` that a stop cuts short."""
    _requested.wait(seconds)
