"""Model providers behind one seam, ``ModelClient``.

- ``base``: the built-in providers' names, key and base-URL variables (the ``ModelClient``
  protocol is in ``core.contracts``, the message types adapters speak in ``core.messages``).
- ``anthropic`` / ``openai_compat``: the two SDK-backed clients (imported lazily).
- ``retry``: the one retry policy and the per-provider concurrency cap.
- ``sdk_client``: what the SDK-backed clients share (retried, timed calls; temperature fallback).
- ``registry``: which provider serves a model, its key, and building its client.
- ``pricing``: USD per million tokens for known models.
- ``judge_transport``: the LLM judge's transport.
- ``model_family``: model families, the default judge of another family, the
  judge-independence warning.
"""

from ..core.contracts import ModelClient
from ..core.messages import Message, ModelResponse, ToolOutcome, ToolSpec, ToolUse
from .base import PROVIDERS, ProviderName
from .pricing import cost_usd, price_of
from .registry import (
    ProviderSettings,
    agent_settings,
    client_for,
    create_client,
    infer_provider,
    judge_settings,
    require_api_key,
)
from .retry import RetryPolicy

__all__ = [
    "PROVIDERS",
    "Message",
    "ModelClient",
    "ModelResponse",
    "ProviderName",
    "ProviderSettings",
    "RetryPolicy",
    "ToolOutcome",
    "ToolSpec",
    "ToolUse",
    "agent_settings",
    "client_for",
    "cost_usd",
    "create_client",
    "infer_provider",
    "judge_settings",
    "price_of",
    "require_api_key",
]
