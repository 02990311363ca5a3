"""Token usage and cost: what agents, model clients and run totals all count in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar


@dataclass(slots=True)
class Usage:
    """Token usage and, when the model's price is known, its USD cost (never guessed)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    # The wire form also carries the total, after the cache counts (``core.wire``).
    __wire_derived__: ClassVar[dict[str, str]] = {"total_tokens": "cache_write_tokens"}

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            cost,
        )


def sum_usage(usages: Iterable[Usage]) -> Usage:
    """The usages added up, in order (``Usage()`` for none)."""
    total = Usage()
    for usage in usages:
        total = total.add(usage)
    return total
