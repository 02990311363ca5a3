"""How many requests one provider endpoint gets at once: ``--concurrency``, shaped by its 429s.

Every arm of a run, the judge included, shares one ``AdaptiveLimit`` per endpoint and limit
(``provider_slot``). It admits up to ``window`` requests in flight; the window starts at the
limit (``--concurrency``) and is shaped by the provider's own signals, additive increase and
multiplicative decrease, the way TCP shares a link:

- a 429 or 529 halves the window (once per pause: the other requests that were already in
  flight when the provider pushed back do not halve it again) and, when the answer says how
  long (``retry-after``), no request of any arm starts before then: the back-off is shared;
- every answered request grows it again by ``1 / window``, so about one more request in
  flight per window of answers, up to the limit.

A request holds its place only while it is in flight, never during a back-off wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

# Without a ``retry-after``, 429s this close together are one push-back, not several.
_CALM_S = 0.1


class AdaptiveLimit:
    """Requests in flight to one endpoint, at most ``window`` (between 1 and ``limit``)."""

    def __init__(self, limit: int, *, clock: Callable[[], float] = time.monotonic):
        self.limit = max(1, limit)
        self.window = float(self.limit)
        self.in_flight = 0
        # Most requests seen in flight at once, and the times the provider pushed back.
        self.peak = 0
        self.throttles = 0
        self._paused_until = 0.0
        self._calm_until = 0.0
        self._clock = clock
        self._cond = threading.Condition()

    def __enter__(self) -> AdaptiveLimit:
        with self._cond:
            while True:
                wait = self._paused_until - self._clock()
                if wait <= 0 and self.in_flight < int(self.window):
                    break
                self._cond.wait(timeout=wait if wait > 0 else None)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with self._cond:
            self.in_flight -= 1
            if kind is None:
                self.window = min(float(self.limit), self.window + 1 / self.window)
            self._cond.notify_all()

    def throttled(self, retry_after_s: float | None) -> None:
        """The provider answered 429 (or 529): halve the window, and hold every request of every
        arm for ``retry_after_s`` when the provider said how long."""
        with self._cond:
            now = self._clock()
            if now >= self._calm_until:
                self.window = max(1.0, self.window / 2)
                self.throttles += 1
                self._calm_until = now + (retry_after_s or _CALM_S)
            if retry_after_s:
                self._paused_until = max(self._paused_until, now + retry_after_s)
            self._cond.notify_all()


_limits: dict[tuple[str, int], AdaptiveLimit] = {}
_limits_lock = threading.Lock()


def provider_slot(endpoint: str, limit: int) -> AdaptiveLimit:
    """The limit on requests in flight to one provider endpoint, shared process-wide."""
    with _limits_lock:
        key = (endpoint, max(1, limit))
        if key not in _limits:
            _limits[key] = AdaptiveLimit(key[1])
        return _limits[key]
