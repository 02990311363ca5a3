"""JSON from a dataclass's type, and back: one serializer for every block of a results document.

The wire form is read off the class: its fields in declaration order are the keys in wire
order, and each field's type hint says how its value is written and read (a tuple is a JSON
list, a ``dict[str, X]`` is an object keyed by name, a ``datetime`` is ISO 8601). A field says
more only where the wire needs it, through ``dataclasses.field(metadata=wire(...))``:

- ``key="..."``: the wire key, when it is not the field's name;
- ``omit_none=True``: the key is left out when the value is None (and absent reads as None);
- ``omit_empty=True``: the key is left out when the value is None, ``""`` or an empty container
  (and absent reads as the field's default).

A type whose wire form no field metadata can say (an arm record: its grading detail nested
under ``extra``) writes and reads itself, ``to_dict()`` and ``from_dict(data)``, and the
serializer uses them wherever the type appears. A field typed ``X | Unset`` with default ``UNSET`` is left out when unset and written (null
included) when set: for the few keys a document holds as null in one writer and not at all in
another. A property listed in the class's ``__wire_derived__`` (``{property: after_field}``) is
written after that field and ignored when read, since it is computed from the others.

Values are never converted on the way in: a number is read back as the number it was (``10``
stays an int in a ``float`` field), so writing a read document gives it back byte for byte.
Anything that does not fit its type is refused with the path to it (``statistics.power.runs:
expected int, got 'x'``). Each type's reader and writer is worked out once from its hints and
kept (a large run's document holds thousands of records). Standard library only: the core
imports nothing heavy.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, Union

T = TypeVar("T")


class Unset(enum.Enum):
    """The type of ``UNSET``: a key the document does not hold (as opposed to null)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset.UNSET


def wire(*, key: str | None = None, omit_none: bool = False, omit_empty: bool = False) -> dict[str, Any]:
    """A field's wire metadata: ``field(default=None, metadata=wire(omit_none=True))``."""
    meta: dict[str, Any] = {}
    if key is not None:
        meta["key"] = key
    if omit_none:
        meta["omit_none"] = True
    if omit_empty:
        meta["omit_empty"] = True
    return {"wire": meta}


_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def to_wire(value: object) -> Any:
    """The JSON value of ``value``: a dataclass by its fields, containers item by item."""
    if type(value) in _SCALAR_TYPES:
        return value
    writer = _WRITERS.get(type(value))
    if writer is not None:
        return writer(value)
    if isinstance(value, (list, tuple)):
        return [item if type(item) in _SCALAR_TYPES else to_wire(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): to_wire(item) for key, item in value.items()}
    if isinstance(value, _SCALARS):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _writer(type(value))(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Unset):
        raise ValueError("UNSET has no JSON value: it is only a field's default")
    return value


def _empty(value: object) -> bool:
    return value is None or (isinstance(value, (str, list, tuple, dict)) and not value)


def from_wire(cls: type[T], data: object, path: str = "") -> T:
    """The ``cls`` whose wire form is ``data``; ``ValueError`` naming the path to what does not fit."""
    try:
        return typing.cast(T, _reader(cls)(data))
    except _Misfit as exc:
        raise ValueError(f"{path or cls.__name__}{exc.where()}: {exc.problem}") from None


def wire_keys(cls: type) -> tuple[str, ...]:
    """The keys of ``cls``'s wire form, in order (derived ones included)."""
    derived = _derived(cls)
    return tuple(key for spec in _fields(cls) for key in (spec.key, *derived.get(spec.name, ())))


