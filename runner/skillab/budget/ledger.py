"""The run-wide budget the service holds for every shard: spend against one cap, one token bucket
per provider, one back-off deadline per provider.

Each model request of each shard asks ``admit`` before it goes upstream:

- the cap: the request reserves its upper cost (``estimate.upper_cost``) and is granted a ticket
  only when the spend, what is reserved and this reservation stay within the cap; while requests
  in flight may still settle for less it is told to wait, and it is refused once it cannot fit;
- the rate: a granted request takes one token of its provider's bucket (``--rpm``), refilled
  continuously; an empty bucket says how long to wait for the next token;
- the back-off: after any shard reports a 429 (``throttle``) no request to that provider is
  granted before the pause it asked for has passed, on every shard.

A ticket is settled with what the answer cost, or released (charged nothing) when no answer
came. A ticket not settled within its lease (a shard that died mid-request) is charged its whole
reservation: the spend may have happened, and the cap must not forget it.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

# A wait of this long is what a request is told while others in flight may settle for less.
SETTLE_POLL_S = 0.2
# A 429 that names no pause holds its provider this long.
DEFAULT_BACKOFF_S = 1.0
MAX_BACKOFF_S = 120.0
# Longer than any one upstream request may take (the proxy's and the SDKs' 600 s timeouts).
DEFAULT_LEASE_S = 900.0
# The provider name a bucket given without one applies to.
ANY_PROVIDER = "*"


@dataclass(frozen=True)
class Decision:
    """What ``admit`` answers: a ticket, a wait, or a refusal with its reason."""

    kind: Literal["grant", "wait", "refuse"]
    ticket: str = ""
    wait_s: float = 0.0
    reason: str = ""


@dataclass
class _Ticket:
    upper_usd: float
    provider: str
    shard: str
    expires: float


@dataclass
class _Bucket:
    rate_per_s: float
    capacity: float
    tokens: float
    stamp: float

    def take(self, now: float) -> float:
        """Take one token: 0 when one was there, else the seconds until one will be."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate_per_s)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate_per_s


@dataclass
class BudgetStatus:
    """The ledger as ``GET /v1/status`` shows it."""

    cap_usd: float | None
    spent_usd: float
    reserved_usd: float
    overshoot_usd: float
    in_flight: int
    granted: int
    refused: int
    throttles: dict[str, int]
    shards: dict[str, float]


@dataclass
class RunBudget:
    """The service's state; every method is safe from any thread."""

    cap_usd: float | None = None
    # Requests per minute by provider name (``ANY_PROVIDER``: every provider not named).
    rpm: Mapping[str, float] = field(default_factory=dict)
    lease_s: float = DEFAULT_LEASE_S
    clock: Callable[[], float] = time.monotonic
    spent_usd: float = 0.0
    granted: int = 0
    refused: int = 0
    _tickets: dict[str, _Ticket] = field(default_factory=dict)
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _paused_until: dict[str, float] = field(default_factory=dict)
    _throttles: dict[str, int] = field(default_factory=dict)
    _by_shard: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def admit(self, provider: str, upper_usd: float | None, shard: str = "") -> Decision:
        upper = max(0.0, upper_usd or 0.0)
        with self._lock:
            now = self.clock()
            self._expire(now)
            cap_says = self._cap_decision(upper)
            if cap_says is not None:
                return cap_says
            paused = self._paused_until.get(provider, 0.0) - now
            if paused > 0:
                return Decision("wait", wait_s=paused)
            bucket = self._bucket(provider, now)
            wait = bucket.take(now) if bucket is not None else 0.0
            if wait > 0:
                return Decision("wait", wait_s=wait)
            ticket = secrets.token_urlsafe(12)
            self._tickets[ticket] = _Ticket(upper, provider, shard, now + self.lease_s)
            self.granted += 1
            return Decision("grant", ticket=ticket)

    def settle(self, ticket: str, spent_usd: float | None) -> bool:
        """Release ``ticket`` and charge what its answer cost (None or 0: released on error);
        False for a ticket unknown or already expired (its reservation was charged)."""
        with self._lock:
            held = self._tickets.pop(ticket, None)
            if held is None:
                return False
            self._charge(held.shard, max(0.0, spent_usd or 0.0))
            return True

    def throttle(self, provider: str, retry_after_s: float | None) -> None:
        """A shard's request to ``provider`` was answered 429: hold every shard's requests."""
        pause = min(MAX_BACKOFF_S, retry_after_s if retry_after_s and retry_after_s > 0 else DEFAULT_BACKOFF_S)
        with self._lock:
            now = self.clock()
            self._paused_until[provider] = max(self._paused_until.get(provider, 0.0), now + pause)
            self._throttles[provider] = self._throttles.get(provider, 0) + 1

    def status(self) -> BudgetStatus:
        with self._lock:
            self._expire(self.clock())
            reserved = sum(t.upper_usd for t in self._tickets.values())
            overshoot = 0.0 if self.cap_usd is None else max(0.0, self.spent_usd - self.cap_usd)
            return BudgetStatus(self.cap_usd, round(self.spent_usd, 8), round(reserved, 8),
                                round(overshoot, 8), len(self._tickets), self.granted, self.refused,
                                dict(self._throttles), dict(self._by_shard))

    # --- under the lock ---------------------------------------------------------------------

    def _cap_decision(self, upper: float) -> Decision | None:
        cap = self.cap_usd
        if cap is None:
            return None
        if self.spent_usd >= cap or self.spent_usd + upper > cap:
            self.refused += 1
            return Decision("refuse", reason=f"the run-wide cost cap (${cap:g}) is reached "
                                             f"(${self.spent_usd:.4f} spent over every shard)")
        reserved = sum(t.upper_usd for t in self._tickets.values())
        if self.spent_usd + reserved + upper > cap:
            return Decision("wait", wait_s=SETTLE_POLL_S)
        return None

    def _bucket(self, provider: str, now: float) -> _Bucket | None:
        if provider not in self._buckets:
            rpm = self.rpm.get(provider, self.rpm.get(ANY_PROVIDER))
            if not rpm:
                return None
            rate = rpm / 60.0
            # One second's worth of requests may go at once, and at least one.
            capacity = max(1.0, rate)
            self._buckets[provider] = _Bucket(rate, capacity, capacity, now)
        return self._buckets[provider]

    def _expire(self, now: float) -> None:
        for ticket, held in list(self._tickets.items()):
            if held.expires <= now:
                del self._tickets[ticket]
                self._charge(held.shard, held.upper_usd)

    def _charge(self, shard: str, usd: float) -> None:
        self.spent_usd += usd
        self._by_shard[shard] = self._by_shard.get(shard, 0.0) + usd
