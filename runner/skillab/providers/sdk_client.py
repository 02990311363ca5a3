"""What the SDK-backed clients share: one call under the retry policy, timed, and the
temperature fallback.

A provider module says how to build a request, send one attempt and read the reply; this class
makes that a ``ModelClient``. When a model refuses a temperature (reasoning models, newer
models with fixed sampling) the call is made once more without it and the client stops sending
it: the model's default is the nearest equivalent it offers.

A stop (``core.stop``: SIGINT, SIGTERM) ends a call at once: each attempt runs in a daemon
thread the caller waits on, and a stop ends the wait with a ``ProviderError``. The abandoned
request ends with the process; nothing waits for the server to answer it. Those threads are
kept for the next attempts (``_Callers``): starting one waits for it to run, and with a hundred
calls in flight that wait was a tenth of a second a call.

The sampling a run asks for (``--temperature``, ``--seed``, per role) is the client's own; a
provider that takes no seed refuses one at build rather than ignoring it. Each call is sent a
seed drawn from ``--seed`` and the call's place (case, arm, run, turn: the ``seed`` string the
adapters pass), so the repeats of a case differ and a rerun repeats them.

An SDK is imported when its first client is built (``load_sdk``), so reading a provider's facts
(its key variable, its prices) costs no SDK; and under ``importing_sdk``: importing one makes some
150,000 objects (its pydantic types) that live as long as the process.
"""

from __future__ import annotations

import atexit
import contextvars
import gc
import hashlib
import importlib
import json
import queue
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from ..budget.client import SharedBudget
from ..budget.estimate import upper_cost
from ..core import stop
from ..core.messages import Message, ModelResponse, ToolSpec
from ..errors import ProviderError, UsageError
from .base import ModelProvider
from .rate import provider_slot
from .retry import Budgeted, CallSite, Failure, RetryPolicy, call_with_retries, classify_sdk_error


