"""Documents written piece by piece are byte for byte what one ``json.dumps`` writes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from skillab.atomic import write_compact_json, write_json

GOLDEN = Path(__file__).parent / "golden" / "results"


def _streamed(value: object) -> str:
    handle = io.StringIO()
    write_compact_json(handle, value)
    return handle.getvalue()


@pytest.mark.parametrize("value", [
    {}, [], {"a": []}, {"a": {}}, [[], {}], {"a": [1, {"b": [2, {"c": None}]}], "d": "é\n\"q\""},
    {1: "int key"}, {"x": {2: "nested int key"}}, [float("nan"), 1.5, True, None], "text", 3,
    ({"tuple": (1, 2)},),
])
def test_small_values_match_json_dumps(value):
    assert _streamed(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_every_golden_document_and_a_set_of_them_match(path):
    document = json.loads(path.read_text(encoding="utf-8"))
    assert _streamed(document) == json.dumps(document, ensure_ascii=False)
    several = {"format": "skillab.results-set/1", "suites": [document, document]}
    assert _streamed(several) == json.dumps(several, ensure_ascii=False)


def test_write_json_compact_is_one_line(tmp_path):
    document = json.loads((GOLDEN / "changelog-entry.json").read_text(encoding="utf-8"))
    write_json(tmp_path / "doc.json", document)
    assert (tmp_path / "doc.json").read_text(encoding="utf-8") == json.dumps(document, ensure_ascii=False) + "\n"
