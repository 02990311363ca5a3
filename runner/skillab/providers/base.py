"""What a model provider's client class says about itself: the facts the registry reads.

A provider is one module holding one client class, plus its line in ``core.plugins`` (or an
entry point in ``skillab.models``). The class subclasses ``ModelProvider`` and states, as class
attributes, where its key and base URL come from, which model names are its own, what its
models cost and which optional parts of a call it takes; the defaults here fit a provider that
needs none of them. Nothing else in skillab keeps a per-provider table.

The seam itself (``ModelClient``) is in ``core.contracts``, the provider-neutral message types
adapters speak in ``core.messages``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..core.contracts import ModelClient
from ..core.usage import Usage

# The registry's provider names are strings: a plugin adds its own.
ProviderName = str


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


# Dated snapshots share their family's price: claude-sonnet-4-5-20250929, gpt-4o-2024-08-06.
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


class ModelProvider(ModelClient):
    """A model client class and its provider's facts (see the module docstring)."""

    # The name users select (``--provider``); the registry's key.
    provider: str
    # The environment variable holding the key (None: the provider needs none), and the one
    # that moves its endpoint. Only the registry reads them; the key goes to the client alone.
    key_env: ClassVar[str | None] = None
    base_url_env: ClassVar[str | None] = None
    # Whether a call to a ``--base-url`` may go without a key (a local OpenAI-compatible server).
    keyless_at_base_url: ClassVar[bool] = False
    # The package to install when the client's SDK cannot be imported.
    package: ClassVar[str | None] = None
    # Model names that say this provider serves them (``infer_provider``); None: only by name.
    model_names: ClassVar[re.Pattern[str] | None] = None
    # USD per million tokens by model id; a model not listed costs None (tokens only).
    prices: ClassVar[Mapping[str, Price]] = {}
    # Whether the client streams (``--stream``) and takes a sampling seed (``--seed``). The
    # contract's own facts (``takes_json_schema``, ``scripted``) default to False there.
    streams: ClassVar[bool] = False
    takes_seed: ClassVar[bool] = False

    def __init__(self, model: str, **settings: Any) -> None:
        """Built by the registry with the model and the common settings (``api_key``,
        ``base_url``, ``timeout_s``, ``policy``, ``concurrency``; ``stream`` when ``streams``;
        ``temperature``/``seed`` when the run sets them)."""
        self.model = model

    @classmethod
    def price_of(cls, model: str) -> Price | None:
        """The listed price of ``model`` or its dated snapshot; None when not listed."""
        return cls.prices.get(model) or cls.prices.get(_SNAPSHOT_SUFFIX.sub("", model))

    @classmethod
    def cost_usd(cls, model: str, usage: Usage) -> float | None:
        """The USD cost of ``usage`` on ``model`` (input counts cached tokens too), or None."""
        price = cls.price_of(model)
        return None if price is None else cost_at(price, usage)


def cost_at(price: Price, usage: Usage) -> float:
    uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    total = (
        uncached * price.input
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
        + usage.output_tokens * price.output
    )
    return round(total / 1_000_000, 8)