@contextmanager
def importing_sdk() -> Iterator[None]:
    """Around an SDK's import. The cyclic garbage collector would walk its types again and again
    while they are made (a tenth of the import's time), then in each full collection after (a
    pause of 0.1-0.3 s, in the middle of a run): it is paused for the import, and what the import
    made is moved out of its reach once made (``gc.freeze``). Those types live as long as the
    process anyway."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def load_sdk(module: str) -> ModuleType:
    """The SDK ``module``, imported on first use (under ``importing_sdk``)."""
    found = sys.modules.get(module)
    if found is not None:
        return found
    with importing_sdk():
        return importlib.import_module(module)


# The interpreter's last collection at exit walks every object still alive; the process frees
# them with its memory anyway.
atexit.register(gc.freeze)


class SdkClient(ModelProvider, ABC):
    def __init__(self, model: str, *, base_url: str | None, policy: RetryPolicy, concurrency: int,
                 temperature: float | None = None, seed: int | None = None,
                 budget: SharedBudget | None = None):
        if seed is not None and not self.takes_seed:
            raise UsageError(f"the {self.provider} provider takes no sampling seed: drop --seed")
        self.model = model
        self.base_url = base_url
        self.sampling_temperature = temperature
        self.sampling_seed = seed
        self._policy = policy
        self._site = CallSite(self.provider, model, self.key_env or "")
        self._slot = provider_slot(f"{self.provider}:{base_url or 'default'}", concurrency)
        self._temperature_supported = True
        # The run-wide budget every shard shares (``--budget-url``): each attempt asks it first.
        self._lane = budget.lane(self.provider) if budget is not None else None

    def create(
        self,
        messages: Sequence[Message],
        *,
        system: str,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        temperature: float | None = None,
        seed: str = "",
        json_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        """One reply. ``temperature`` None is the run's (``--temperature``), else the model's
        default; ``seed`` names the call's place: it seeds the retry jitter and, with
        ``--seed``, the sampling seed; ``json_schema`` asks a client that ``takes_json_schema``
        for a reply of that shape."""
        params = self._params(messages, system, tools, max_tokens)
        if self.sampling_seed is not None:
            params = {**params, "seed": call_seed(self.sampling_seed, seed)}
        if json_schema is not None and self.takes_json_schema:
            return self._structured(params, json_schema, temperature, seed)
        return self._sampled(params, temperature, seed)

    def _sampled(self, params: dict[str, Any], temperature: float | None, seed: str) -> ModelResponse:
        if temperature is None:
            temperature = self.sampling_temperature
        use_temperature = temperature is not None and self._temperature_supported
        try:
            return self._call(params, temperature if use_temperature else None, seed)
        except ProviderError as exc:
            if not (use_temperature and exc.status == 400 and "temperature" in str(exc)):
                raise
            self._temperature_supported = False
            return self._call(params, None, seed)

    def _call(self, params: dict[str, Any], temperature: float | None, seed: str) -> ModelResponse:
        started = time.monotonic()
        response, attempts = call_with_retries(
            lambda: self._read(_until_stopped(lambda: self._send(params, temperature), self._site.model)),
            site=self._site,
            policy=self._policy,
            slot=self._slot,
            seed=seed,
            classify=self.classify,
            sleep=stop.sleep,
            budget=None if self._lane is None else Budgeted(self._lane, self._upper_usd(params), self._cost_usd),
        )
        response.latency_ms = int((time.monotonic() - started) * 1000)
        response.attempts = attempts
        return response

    def _upper_usd(self, params: dict[str, Any]) -> float | None:
        """The most this request can cost: its parameters as sent, read as the proxy reads a body."""
        body = json.dumps(params, default=str).encode()
        return upper_cost(body, lambda usage: self.cost_usd(self.model, usage))

    def _cost_usd(self, response: ModelResponse) -> float | None:
        return self.cost_usd(self.model, response.usage)

    def _read(self, raw: Any) -> ModelResponse:
        """The reply, read inside the attempt: a body the SDK accepted but that is no reply
        (a choice without its message, a null block) is an unreadable answer, retried like a
        broken one, never an exception the callers do not expect."""
        try:
            return self._parse(raw)
        except ProviderError:
            raise
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            raise ValueError(f"not a reply: {type(exc).__name__}: {exc}") from exc

    @staticmethod
    def classify(exc: BaseException) -> Failure:
        """How a failed attempt's exception reads; the ``anthropic`` and ``openai`` SDKs share
        one shape, other SDKs override this."""
        return classify_sdk_error(exc)

    def _structured(self, params: dict[str, Any], schema: dict[str, Any],
                    temperature: float | None, seed: str) -> ModelResponse:
        """A reply shaped by ``schema``; a client that ``takes_json_schema`` says how."""
        return self._sampled(params, temperature, seed)

    # What each provider module supplies.

    @abstractmethod
    def _params(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec], max_tokens: int
    ) -> dict[str, Any]:
        ...

    @abstractmethod
    def _send(self, params: dict[str, Any], temperature: float | None) -> Any:
        """One HTTP attempt; SDK exceptions propagate for the retry policy to classify."""
        ...

    @abstractmethod
    def _parse(self, raw: Any) -> ModelResponse:
        ...


def call_seed(base: int, place: str) -> int:
    """The sampling seed of one call: ``base`` and the call's place, hashed to 31 bits."""
    digest = hashlib.sha256(f"{base}\0{place}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class _Callers:
    """Daemon threads that run model-call attempts, each kept for another once its attempt ended.

    Every attempt gets a thread of its own at once: an idle one when there is one (each idle
    thread leaves one token in ``_idle``; taking a token reserves that thread), else a new one.
    So no attempt waits behind another, and no lock is shared by the calls in flight (the queues
    are the standard library's C ones)."""

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def run(self, job: Callable[[], None]) -> None:
        self._work.put(job)
        try:
            self._idle.get_nowait()
        except queue.Empty:
            threading.Thread(target=self._serve, name="skillab-model-call", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self._work.get()()
            self._idle.put(None)


_CALLERS = _Callers()


def _until_stopped(send: Any, model: str) -> Any:
    """``send()`` in a daemon thread; a stop ends the wait with a ``ProviderError``."""
    done = threading.Event()
    outcome: list[Any] = []

    def attempt() -> None:
        try:
            outcome.append((True, send()))
        except BaseException as exc:  # handed to the waiting thread as is
            outcome.append((False, exc))
        finally:
            done.set()

    # The attempt sees the caller's context: the call's deadline is a context variable.
    context = contextvars.copy_context()
    with stop.wakes_on_stop(done):
        if not stop.requested():
            _CALLERS.run(lambda: context.run(attempt))
        done.wait()
    if not outcome:
        raise ProviderError(f"{model}: the run stopped while this model call was in flight")
    ok, value = outcome[0]
    if ok:
        return value
    raise value
