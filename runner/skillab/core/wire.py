"""JSON from a dataclass's type, and back: one serializer for every block of a results document.

The wire form is read off the class: its fields in declaration order are the keys in wire
order, and each field's type hint says how its value is written and read (a tuple is a JSON
list, a ``dict[str, X]`` is an object keyed by name, a ``datetime`` is ISO 8601). A field says
more only where the wire needs it, through ``dataclasses.field(metadata=wire(...))``:

- ``key="..."``: the wire key, when it is not the field's name;
- ``omit_none=True``: the key is left out when the value is None (and absent reads as None).

A field typed ``X | Unset`` with default ``UNSET`` is left out when unset and written (null
included) when set: for the few keys a document holds as null in one writer and not at all in
another. A property listed in the class's ``__wire_derived__`` (``{property: after_field}``) is
written after that field and ignored when read, since it is computed from the others.

Values are never converted on the way in: a number is read back as the number it was (``10``
stays an int in a ``float`` field), so writing a read document gives it back byte for byte.
Anything that does not fit its type is refused with the path to it (``statistics.power.runs:
expected int, got 'x'``). Standard library only: the core imports nothing heavy.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar, Union

T = TypeVar("T")


class Unset(enum.Enum):
    """The type of ``UNSET``: a key the document does not hold (as opposed to null)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset.UNSET


def wire(*, key: str | None = None, omit_none: bool = False) -> dict[str, Any]:
    """A field's wire metadata: ``field(default=None, metadata=wire(omit_none=True))``."""
    meta: dict[str, Any] = {}
    if key is not None:
        meta["key"] = key
    if omit_none:
        meta["omit_none"] = True
    return {"wire": meta}


def to_wire(value: object) -> Any:
    """The JSON value of ``value``: a dataclass by its fields, containers item by item."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass_to_wire(value)
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): to_wire(item) for key, item in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Unset):
        raise ValueError("UNSET has no JSON value: it is only a field's default")
    return value


def _dataclass_to_wire(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    derived = _derived(type(value))
    for spec in _fields(type(value)):
        item = getattr(value, spec.name)
        if item is UNSET or (item is None and spec.omit_none):
            pass
        else:
            out[spec.key] = to_wire(item)
        for prop in derived.get(spec.name, ()):
            out[prop] = to_wire(getattr(value, prop))
    return out


def from_wire(cls: type[T], data: object, path: str = "") -> T:
    """The ``cls`` whose wire form is ``data``; ``ValueError`` naming the path to what does not fit."""
    return typing.cast(T, _decode(cls, data, path or cls.__name__))


def wire_keys(cls: type) -> tuple[str, ...]:
    """The keys of ``cls``'s wire form, in order (derived ones included)."""
    derived = _derived(cls)
    return tuple(key for spec in _fields(cls) for key in (spec.key, *derived.get(spec.name, ())))


def _decode(hint: Any, data: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return data
    if origin is Union or origin is types.UnionType:
        return _decode_union(typing.get_args(hint), data, path)
    if origin is typing.Literal:
        if data not in typing.get_args(hint):
            raise _mismatch(path, " or ".join(map(repr, typing.get_args(hint))), data)
        return data
    if origin is list or origin is tuple:
        if not isinstance(data, list):
            raise _mismatch(path, "a list", data)
        return _decode_sequence(hint, data, path)
    if origin is dict:
        if not isinstance(data, dict):
            raise _mismatch(path, "an object", data)
        item_hint = typing.get_args(hint)[1]
        return {key: _decode(item_hint, item, f"{path}.{key}") for key, item in data.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(hint, data, path)
    return _decode_scalar(hint, data, path)


def _decode_union(arms: tuple[Any, ...], data: Any, path: str) -> Any:
    if data is None and type(None) in arms:
        return None
    candidates = [arm for arm in arms if arm is not type(None) and arm is not Unset]
    if len(candidates) == 1:
        return _decode(candidates[0], data, path)
    for arm in candidates:
        try:
            return _decode(arm, data, path)
        except ValueError:
            continue
    raise _mismatch(path, " or ".join(_name(arm) for arm in arms), data)


def _decode_sequence(hint: Any, data: list[Any], path: str) -> Any:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is list:
        return [_decode(args[0], item, f"{path}[{i}]") for i, item in enumerate(data)]
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(args[0], item, f"{path}[{i}]") for i, item in enumerate(data))
    if len(args) != len(data):
        raise ValueError(f"{path}: expected {len(args)} items, got {len(data)}")
    return tuple(_decode(arg, item, f"{path}[{i}]") for i, (arg, item) in enumerate(zip(args, data, strict=True)))


def _decode_dataclass(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise _mismatch(path, "an object", data)
    specs = _fields(cls)
    unknown = set(data) - {spec.key for spec in specs} - set(getattr(cls, "__wire_derived__", ()))
    if unknown:
        raise ValueError(f"{path}: unknown key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, sorted(unknown)))}")
    values: dict[str, Any] = {}
    for spec in specs:
        if spec.key in data:
            values[spec.name] = _decode(spec.hint, data[spec.key], f"{path}.{spec.key}")
        elif spec.omit_none:
            values[spec.name] = None
        elif not spec.has_default:
            raise ValueError(f"{path}: the key {spec.key!r} is missing")
    return cls(**values)


def _decode_scalar(hint: Any, data: Any, path: str) -> Any:
    if hint is datetime:
        if not isinstance(data, str):
            raise _mismatch(path, "an ISO 8601 time", data)
        try:
            return datetime.fromisoformat(data)
        except ValueError:
            raise _mismatch(path, "an ISO 8601 time", data) from None
    if hint is float:
        # JSON does not tell 1 from 1.0 once a writer chose: an int is a float's value too.
        ok = isinstance(data, (int, float)) and not isinstance(data, bool)
    elif hint is int:
        ok = isinstance(data, int) and not isinstance(data, bool)
    elif hint in (str, bool):
        ok = isinstance(data, hint)
    elif hint is type(None):
        ok = data is None
    else:
        raise TypeError(f"{path}: no wire form for the type {hint!r}")
    if not ok:
        raise _mismatch(path, _name(hint), data)
    return data


def _mismatch(path: str, expected: str, data: Any) -> ValueError:
    shown = repr(data)
    return ValueError(f"{path}: expected {expected}, got {shown[:60] + '...' if len(shown) > 60 else shown}")


def _name(hint: Any) -> str:
    return "null" if hint is type(None) else getattr(hint, "__name__", repr(hint))


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    key: str
    hint: Any
    omit_none: bool
    has_default: bool


# Per class, read once: the type hints of a dataclass are resolved from its module's names.
_FIELDS: dict[type, tuple[_Field, ...]] = {}
_DERIVED: dict[type, dict[str, tuple[str, ...]]] = {}


def _fields(cls: type) -> tuple[_Field, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = _read_fields(cls)
    return found


def _read_fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    specs = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get("wire", {})
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        specs.append(_Field(f.name, meta.get("key", f.name), hints[f.name], bool(meta.get("omit_none")),
                            has_default))
    return tuple(specs)


def _derived(cls: type) -> dict[str, tuple[str, ...]]:
    """``{field: properties written after it}`` from the class's ``__wire_derived__``."""
    after = _DERIVED.get(cls)
    if after is None:
        after = _DERIVED[cls] = {}
        for prop, field_name in getattr(cls, "__wire_derived__", {}).items():
            after[field_name] = (*after.get(field_name, ()), prop)
    return after
