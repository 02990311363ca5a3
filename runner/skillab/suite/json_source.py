"""JSON that remembers lines: suite files in JSON (criteria.json, evals.json) get issues that
name the line, as YAML suites do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import SuiteError, SuiteIssue
from ..yaml_source import (
    MAX_DEPTH,
    MAX_NUMBER_DIGITS,
    DuplicateKey,
    YamlDocument,
    YamlPath,
)

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def parse_located_json(text: str, path: Path) -> YamlDocument:
    """Parse JSON, keeping the line of every object key and array item, and each key written
    twice in one object (the first is kept). Raises ``SuiteError`` with the line of a syntax error."""
    reader = _JsonReader(text)
    try:
        pos = reader.skip(0)
        value, pos = reader.value(pos, ())
        if reader.skip(pos) != len(text):
            raise _JsonSyntax("extra data after the JSON value", reader.skip(pos))
    except _JsonSyntax as exc:
        line = text.count("\n", 0, exc.pos) + 1
        raise SuiteError([SuiteIssue(path, f"invalid JSON: {exc.message} (line {line})", line=line)]) from None
    reader.lines[()] = 1
    return YamlDocument(value, reader.lines, tuple(reader.duplicates))


class _TooLong(Exception):
    pass


def _bounded_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _TooLong(f"a number of {len(text)} digits (at most {MAX_NUMBER_DIGITS})")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _TooLong(f"a number of {len(text)} characters (at most {MAX_NUMBER_DIGITS})")
    return float(text)


class _JsonSyntax(Exception):
    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.message = message
        self.pos = pos


class _JsonReader:
    def __init__(self, text: str):
        self.text = text
        self.decoder = json.JSONDecoder(parse_int=_bounded_int, parse_float=_bounded_float)
        self.lines: dict[YamlPath, int] = {}
        self.duplicates: list[DuplicateKey] = []

    def line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def skip(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)  # ``*``: it always matches
        return match.end() if match else pos

    def value(self, pos: int, at: YamlPath) -> tuple[Any, int]:
        if pos >= len(self.text):
            raise _JsonSyntax("the document ends where a value was expected", pos)
        if len(at) > MAX_DEPTH:
            raise _JsonSyntax(f"nesting is deeper than {MAX_DEPTH} levels", pos)
        char = self.text[pos]
        if char == "{":
            return self.mapping(pos, at)
        if char == "[":
            return self.sequence(pos, at)
        try:
            return self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise _JsonSyntax(exc.msg.lower(), exc.pos) from None
        except _TooLong as exc:
            raise _JsonSyntax(str(exc), pos) from None

    def mapping(self, pos: int, at: YamlPath) -> tuple[dict[str, Any], int]:
        result: dict[str, Any] = {}
        first: dict[str, int] = {}
        pos = self.skip(pos + 1)
        if self.text.startswith("}", pos):
            return result, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                raise _JsonSyntax("expected a key in double quotes", pos)
            key_pos = pos
            key, pos = self.value(pos, at)
            pos = self.skip(pos)
            if not self.text.startswith(":", pos):
                raise _JsonSyntax("expected ':' after the key", pos)
            item, pos = self.value(self.skip(pos + 1), (*at, key))
            line = self.line(key_pos)
            if key in first:
                self.duplicates.append(DuplicateKey(at, key, line, first[key]))
            else:
                first[key] = line
                self.lines[(*at, key)] = line
                result[key] = item
            pos = self.skip(pos)
            if self.text.startswith("}", pos):
                return result, pos + 1
            if not self.text.startswith(",", pos):
                raise _JsonSyntax("expected ',' or '}' in an object", pos)
            pos = self.skip(pos + 1)

    def sequence(self, pos: int, at: YamlPath) -> tuple[list[Any], int]:
        result: list[Any] = []
        pos = self.skip(pos + 1)
        if self.text.startswith("]", pos):
            return result, pos + 1
        while True:
            index = len(result)
            self.lines[(*at, index)] = self.line(pos)
            item, pos = self.value(pos, (*at, index))
            result.append(item)
            pos = self.skip(pos)
            if self.text.startswith("]", pos):
                return result, pos + 1
            if not self.text.startswith(",", pos):
                raise _JsonSyntax("expected ',' or ']' in an array", pos)
            pos = self.skip(pos + 1)
