"""An agent session, and its canonical text rendering (trajectory format v1).

The rendering is what the LLM judge reads, so it is byte-exact per
``spec/trajectory-format.md``: two conforming runners given the same session produce the same
text, and any judge disagreement is about judging, not rendering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

TOOL_OUTPUT_MAX_CHARS = 200


@dataclass
class ToolCall:
    """One tool invocation the agent made, and what the tool returned (None: not captured)."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    output: str | None = None
    latency_ms: int | None = None


@dataclass
class ModelTurn:
    """One model response: optional text, then the tool calls it asked for."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    latency_ms: int | None = None


@dataclass
class Trajectory:
    """The observable session.

    ``final_output`` is rendered as a closing agent line only when the session's last answer is
    not already carried by a turn (adapters that see the reply as a turn leave it ``None``).
    """

    user_input: str | None = None
    turns: list[ModelTurn] = field(default_factory=list)
    final_output: str | None = None

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [tc for turn in self.turns for tc in turn.tool_calls]

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_input": self.user_input,
            "final_output": self.final_output,
            "turns": [
                {
                    "text": t.text,
                    "latency_ms": t.latency_ms,
                    "tool_calls": [
                        {"name": c.name, "args": c.args, "output": c.output, "latency_ms": c.latency_ms}
                        for c in t.tool_calls
                    ],
                }
                for t in self.turns
            ],
        }


def render_v1(trajectory: Trajectory) -> str:
    """The canonical v1 transcript: ``[Step N · Ts] body`` lines joined by newlines."""
    lines: list[str] = []

    def emit(body: str, latency_ms: int | None = None) -> None:
        marker = _duration_marker(latency_ms)
        prefix = f"[Step {len(lines) + 1} · {marker}]" if marker else f"[Step {len(lines) + 1}]"
        lines.append(f"{prefix} {body}")

    if trajectory.user_input:
        emit(f"User: {trajectory.user_input.strip()}")
    for turn in trajectory.turns:
        if turn.text:
            emit(f"Agent: {_one_line(turn.text)}", turn.latency_ms)
        for call in turn.tool_calls:
            emit(f"Agent → tool: {call.name}({format_tool_args(call.args)})")
            # An empty or uncaptured output is not rendered: the format never fabricates one.
            if call.output:
                emit(f"Tool output: {truncate_tool_output(call.output)}")
    if trajectory.final_output:
        emit(f"Agent: {_one_line(trajectory.final_output)}")
    return "\n".join(lines)


def _one_line(text: str) -> str:
    # v1 joins a multi-line agent reply into one line; a line break would fake a new step.
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _duration_marker(latency_ms: int | float | None) -> str | None:
    """Seconds to one decimal, rounded half away from zero on the decimal value; None under 0.05s."""
    if not latency_ms:
        return None
    seconds = (Decimal(str(latency_ms)) / 1000).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"{seconds}s" if seconds > 0 else None


def format_tool_args(args: dict[str, Any] | str | Any) -> str:
    """``key="str", key=<json>`` in source order, with the normative JSON separators."""
    if isinstance(args, str):
        return args
    if not isinstance(args, dict):
        return str(args)
    parts = []
    for key, value in args.items():
        if isinstance(value, str):
            rendered = f'"{value}"'
        else:
            rendered = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
        parts.append(f"{key}={rendered}")
    return ", ".join(parts)


def truncate_tool_output(text: str, limit: int = TOOL_OUTPUT_MAX_CHARS) -> str:
    """First ``limit`` codepoints, then ``[truncated, K more chars]`` when anything was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [truncated, {len(text) - limit} more chars]"
