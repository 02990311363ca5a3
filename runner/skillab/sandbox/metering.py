"""What the credential proxy counts of every model call it relays: tokens, their price, the model.

The proxy is the one place every model call of a CLI arm passes through, so the arm's tokens and
cost are read here, from the provider's own answers, and never from what the CLI printed (which
anything in the sandbox can write to: a forged ``result`` event costs nothing to print). Each
answer's ``usage`` is read in whichever shape its wire protocol gives it:

* Anthropic Messages: ``usage`` of a ``message``; streamed, ``message_start``'s usage, with the
  cumulative counts of each ``message_delta`` over it;
* OpenAI Responses: ``usage`` of a ``response``; streamed, of ``response.completed`` (or
  ``.incomplete``/``.failed``);
* OpenAI Chat Completions: ``usage`` of a completion or of its last streamed chunk;
* Gemini: ``usageMetadata``, cumulative in each streamed chunk (SSE or a JSON array).

A ``SpendMeter`` is shared by every arm of a run: each model request reserves its upper cost
at admission and is charged what its answer cost when relayed, so the requests in flight
together stay under the run's ``--max-cost-usd``; one that cannot fit is refused.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from ..budget.estimate import Price
from ..core.usage import Usage

# A JSON answer is read whole to find its usage; a model's answer is far smaller than this, and
# one that is not is relayed all the same but counted as unmetered.
MAX_JSON_BYTES = 32 << 20
# An SSE line longer than this is content, never the usage event, and is skipped unparsed.
MAX_EVENT_LINE = 1 << 20

_GEMINI_MODEL = re.compile(r"/models/([^/:?]+)(?::|$)")


@dataclass
class SpendMeter:
    """What the model calls of a run's arms cost so far, against its cap (None: no cap).

    A request is admitted against a reservation of its upper cost (``upper_cost``: the body's
    bytes as input tokens at the dearer input price, its ``max_tokens`` as output), and settled
    at what its answer cost once relayed. A request whose reservation would take the spend past
    the cap waits while others in flight may settle for less, and is refused once it cannot fit,
    so the requests in flight together never cross the cap: what a run spends past it is bounded
    by what the upper estimates miss (nothing, for a priced model), and the meter records it
    (``overshoot_usd``). An unpriced request reserves nothing: it is refused only once the
    spend reached the cap.
    """

    cap_usd: float | None = None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    _lock: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def exhausted(self) -> bool:
        with self._lock:
            return self.cap_usd is not None and self.spent_usd >= self.cap_usd

    @property
    def overshoot_usd(self) -> float:
        """How far the spend went past the cap (0 within it, or without a cap)."""
        return 0.0 if self.cap_usd is None else max(0.0, self.spent_usd - self.cap_usd)

    def reserve(self, upper_usd: float | None, *, timeout_s: float = 600.0) -> bool:
        """Admit a request that may cost up to ``upper_usd``: False when it cannot fit under the
        cap (then nothing is reserved); a True must be followed by ``settle``."""
        upper = upper_usd or 0.0
        with self._lock:
            if self.cap_usd is None:
                self.reserved_usd += upper
                return True
            cap = self.cap_usd
            fits = self._lock.wait_for(
                lambda: self.spent_usd >= cap or self.spent_usd + upper > cap
                or self.spent_usd + self.reserved_usd + upper <= cap, timeout=timeout_s)
            if not fits or self.spent_usd >= cap or self.spent_usd + self.reserved_usd + upper > cap:
                return False
            self.reserved_usd += upper
            return True

    def settle(self, upper_usd: float | None, spent_usd: float | None) -> None:
        """Release a reservation of ``upper_usd`` and charge what the answer cost."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - (upper_usd or 0.0))
            if spent_usd:
                self.spent_usd += spent_usd
            self._lock.notify_all()

    def spend(self, usd: float | None) -> None:
        if usd:
            with self._lock:
                self.spent_usd += usd
                self._lock.notify_all()


@dataclass
class Tally:
    """One arm's model calls as the proxy saw them."""

    usage: Usage = field(default_factory=Usage)
    # Answers relayed, answers whose usage could not be read, requests refused (cap or model).
    answered: int = 0
    unmetered: int = 0
    refused: int = 0
    reasons: list[str] = field(default_factory=list)
    # The model the last answer named (the baseline cache is keyed on it).
    served_model: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, reader: UsageReader, price: Price | None) -> float | None:
        """Count one relayed answer; returns its cost (None when unpriced or unread)."""
        usage = reader.usage()
        cost = price(usage) if price is not None and usage is not None else None
        with self._lock:
            self.answered += 1
            if usage is None:
                self.unmetered += 1
                return None
            usage.cost_usd = cost
            self.usage = self.usage.add(usage)
            self.served_model = reader.model or self.served_model
        return cost

    def refuse(self, reason: str) -> None:
        """Count a request refused for ``reason`` (skillab's own words, never the request's)."""
        with self._lock:
            self.refused += 1
            if reason not in self.reasons:
                self.reasons.append(reason)


