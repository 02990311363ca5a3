"""The turn cap the credential proxy holds Codex to, counted in answered Responses.

A model turn is a streamed Responses answer that reached its closing event
(``response.completed``, or ``response.incomplete`` when the model ran out of output tokens). A
stream the endpoint cut, or one that closed with ``response.failed``, answered nothing: Codex
retries it, and counting it would end the session at the cap with turns the model never took,
graded as the agent's own failure. Imported with the proxy, only when a Codex arm runs.
"""

from __future__ import annotations

import json
from typing import Any

from ..sandbox.turn_budget import RequestBudget

_ANSWERED = ("response.completed", "response.incomplete")


class ResponsesBudget(RequestBudget):
    def settle(self, status: int) -> None:
        pass  # an HTTP 200 is not yet an answer: ``keep`` counts it once its stream closed

    def keep(self, tail: bytes) -> None:
        super().keep(tail)
        event = closing_event(tail)
        if event is not None and event.get("type") in _ANSWERED:
            with self._lock:
                self.used += 1


def closing_event(body: bytes) -> dict[str, Any] | None:
    """The last event of a streamed Responses body that names a ``response.*`` outcome."""
    for line in reversed(body.decode("utf-8", "replace").splitlines()):
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and str(event.get("type", "")).startswith("response."):
            return event
    return None
