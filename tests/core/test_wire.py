"""The one serializer of the run log's blocks (``core.wire``): wire order is field order, a field
says more only where the wire needs it, nothing read is converted, and what does not fit is
refused with its path. Every block type of the results document round-trips, filled in from its
own type hints (so a block added later is covered without a line here)."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import pytest

from skillab.core import checks, records, run_info, statistics, summary, trend, triggers
from skillab.core.runlog import RunSettings, RunSummary
from skillab.core.usage import Usage
from skillab.core.wire import UNSET, Unset, from_wire, to_wire, wire, wire_keys


@dataclass(frozen=True)
class Inner:
    low: float
    high: float | None


@dataclass(frozen=True)
class Sample:
    name: str
    span: tuple[int, int]
    tags: tuple[str, ...]
    by_arm: dict[str, Inner]
    kind: Literal["a", "b"]
    at: datetime
    renamed: str = field(default="x", metadata=wire(key="wire-name"))
    maybe: int | None = field(default=None, metadata=wire(omit_none=True))
    nullable: int | None = None
    sometimes: float | None | Unset = UNSET

    __wire_derived__: ClassVar[dict[str, str]] = {"span_width": "span"}

    @property
    def span_width(self) -> int:
        return self.span[1] - self.span[0]


AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def sample(**changes: Any) -> Sample:
    return dataclasses.replace(Sample("s", (1, 4), ("x", "y"), {"with_skill": Inner(0.5, None)}, "a", AT), **changes)


def test_fields_in_order_with_renames_omissions_derived_keys_and_lists():
    data = to_wire(sample())
    assert list(data) == ["name", "span", "span_width", "tags", "by_arm", "kind", "at", "wire-name", "nullable"]
    assert data["span"] == [1, 4] and data["span_width"] == 3 and data["tags"] == ["x", "y"]
    assert data["by_arm"] == {"with_skill": {"low": 0.5, "high": None}}
    assert data["at"] == "2026-01-02T03:04:05+00:00" and data["nullable"] is None
    assert wire_keys(Sample) == ("name", "span", "span_width", "tags", "by_arm", "kind", "at", "wire-name",
                                 "maybe", "nullable", "sometimes")


@dataclass(frozen=True)
class Sparse:
    name: str
    notes: tuple[str, ...] = field(default=(), metadata=wire(omit_empty=True))
    output: str = field(default="", metadata=wire(omit_empty=True))


def test_omit_empty_leaves_out_empty_values_and_reads_them_back_as_the_default():
    assert to_wire(Sparse("x")) == {"name": "x"}
    assert to_wire(Sparse("x", ("a",), "out")) == {"name": "x", "notes": ["a"], "output": "out"}
    assert from_wire(Sparse, {"name": "x"}) == Sparse("x")


def test_unset_is_left_out_and_a_set_null_is_written():
    assert "sometimes" not in to_wire(sample())
    assert to_wire(sample(sometimes=None))["sometimes"] is None
    assert from_wire(Sample, to_wire(sample())).sometimes is UNSET
    assert from_wire(Sample, to_wire(sample(sometimes=None))).sometimes is None
    assert from_wire(Sample, to_wire(sample(sometimes=2.5))).sometimes == 2.5


@pytest.mark.parametrize("value", [sample(), sample(maybe=3, sometimes=None, kind="b", renamed="y"),
                                   sample(by_arm={}, tags=(), nullable=0)])
def test_a_value_round_trips(value):
    assert from_wire(Sample, json.loads(json.dumps(to_wire(value)))) == value


def test_numbers_are_read_as_written_so_the_document_comes_back_byte_for_byte():
    data = to_wire(Inner(10, 1.0))
    back = from_wire(Inner, data)
    assert back.low == 10 and type(back.low) is int and type(back.high) is float
    assert json.dumps(to_wire(back)) == '{"low": 10, "high": 1.0}'


@pytest.mark.parametrize(("data", "message"), [
    ({"low": "1", "high": None}, r"Inner.low: expected float, got '1'"),
    ({"low": True, "high": None}, r"Inner.low: expected float, got True"),
    ({"low": 1}, r"Inner: the key 'high' is missing"),
    ({"low": 1, "high": 2, "surprise": 3}, r"Inner: unknown key 'surprise'"),
    ([1, 2], r"Inner: expected an object, got \[1, 2\]"),
])
def test_what_does_not_fit_is_refused_with_its_path(data, message):
    with pytest.raises(ValueError, match=message):
        from_wire(Inner, data)


def test_nested_errors_name_the_whole_path():
    data = to_wire(sample())
    data["by_arm"]["with_skill"]["low"] = "high"
    with pytest.raises(ValueError, match=r"Sample\.by_arm\.with_skill\.low: expected float"):
        from_wire(Sample, data)
    data = to_wire(sample())
    data["span"] = [1, 2, 3]
    with pytest.raises(ValueError, match=r"Sample\.span: expected 2 items, got 3"):
        from_wire(Sample, data)
    data = to_wire(sample())
    data["kind"] = "c"
    with pytest.raises(ValueError, match=r"Sample\.kind: expected 'a' or 'b', got 'c'"):
        from_wire(Sample, data)
    data = to_wire(sample())
    data["at"] = "yesterday"
    with pytest.raises(ValueError, match=r"Sample\.at: expected an ISO 8601 time"):
        from_wire(Sample, data)


def test_usage_writes_its_total_and_reads_it_as_derived():
    usage = Usage(3, 4, 1, 0, None)
    data = to_wire(usage)
    assert list(data) == ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                          "total_tokens", "cost_usd"]
    assert data["total_tokens"] == 7 and from_wire(Usage, data) == usage


# Every block of a results document: the dataclasses of the modules that hold them.
BLOCK_MODULES = (run_info, statistics, summary, trend, triggers)
BLOCKS = sorted({cls for module in BLOCK_MODULES for cls in vars(module).values()
                 if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__},
                key=lambda c: (c.__module__, c.__name__))


def filled(hint: Any, depth: int = 0, variant: int = 0) -> Any:
    """A value of ``hint`` with something in every field (``variant`` 1 picks None where allowed)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None) and a is not Unset]
        return None if variant == 1 and type(None) in args else filled(arms[0], depth, variant)
    if origin is Literal:
        return args[-1]
    if origin is list:
        return [filled(args[0], depth + 1)]
    if origin is tuple:
        return (filled(args[0], depth + 1),) if args[-1] is Ellipsis else tuple(filled(a, depth + 1) for a in args)
    if origin is dict:
        return {"with_skill": filled(args[1], depth + 1)}
    if hint is Any:
        return {"any": [1, "two"]}
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return hint(**{f.name: filled(hints[f.name], depth + 1, variant) for f in dataclasses.fields(hint)
                       if f.name not in getattr(hint, "__wire_derived__", {})})
    return {str: "text", int: 7, float: 0.25, bool: True, datetime: AT}[hint]


