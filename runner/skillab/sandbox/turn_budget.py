"""The turn cap the credential proxy holds a CLI to, for a CLI with no turn cap of its own."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

# What a request over the budget gets: a client error the CLIs do not retry, and not 401/403,
# which mean a rejected key.
OVER_BUDGET_STATUS = 400


@dataclass
class RequestBudget:
    """At most ``limit`` answered model requests (``POST`` to a path ending in ``path_suffix``)
    per session. A request counts once the upstream answered it with a 2xx, so a retried outage
    does not use up turns; once the limit is reached, each further one is refused (``refused``).
    ``tails`` holds the end of each answered response body."""

    limit: int
    path_suffix: str
    used: int = 0
    refused: int = 0
    tails: list[bytes] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def counts(self, method: str, path: str) -> bool:
        return method == "POST" and path.split("?", 1)[0].endswith(self.path_suffix)

    def admit(self) -> bool:
        with self._lock:
            if self.used < self.limit:
                return True
            self.refused += 1
            return False

    def settle(self, status: int) -> None:
        if 200 <= status < 300:
            with self._lock:
                self.used += 1

    def keep(self, tail: bytes) -> None:
        with self._lock:
            self.tails.append(tail)
