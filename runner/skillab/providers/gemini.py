"""The Gemini API through Google's official ``google-genai`` SDK (``generateContent``).

Chosen by a ``gemini-*`` model name or ``--provider gemini``; the key is ``GEMINI_API_KEY`` and
``GOOGLE_GEMINI_BASE_URL`` (or ``--base-url``) points the SDK at another endpoint, as for the
Gemini CLI. Tool results go back as ``functionResponse`` parts, which the API matches to the
call by name, so the name is found from the assistant turn that made the call. The SDK's own
retries are off (one attempt); its errors are translated for ``providers/retry.py``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from ..budget.client import SharedBudget
from ..core.messages import Message, ModelResponse, StopReason, ToolSpec, ToolUse
from ..core.retry_after import retry_after_seconds
from ..core.usage import Usage
from .base import Price
from .retry import Failure, RetryPolicy, classify_sdk_error, classify_status
from .sdk_client import SdkClient, load_sdk

_STOP_REASONS: dict[str, StopReason] = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens"}


class GeminiClient(SdkClient):
    provider = "gemini"
    key_env = "GEMINI_API_KEY"
    base_url_env = "GOOGLE_GEMINI_BASE_URL"
    package = "google-genai"
    model_names = re.compile(r"^gemini", re.IGNORECASE)
    # USD per million tokens, prompts up to 200k tokens (cache write is billed as storage, not
    # here). UNVERIFIED: not checked against Google's own page (ai.google.dev/gemini-api/docs/pricing),
    # which no source reachable here holds. Input and output agree with pages that cite it
    # (deploybase.ai/articles/gemini-api-pricing: 2.5 Pro 1.25/10, 2.5 Flash 0.30/2.50, "context
    # caching discounts reused context 90%"; aifreeapi.com/en/posts/gemini-api-pricing-2026:
    # 2.5 Flash-Lite 0.10/0.40). Cache reads are that 90% discount; a Google forum post quoting
    # the page gives 0.125 for 2.5 Pro (discuss.ai.google.dev/t/107349). Check before billing.
    prices = {
        "gemini-2.5-pro": Price(1.25, 10.00, 0.125, 0.0),
        "gemini-2.5-flash": Price(0.30, 2.50, 0.03, 0.0),
        "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01, 0.0),
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
        temperature: float | None = None,
        seed: int | None = None,
        budget: SharedBudget | None = None,
    ):
        super().__init__(model, base_url=base_url, policy=policy, concurrency=concurrency,
                         temperature=temperature, seed=seed, budget=budget)
        genai, types = load_sdk("google.genai"), load_sdk("google.genai.types")
        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._sdk = genai.Client(api_key=api_key, http_options=options)
        self._ids = itertools.count(1)

    def _params(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec], max_tokens: int
    ) -> dict[str, Any]:
        config: dict[str, Any] = {"system_instruction": system, "max_output_tokens": max_tokens}
        if tools:
            types = load_sdk("google.genai.types")
            declarations = [
                types.FunctionDeclaration(
                    name=t.name, description=t.description, parameters_json_schema=t.input_schema
                )
                for t in tools
            ]
            config["tools"] = [types.Tool(function_declarations=declarations)]
            config["automatic_function_calling"] = types.AutomaticFunctionCallingConfig(disable=True)
        return {"model": self.model, "contents": contents(messages), "config": config}

    def _send(self, params: dict[str, Any], temperature: float | None) -> Any:
        config = dict(params["config"])
        if temperature is not None:
            config["temperature"] = temperature
        return self._sdk.models.generate_content(
            model=params["model"],
            contents=params["contents"],
            config=load_sdk("google.genai.types").GenerateContentConfig(**config),
        )

    def _parse(self, raw: Any) -> ModelResponse:
        return self.to_response(raw)

    @staticmethod
    def classify(exc: BaseException) -> Failure:
        if isinstance(exc, load_sdk("google.genai.errors").APIError) and isinstance(exc.code, int):
            headers = getattr(getattr(exc, "response", None), "headers", None)
            return Failure(
                classify_status(exc.code),
                f"HTTP {exc.code}: {exc.status}: {exc.message}",
                exc.code,
                retry_after_seconds(dict(headers) if headers is not None else None),
            )
        # The SDK's HTTP client raises its own transport errors; they are known by class name so
        # either httpx distribution the SDK was built with is recognised.
        lineage = {cls.__name__ for cls in type(exc).__mro__}
        if "TimeoutException" in lineage:
            return Failure("transient", "request timed out")
        if "TransportError" in lineage:
            return Failure("transient", f"connection error ({type(exc).__name__}: {exc})")
        return classify_sdk_error(exc)

    def to_response(self, response: Any) -> ModelResponse:
        candidates = getattr(response, "candidates", None) or []
        parts = (candidates[0].content.parts or []) if candidates and candidates[0].content else []
        texts = [p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False)]
        calls = [
            ToolUse(
                p.function_call.id or f"gemini_call_{next(self._ids)}",
                p.function_call.name or "",
                dict(p.function_call.args or {}),
            )
            for p in parts
            if getattr(p, "function_call", None) is not None
        ]
        usage = _usage(getattr(response, "usage_metadata", None))
        usage.cost_usd = self.cost_usd(self.model, usage)
        reason = getattr(candidates[0], "finish_reason", None) if candidates else None
        name = getattr(reason, "value", reason) or ""
        stop: StopReason = "tool_use" if calls else _STOP_REASONS.get(str(name), "other")
        return ModelResponse(text="".join(texts), tool_calls=calls, usage=usage, stop_reason=stop)


def contents(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Gemini ``contents``; tool results carry their call's name."""
    names: dict[str, str] = {}
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
            for call in message.tool_calls:
                names[call.id] = call.name
                args = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
                parts.append({"function_call": {"id": call.id, "name": call.name, "args": args}})
            wire.append({"role": "model", "parts": parts})
            continue
        parts = [
            {
                "function_response": {
                    "id": r.tool_use_id,
                    "name": names.get(r.tool_use_id, "tool"),
                    "response": {"error" if r.is_error else "output": r.content},
                }
            }
            for r in message.tool_results
        ]
        if message.text or not message.tool_results:
            parts.append({"text": message.text or ""})
        wire.append({"role": "user", "parts": parts})
    return wire


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    output = (getattr(raw, "candidates_token_count", None) or 0) + (
        getattr(raw, "thoughts_token_count", None) or 0
    )
    return Usage(
        input_tokens=getattr(raw, "prompt_token_count", None) or 0,
        output_tokens=output,
        cache_read_tokens=getattr(raw, "cached_content_token_count", None) or 0,
    )
