"""The context window of an OpenAI-compatible server, and a ``max_tokens`` that fits in it.

A local server's context is small (llama-cpp-python's server defaults to 2,048 tokens) and a
``max_tokens`` beyond it only lets a rambling answer run on. The window is read once per client
from what the server says about itself, where it says it:

- ``GET /v1/models``: vLLM's ``max_model_len``, LM Studio's ``max_context_length``,
  OpenRouter's ``context_length``, llama-server's ``meta.n_ctx_train``;
- ``GET /props``: llama-server's ``default_generation_settings.n_ctx`` (the window it serves,
  which wins over the trained one).

A server that says nothing (OpenAI, llama-cpp-python's server, Ollama) keeps the asked
``max_tokens``: ``--max-tokens`` sets it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.messages import ToolSpec

# Reading the window is a courtesy of the server: a slow answer is no answer.
_PROBE_TIMEOUT_S = 5.0
# Tokens an answer is always left, even when the prompt estimate says the window is full: the
# server then says whether it fits.
_MIN_ANSWER_TOKENS = 16
# Characters per token, on the low side so the prompt estimate errs long.
_CHARS_PER_TOKEN = 3


@dataclass(frozen=True)
class ContextWindow:
    """``tokens`` the server serves at once (None: unknown) and where that was read."""

    tokens: int | None = None
    source: str | None = None

    def fit(self, max_tokens: int, wire: Sequence[Any], tools: Sequence[ToolSpec] = ()) -> int:
        """``max_tokens``, cut to what the window leaves after the (estimated) prompt."""
        if self.tokens is None:
            return max_tokens
        prompt = json.dumps(list(wire)) + json.dumps([t.input_schema for t in tools])
        room = self.tokens - len(prompt) // _CHARS_PER_TOKEN
        return max(_MIN_ANSWER_TOKENS, min(max_tokens, room))


def read_context_window(sdk: Any, model: str, base_url: str | None) -> ContextWindow:
    """The window ``base_url`` says it serves ``model`` with; unknown without a base URL."""
    if not base_url:
        return ContextWindow()
    props = _get(sdk, base_url.rstrip("/").removesuffix("/v1") + "/props")
    served = _number(_dig(props, "default_generation_settings", "n_ctx")) or _number(_dig(props, "n_ctx"))
    if served:
        return ContextWindow(served, "/props")
    models = _get(sdk, base_url.rstrip("/") + "/models")
    entries = models.get("data") if isinstance(models, dict) else None
    for entry in _matching(entries if isinstance(entries, list) else [], model):
        for path in (("max_model_len",), ("max_context_length",), ("context_length",),
                     ("meta", "n_ctx"), ("meta", "n_ctx_train")):
            found = _number(_dig(entry, *path))
            if found:
                return ContextWindow(found, "/v1/models " + ".".join(path))
    return ContextWindow()


def _get(sdk: Any, url: str) -> Any:
    """The JSON at ``url`` (absolute, so the SDK does not join it to its base), or None."""
    try:
        return sdk.get(url, cast_to=object, options={"timeout": _PROBE_TIMEOUT_S})
    except Exception:  # a server without the route, or down: the window stays unknown
        return None


def _matching(entries: list[Any], model: str) -> list[dict[str, Any]]:
    dicts = [e for e in entries if isinstance(e, dict)]
    named = [e for e in dicts if e.get("id") == model]
    # A single-model server (llama.cpp) serves it under whatever name is asked.
    return named or (dicts if len(dicts) == 1 else [])


def _dig(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
