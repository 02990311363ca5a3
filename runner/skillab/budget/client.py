"""A shard's side of the shared budget: every model request asks the service before it goes out.

``SharedBudget`` is one per service URL in a process (``shared_budget``), shared by every arm,
the judge and the credential proxies, as the provider slots are (``providers.rate``). A request
is admitted (``admit``: waits while the service says wait, raises ``BudgetRefused`` when the
run-wide cap leaves it no room), then settled with what its answer cost, or released with
nothing when no answer came; a 429 is reported (``throttle``) so every shard backs off.

A shard that cannot reach the service (refused connection, timeout, an answer that is no
budget's) stops asking it for the rest of the run: it falls back to its local cap (its own
``--max-cost-usd``, enforced by the proxy and the engine as without a service) and ``fallback``
says why, for the report. The run token goes in one header and nowhere else.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..core import stop
from ..core.choices import budget_url
from ..errors import UsageError

# The run token every shard and the service hold; never in a URL, a flag or a log.
TOKEN_ENV = "SKILLAB_BUDGET_TOKEN"
# One exchange with the service; it answers from memory, so a slow one is a down one.
EXCHANGE_TIMEOUT_S = 5.0
# The longest a request waits for room, a token or a back-off before it is refused.
DEFAULT_WAIT_S = 600.0


class BudgetRefused(Exception):
    """The service refused a request: the run-wide cap leaves it no room."""


@dataclass(frozen=True)
class Ticket:
    """A granted request: ``remote`` is the service's ticket, None when the shard ran locally."""

    remote: str | None


def check_url(url: str) -> str:
    """``url`` when it is a budget service's address (``core.choices.budget_url``)."""
    try:
        return budget_url(url)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--budget-url: {exc}") from None