class UsageReader:
    """Fed an answer's body as it streams past; ``usage()`` is what the answer says it used."""

    def __init__(self, content_type: str, content_encoding: str = ""):
        self._sse = "text/event-stream" in content_type.lower()
        # The proxy asks for an unencoded answer; one encoded anyway cannot be read here.
        self._readable = content_encoding.strip().lower() in ("", "identity")
        self._buffer = bytearray()
        self._fields: dict[str, int] = {}
        # Anthropic counts cached input apart from input_tokens; the others include it.
        self._cached_apart = False
        self.model: str | None = None

    def feed(self, chunk: bytes) -> None:
        if not self._readable:
            return
        self._buffer += chunk
        if not self._sse:
            if len(self._buffer) > MAX_JSON_BYTES:
                self._readable = False
                self._buffer.clear()
            return
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_EVENT_LINE:
                    self._buffer.clear()  # the rest of this line is skipped with it
                return
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._line(line)

    def usage(self) -> Usage | None:
        """The answer's usage; None when it could not be read (an encoded or oversized body)."""
        if not self._readable:
            return None
        if not self._sse and self._buffer:
            try:
                parsed = json.loads(bytes(self._buffer))
            except (ValueError, UnicodeDecodeError):
                parsed = None
            # Gemini streams without ``alt=sse`` as one JSON array of chunks.
            for event in parsed if isinstance(parsed, list) else [parsed]:
                if isinstance(event, dict):
                    self._event(event)
            self._buffer.clear()
        elif self._sse and self._buffer:
            self._line(bytes(self._buffer))
            self._buffer.clear()
        fields = self._fields
        cached = fields.get("cache_read", 0) + fields.get("cache_write", 0) if self._cached_apart else 0
        return Usage(
            input_tokens=fields.get("input", 0) + cached,
            output_tokens=fields.get("output", 0),
            cache_read_tokens=fields.get("cache_read", 0),
            cache_write_tokens=fields.get("cache_write", 0),
        )

    # --- the wire shapes --------------------------------------------------------------------

    def _line(self, line: bytes) -> None:
        # Only an event that names usage is parsed: deltas of content are passed by unread.
        if not line.startswith(b"data:") or b"sage" not in line:
            return
        try:
            event = json.loads(line[5:])
        except (ValueError, UnicodeDecodeError):
            return
        if isinstance(event, dict):
            self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self._anthropic(event["message"].get("usage"), event["message"].get("model"))
        elif kind in ("message_delta", "message"):
            self._anthropic(event.get("usage"), event.get("model"))
        elif isinstance(kind, str) and kind.startswith("response.") and isinstance(event.get("response"), dict):
            self._responses(event["response"].get("usage"), event["response"].get("model"))
        elif event.get("object") == "response":
            self._responses(event.get("usage"), event.get("model"))
        elif str(event.get("object", "")).startswith("chat.completion"):
            self._chat(event.get("usage"), event.get("model"))
        elif "usageMetadata" in event:
            self._gemini(event.get("usageMetadata"), event.get("modelVersion"))

    def _set(self, model: Any, **counts: Any) -> None:
        # Every shape's counts are cumulative over the answer (Anthropic's deltas, Gemini's
        # chunks): the largest seen is the answer's.
        for name, value in counts.items():
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                self._fields[name] = max(value, self._fields.get(name, 0))
        if isinstance(model, str) and model:
            self.model = model

    def _anthropic(self, usage: Any, model: Any) -> None:
        # Anthropic's input_tokens leaves out the cached ones; skillab's input counts them.
        self._cached_apart = True
        if isinstance(usage, dict):
            self._set(model, input=usage.get("input_tokens"), output=usage.get("output_tokens"),
                      cache_read=usage.get("cache_read_input_tokens"),
                      cache_write=usage.get("cache_creation_input_tokens"))
        elif model is not None:
            self._set(model)

    def _responses(self, usage: Any, model: Any) -> None:
        if isinstance(usage, dict):
            details = usage.get("input_tokens_details") or {}
            self._set(model, input=usage.get("input_tokens"), output=usage.get("output_tokens"),
                      cache_read=details.get("cached_tokens") if isinstance(details, dict) else None)
        else:
            self._set(model)

    def _chat(self, usage: Any, model: Any) -> None:
        if isinstance(usage, dict):
            details = usage.get("prompt_tokens_details") or {}
            self._set(model, input=usage.get("prompt_tokens"), output=usage.get("completion_tokens"),
                      cache_read=details.get("cached_tokens") if isinstance(details, dict) else None)
        else:
            self._set(model)

    def _gemini(self, usage: Any, model: Any) -> None:
        if isinstance(usage, dict):
            # Thinking tokens are billed as output.
            output = int(usage.get("candidatesTokenCount") or 0) + int(usage.get("thoughtsTokenCount") or 0)
            self._set(model, input=usage.get("promptTokenCount"), output=output,
                      cache_read=usage.get("cachedContentTokenCount"))


class DuplicateKey(ValueError):
    """A JSON object naming one key twice: parsers differ on which one counts."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise DuplicateKey("a JSON object names a key twice")
    return found


_STRICT_JSON = json.JSONDecoder(object_pairs_hook=_unique)


def requested_model(path: str, body: bytes | None) -> str | None:
    """The model a request asks for: Gemini names it in the path, the others in the body's
    ``model``. None when it names none. A body naming any key twice is a ``DuplicateKey``: the
    upstream's parser might read the other ``model``."""
    found = _GEMINI_MODEL.search(path.split("?", 1)[0])
    if found:
        return found.group(1)
    if not body:
        return None
    try:
        parsed = _STRICT_JSON.decode(body.decode("utf-8"))
    except DuplicateKey:
        raise
    except (ValueError, UnicodeDecodeError):
        return None
    model = parsed.get("model") if isinstance(parsed, dict) else None
    return model if isinstance(model, str) else None
