"""Per-command cgroups made ahead of need and removed behind, on one background thread.

Making a cgroup (a ``mkdir`` per controller and a limit written to each) and removing it (an
``rmdir`` that fails while the command's last processes are still being torn down, so it is
retried) cost milliseconds a command need not wait for. The keeper holds a few fresh cgroups
ready and removes used ones later. Each command still gets a cgroup no process was ever in,
made with the limits in force when it starts: a stocked one made under other limits is removed
rather than handed out. What the keeper still holds at exit is removed then (``close``), and
a run that died without exiting is swept by the next one (``limits.sweep_cgroups``).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

STOCK = 8
# A busy cgroup is retried this often; ``close`` retries for at most this long.
_RETRY_S = 0.01
_CLOSE_WAIT_S = 1.0


class Cgroup(Protocol):
    @property
    def limits(self) -> Hashable:
        """The limits the cgroup was made with."""
        ...

    def try_remove(self) -> bool:
        """Remove the cgroup's directories; False while one is still busy."""
        ...


# The cgroup type a keeper holds, and the limits it makes them with.
C = TypeVar("C", bound=Cgroup)
L = TypeVar("L", bound=Hashable)


class Keeper(Generic[C, L]):
    def __init__(self, make: Callable[[L], C], wanted: Callable[[], L],
                 stock: int = STOCK):
        self._make = make
        self._wanted = wanted
        self._stock = stock
        self._ready: deque[C] = deque()
        self._used: list[C] = []
        self._busy = 0  # removals and makes the thread is doing outside the lock
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def take(self) -> C:
        """A fresh cgroup with the limits in force now: from the stock, else made here."""
        wanted = self._wanted()
        with self._cond:
            while self._ready:
                cgroup = self._ready.popleft()
                if cgroup.limits == wanted:
                    self._wake()
                    return cgroup
                self._used.append(cgroup)
            self._wake()
        return self._make(wanted)

    def release(self, cgroup: C) -> None:
        """The command is over: remove its cgroup soon."""
        with self._cond:
            self._used.append(cgroup)
            self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    def stocked(self) -> list[C]:
        with self._cond:
            return list(self._ready)

    def drain(self, timeout_s: float = 5.0) -> None:
        """Wait until every released cgroup is removed (or ``timeout_s`` passes)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while (self._used or self._busy) and time.monotonic() < deadline:
                self._wake()
                self._cond.wait(_RETRY_S)

    def close(self) -> None:
        """Stop stocking and remove every cgroup held (at exit)."""
        with self._cond:
            self._closed = True
            held = [*self._ready, *self._used]
            self._ready.clear()
            self._used.clear()
            self._cond.notify_all()
        deadline = time.monotonic() + _CLOSE_WAIT_S
        while held:
            held = [cgroup for cgroup in held if not _removed(cgroup)]
            if not held or time.monotonic() >= deadline:
                break
            time.sleep(_RETRY_S)

    def _wake(self) -> None:
        # Called with the lock held.
        if self._closed:
            return
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._work, name="skillab-cgroups", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not self._used and len(self._ready) >= self._stock:
                    self._cond.wait()
                if self._closed:
                    return
                used, self._used = self._used, []
                missing = self._stock - len(self._ready)
                self._busy += 1
            try:
                still = [cgroup for cgroup in used if not _removed(cgroup)]
                made = self._fill(missing)
            finally:
                with self._cond:
                    self._busy -= 1
                    self._used.extend(still)
                    if self._closed:
                        self._used.extend(made)
                    else:
                        self._ready.extend(made)
                    self._cond.notify_all()
            if still:  # their last processes are still being torn down
                time.sleep(_RETRY_S)

    def _fill(self, missing: int) -> list[C]:
        made: list[C] = []
        wanted = self._wanted()
        for _ in range(max(0, missing)):
            try:
                made.append(self._make(wanted))
            except OSError:  # the parent refuses more cgroups: commands make their own
                break
        return made


def _removed(cgroup: Cgroup) -> bool:
    try:
        return cgroup.try_remove()
    except OSError:
        return False


def after_fork(reset: Callable[[], None]) -> None:
    """A forked child must not share the parent's keeper (its lock may be held, its thread is
    gone): ``reset`` gives it a keeper of its own."""
    os.register_at_fork(after_in_child=reset)