class _Misfit(ValueError):
    """What did not fit, and where: the path is put together as the error unwinds, so reading
    what fits builds no path at all."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.parts: list[str] = []

    def within(self, part: str) -> _Misfit:
        self.parts.append(part)
        return self

    def where(self) -> str:
        return "".join(reversed(self.parts))


# The methods of a type that writes and reads itself (see the module docstring).
_OWN_WRITE, _OWN_READ = "to_dict", "from_dict"
Reader = Callable[[Any], Any]
Writer = Callable[[Any], Any]
_READERS: dict[Any, Reader] = {}
_WRITERS: dict[type, Writer] = {}


def _reader(hint: Any) -> Reader:
    found = _READERS.get(hint)
    if found is None:
        found = _READERS[hint] = _make_reader(hint)
    return found


def _make_reader(hint: Any) -> Reader:
    origin = typing.get_origin(hint)
    if hint is Any:
        return _same
    if origin is Union or origin is types.UnionType:
        return _union_reader(typing.get_args(hint))
    if origin is typing.Literal:
        return _literal_reader(typing.get_args(hint))
    if origin is list or origin is tuple:
        return _sequence_reader(hint)
    if origin is dict:
        return _mapping_reader(_reader(typing.get_args(hint)[1]))
    if isinstance(hint, type) and callable(getattr(hint, _OWN_READ, None)):
        return _own_reader(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_reader(hint)
    return _scalar_reader(hint)


def _own_reader(cls: type) -> Reader:
    read_own: Callable[[Any], Any] = getattr(cls, _OWN_READ)

    def read(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _mismatch("an object", data)
        try:
            return read_own(data)
        except (ValueError, KeyError, TypeError) as exc:
            raise _Misfit(str(exc)) from None

    return read


def _same(data: Any) -> Any:
    return data


def _union_reader(arms: tuple[Any, ...]) -> Reader:
    nullable = type(None) in arms
    readers = [_reader(arm) for arm in arms if arm is not type(None) and arm is not Unset]
    expected = " or ".join(_name(arm) for arm in arms)

    def read(data: Any) -> Any:
        if data is None and nullable:
            return None
        if len(readers) == 1:
            return readers[0](data)
        for one in readers:
            try:
                return one(data)
            except _Misfit:
                continue
        raise _mismatch(expected, data)

    return read


def _literal_reader(values: tuple[Any, ...]) -> Reader:
    expected = " or ".join(map(repr, values))

    def read(data: Any) -> Any:
        if data not in values:
            raise _mismatch(expected, data)
        return data

    return read


def _sequence_reader(hint: Any) -> Reader:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is list or (len(args) == 2 and args[1] is Ellipsis):
        item = _reader(args[0])
        make: Callable[[list[Any]], Any] = list if typing.get_origin(hint) is list else tuple

        def read_all(data: Any) -> Any:
            if not isinstance(data, list):
                raise _mismatch("a list", data)
            try:
                return make([item(one) for one in data])
            except _Misfit as exc:
                raise exc.within(f"[{_failed_at(item, data)}]") from None

        return read_all
    items = [_reader(arg) for arg in args]

    def read_fixed(data: Any) -> Any:
        if not isinstance(data, list):
            raise _mismatch("a list", data)
        if len(items) != len(data):
            raise _Misfit(f"expected {len(items)} items, got {len(data)}")
        values = []
        for index, (one, value) in enumerate(zip(items, data, strict=True)):
            try:
                values.append(one(value))
            except _Misfit as exc:
                raise exc.within(f"[{index}]") from None
        return tuple(values)

    return read_fixed


def _failed_at(item: Reader, data: list[Any]) -> int:
    """The index of the first item ``item`` refuses (looked for only once something failed)."""
    for index, value in enumerate(data):
        try:
            item(value)
        except _Misfit:
            return index
    return 0


def _mapping_reader(item: Reader) -> Reader:
    def read(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _mismatch("an object", data)
        out = {}
        for key, value in data.items():
            try:
                out[key] = item(value)
            except _Misfit as exc:
                raise exc.within(f".{key}") from None
        return out

    return read


def _dataclass_reader(cls: type) -> Reader:
    specs = [(spec, _reader(spec.hint)) for spec in _fields(cls)]
    known = {spec.key for spec in _fields(cls)} | set(getattr(cls, "__wire_derived__", ()))

    def read(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _mismatch("an object", data)
        # First: a misspelled key is named as such, not as the key it should have been missing.
        if not known.issuperset(data):
            unknown = sorted(set(data) - known)
            raise _Misfit(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}")
        values: dict[str, Any] = {}
        for spec, field_reader in specs:
            if spec.key in data:
                try:
                    values[spec.name] = field_reader(data[spec.key])
                except _Misfit as exc:
                    raise exc.within(f".{spec.key}") from None
            elif spec.omit_none:
                values[spec.name] = None
            elif not spec.has_default:
                raise _Misfit(f"the key {spec.key!r} is missing")
        return cls(**values)

    return read


def _scalar_reader(hint: Any) -> Reader:
    if hint is datetime:
        def read_time(data: Any) -> Any:
            if not isinstance(data, str):
                raise _mismatch("an ISO 8601 time", data)
            try:
                return datetime.fromisoformat(data)
            except ValueError:
                raise _mismatch("an ISO 8601 time", data) from None

        return read_time
    # JSON does not tell 1 from 1.0 once a writer chose: an int is a float's value too.
    accepted = {float: (int, float), int: (int,), str: (str,), bool: (bool,), type(None): (type(None),)}.get(hint)
    if accepted is None:
        raise TypeError(f"no wire form for the type {hint!r}")
    exact = frozenset(accepted)
    expected = _name(hint)

    def read(data: Any) -> Any:
        # Exact types: True is an int to isinstance, not to the document.
        if type(data) not in exact:
            raise _mismatch(expected, data)
        return data

    return read


def _writer(cls: type) -> Writer:
    found = _WRITERS.get(cls)
    if found is None:
        found = _WRITERS[cls] = _make_writer(cls)
    return found


def _make_writer(cls: type) -> Writer:
    if callable(getattr(cls, _OWN_WRITE, None)):
        write_own: Writer = getattr(cls, _OWN_WRITE)
        return write_own
    derived = _derived(cls)
    plan = [(spec.name, spec.key, spec.omit_none, spec.omit_empty, derived.get(spec.name, ()))
            for spec in _fields(cls)]

    def write(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key, omit_none, omit_empty, after in plan:
            item = getattr(value, name)
            if type(item) in _SCALAR_TYPES:
                if not ((item is None and omit_none) or (omit_empty and _empty(item))):
                    out[key] = item
            elif not (item is UNSET or (omit_empty and _empty(item))):
                out[key] = to_wire(item)
            for prop in after:
                out[prop] = to_wire(getattr(value, prop))
        return out

    return write


def _mismatch(expected: str, data: Any) -> _Misfit:
    shown = repr(data)
    return _Misfit(f"expected {expected}, got {shown[:60] + '...' if len(shown) > 60 else shown}")


def _name(hint: Any) -> str:
    return "null" if hint is type(None) else getattr(hint, "__name__", repr(hint))


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    key: str
    hint: Any
    omit_none: bool
    omit_empty: bool
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
                            bool(meta.get("omit_empty")), has_default))
    return tuple(specs)


def _derived(cls: type) -> dict[str, tuple[str, ...]]:
    """``{field: properties written after it}`` from the class's ``__wire_derived__``."""
    after = _DERIVED.get(cls)
    if after is None:
        after = _DERIVED[cls] = {}
        for prop, field_name in getattr(cls, "__wire_derived__", {}).items():
            after[field_name] = (*after.get(field_name, ()), prop)
    return after
