"""USD prices of known models, and the cost of a call from its token usage.

Written 2026-11-22 from the providers' public price lists (USD per million tokens; Anthropic's
cache write is the 5-minute rate). Prices change: when a figure here is stale, fix the row. A
model not listed has no price and its cost is ``None``: skillab reports tokens only rather than
guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.usage import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-4-1": Price(15.00, 75.00, 1.50, 18.75),
    "claude-opus-4-0": Price(15.00, 75.00, 1.50, 18.75),
    "claude-opus-4": Price(15.00, 75.00, 1.50, 18.75),
    "claude-opus-4-5": Price(5.00, 25.00, 0.50, 6.25),
    "claude-sonnet-4-5": Price(3.00, 15.00, 0.30, 3.75),
    "claude-sonnet-4-0": Price(3.00, 15.00, 0.30, 3.75),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30, 3.75),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08, 1.00),
    "claude-3-haiku": Price(0.25, 1.25, 0.03, 0.30),
    # OpenAI (cache write is not billed separately)
    "gpt-4o": Price(2.50, 10.00, 1.25, 2.50),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075, 0.15),
    "gpt-4.1": Price(2.00, 8.00, 0.50, 2.00),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10, 0.40),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025, 0.10),
    "gpt-5": Price(1.25, 10.00, 0.125, 1.25),
    "gpt-5-mini": Price(0.25, 2.00, 0.025, 0.25),
    "gpt-5-nano": Price(0.05, 0.40, 0.005, 0.05),
    "o1": Price(15.00, 60.00, 7.50, 15.00),
    "o3": Price(2.00, 8.00, 0.50, 2.00),
    "o3-mini": Price(1.10, 4.40, 0.55, 1.10),
    "o4-mini": Price(1.10, 4.40, 0.275, 1.10),
    # Google Gemini API, prompts up to 200k tokens (cache write is billed as storage, not here).
    # UNVERIFIED: not checked against Google's own page (ai.google.dev/gemini-api/docs/pricing),
    # which no source reachable here holds. Input and output agree with pages that cite it
    # (deploybase.ai/articles/gemini-api-pricing: 2.5 Pro 1.25/10, 2.5 Flash 0.30/2.50, "context
    # caching discounts reused context 90%"; aifreeapi.com/en/posts/gemini-api-pricing-2026:
    # 2.5 Flash-Lite 0.10/0.40). Cache reads are that 90% discount; a Google forum post quoting
    # the page gives 0.125 for 2.5 Pro (discuss.ai.google.dev/t/107349). Check before billing.
    "gemini-2.5-pro": Price(1.25, 10.00, 0.125, 0.0),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.03, 0.0),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01, 0.0),
}

# Dated snapshots share their family's price: claude-sonnet-4-5-20250929, gpt-4o-2024-08-06.
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_of(model: str) -> Price | None:
    """The listed price of ``model`` or its dated snapshot; None when the model is not listed."""
    if model in PRICES:
        return PRICES[model]
    return PRICES.get(_SNAPSHOT_SUFFIX.sub("", model))


def cost_usd(model: str, usage: Usage) -> float | None:
    """The USD cost of ``usage`` on ``model`` (input counts cached tokens too), or None."""
    price = price_of(model)
    if price is None:
        return None
    uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    total = (
        uncached * price.input
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
        + usage.output_tokens * price.output
    )
    return round(total / 1_000_000, 8)
