"""Anthropic Messages API through the official ``anthropic`` SDK, streaming or not.

The stable system prompt carries ``cache_control``, so repeated arms of a run read it (and the
tool definitions before it) from the prompt cache; cache reads and writes are reported in usage.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from ..budget.client import SharedBudget
from ..core.messages import Message, ModelResponse, StopReason, ToolSpec, ToolUse
from ..core.usage import Usage
from .base import Price
from .pools import SdkPools
from .retry import RetryPolicy, attempt_timeout, remaining_s
from .sdk_client import SdkClient, load_sdk

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
}


class AnthropicClient(SdkClient):
    provider = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    package = "anthropic"
    model_names = re.compile(r"^claude", re.IGNORECASE)
    streams = True
    # USD per million tokens, from Anthropic's public price list (2026-11-29; the cache write is
    # the 5-minute rate: 1.25x input, a cache read 0.1x, as the list gives them). When a figure
    # is stale, fix the row.
    prices = {
        "claude-opus-5-5": Price(4.00, 20.00, 0.40, 5.00),
        "claude-sonnet-5-5": Price(2.00, 10.00, 0.20, 2.50),
        "claude-sonnet-5": Price(2.00, 10.00, 0.20, 2.50),
        "claude-sonnet-4-6": Price(3.00, 15.00, 0.30, 3.75),
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
    }

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 300.0,
        policy: RetryPolicy = RetryPolicy(),
        concurrency: int = 8,
        stream: bool = False,
        temperature: float | None = None,
        seed: int | None = None,
        budget: SharedBudget | None = None,
    ):
        super().__init__(model, base_url=base_url, policy=policy, concurrency=concurrency,
                         temperature=temperature, seed=seed, budget=budget)
        self.stream = stream
        self._timeout_s = timeout_s
        # The SDK's own retries are off: providers/retry.py is the one retry policy.
        sdk = load_sdk("anthropic")
        self._pools = SdkPools(sdk, lambda http_client: sdk.Anthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s, http_client=http_client
        ), concurrency)
        self._sdk = self._pools.first
        _warm_reading()

    def _params(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec], max_tokens: int
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "messages": [_wire_message(m) for m in messages],
        }
        if tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in tools
            ]
        return params

    def _send(self, params: dict[str, Any], temperature: float | None) -> Any:
        # The SDK no longer types ``temperature``; it still travels in the body.
        extra_body = {"temperature": temperature} if temperature is not None else None
        timeout = attempt_timeout(self._timeout_s)
        client = self._pools.next()
        if self.stream:
            with client.messages.stream(**params, extra_body=extra_body, timeout=timeout) as stream:
                try:
                    for _event in stream:
                        left = remaining_s()
                        if left is not None and left <= 0:  # a trickle: each read is in time
                            raise TimeoutError("the stream outlasted the call's deadline")
                    message = stream.get_final_message()
                except AssertionError:
                    # The SDK asserts when the stream ends before a complete message arrived.
                    message = None
            if message is None or message.stop_reason is None:
                # No message_delta/message_stop: a cut stream, not an answer to grade.
                raise ValueError("the event stream ended before the message was complete")
            return message
        return client.messages.create(**params, extra_body=extra_body, timeout=timeout)

    def _parse(self, raw: Any) -> ModelResponse:
        return _to_response(raw, self.model)


# A reply with every block type the agent loop reads, for ``_warm_reading``.
_SAMPLE_REPLY: dict[str, Any] = {
    "id": "msg_warm", "type": "message", "role": "assistant", "model": "warm",
    "stop_reason": "tool_use", "stop_sequence": None,
    "content": [{"type": "text", "text": ""}, {"type": "tool_use", "id": "t", "name": "t", "input": {}}],
    "usage": {"input_tokens": 0, "output_tokens": 0},
}
_warming = threading.Lock()
_warmed = False


def _warm_reading() -> None:
    """Have the SDK build its reply types (pydantic schemas, tens of ms of CPU) in the background
    while the first request waits on the model, once per process: otherwise every arm's first
    reply builds them at once, on the run's critical path."""
    global _warmed
    with _warming:
        if _warmed:
            return
        _warmed = True
    threading.Thread(target=_build_reply_types, name="skillab-warm-anthropic", daemon=True).start()


def _build_reply_types() -> None:
    try:
        load_sdk("anthropic.types").Message.model_construct(**_SAMPLE_REPLY)
    except Exception:  # only a head start: the first reply builds whatever this could not
        pass


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "user":
        if message.tool_results:
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_result",
                    "tool_use_id": r.tool_use_id,
                    "content": r.content,
                    "is_error": r.is_error,
                }
                for r in message.tool_results
            ]
            if message.text:
                content.append({"type": "text", "text": message.text})
            return {"role": "user", "content": content}
        return {"role": "user", "content": message.text or ""}
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return {"role": "assistant", "content": blocks}


def _to_response(message: Any, model: str) -> ModelResponse:
    texts: list[str] = []
    calls: list[ToolUse] = []
    for block in message.content or []:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else str(block.input)
            calls.append(ToolUse(block.id, block.name, arguments))
    usage = _usage(message.usage)
    usage.cost_usd = AnthropicClient.cost_usd(model, usage)
    return ModelResponse(
        text="".join(texts),
        tool_calls=calls,
        usage=usage,
        stop_reason=_STOP_REASONS.get(message.stop_reason or "", "other"),
        served_model=getattr(message, "model", None) or None,
    )


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    cache_read = getattr(raw, "cache_read_input_tokens", None) or 0
    cache_write = getattr(raw, "cache_creation_input_tokens", None) or 0
    uncached = getattr(raw, "input_tokens", None) or 0
    return Usage(
        input_tokens=uncached + cache_read + cache_write,
        output_tokens=getattr(raw, "output_tokens", None) or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
