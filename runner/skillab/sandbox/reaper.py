"""Workspace clean-up off the arms' critical path.

Removing a finished arm's tree costs a few milliseconds of filesystem work per directory, which
the next arm need not wait for: a ``Reaper`` deletes discarded trees on one background thread,
and the run waits for it (``drain``) before its scratch directory goes. A tree waiting here is
still inside the run's private (0700) scratch directory, which no sandboxed command can see: each
arm's sandbox binds only its own workspace.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path


class Reaper:
    def __init__(self, remove: Callable[[Path], None]):
        self._remove = remove
        self._queue: queue.Queue[Path] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def discard(self, path: Path) -> None:
        """Delete ``path`` soon, on the reaper's thread."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="skillab-reaper", daemon=True)
                self._thread.start()
        self._queue.put(path)

    def drain(self) -> None:
        """Return once every tree discarded so far is gone."""
        self._queue.join()

    def _work(self) -> None:
        while True:
            path = self._queue.get()
            try:
                self._remove(path)
            except Exception:  # noqa: BLE001 - the thread must outlive any one tree
                pass  # best effort: a leftover is only litter, removed with the run's scratch
            finally:
                self._queue.task_done()
