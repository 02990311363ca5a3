"""The one retry policy and the per-provider concurrency cap every model call goes through.

The SDK clients are built with their own retries off (``max_retries=0``), so what happens on a
429, a 529 or a dropped connection is decided here, once:

- transient failures (408, 409, 429, any 5xx, 529 overloaded, connection errors, timeouts, an
  unreadable body) are retried up to ``max_attempts`` in all;
- the wait honours the server's ``retry-after-ms`` / ``retry-after`` header, otherwise it is an
  exponential backoff with jitter drawn from a generator seeded per call, so a rerun waits the
  same way;
- 401 and 403 raise ``ProviderAuthError`` at once: every later call would fail the same way, so
  the run stops instead of marking each case errored;
- 404 raises ``ProviderEndpointError`` (no such model or endpoint): it too would repeat for
  every arm, so the run stops;
- other client errors (400, 413...) raise ``ProviderError`` without retrying;
- the whole call, attempts and waits together, has a deadline (``deadline_s``): no attempt
  starts and no wait runs past it, and each attempt's timeout is cut to what is left of it, so
  a provider that answers slowly cannot hold one call for attempts × timeout.

The concurrency cap is an ``AdaptiveLimit`` per provider endpoint (``providers.rate``), held only
while a request is in flight (never during a backoff wait): ``--concurrency`` requests at most,
fewer while the provider answers 429 or 529, and no request of any arm starts before a
``retry-after`` it asked for has passed.

With a shared budget (``--budget-url``, ``Budgeted``) each attempt is admitted by the budget
service before it takes its place: reserved at its upper cost, settled at what its answer cost
(released when no answer came), and a 429 holds the provider for every shard; a request the
run-wide cap has no room for ends the call with a ``ProviderError`` that is not retried.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ..budget.client import DEFAULT_WAIT_S, BudgetRefused, Lane
from ..core.retry_after import retry_after_seconds
from ..errors import ProviderAuthError, ProviderEndpointError, ProviderError
from ..secrets import redact
from .rate import AdaptiveLimit

T = TypeVar("T")
FailureKind = Literal["transient", "auth", "fatal"]

DEFAULT_PROVIDER_CONCURRENCY = 8
# The answers by which a provider says "fewer at once": rate limited, overloaded.
_PUSH_BACK = (429, 529)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    # A server may ask for a longer pause than the backoff would take, up to this long.
    max_retry_after_s: float = 120.0
    # One model call, every attempt and wait included, ends by then (None: no deadline).
    deadline_s: float | None = 600.0

    def backoff_s(self, attempt: int, rng: random.Random) -> float:
        """The wait after failed attempt ``attempt`` (1-based): half fixed, half jitter."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


@dataclass(frozen=True)
class Budgeted(Generic[T]):
    """A call under the shared budget: its provider's lane, the most one attempt can cost, and
    how to read an answer's cost."""

    lane: Lane
    upper_usd: float | None
    cost_of: Callable[[T], float | None]


@dataclass(frozen=True)
class Failure:
    """A failed attempt, classified."""

    kind: FailureKind
    message: str
    status: int | None = None
    retry_after_s: float | None = None


def classify_status(status: int) -> FailureKind:
    if status in (401, 403):
        return "auth"
    if status in (408, 409, 429) or status >= 500:
        return "transient"
    return "fatal"


def classify_sdk_error(exc: BaseException) -> Failure:
    """Classify an exception from the ``anthropic`` or ``openai`` SDK (their shapes match).

    Both raise ``APIStatusError`` subclasses carrying ``status_code``, ``response`` and a parsed
    ``body``; ``APIConnectionError`` (``APITimeoutError`` is one) for transport failures; and
    ``APIResponseValidationError`` or a JSON error for a body they cannot read.
    """
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        return Failure(
            classify_status(status),
            f"HTTP {status}: {_provider_message(exc)}",
            status,
            retry_after_seconds(headers),
        )
    name = type(exc).__name__
    if name == "APITimeoutError" or isinstance(exc, TimeoutError):
        return Failure("transient", "request timed out")
    if name == "APIConnectionError":
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause else ""
        return Failure("transient", f"connection error{detail}")
    if name == "APIResponseValidationError" or isinstance(exc, ValueError):
        return Failure("transient", f"unreadable response body ({name}: {exc})")
    return Failure("fatal", f"{name}: {exc}")


def _provider_message(exc: BaseException) -> str:
    """The provider's own words: ``error.type: error.message`` from the body when it has them."""
    body: Any = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            kind = inner.get("type") or inner.get("code")
            return f"{kind}: {inner['message']}" if kind else str(inner["message"])
    return str(getattr(exc, "message", None) or exc)


# The monotonic time the model call running in this thread must end by (set per call).
_deadline: ContextVar[float | None] = ContextVar("skillab_model_call_deadline", default=None)


def attempt_timeout(timeout_s: float) -> float:
    """The timeout for one attempt: ``timeout_s``, or less when the call's deadline is nearer."""
    left = remaining_s()
    return timeout_s if left is None else max(0.001, min(timeout_s, left))


