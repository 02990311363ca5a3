"""The price of a model known by name alone, and the cost of a call from its token usage.

Each provider's client class lists its own models' prices (``ModelProvider.prices``); this is
the lookup for callers that know a model but not its provider (the agent CLIs, ``--dry-run``):
the built-in providers in their registry order, then the installed ones. A model no provider
lists has no price and its cost is ``None``: skillab reports tokens only rather than guess.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator

from ..core import plugins
from ..core.usage import Usage
from .base import ModelProvider, Price, cost_at


@functools.lru_cache(maxsize=256)
def price_of(model: str) -> Price | None:
    """The listed price of ``model`` or its dated snapshot; None when no provider lists it.
    Remembered: the agent CLIs price every arm, and the installed plugins are read only on a
    model no built-in lists."""
    for provider in _providers():
        price = provider.price_of(model)
        if price is not None:
            return price
    return None


def cost_usd(model: str, usage: Usage) -> float | None:
    """The USD cost of ``usage`` on ``model`` (input counts cached tokens too), or None."""
    price = price_of(model)
    return None if price is None else cost_at(price, usage)


def _providers() -> Iterator[type[ModelProvider]]:
    """The built-in providers in their registry order, then the installed ones: lazily, so the
    entry points are read only when no built-in lists the model."""
    yield from _loaded(plugins.BUILTINS["models"])
    yield from _loaded(plugins.plugins("models"))


def _loaded(names: Iterable[str]) -> Iterator[type[ModelProvider]]:
    for name in names:
        try:
            provider = plugins.load("models", name)
        except Exception:  # a provider that cannot load prices nothing; the run goes on
            continue
        if isinstance(provider, type) and issubclass(provider, ModelProvider):
            yield provider
