"""The judge's transport: one temperature-0 completion from the pinned judge model."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.contracts import ModelClient
from ..core.messages import Message, ModelResponse
from ..core.usage import Usage
from .registry import client_for

if TYPE_CHECKING:
    from ..core.settings import RunConfig

JUDGE_MAX_TOKENS = 1024


class ProviderJudgeTransport:
    """``JudgeTransport`` over a ``ModelClient``: raises ``ProviderError`` when the call fails."""

    def __init__(self, client: ModelClient):
        self._client = client
        self.model = client.model
        self.provider = client.provider
        # The judge's temperature: ``--judge-temperature``, else 0 (the most repeatable).
        configured = getattr(client, "sampling_temperature", None)
        self.temperature = 0.0 if configured is None else configured
        self.seed = getattr(client, "sampling_seed", None)
        self._usage = Usage()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: RunConfig) -> ProviderJudgeTransport:
        """The judge model (``judge_model_for``); no key is a clear error that says the way out."""
        from ..errors import ProviderAuthError

        try:
            return cls(client_for(config, role="judge"))
        except ProviderAuthError as exc:
            if config.judge.model.name or config.judge.same_family:
                raise
            raise ProviderAuthError(
                f"{exc}. The judge defaults to a model of another family than the agent's; pass "
                "--judge-model to choose it, or --judge-same-family to let the agent's family judge"
            ) from None

    @property
    def usage(self) -> Usage:
        """Tokens (and cost, when priced) of every judge call so far."""
        with self._lock:
            return self._usage.add(Usage())

    # ``complete`` takes the reply's JSON schema (the judge passes its verdict's).
    takes_schema = True

    def complete(self, *, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        # Seeded by the message, so a retried grading call backs off the same way on a rerun.
        seed = hashlib.sha256(user.encode()).hexdigest()[:16]
        # Structured output where the client can ask for it: a small local judge then writes
        # the verdict's JSON and nothing else.
        asks = schema is not None and getattr(self._client, "takes_json_schema", False)
        structured = {"json_schema": schema} if asks else {}
        # ``json_schema`` is a capability of some clients (``takes_json_schema``), not of the contract.
        create: Callable[..., ModelResponse] = self._client.create
        response = create(
            [Message.user(user)],
            system=system,
            max_tokens=JUDGE_MAX_TOKENS,
            temperature=self.temperature,
            seed=seed,
            **structured,
        )
        with self._lock:
            self._usage = self._usage.add(response.usage)
        return response.text
