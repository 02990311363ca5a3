"""OpenAI-compatible chat completions through the official ``openai`` SDK, against any base URL.

One client covers OpenAI itself and, through ``--base-url``, Ollama, vLLM, LiteLLM, OpenRouter,
Groq, DeepSeek, LM Studio and llama.cpp: they all speak ``/chat/completions`` with function tool
calls, each with its own reading of the protocol. What the client sends is what every one of
them accepts:

- ``tool_choice: "auto"`` whenever tools are offered: llama.cpp reads a missing one as "none" and
  never shows the model the tools;
- ``""`` as the content of an assistant turn that only calls tools: llama-cpp-python's server
  refuses ``null`` (HTTP 500), and the others take the empty string alike.

What it reads, it reads tolerantly: arguments as JSON text or as the object itself, and, from a
server that leaves a model's tool call in the text (``<tool_call>{...}</tool_call>`` or a bare
``{"name": ..., "arguments": ...}`` naming an offered tool), that call. The sampling seed
(``--seed``) is sent as ``seed``; the context window is in ``context.py``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..budget.client import SharedBudget
from ..core.messages import Message, ModelResponse, StopReason, ToolSpec, ToolUse
from ..core.usage import Usage
from ..errors import ProviderError
from ..grading.judge import json_objects
from .base import Price
from .context import ContextWindow, read_context_window
from .pools import SdkPools
from .retry import Failure, RetryPolicy, attempt_timeout, classify_sdk_error
from .sdk_client import SdkClient, load_sdk

# Reasoning models take ``max_completion_tokens`` and only their default temperature.
_REASONING_MODEL = re.compile(r"^(?:openai/)?(?:o\d|gpt-5)")

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


# The structured-output forms tried in turn, and the statuses that say a form was refused.
# Not ``strict``: OpenAI's strict mode refuses keywords a grammar-bound server uses (a string's
# ``maxLength``); vLLM and llama-server hold the reply to the schema either way.
_RESPONSE_FORMATS: tuple[Callable[[dict[str, Any]], dict[str, Any]] | None, ...] = (
    lambda schema: {"type": "json_schema",
                    "json_schema": {"name": "reply", "schema": schema, "strict": False}},
    lambda schema: {"type": "json_object", "schema": schema},
    None,
)
_REFUSED = (400, 404, 415, 422)
_ABOUT_FORMAT = re.compile(r"response_format|json_schema|schema|grammar", re.I)
_VALIDATION = re.compile(r"validation error|Input should be|Field required|Extra inputs", re.I)


class OpenAICompatClient(SdkClient):
    provider = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    # A local server (Ollama, vLLM) at ``--base-url`` needs no key.
    keyless_at_base_url = True
    package = "openai"
    # OpenAI's own names, and router ids with a slash (``openai/gpt-4o``, ``meta-llama/...``)
    # other than a claude or gemini name, which keep their own provider.
    model_names = re.compile(r"^(?:gpt|chatgpt|o1|o3|o4)(?:\b|[-_.])|^(?!claude|gemini)[^/]*/", re.IGNORECASE)
    # USD per million tokens, from OpenAI's public price list (2026-11-22; the cache write is not
    # billed separately). When a figure is stale, fix the row.
    prices = {
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
    }
    takes_seed = True
    # The judge may ask for a verdict shaped by a JSON schema (``response_format``).
    takes_json_schema = True

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 300.0,
        policy: RetryPolicy = RetryPolicy(),
        concurrency: int = 8,
        temperature: float | None = None,
        seed: int | None = None,
        budget: SharedBudget | None = None,
    ):
        super().__init__(model, base_url=base_url, policy=policy, concurrency=concurrency,
                         temperature=temperature, seed=seed, budget=budget)
        self._timeout_s = timeout_s
        # The SDK's own retries are off: providers/retry.py is the one retry policy.
        sdk = load_sdk("openai")
        self._pools = SdkPools(sdk, lambda http_client: sdk.OpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s, http_client=http_client
        ), concurrency)
        self._sdk = self._pools.first
        self._reasoning = bool(_REASONING_MODEL.match(model))
        self._temperature_supported = not self._reasoning
        self._context: ContextWindow | None = None
        self._format_index = 0
        self._format_lock = threading.Lock()

    def context_window(self) -> ContextWindow:
        """What the server says about its context, read once (nothing from OpenAI itself)."""
        if self._context is None:
            self._context = read_context_window(self._sdk, self.model, self.base_url)
        return self._context

    def _params(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec], max_tokens: int
    ) -> dict[str, Any]:
        wire = [{"role": "system", "content": system}] + [
            w for m in messages for w in _wire_messages(m)
        ]
        params: dict[str, Any] = {"model": self.model, "messages": wire}
        fitted = self.context_window().fit(max_tokens, wire, tools)
        params["max_completion_tokens" if self._reasoning else "max_tokens"] = fitted
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
            params["tool_choice"] = "auto"
        return params

    def _structured(self, params: dict[str, Any], schema: dict[str, Any],
                    temperature: float | None, seed: str) -> ModelResponse:
        """The reply under the first ``response_format`` the server takes, remembered: the
        OpenAI ``json_schema`` form (OpenAI, vLLM, LM Studio, Ollama, llama-server), then a
        schema under ``json_object`` (llama-cpp-python's server), then none."""
        while True:
            with self._format_lock:
                form = _RESPONSE_FORMATS[self._format_index]
            if form is None:
                return self._sampled(params, temperature, seed)
            try:
                return self._sampled({**params, "response_format": form(schema)}, temperature, seed)
            except ProviderError as exc:
                if exc.status not in _REFUSED or not _ABOUT_FORMAT.search(str(exc)):
                    raise
                with self._format_lock:
                    if _RESPONSE_FORMATS[self._format_index] is form:
                        self._format_index += 1

    @staticmethod
    def classify(exc: BaseException) -> Failure:
        failure = classify_sdk_error(exc)
        # llama-cpp-python's server answers a request it cannot read with HTTP 500 and the
        # validation errors: a refusal, which a retry only repeats.
        if failure.status == 500 and _VALIDATION.search(failure.message):
            return Failure("fatal", failure.message, 422)
        return failure

    def _send(self, params: dict[str, Any], temperature: float | None) -> Any:
        if temperature is not None:
            params = {**params, "temperature": temperature}
        offered = frozenset(t["function"]["name"] for t in params.get("tools", ()))
        completion = self._pools.next().chat.completions.create(
            **params, timeout=attempt_timeout(self._timeout_s)
        )
        return completion, offered

    def _parse(self, raw: Any) -> ModelResponse:
        completion, offered = raw
        return _to_response(completion, self.model, offered)


def _wire_messages(message: Message) -> list[dict[str, Any]]:
    if message.role == "user":
        wire: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content}
            for r in message.tool_results
        ]
        if message.text or not message.tool_results:
            wire.append({"role": "user", "content": message.text or ""})
        return wire
    assistant: dict[str, Any] = {"role": "assistant", "content": message.text or ""}
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


