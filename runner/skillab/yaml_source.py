"""Reading suite files safely, and YAML that remembers the line every value came from.

Suite files are user input: a file may be huge, not UTF-8, an alias bomb, or repeat a key
(YAML keeps only one copy, silently). Each of these becomes one ``SuiteError`` naming the file
and, where the file allows, the line — never a traceback.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from .errors import SuiteError, SuiteIssue

SUITE_MAX_BYTES = 4 * 1024 * 1024
# A suite nests five levels at most; anything far deeper is a mistake or an attack.
MAX_DEPTH = 64
# A thousand-case suite is about ten thousand values. The cap bounds parsing time, which is
# spent per value, whatever the file's size.
MAX_NODES = 100_000
# Nodes reached a second time through an alias. Shared fragments stay legal; a document
# that expands exponentially (the "billion laughs") is refused long before it costs anything.
MAX_ALIAS_EXPANSION = 10_000
# No field takes a number longer than this; a longer one is a typo or an attempt to make
# parsing slow (Python refuses integers over 4,300 digits with an exception of its own).
MAX_NUMBER_DIGITS = 40

_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_TOO_DEEP = f"invalid YAML: nesting is deeper than {MAX_DEPTH} levels"

YamlPath = tuple[Hashable, ...]


@dataclass(frozen=True)
class DuplicateKey:
    """A key written twice in one mapping; the first occurrence is the one kept."""

    path: YamlPath
    key: Hashable
    line: int
    first_line: int


@dataclass(frozen=True)
class YamlDocument:
    """Plain data (dicts, lists, scalars) plus the 1-based line of every key and item.

    ``lines`` maps a path — mapping keys and list indexes from the root — to the line of that
    key (inside a mapping) or of that item (inside a list); the root path ``()`` maps to the
    first line of the document.
    """

    value: Any
    lines: Mapping[YamlPath, int]
    duplicates: tuple[DuplicateKey, ...] = ()

    def line_at(self, path: YamlPath) -> int | None:
        """The line of ``path``, or of its nearest ancestor the document records."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def links_out(path: Path) -> bool:
    """Whether ``path`` is a link that resolves outside the directory holding it: such a suite
    file or SKILL.md would carry a file of the runner's host (a credential, ``/proc/self/environ``)
    into prompts, staged files and messages."""
    if not os.path.islink(path):
        return False
    home = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return not os.path.realpath(path).startswith(home.rstrip(os.sep) + os.sep)


def read_suite_text(path: Path, *, max_bytes: int = SUITE_MAX_BYTES) -> str:
    """The UTF-8 text of a suite file, refusing non-files, links out of its directory and files
    over ``max_bytes``."""
    if links_out(path):
        _refuse(path, "is a link out of its directory; suite files must be files of the suite")
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            _refuse(path, "is not a regular file")
        if info.st_size > max_bytes:
            _refuse(path, _too_large(info.st_size, max_bytes))
        with path.open("rb") as handle:
            # The size may change between stat and read; never read more than the cap allows.
            data = handle.read(max_bytes + 1)
            if len(data) > max_bytes:
                _refuse(path, _too_large(os.fstat(handle.fileno()).st_size, max_bytes))
    except FileNotFoundError:
        _refuse(path, "does not exist")
    except OSError as exc:
        _refuse(path, f"cannot be read ({exc.strerror or exc})")
    return decode_utf8(data, path)


