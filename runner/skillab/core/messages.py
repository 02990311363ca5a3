"""The provider-neutral message types adapters speak; each provider translates them to its wire
format.

Token accounting convention: ``Usage.input_tokens`` counts every prompt token, cached ones
included; ``cache_read_tokens`` and ``cache_write_tokens`` are the parts of it served from or
written to the prompt cache. That way ``total_tokens`` means the same on every provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .usage import Usage

StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and a JSON Schema for its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model asked for. ``arguments`` is a string when it was not valid JSON."""

    id: str
    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one tool call, sent back to the model on the next turn."""

    tool_use_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Message:
    """One conversation message.

    A user message carries ``text`` or ``tool_results``; an assistant message carries ``text``
    and/or ``tool_calls`` (exactly what the model returned, so the next request replays it).
    """

    role: Literal["user", "assistant"]
    text: str | None = None
    tool_calls: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolOutcome, ...] = ()

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", text=text)


@dataclass
class ModelResponse:
    """One model reply: text, requested tools, usage, why it stopped and how long it took."""

    text: str
    tool_calls: list[ToolUse] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    latency_ms: int = 0
    # The number of HTTP attempts the call took (1 when no retry was needed).
    attempts: int = 1
    # The model id the provider says it served (may differ from the name requested).
    served_model: str | None = None
