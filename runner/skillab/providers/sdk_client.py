"""What the SDK-backed clients share: one call under the retry policy, timed, and the
temperature fallback.

A provider module says how to build a request, send one attempt and read the reply; this class
makes that a ``ModelClient``. When a model refuses a temperature (reasoning models, newer
models with fixed sampling) the call is made once more without it and the client stops sending
it: the model's default is the nearest equivalent it offers.

An SDK is imported under ``importing_sdk``: importing one makes some 150,000 objects (its
pydantic types) that live as long as the process.
"""

from __future__ import annotations

import atexit
import gc
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Sequence

from ..errors import ProviderError
from .base import KEY_ENV, ProviderName
from ..core.messages import Message, ModelResponse, ToolSpec
from .retry import CallSite, Failure, RetryPolicy, call_with_retries, classify_sdk_error, provider_slot


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


# The interpreter's last collection at exit walks every object still alive; the process frees
# them with its memory anyway.
atexit.register(gc.freeze)


class SdkClient(ABC):
    provider: ProviderName

    def __init__(self, model: str, *, base_url: str | None, policy: RetryPolicy, concurrency: int):
        self.model = model
        self.base_url = base_url
        self._policy = policy
        self._site = CallSite(self.provider, model, KEY_ENV[self.provider])
        self._slot = provider_slot(f"{self.provider}:{base_url or 'default'}", concurrency)
        self._temperature_supported = True

    def create(
        self,
        messages: Sequence[Message],
        *,
        system: str,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        temperature: float | None = None,
        seed: str = "",
    ) -> ModelResponse:
        params = self._params(messages, system, tools, max_tokens)
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
            lambda: self._read(self._send(params, temperature)),
            site=self._site,
            policy=self._policy,
            slot=self._slot,
            seed=seed,
            classify=self.classify,
        )
        response.latency_ms = int((time.monotonic() - started) * 1000)
        response.attempts = attempts
        return response

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
