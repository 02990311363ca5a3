"""Inert rendering of text that came from a model or a suite into GitHub-flavoured markdown.

Such text must not ping anyone (``@user``, ``#123``), inject HTML, break a table, open a code
span or link, carry a credential, or hide what it says: bidirectional and zero-width controls
(a "Trojan Source" reordering, an invisible character) are shown as ``<U+202E>``. Each function
here fits one place in a document: a table cell or running text, the inside of a raw HTML
element, or a fenced code block.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..core.inert_text import reveal
from ..secrets import redact

ZWJ = "\u200d"
ELLIPSIS = "…"
# A mention (@user, @org/team) or an issue reference (#12): GitHub links and notifies on both.
_REFERENCE = re.compile(r"([@#])(?=[A-Za-z0-9_])")
# Bare URLs GitHub would autolink: the joiner after the scheme or "www" keeps them plain text.
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|www)(?=://|\.)")
_WHITESPACE = re.compile(r"\s+")
# Markdown punctuation that can open emphasis, code, links, tables or strikethrough.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
def clip(text: str, limit: int | None) -> str:
    """At most ``limit`` characters, marking the cut."""
    if limit is None or len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def _defuse(text: str) -> str:
    """References and bare URLs kept from linking: a zero-width joiner after @, # or the scheme."""
    text = _AUTOLINK.sub(lambda m: m.group(1) + ZWJ, text)
    return _REFERENCE.sub(lambda m: m.group(1) + ZWJ, text)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def one_line(text: str) -> str:
    """Every run of whitespace (newlines included) as one space."""
    return _WHITESPACE.sub(" ", text).strip()


def inline(text: object, limit: int | None = 300) -> str:
    """Running markdown text or a table cell: one line, no markup, no HTML, no pings."""
    flat = clip(one_line(reveal(redact(str(text)))), limit)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _html(_defuse(flat)))


def html_text(text: object, limit: int | None = 200) -> str:
    """Text inside a raw HTML element (``<summary>``), where markdown is not parsed; brackets
    and backticks become entities anyway, so no renderer can make a link or code of them."""
    flat = clip(one_line(reveal(redact(str(text)))), limit)
    text = _html(_defuse(flat))
    return text.replace("[", "&#91;").replace("]", "&#93;").replace("`", "&#96;")


def code_block(text: object, limit: int | None = 1500, info: str = "text") -> str:
    """A fenced block that shows ``text`` literally: the fence outgrows any backtick run in it."""
    body = clip(reveal(redact(str(text))).replace("\r\n", "\n").replace("\r", "\n"), limit).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def code_span(text: object, limit: int | None = 120, *, table: bool = False) -> str:
    """Inline code: literal text, one line, delimited by more backticks than it holds."""
    flat = clip(one_line(reveal(redact(str(text)))), limit)
    if not flat:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    if table:
        # A table row splits on | even inside code; GitHub drops the backslash when rendering.
        flat = flat.replace("|", "\\|")
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def path_text(path: str) -> str:
    """A suite's path as a shared report shows it: relative to where the run started when it is
    under it, else only its last two parts, so a report never carries the runner's home or
    workspace layout."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path)
    if not relative.startswith(os.pardir):
        return relative
    return os.path.join(ELLIPSIS, *Path(path).parts[-2:])
