"""Atomic file writes: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO


def write_json(path: Path, data: Any, *, indent: int | None = None) -> None:
    """Serialize to a temp file beside ``path``, then rename it over ``path``."""
    with _replacing(Path(path)) as handle:
        if indent is None:
            write_compact_json(handle, data)
            handle.write("\n")
        else:
            # Indented output is encoded in Python either way: stream it rather than hold the
            # whole text (as large as the file) in memory.
            json.dump(data, handle, indent=indent, ensure_ascii=False)
            handle.write("\n")


def write_compact_json(handle: TextIO, data: Any, depth: int = 3) -> None:
    """``json.dumps(data, ensure_ascii=False)``, written piece by piece.

    The outer ``depth`` levels of mappings and lists are written item by item, each item by
    ``json.dumps`` (the C encoder, which only the one-shot call uses). A results document's
    cases are then encoded one at a time, never the whole text (as large as the file, and
    twice that while the encoder joins it) in memory at once. The bytes are the same.
    """
    if depth > 0 and isinstance(data, dict) and data and all(isinstance(k, str) for k in data):
        handle.write("{")
        for index, (key, value) in enumerate(data.items()):
            handle.write(("" if index == 0 else ", ") + json.dumps(key, ensure_ascii=False) + ": ")
            write_compact_json(handle, value, depth - 1)
        handle.write("}")
    elif (depth > 0 and isinstance(data, (list, tuple))) or isinstance(data, Iterator):
        # An iterator (items made as they are written) is written as a list at any depth.
        handle.write("[")
        for index, value in enumerate(data):
            if index:
                handle.write(", ")
            write_compact_json(handle, value, depth - 1)
        handle.write("]")
    else:
        handle.write(json.dumps(data, ensure_ascii=False))


def write_json_lines(path: Path, items: Iterable[Any]) -> None:
    """One JSON value per line, streamed (never the whole file in memory), then renamed."""
    with _replacing(Path(path)) as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")


@contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
