"""A quick yes/no check of a value against the shipped suite schema, without jsonschema.

Importing jsonschema (and ``referencing``, ``rpds``, ``attrs`` behind it) costs more than the
rest of ``skillab validate``. A valid suite needs only "no error", which this small interpreter of
the same schema file answers; an invalid one goes to jsonschema for its errors, in skillab's
words as before. The schema stays the one source of the rules: this reads it, keyword by keyword,
and a keyword it does not know makes it answer "unknown", which sends the value to jsonschema
too. So it can cost a fallback but never passes a value jsonschema rejects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

# Keywords that constrain nothing (annotations and the schema's own bookkeeping).
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description", "x-expected"})
_KEYWORDS = frozenset({"type", "required", "properties", "additionalProperties", "items",
                       "minItems", "pattern", "minimum", "propertyNames", "$ref"})


class Unknown(Exception):
    """The schema uses something this checker does not interpret."""


def _is_type(value: Any, name: str) -> bool:
    # Draft 2020-12 types, with skillab's strict integer: YAML `true` and `2.0` are not integers.
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    raise Unknown(f"type {name!r}")


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def is_valid(value: Any, schema: Mapping[str, Any]) -> bool | None:
    """True or False as jsonschema would answer; None when the schema goes beyond this checker."""
    try:
        return _valid(value, schema, schema)
    except Unknown:
        return None


def _valid(value: Any, node: Any, root: Mapping[str, Any]) -> bool:
    if node is True:
        return True
    if node is False:
        return False
    if not isinstance(node, dict):
        raise Unknown("a schema that is not an object")
    unknown = node.keys() - _KEYWORDS - _ANNOTATIONS
    if unknown:
        raise Unknown(", ".join(sorted(unknown)))
    if "$ref" in node and not _valid(value, _resolve(node["$ref"], root), root):
        return False
    kinds = node.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is_type(value, name) for name in names):
            return False
    if isinstance(value, dict):
        return _valid_object(value, node, root)
    if isinstance(value, list):
        if len(value) < node.get("minItems", 0):
            return False
        items = node.get("items")
        return items is None or all(_valid(item, items, root) for item in value)
    if isinstance(value, str):
        pattern = node.get("pattern")
        return pattern is None or _pattern(pattern).search(value) is not None
    if "minimum" in node and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value >= node["minimum"]
    return True


def _valid_object(value: dict[Any, Any], node: dict[str, Any], root: Mapping[str, Any]) -> bool:
    if any(key not in value for key in node.get("required", ())):
        return False
    names = node.get("propertyNames")
    if names is not None and not all(_valid(key, names, root) for key in value):
        return False
    properties = node.get("properties", {})
    extra = node.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            if not _valid(item, properties[key], root):
                return False
        elif not _valid(item, extra, root):
            return False
    return True


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    if not ref.startswith("#/"):
        raise Unknown(f"$ref {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise Unknown(f"$ref {ref!r}")
        node = node[part]
    return node
