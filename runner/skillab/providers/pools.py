"""One provider client's connection pools: one per ``CALLS_PER_POOL`` calls of ``--concurrency``.

The ``anthropic`` and ``openai`` SDKs send through one HTTP connection pool per client (httpcore).
Each call takes that pool's lock twice, and under it scans every connection and polls each idle
one's socket, giving up the interpreter lock at each poll. Past about eight calls in flight the
holder waits its turn for the interpreter lock again and again while every other call waits on
the pool: at 128 calls in flight they spend more time on that lock than on the provider. So a
client carries one pool per eight calls of ``--concurrency``, each call taking the next in turn,
and every pool shares one TLS context (building one reads the trust store again, tens to hundreds of
milliseconds). Up to eight calls, the SDK's own default client, unchanged.

Every pool speaks with the same key to the same endpoint through the same SDK: what differs is
only which socket a request goes out on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .sdk_client import load_sdk

CALLS_PER_POOL = 8


class SdkPools:
    """SDK clients made by ``make(http_client)``; ``next()`` is the one the next call uses."""

    def __init__(self, sdk: ModuleType, make: Callable[[Any], Any], concurrency: int):
        count = max(1, -(-concurrency // CALLS_PER_POOL))
        if count == 1:
            self.clients = [make(None)]
        else:
            # The SDK's HTTP library (the SDK imported it): its default context, made once.
            context = load_sdk("httpx2").create_ssl_context()
            self.clients = [make(sdk.DefaultHttpxClient(verify=context)) for _ in range(count)]
        self._turn = itertools.count()

    @property
    def first(self) -> Any:
        return self.clients[0]

    def next(self) -> Any:
        # ``next`` on an ``itertools.count`` is one step under the interpreter lock: no lock here.
        return self.clients[next(self._turn) % len(self.clients)]