def remaining_s() -> float | None:
    """Seconds left before the current call's deadline; None outside a call or without one."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


@dataclass(frozen=True)
class CallSite:
    """Who is calling, for error messages: ``anthropic claude-sonnet-5-5``, and the key to set."""

    provider: str
    model: str
    key_env: str


# A wait this long is told to the user (a 529 storm is otherwise ten silent seconds).
NOTICE_WAIT_S = 1.0
_retry_listener: Callable[[str], None] | None = None


def on_retry(listener: Callable[[str], None] | None) -> None:
    """Who hears about a retry wait of ``NOTICE_WAIT_S`` or more: the CLI's stderr, the Action's
    log; None for nobody (the default, and library use)."""
    global _retry_listener
    _retry_listener = listener


def call_with_retries(
    send: Callable[[], T],
    *,
    site: CallSite,
    policy: RetryPolicy,
    slot: AdaptiveLimit,
    seed: str = "",
    classify: Callable[[BaseException], Failure] = classify_sdk_error,
    sleep: Callable[[float], None] = time.sleep,
    budget: Budgeted[T] | None = None,
) -> tuple[T, int]:
    """``send()`` under the policy; returns its result and the number of attempts it took."""
    started = time.monotonic()
    token = _deadline.set(None if policy.deadline_s is None else started + policy.deadline_s)
    try:
        return _attempts(send, site, policy, slot, seed, classify, sleep, budget)
    finally:
        _deadline.reset(token)


def _attempts(
    send: Callable[[], T],
    site: CallSite,
    policy: RetryPolicy,
    slot: AdaptiveLimit,
    seed: str,
    classify: Callable[[BaseException], Failure],
    sleep: Callable[[float], None],
    budget: Budgeted[T] | None = None,
) -> tuple[T, int]:
    rng = random.Random(f"{site.provider}\0{site.model}\0{seed}")
    attempts = max(1, policy.max_attempts)
    for attempt in range(1, attempts + 1):
        try:
            with _admitted(budget, site) as settle, slot:
                _check_deadline(site, policy, attempt - 1)
                return settle(send()), attempt
        except (ProviderError, ProviderAuthError):
            raise
        except Exception as exc:
            failure = classify(exc)
        if failure.status in _PUSH_BACK:
            asked = failure.retry_after_s
            pause = None if asked is None else min(asked, policy.max_retry_after_s)
            slot.throttled(pause)
            if budget is not None:
                budget.lane.throttle(pause)
        if failure.kind == "auth":
            raise ProviderAuthError(
                redact(
                    f"{site.provider} rejected the credentials for model {site.model} "
                    f"({failure.message}); check {site.key_env}"
                )
            )
        if failure.status == 404:
            raise ProviderEndpointError(redact(
                f"{site.provider} has no model {site.model} at this endpoint ({failure.message}); "
                "every arm would get the same answer, so the run stops: check --model, "
                "--provider and --base-url"))
        if failure.kind == "fatal" or attempt == attempts:
            tries = f" after {attempt} attempts" if attempt > 1 else ""
            raise ProviderError(
                redact(f"{site.provider} {site.model}: {failure.message}{tries}"),
                status=failure.status,
                retryable=failure.kind == "transient",
            )
        wait = _wait_s(policy, attempt, failure, rng)
        left = remaining_s()
        if left is not None and wait >= left:
            _check_deadline(site, policy, attempt, failure.message, force=True)
        listener = _retry_listener
        if listener is not None and wait >= NOTICE_WAIT_S:
            listener(redact(f"{site.provider} {site.model}: {failure.message}; retrying in {wait:.1f}s "
                            f"(attempt {attempt + 1} of {attempts})"))
        sleep(wait)
    raise AssertionError("unreachable")


@contextmanager
def _admitted(budget: Budgeted[T] | None, site: CallSite) -> Iterator[Callable[[T], T]]:
    """One attempt admitted by the shared budget (a no-op without one); what it yields is
    handed the answer, so the attempt is settled at the answer's cost, and released (charged
    nothing) when no answer came."""
    if budget is None:
        yield lambda answer: answer
        return
    left = remaining_s()
    try:
        ticket = budget.lane.admit(budget.upper_usd, wait_s=DEFAULT_WAIT_S if left is None else max(0.0, left))
    except BudgetRefused as exc:
        raise ProviderError(redact(f"{site.provider} {site.model}: {exc}; no further model request is sent"),
                            retryable=False) from None
    cost: list[float | None] = [None]

    def settle(answer: T) -> T:
        cost[0] = budget.cost_of(answer)
        return answer

    try:
        yield settle
    finally:
        budget.lane.settle(ticket, cost[0])


def _check_deadline(site: CallSite, policy: RetryPolicy, attempts: int, last: str = "",
                    *, force: bool = False) -> None:
    left = remaining_s()
    if not force and (left is None or left > 0):
        return
    why = f" (last: {last})" if last else ""
    raise ProviderError(
        redact(f"{site.provider} {site.model}: no complete answer within the {policy.deadline_s:g}s "
               f"deadline for one model call, {attempts} attempt(s){why}"),
        retryable=True,
    )


def _wait_s(policy: RetryPolicy, attempt: int, failure: Failure, rng: random.Random) -> float:
    backoff = policy.backoff_s(attempt, rng)
    if failure.retry_after_s is None:
        return backoff
    return min(failure.retry_after_s, policy.max_retry_after_s)
