"""OpenAI-compatible chat completions through the official ``openai`` SDK, against any base URL.

One client covers OpenAI itself and, through ``--base-url``, Ollama, vLLM, LiteLLM, OpenRouter,
Groq and DeepSeek: they all speak ``/chat/completions`` with function tool calls.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from ..core.usage import Usage
from ..errors import ProviderError
from ..core.messages import Message, ModelResponse, StopReason, ToolSpec, ToolUse
from .pricing import cost_usd
from .retry import RetryPolicy, attempt_timeout
from .sdk_client import SdkClient, importing_sdk

with importing_sdk():
    import openai

# Reasoning models take ``max_completion_tokens`` and only their default temperature.
_REASONING_MODEL = re.compile(r"^(?:openai/)?(?:o\d|gpt-5)")

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


class OpenAICompatClient(SdkClient):
    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 300.0,
        policy: RetryPolicy = RetryPolicy(),
        concurrency: int = 8,
    ):
        super().__init__(model, base_url=base_url, policy=policy, concurrency=concurrency)
        self._timeout_s = timeout_s
        # The SDK's own retries are off: providers/retry.py is the one retry policy.
        self._sdk = openai.OpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s
        )
        self._reasoning = bool(_REASONING_MODEL.match(model))
        self._temperature_supported = not self._reasoning

    def _params(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec], max_tokens: int
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}]
            + [wire for m in messages for wire in _wire_messages(m)],
        }
        params["max_completion_tokens" if self._reasoning else "max_tokens"] = max_tokens
        if tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in tools
            ]
        return params

    def _send(self, params: dict[str, Any], temperature: float | None) -> Any:
        if temperature is not None:
            params = {**params, "temperature": temperature}
        return self._sdk.chat.completions.create(**params, timeout=attempt_timeout(self._timeout_s))

    def _parse(self, raw: Any) -> ModelResponse:
        return _to_response(raw, self.model)


def _wire_messages(message: Message) -> list[dict[str, Any]]:
    if message.role == "user":
        wire: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content}
            for r in message.tool_results
        ]
        if message.text or not message.tool_results:
            wire.append({"role": "user", "content": message.text or ""})
        return wire
    assistant: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        assistant["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": (
                        call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments)
                    ),
                },
            }
            for call in message.tool_calls
        ]
    return [assistant]


def _to_response(completion: Any, model: str) -> ModelResponse:
    choices = getattr(completion, "choices", None)
    if not choices:
        raise ProviderError(f"openai {model}: the response has no choices")
    choice = choices[0]
    calls = [
        ToolUse(call.id, call.function.name, _arguments(call.function.arguments))
        for call in (choice.message.tool_calls or [])
        if getattr(call, "function", None) is not None
    ]
    usage = _usage(getattr(completion, "usage", None))
    usage.cost_usd = cost_usd(model, usage)
    stop = _STOP_REASONS.get(choice.finish_reason or "", "other")
    return ModelResponse(
        text=choice.message.content or "",
        tool_calls=calls,
        usage=usage,
        stop_reason="tool_use" if calls else stop,
        served_model=getattr(completion, "model", None) or None,
    )


def _arguments(raw: str | dict[str, Any] | None) -> dict[str, Any] | str:
    """Parsed JSON arguments; the raw string when the model sent something else. Some
    OpenAI-compatible servers send the object itself rather than its JSON text."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return value if isinstance(value, dict) else raw


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    return Usage(
        input_tokens=getattr(raw, "prompt_tokens", None) or 0,
        output_tokens=getattr(raw, "completion_tokens", None) or 0,
        cache_read_tokens=cached,
    )