class SharedBudget:
    """The budget service at ``url`` as one shard sees it (see the module docstring)."""

    def __init__(self, url: str, token: str, *, shard: str = "", timeout_s: float = EXCHANGE_TIMEOUT_S,
                 sleep: Callable[[float], None] = stop.sleep):
        self.url = check_url(url)
        parts = urlsplit(self.url)
        self._host, self._port = parts.hostname or "", parts.port or 80
        self._token = token
        self.shard = shard
        self._timeout_s = timeout_s
        self._sleep = sleep
        self._lock = threading.Lock()
        # Why this shard stopped asking the service (None while it asks it).
        self.fallback: str | None = None
        # The reason the service refused a request, once it did: the run-wide cap is reached.
        self.refused: str | None = None

    def __repr__(self) -> str:  # never show the token
        return f"SharedBudget({self.url!r})"

    def admit(self, provider: str, upper_usd: float | None, *, wait_s: float = DEFAULT_WAIT_S) -> Ticket:
        """Wait for the service's grant of a request to ``provider`` costing up to ``upper_usd``."""
        deadline = time.monotonic() + wait_s
        while self.fallback is None:
            answer = self._exchange("POST", "/v1/admit", {"provider": provider, "upper_usd": upper_usd,
                                                          "shard": self.shard})
            if answer is None:
                break
            if isinstance(answer.get("ticket"), str):
                return Ticket(answer["ticket"])
            if isinstance(answer.get("refused"), str):
                self.refused = answer["refused"]
                raise BudgetRefused(answer["refused"])
            wait = answer.get("wait_s")
            if not isinstance(wait, (int, float)) or wait < 0:
                self._fall_back("its answer to an admission was not one")
                break
            if time.monotonic() + wait > deadline:
                raise BudgetRefused(f"the shared budget kept this request waiting past {wait_s:g}s")
            self._sleep(min(float(wait), max(0.0, deadline - time.monotonic())))
            if stop.requested():
                raise BudgetRefused("the run stopped while this request waited for the shared budget")
        return Ticket(None)

    def settle(self, ticket: Ticket, spent_usd: float | None) -> None:
        """Charge what the answer cost (None: released, no answer came)."""
        if ticket.remote is not None and self.fallback is None:
            self._exchange("POST", "/v1/settle", {"ticket": ticket.remote, "spent_usd": spent_usd})

    def throttle(self, provider: str, retry_after_s: float | None) -> None:
        """The provider answered 429: every shard holds its requests to it."""
        if self.fallback is None:
            self._exchange("POST", "/v1/throttle", {"provider": provider, "retry_after_s": retry_after_s})

    def status(self) -> Mapping[str, Any] | None:
        return self._exchange("GET", "/v1/status", None)

    def reach(self, wait_s: float) -> Mapping[str, Any] | None:
        """The service's status, waiting up to ``wait_s`` for it to listen: shards of one run
        start in any order, the service's own job or pod among them. Past that the shard falls
        back (``status`` says why)."""
        deadline = time.monotonic() + wait_s
        while not stop.requested():
            left = deadline - time.monotonic()
            try:
                socket.create_connection((self._host, self._port), timeout=max(0.1, min(left, 1.0))).close()
                break
            except OSError:
                if left <= 0:
                    break
                self._sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        return self.status()

    def lane(self, provider: str) -> Lane:
        return Lane(self, provider)

    # --- the wire --------------------------------------------------------------------------

    def _exchange(self, method: str, path: str, payload: dict[str, Any] | None) -> dict[str, Any] | None:
        """The service's JSON answer; None once the shard has fallen back (it says why)."""
        import http.client  # only a run with a service pays for it (it imports email)

        body = None if payload is None else json.dumps(payload).encode()
        headers = {"Authorization": f"Bearer {self._token}", "Content-Type": "application/json"}
        connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout_s)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read(1 << 16)
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            self._fall_back(f"it could not be reached ({type(exc).__name__})")
            return None
        finally:
            connection.close()
        if status == 401:
            self._fall_back(f"it refused this shard's run token ({TOKEN_ENV})")
            return None
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            parsed = None
        if status != 200 or not isinstance(parsed, dict):
            self._fall_back(f"it answered HTTP {status}")
            return None
        return parsed

    def _fall_back(self, why: str) -> None:
        with self._lock:
            if self.fallback is None:
                self.fallback = f"the budget service at {self.url}: {why}"


@dataclass(frozen=True)
class Lane:
    """The shared budget bound to one provider: what a client or a proxy of it is handed."""

    budget: SharedBudget
    provider: str

    def admit(self, upper_usd: float | None, *, wait_s: float = DEFAULT_WAIT_S) -> Ticket:
        return self.budget.admit(self.provider, upper_usd, wait_s=wait_s)

    def settle(self, ticket: Ticket, spent_usd: float | None) -> None:
        self.budget.settle(ticket, spent_usd)

    def throttle(self, retry_after_s: float | None) -> None:
        self.budget.throttle(self.provider, retry_after_s)


_budgets: dict[tuple[str, str], SharedBudget] = {}
_budgets_lock = threading.Lock()


def shared_budget(url: str | None, environ: Mapping[str, str], shard: str = "") -> SharedBudget | None:
    """The process's ``SharedBudget`` for ``url`` (None without one); the token is read from
    ``environ`` and is required: a service is never asked without it."""
    if not url:
        return None
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise UsageError(f"--budget-url needs the run token: set {TOKEN_ENV} to the value "
                         "`skillab budget serve` was started with")
    key = (check_url(url), token)
    with _budgets_lock:
        if key not in _budgets:
            _budgets[key] = SharedBudget(url, token, shard=shard or f"{socket.gethostname()}:{os.getpid()}")
        return _budgets[key]


def lane_for(url: str | None, environ: Mapping[str, str], provider: str) -> Lane | None:
    """The shared budget's lane for ``provider`` (None without ``--budget-url``)."""
    budget = shared_budget(url, environ)
    return None if budget is None else budget.lane(provider)
