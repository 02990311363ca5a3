"""The pause a rate-limited or overloaded answer asks for, read from its headers: the retry
policy waits it, the shared budget holds every shard for it."""

from __future__ import annotations

import time
from collections.abc import Mapping


def retry_after_seconds(
    headers: Mapping[str, str] | None, now: float | None = None
) -> float | None:
    """The pause a response asks for: ``retry-after-ms``, else ``retry-after`` (seconds or date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # an HTTP date in Retry-After is rare; the email package is not small

    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - (time.time() if now is None else now))
