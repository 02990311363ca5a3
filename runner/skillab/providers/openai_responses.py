"""The OpenAI Responses API (``POST /responses``) through the official ``openai`` SDK.

Chosen with ``--provider openai-responses``: the API OpenAI's newer models and the Codex CLI
use. The conversation goes as ``input`` items (messages, ``function_call`` and
``function_call_output``), the system prompt as ``instructions``; nothing is stored server-side
(``store: false``), so every request carries the whole conversation like the other providers.
With ``stream`` the reply is read from the API's event stream and its final ``response``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..budget.client import SharedBudget
from ..core.messages import Message, ModelResponse, StopReason, ToolSpec, ToolUse
from ..core.usage import Usage
from .openai_compat import OpenAICompatClient, _arguments
from .pools import SdkPools
from .retry import RetryPolicy
from .sdk_client import SdkClient, load_sdk

_REASONING_MODEL = re.compile(r"^(?:openai/)?(?:o\d|gpt-5|codex)")


def is_reasoning_model(model: str) -> bool:
    """An OpenAI reasoning model (o-series, gpt-5, codex): no temperature, and its reasoning
    items go back to the API encrypted when nothing is stored server-side."""
    return bool(_REASONING_MODEL.match(model))


class OpenAIResponsesClient(SdkClient):
    provider = "openai-responses"
    key_env = OpenAICompatClient.key_env
    base_url_env = OpenAICompatClient.base_url_env
    package = OpenAICompatClient.package
    streams = True
    prices = OpenAICompatClient.prices

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
        # The SDK's own retries are off: providers/retry.py is the one retry policy.
        sdk = load_sdk("openai")
        self._pools = SdkPools(sdk, lambda http_client: sdk.OpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s, http_client=http_client
        ), concurrency)
        self._sdk = self._pools.first
        self._stream = stream
        self._temperature_supported = not is_reasoning_model(model)

    def _params(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec], max_tokens: int
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "instructions": system,
            "input": [item for m in messages for item in input_items(m)],
            "max_output_tokens": max_tokens,
            "store": False,
        }
        if tools:
            params["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in tools
            ]
        return params

    def _send(self, params: dict[str, Any], temperature: float | None) -> Any:
        if temperature is not None:
            params = {**params, "temperature": temperature}
        client = self._pools.next()
        if not self._stream:
            return client.responses.create(**params)
        with client.responses.stream(**params) as events:
            return events.get_final_response()

    def _parse(self, raw: Any) -> ModelResponse:
        return to_response(raw, self.model)


def input_items(message: Message) -> list[dict[str, Any]]:
    if message.role == "user":
        items: list[dict[str, Any]] = [
            {"type": "function_call_output", "call_id": r.tool_use_id, "output": r.content}
            for r in message.tool_results
        ]
        if message.text or not message.tool_results:
            items.append({"role": "user", "content": message.text or ""})
        return items
    items = [{"role": "assistant", "content": message.text}] if message.text else []
    items += [
        {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
        }
        for call in message.tool_calls
    ]
    return items


def to_response(response: Any, model: str) -> ModelResponse:
    texts: list[str] = []
    calls: list[ToolUse] = []
    for item in getattr(response, "output", None) or []:
        kind = getattr(item, "type", None)
        if kind == "message":
            texts += [
                part.text for part in item.content or [] if getattr(part, "type", None) == "output_text"
            ]
        elif kind == "function_call":
            calls.append(ToolUse(item.call_id, item.name, _arguments(item.arguments)))
    usage = _usage(getattr(response, "usage", None))
    usage.cost_usd = OpenAIResponsesClient.cost_usd(model, usage)
    incomplete = getattr(getattr(response, "incomplete_details", None), "reason", None)
    stop: StopReason
    if calls:
        stop = "tool_use"
    elif incomplete == "max_output_tokens":
        stop = "max_tokens"
    else:
        stop = "end_turn" if getattr(response, "status", "completed") == "completed" else "other"
    return ModelResponse(text="".join(texts), tool_calls=calls, usage=usage, stop_reason=stop)


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    details = getattr(raw, "input_tokens_details", None)
    return Usage(
        input_tokens=getattr(raw, "input_tokens", None) or 0,
        output_tokens=getattr(raw, "output_tokens", None) or 0,
        cache_read_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
    )
