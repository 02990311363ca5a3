"""Paths into a parsed JSON or YAML document, and copies with one value replaced (for tests that
try every field of a document in turn)."""

from __future__ import annotations

import copy
from collections.abc import Iterator


def paths(value: object, at: tuple = ()) -> Iterator[tuple]:
    """The path of every value in ``value``, containers included, the root first."""
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*at, index))


def replaced(value: object, at: tuple, new: object) -> object:
    """A deep copy of ``value`` with the value at ``at`` replaced by ``new``."""
    if not at:
        return new
    value = copy.deepcopy(value)
    parent = value
    for part in at[:-1]:
        parent = parent[part]
    parent[at[-1]] = new
    return value