# The parts of a record the serializer writes (an arm and a case record keep their own layout:
# the arm's detail under ``extra``, a compact document's ``detail``).
RECORD_PARTS = [checks.ValidatorResult, checks.ExpectationResult, checks.DimensionScore, checks.GraderResult,
                records.Contamination, records.PassKAttempt, records.PassKSummary, records.HarborTrial, Usage]


@pytest.mark.parametrize("cls", BLOCKS + RECORD_PARTS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("variant", [0, 1])
def test_every_block_round_trips_through_json(cls, variant):
    value = filled(cls, variant=variant)
    text = json.dumps(to_wire(value), indent=2)
    back = from_wire(cls, json.loads(text))
    assert back == value
    assert json.dumps(to_wire(back), indent=2) == text


def test_the_run_log_holds_no_untyped_block():
    """No ``dict[str, Any]`` where the shape is known: only the adapter's and the backend's own
    descriptions, and the crowd listing, keep the shape their plugin gives them."""
    open_ended = {("AdapterInfo", "identity"), ("IsolationInfo", "guarantees"), ("IsolationInfo", "agent"),
                  ("Crowd", "listing")}
    found = set()
    for cls in (*BLOCKS, RunSettings, RunSummary):
        for name, hint in typing.get_type_hints(cls).items():
            if "Any" in str(hint):
                found.add((cls.__name__, name))
    assert found == open_ended


@dataclass(frozen=True)
class Celsius:
    """A type whose wire form is not its fields: it writes and reads itself."""

    kelvin: float

    def to_dict(self) -> dict:
        return {"celsius": round(self.kelvin - 273.15, 2)}

    @classmethod
    def from_dict(cls, data: dict) -> Celsius:
        if set(data) != {"celsius"}:
            raise ValueError(f"not a temperature: {sorted(data)}")
        return cls(round(data["celsius"] + 273.15, 2))


@dataclass(frozen=True)
class Reading:
    where: str
    temperatures: tuple[Celsius, ...]


def test_a_type_that_writes_itself_is_used_wherever_it_appears():
    reading = Reading("lab", (Celsius(293.15),))
    assert to_wire(reading) == {"where": "lab", "temperatures": [{"celsius": 20.0}]}
    assert from_wire(Reading, to_wire(reading)) == reading
    with pytest.raises(ValueError, match=r"Reading\.temperatures\[0\]: not a temperature: \['kelvin'\]"):
        from_wire(Reading, {"where": "lab", "temperatures": [{"kelvin": 1}]})