def decode_utf8(data: bytes, path: Path) -> str:
    """Decode suite bytes, naming the offset and line of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start]
        raise SuiteError(
            [
                SuiteIssue(
                    path,
                    f"is not UTF-8 text: byte 0x{bad:02x} at offset {exc.start} (line {line}) "
                    "— save the file as UTF-8",
                    line=line,
                )
            ]
        ) from None


def parse_yaml(text: str, path: Path) -> YamlDocument:
    """Parse one YAML document safely (no Python tags), keeping line numbers.

    Raises ``SuiteError`` for an empty file, malformed YAML, several documents, unsupported
    tags, recursive or excessive aliases, and nesting deeper than ``MAX_DEPTH``.
    """
    try:
        loader = _LineLoader(text)
        try:
            return loader.build_document(path)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem or ""):
            # PyYAML 6.0.3+ caps nesting in its scanner, before the composer's own cap: one message.
            line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
            raise SuiteError([SuiteIssue(path, _TOO_DEEP, line=line)]) from None
        raise YamlSyntaxError([_marked_issue(exc, path, text)]) from None
    except yaml.reader.ReaderError as exc:
        line = _line_of_position(text, exc.position)
        raise SuiteError(
            [
                SuiteIssue(
                    path,
                    f"invalid YAML: character {exc.character!r} on line {line} is not allowed "
                    "in a YAML file",
                    line=line,
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise SuiteError([SuiteIssue(path, f"invalid YAML: {exc}")]) from None
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise SuiteError(
            [SuiteIssue(path, f"is not valid Unicode text (line {line})", line=line)]
        ) from None


class YamlSyntaxError(SuiteError):
    """The text is not YAML at all (as opposed to YAML that skillab refuses to expand)."""


class _Mark(Protocol):
    """Where an event or node starts: PyYAML's ``Mark`` and libyaml's alike."""

    @property
    def line(self) -> int: ...


class _Refused(Exception):
    """A document that parses but that skillab will not expand (see ``_LineLoader``)."""

    def __init__(self, message: str, mark: _Mark | None):
        super().__init__(message)
        self.message = message
        self.line = mark.line + 1 if mark is not None else None


if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser

    # libyaml scans and parses, iteratively and fast; composing stays in Python, where the
    # depth and size caps below apply. (libyaml's own composer recurses in C without a
    # limit: deep nesting crashes the interpreter.)
    class _EventSource(Composer, CParser):
        def __init__(self, text: str):
            CParser.__init__(self, text)
            Composer.__init__(self)

    _POSITIONS_IN_BYTES = True
else:  # pragma: no cover - PyYAML built without libyaml

    # The other of the two definitions, chosen at import time; mypy allows one name one class.
    class _EventSource(  # type: ignore[no-redef]
        yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, Composer
    ):
        def __init__(self, text: str):
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            Composer.__init__(self)

    _POSITIONS_IN_BYTES = False


class _LineLoader(_EventSource, SafeConstructor, Resolver):
    """Composes nodes under caps, then builds plain values from the node graph itself.

    Building from nodes (rather than ``construct_document``) is what lets it record the line of
    every mapping key and sequence item, refuse duplicate keys instead of keeping the last, and
    count alias expansion as it goes. Scalars are still constructed the ``safe_load`` way.
    """

    def __init__(self, text: str):
        _EventSource.__init__(self, text)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0
        self._nodes = 0
        self._lines: dict[YamlPath, int] = {}
        self._duplicates: list[DuplicateKey] = []
        self._seen: set[int] = set()
        self._open: set[int] = set()
        self._expanded = 0

    def build_document(self, path: Path) -> YamlDocument:
        try:
            node = self.get_single_node()
            if node is None:
                raise SuiteError([SuiteIssue(path, "is empty (no YAML document in it)")])
            self._lines[()] = _line(node)
            value = self._build(node, ())
        except _Refused as exc:
            raise SuiteError([SuiteIssue(path, exc.message, line=exc.line)]) from None
        return YamlDocument(value, self._lines, tuple(self._duplicates))

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        mark = event.start_mark if event is not None else None
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _Refused(f"invalid YAML: more than {MAX_NODES} values in one suite", mark)
        if self._depth >= MAX_DEPTH:
            raise _Refused(_TOO_DEEP, mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def _build(self, node: Node, path: YamlPath) -> Any:
        if len(path) > MAX_DEPTH:
            raise _Refused(_TOO_DEEP, node.start_mark)
        if id(node) in self._open:
            raise _Refused(
                "invalid YAML: an alias refers to a node that contains it", node.start_mark
            )
        self._count(node)
        if isinstance(node, ScalarNode):
            return self._scalar(node)
        self._open.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return self._sequence(node, path)
            assert isinstance(node, MappingNode)  # the third and last kind of node
            return self._mapping(node, path)
        finally:
            self._open.discard(id(node))

    def _scalar(self, node: ScalarNode) -> Any:
        if node.tag in (_INT_TAG, _FLOAT_TAG) and len(node.value) > MAX_NUMBER_DIGITS:
            raise _Refused(f"invalid YAML: a number of {len(node.value)} characters (at most "
                           f"{MAX_NUMBER_DIGITS}) — quote it if it is text", node.start_mark)
        try:
            return self.construct_object(node)
        except ValueError as exc:  # a date such as 2024-13-45, a number Python will not convert
            raise _Refused(f"invalid YAML: cannot read the value {node.value[:40]!r} ({exc}) — "
                           "quote it if it is text", node.start_mark) from None

    def _count(self, node: Node) -> None:
        if id(node) not in self._seen:
            self._seen.add(id(node))
            return
        self._expanded += 1
        if self._expanded > MAX_ALIAS_EXPANSION:
            raise _Refused(
                f"invalid YAML: aliases expand to more than {MAX_ALIAS_EXPANSION} extra nodes "
                "— write the content out, or share smaller fragments",
                node.start_mark,
            )

    def _sequence(self, node: SequenceNode, path: YamlPath) -> list[Any]:
        _require_tag(node, _SEQ_TAG)
        items = []
        for index, item in enumerate(node.value):
            self._lines[path + (index,)] = _line(item)
            items.append(self._build(item, path + (index,)))
        return items

    def _mapping(self, node: MappingNode, path: YamlPath) -> dict[Any, Any]:
        _require_tag(node, _MAP_TAG)
        merged = self._merged(node, path)
        own: dict[Any, Any] = {}
        first_line: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self._key(key_node)
            if key in first_line:
                self._duplicates.append(
                    DuplicateKey(path, key, _line(key_node), first_line[key])
                )
                continue
            first_line[key] = _line(key_node)
            self._lines[path + (key,)] = _line(key_node)
            own[key] = self._build(value_node, path + (key,))
        return {**merged, **own}

    def _merged(self, node: MappingNode, path: YamlPath) -> dict[Any, Any]:
        """Entries pulled in by ``<<:`` merge keys; earlier sources win, own keys win over all."""
        sources: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                continue
            if isinstance(value_node, SequenceNode):
                sources.extend(value_node.value)
            else:
                sources.append(value_node)
        merged: dict[Any, Any] = {}
        for source in reversed(sources):
            if not isinstance(source, MappingNode):
                raise _Refused(
                    "invalid YAML: a '<<' merge key needs a mapping to merge", source.start_mark
                )
            merged.update(self._build(source, path))
        return merged

    def _key(self, node: Node) -> Hashable:
        if not isinstance(node, ScalarNode):
            raise _Refused(
                "invalid YAML: mapping keys must be plain values, not lists or mappings",
                node.start_mark,
            )
        self._count(node)
        return self._scalar(node)


def _require_tag(node: Node, expected: str) -> None:
    if node.tag != expected:
        raise _Refused(f"invalid YAML: unsupported tag {node.tag!r}", node.start_mark)


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _line_of_position(text: str, position: int) -> int:
    """The line of a reader error's position (libyaml counts UTF-8 bytes, PyYAML characters)."""
    if _POSITIONS_IN_BYTES:
        return text.encode("utf-8").count(b"\n", 0, position) + 1
    return text.count("\n", 0, position) + 1


