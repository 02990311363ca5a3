"""The Gemini API (``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse``) for the fake model server.

A scripted ``Reply`` becomes a ``GenerateContentResponse``: one candidate whose parts are the
text and a ``functionCall`` per tool call, with ``usageMetadata``. Streamed requests get it as
SSE ``data:`` chunks (text split in two, the last chunk carrying ``finishReason`` and usage),
which the Gemini CLI and the ``google-genai`` SDK both read. Errors use Google's error shape
(``{"error": {"code", "message", "status"}}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

GEMINI_ROUTE = re.compile(r"^/(?:v1beta|v1)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    529: "UNAVAILABLE",
}


def method(path: str) -> str | None:
    """``generateContent``, ``streamGenerateContent``, ``countTokens``... or None."""
    found = GEMINI_ROUTE.match(path.split("?")[0])
    return found.group("method") if found else None


def model_of(path: str) -> str:
    found = GEMINI_ROUTE.match(path.split("?")[0])
    return found.group("model") if found else "fake-model"


def contents_text(body: dict[str, Any]) -> str:
    """Every text part of the system instruction and the contents."""
    parts = list(_parts(body.get("systemInstruction")))
    for content in body.get("contents") or []:
        parts += list(_parts(content))
    return "\n".join(str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text"))


def function_responses(body: dict[str, Any]) -> list[str]:
    """The ``functionResponse`` parts the request carries, as JSON text, in order."""
    found = []
    for content in body.get("contents") or []:
        for part in _parts(content):
            if isinstance(part, dict) and "functionResponse" in part:
                found.append(json.dumps(part["functionResponse"].get("response")))
    return found


def function_calls(body: dict[str, Any]) -> int:
    """How many model function calls the request replays (the agent's step count)."""
    return sum(
        1
        for content in body.get("contents") or []
        for part in _parts(content)
        if isinstance(part, dict) and "functionCall" in part
    )


def declared_tools(body: dict[str, Any]) -> list[str]:
    return [
        str(d.get("name"))
        for tool in body.get("tools") or []
        for d in (tool.get("functionDeclarations") or [])
    ]


def _parts(content: Any) -> list[Any]:
    if isinstance(content, dict):
        return content.get("parts") or []
    return []


def response_object(
    path: str, reply: Any, *, next_id: Callable[[str], str], input_tokens: int, output_tokens: int
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    for call in reply.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
        parts.append({"functionCall": {"name": call.name, "args": arguments}})
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": input_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": input_tokens + output_tokens,
        },
        "modelVersion": model_of(path),
        "responseId": next_id("gresp"),
    }


def response_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The streamed form: text in two pieces, calls whole, finish reason and usage last."""
    candidate = response["candidates"][0]
    chunks: list[dict[str, Any]] = []
    meta = {k: response[k] for k in ("modelVersion", "responseId")}
    for part in candidate["content"]["parts"]:
        pieces = (
            [{"text": part["text"][: len(part["text"]) // 2]}, {"text": part["text"][len(part["text"]) // 2 :]}]
            if "text" in part
            else [part]
        )
        for piece in pieces:
            if piece.get("text") == "":
                continue
            chunks.append(
                {"candidates": [{"content": {"role": "model", "parts": [piece]}, "index": 0}], **meta}
            )
    last = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}]}
    chunks.append({**last, "usageMetadata": response["usageMetadata"], **meta})
    return chunks


def error_body(status: int, body: Any) -> dict[str, Any]:
    """A scripted error in Google's shape, keeping the scripted message."""
    message = "error"
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = str(inner.get("message") or message)
    elif isinstance(body, str):
        message = body
    return {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}}