def _to_response(completion: Any, model: str, offered: frozenset[str] = frozenset()) -> ModelResponse:
    choices = getattr(completion, "choices", None)
    if not choices:
        raise ProviderError(f"openai {model}: the response has no choices")
    choice = choices[0]
    calls = [
        ToolUse(call.id or f"call_{index}", call.function.name, _arguments(call.function.arguments))
        for index, call in enumerate(choice.message.tool_calls or [])
        if getattr(call, "function", None) is not None
    ]
    text = choice.message.content or ""
    if not calls and offered:
        text, calls = calls_in_text(text, offered)
    usage = _usage(getattr(completion, "usage", None))
    usage.cost_usd = OpenAICompatClient.cost_usd(model, usage)
    stop = _STOP_REASONS.get(choice.finish_reason or "", "other")
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=usage,
        stop_reason="tool_use" if calls else stop,
        served_model=getattr(completion, "model", None) or None,
    )


_TAGGED_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def calls_in_text(text: str, offered: frozenset[str]) -> tuple[str, list[ToolUse]]:
    """Tool calls a server left in the text, and the text without them. Only a JSON object
    that names an offered tool and carries its arguments counts: prose that happens to hold
    JSON stays prose."""
    tagged = _TAGGED_CALL.findall(text)
    sources = tagged or [text]
    calls: list[ToolUse] = []
    for source in sources:
        for obj in json_objects(source):
            name = obj.get("name")
            arguments = obj.get("arguments", obj.get("parameters"))
            if name in offered and isinstance(arguments, (dict, str)):
                calls.append(ToolUse(f"call_text_{len(calls)}", name, _arguments(arguments)))
    if not calls:
        return text, []
    rest = _TAGGED_CALL.sub("", text).strip() if tagged else ""
    return rest, calls


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