def _marked_issue(exc: yaml.MarkedYAMLError, path: Path, text: str) -> SuiteIssue:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    message = f"invalid YAML: {exc.problem or exc.context or 'cannot be parsed'}"
    if exc.context and exc.problem and exc.context_mark is not None:
        message += f" ({exc.context} that starts on line {exc.context_mark.line + 1})"
    if line is not None and _indented_with_tab(text, line):
        message += f" — line {line} is indented with a tab; YAML indents with spaces only"
    elif mark is not None and exc.problem and exc.problem.startswith("mapping values are not allowed"):
        message += _colon_hint(text, mark.line, mark.column)
    return SuiteIssue(path, message, line=line)


def _colon_hint(text: str, line: int, column: int) -> str:
    """The commonest cause: ``key: text: more`` — a ``: `` inside an unquoted value starts a
    mapping. Point at the column and show the line with its value quoted."""
    lines = text.splitlines()
    content = lines[line] if 0 <= line < len(lines) else ""
    hint = (f" at column {column + 1}: a ': ' inside an unquoted value starts a mapping; quote the "
            "value")
    key, colon, value = content.partition(": ")
    value = value.strip()
    if colon and value and value[0] not in "'\"|>[{&*!%@`":
        quoted = "'" + value.replace("'", "''") + "'"
        hint += f": {key.strip()}: {quoted}"
    return hint


def _indented_with_tab(text: str, line: int) -> bool:
    lines = text.splitlines()
    content = lines[line - 1] if 0 < line <= len(lines) else ""
    return "\t" in content[:len(content) - len(content.lstrip(" \t"))]


def _too_large(size: int, limit: int) -> str:
    return f"is {size} bytes; a suite file may be at most {limit} bytes ({limit // 1024 // 1024} MiB)"


def _refuse(path: Path, message: str) -> NoReturn:
    raise SuiteError([SuiteIssue(path, message)])
