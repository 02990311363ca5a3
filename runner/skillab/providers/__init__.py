"""Model providers behind one seam, ``ModelClient``.

- ``base``: ``ModelProvider``, the client class every provider subclasses, whose class
  attributes are the provider's facts (key and base-URL variables, the model names it claims,
  prices, package, streaming); the ``ModelClient`` protocol is in ``core.contracts``, the
  message types adapters speak in ``core.messages``.
- one module per provider, holding its client class and its facts: ``anthropic``,
  ``openai_compat``, ``openai_responses``, ``gemini`` (each SDK imported when its first client
  is built) and ``mock``, the deterministic keyless model (the judge of mock runs).
- ``retry``: the one retry policy and the per-provider concurrency cap.
- ``sdk_client``: what the SDK-backed clients share (retried, timed calls; temperature fallback).
- ``registry``: which provider serves a model, its key, and building its client.
- ``pricing``: the price of a model known by name alone, from the providers' own tables.
- ``model_family``: model families, the default judge of another family, the
  judge-independence warning.
"""

from ..core.contracts import ModelClient
from ..core.messages import Message, ModelResponse, ToolOutcome, ToolSpec, ToolUse
from .base import ModelProvider, ProviderName
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
    "Message",
    "ModelClient",
    "ModelProvider",
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
