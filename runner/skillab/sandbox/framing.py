"""The request framing the credential proxy accepts from a sandbox, strictly.

Everything here is read from a client the sandbox controls, into the runner's own memory, so
nothing is left to a lenient parser: a body is framed by ``Content-Length`` (digits only) or by
``chunked`` (sizes of 1 to 16 hex digits, each chunk ended by CRLF), never both, never read to
the end of the stream, and never past ``limit`` bytes. A request target is one normal absolute
path: no ``.``/``..`` segments, no empty ones, no encoded separator, nothing but the characters
of a path. Anything else is a ``BadFraming`` (the proxy answers 400) and forwards nothing.
"""

from __future__ import annotations

import re
from typing import Protocol
from urllib.parse import unquote

_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_LENGTH = re.compile(r"[0-9]{1,19}")
# The bytes of a decoded path: RFC 3986 pchar and "/" (no "%", "?", "#", blanks or controls).
_PATH_CHARS = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@/-]*")
_QUERY_CHARS = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@/?%-]*")
_ENCODED_SEPARATOR = re.compile(r"%(2[fF]|5[cC]|2[eE]|00)")
_LINE = 4096
_MAX_TRAILERS = 32


class Headers(Protocol):
    """A request's header fields (``http.server``'s ``self.headers``)."""

    def get(self, name: str, /) -> str | None: ...


class Reader(Protocol):
    """The client's byte stream (``http.server``'s ``self.rfile``)."""

    def read(self, size: int, /) -> bytes: ...

    def readline(self, size: int, /) -> bytes: ...


class BadFraming(Exception):
    """A request the proxy will not parse further: the message is the client's 400."""


class TooLarge(Exception):
    """A request body over the proxy's limit."""


def normal_target(target: str) -> str:
    """The request target as one normal absolute path (with its query, unchanged), or
    ``BadFraming``: the allowlist is matched on this, and this is what is forwarded."""
    path, mark, query = target.partition("?")
    if not path.startswith("/") or path.startswith("//"):
        raise BadFraming("the request target must be an absolute path")
    if _ENCODED_SEPARATOR.search(path) or "\\" in path:
        raise BadFraming("the request path carries an encoded separator or dot")
    try:
        decoded = unquote(path, errors="strict") if "%" in path else path
    except UnicodeDecodeError:
        raise BadFraming("the request path is not UTF-8") from None
    if not _PATH_CHARS.fullmatch(decoded) or not _QUERY_CHARS.fullmatch(query):
        raise BadFraming("the request target holds characters a path does not")
    segments = decoded.split("/")[1:]
    if any(s in (".", "..") for s in segments) or "" in segments[:-1]:
        raise BadFraming("the request path is not normal (a '.', '..' or empty segment)")
    return decoded + (mark + query if mark else "")


def read_body(headers: Headers, rfile: Reader, limit: int) -> bytes | None:
    """The request body framed by ``headers``, at most ``limit`` bytes (``TooLarge``)."""
    encoding = headers.get("Transfer-Encoding")
    length = headers.get("Content-Length")
    if encoding is not None:
        if length is not None:
            raise BadFraming("a request may not carry both Content-Length and Transfer-Encoding")
        if encoding.strip().lower() != "chunked":
            raise BadFraming("only the chunked transfer coding is accepted")
        return _chunked(rfile, limit)
    if length is None:
        return None
    if not _LENGTH.fullmatch(length.strip()):
        raise BadFraming("Content-Length must be a decimal number")
    size = int(length)
    if size > limit:
        raise TooLarge
    return _exactly(rfile, size) if size else None


def _chunked(rfile: Reader, limit: int) -> bytes:
    chunks, total = [], 0
    while True:
        line = _line(rfile)
        token = line.split(b";", 1)[0].strip(b" \t")
        if not _CHUNK_SIZE.fullmatch(token):
            raise BadFraming("a chunk size must be 1 to 16 hexadecimal digits")
        size = int(token, 16)
        if size == 0:
            break
        total += size
        if total > limit:
            raise TooLarge
        chunks.append(_exactly(rfile, size))
        if _line(rfile) != b"":
            raise BadFraming("a chunk must end with CRLF")
    for _ in range(_MAX_TRAILERS):
        if _line(rfile) == b"":
            return b"".join(chunks)
    raise BadFraming("too many trailer lines")


def _line(rfile: Reader) -> bytes:
    line = rfile.readline(_LINE + 1)
    if len(line) > _LINE or not line.endswith(b"\n"):
        raise BadFraming("a chunk line is too long or the body ended early")
    return line[:-2] if line.endswith(b"\r\n") else line[:-1]


def _exactly(rfile: Reader, size: int) -> bytes:
    data = rfile.read(size)
    if len(data) != size:
        raise BadFraming("the request body ended before its declared length")
    return data
