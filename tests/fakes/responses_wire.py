"""The OpenAI Responses API (``POST /v1/responses``) for the fake model server.

A scripted ``Reply`` becomes a ``response`` object: a ``message`` output item for its text and a
``function_call`` item per tool call, with ``usage`` in the Responses shape. Streamed requests
get the event sequence the API sends (``response.created``, ``response.output_item.added``,
text and argument deltas, ``response.output_item.done``, ``response.completed``), each as a
named SSE event with a ``sequence_number``: the Codex CLI and the ``openai`` SDK both read it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

Events = list[tuple[str, dict[str, Any]]]


def input_text(body: dict[str, Any]) -> str:
    """Everything the request's ``instructions`` and ``input`` items say, as text."""
    parts = [str(body.get("instructions") or "")]
    items = body.get("input")
    if isinstance(items, str):
        return "\n".join(parts + [items])
    for item in items or []:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(c.get("text", "")) for c in content if isinstance(c, dict)]
        if item.get("type") == "function_call_output":
            parts.append(_output_text(item.get("output")))
    return "\n".join(p for p in parts if p)


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The ``function_call_output`` items the request carries, in order."""
    items = body.get("input")
    if not isinstance(items, list):
        return []
    return [
        _output_text(i.get("output"))
        for i in items
        if isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")
    ]


def function_calls(body: dict[str, Any]) -> int:
    """How many model tool calls the request replays (the agent's step count)."""
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(
        1 for i in items if isinstance(i, dict) and i.get("type") in ("function_call", "custom_tool_call")
    )


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return "" if output is None else json.dumps(output)


def response_object(
    body: dict[str, Any],
    reply: Any,
    *,
    next_id: Callable[[str], str],
    input_tokens: int,
    output_tokens: int,
) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.text:
        output.append(
            {
                "type": "message",
                "id": next_id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        output.append(
            {
                "type": "function_call",
                "id": next_id("fc"),
                "call_id": call.id or next_id("call"),
                "name": call.name,
                "arguments": arguments,
                "status": "completed",
            }
        )
    return {
        "id": next_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model", "fake-model"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def response_events(response: dict[str, Any]) -> Events:
    sequence = iter(range(1_000_000))
    events: Events = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(sequence), **data}))

    started = {**response, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=started)
    emit("response.in_progress", response=started)
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            _message_events(emit, index, item)
        else:
            _call_events(emit, index, item)
    emit("response.completed", response=response)
    return events


def _message_events(emit: Callable[..., None], index: int, item: dict[str, Any]) -> None:
    text = item["content"][0]["text"]
    emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
    part = {"type": "output_text", "text": "", "annotations": []}
    emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
    for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
        if piece:
            emit(
                "response.output_text.delta",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
    emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=text, logprobs=[])
    emit(
        "response.content_part.done",
        item_id=item["id"],
        output_index=index,
        content_index=0,
        part={**part, "text": text},
    )
    emit("response.output_item.done", output_index=index, item=item)


def _call_events(emit: Callable[..., None], index: int, item: dict[str, Any]) -> None:
    emit("response.output_item.added", output_index=index, item={**item, "arguments": "", "status": "in_progress"})
    arguments = item["arguments"]
    for piece in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
        if piece:
            emit(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=piece,
            )
    emit(
        "response.function_call_arguments.done",
        item_id=item["id"],
        output_index=index,
        name=item["name"],
        arguments=arguments,
    )
    emit("response.output_item.done", output_index=index, item=item)
