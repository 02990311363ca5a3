"""The most one model request can cost: what a reservation holds until the answer is priced.

The credential proxy (a CLI arm's request body) and the SDK clients (the parameters they send)
reserve this at admission on the run's spend meter and on the shared budget service, so the
requests in flight together cannot take the spend past a cap.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..core.usage import Usage

# What one answer costs at a model's price (None: unpriced).
Price = Callable[[Usage], "float | None"]

# The output a request may ask for when its body names no limit: the largest any listed model
# returns in one answer, so the reservation stays an upper bound.
DEFAULT_MAX_OUTPUT_TOKENS = 128_000
_OUTPUT_LIMITS = ("max_tokens", "max_output_tokens", "max_completion_tokens")


def upper_cost(body: bytes | None, price: Price | None) -> float | None:
    """The most a model request of ``body`` can cost at ``price`` (None: unpriced). Every input
    token is at least one byte of the body, and the answer at most its output limit."""
    if price is None or not body:
        return None
    output = _output_limit(body)
    tokens = len(body)
    costs = [price(Usage(input_tokens=tokens, output_tokens=output)),
             price(Usage(input_tokens=tokens, cache_write_tokens=tokens, output_tokens=output))]
    known = [c for c in costs if c is not None]
    return max(known) if known else None


def _output_limit(body: bytes) -> int:
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return DEFAULT_MAX_OUTPUT_TOKENS
    if not isinstance(parsed, dict):
        return DEFAULT_MAX_OUTPUT_TOKENS
    config = parsed.get("generationConfig")
    candidates = [parsed.get(name) for name in _OUTPUT_LIMITS]
    if isinstance(config, dict):
        candidates.append(config.get("maxOutputTokens"))
    limits = [c for c in candidates if isinstance(c, int) and not isinstance(c, bool) and c > 0]
    return min(limits) if limits else DEFAULT_MAX_OUTPUT_TOKENS
