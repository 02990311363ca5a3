"""The quick schema check answers as jsonschema does on every value it is shown, or not at all."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from skillab.formats.eval_yaml.parser import _validator, schema
from skillab.suite.schema_check import is_valid

from ..conformance.goldens import golden_cases
from ..json_paths import paths, replaced

ROOT = Path(__file__).resolve().parent.parent.parent
ODD = [None, True, False, 0, 1, -1, 2.0, "", " ", "x", [], [1], ["x"], {}, {"x": 1}, {1: "x"},
       {"cmd": "true"}, {"files": {"a": "b"}}, {"commands": ["c"]}]


def _goldens() -> list[object]:
    found = []
    for _, folder in golden_cases("parser"):
        try:
            found.append(yaml.safe_load((folder / "input.yaml").read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
    return found


def _examples() -> list[object]:
    return [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("examples/*/eval.yaml"))]


def _variants(document: object) -> Iterator[object]:
    yield document
    for at in paths(document):
        for odd in ODD:
            yield replaced(document, at, odd)
        target = document
        for part in at:
            target = target[part]
        if isinstance(target, dict):
            for key in ("unknown", 1, "name", "cmd", "files", "expect_exit_code", "max_turns"):
                yield replaced(document, at, {**target, key: "v"})
            for key in list(target):
                yield replaced(document, at, {k: v for k, v in target.items() if k != key})


def test_the_quick_check_agrees_with_jsonschema_on_goldens_examples_and_their_mutations():
    checked = valid = 0
    for variant in [*_examples(), *(v for d in _goldens() for v in _variants(d))]:
        quick = is_valid(variant, schema())
        assert quick is not None, variant
        assert quick == _validator().is_valid(variant), variant
        checked += 1
        valid += quick
    # Both answers occur often, so agreement is not the trivial kind.
    assert checked > 1000 and 100 < valid < checked - 100, (checked, valid)


def test_a_keyword_it_does_not_interpret_defers_to_jsonschema():
    assert is_valid("abc", {"type": "string", "maxLength": 2}) is None
    assert is_valid({"a": 1}, {"$ref": "other.json#/x"}) is None


@pytest.mark.parametrize("value, expected", [(True, False), (2.0, False), (0, False), (3, True)])
def test_integers_are_strict_and_minimum_holds(value, expected):
    assert is_valid(value, {"type": "integer", "minimum": 1}) is expected


def test_validate_of_a_valid_suite_never_imports_jsonschema():
    suite = ROOT / "examples" / "changelog-entry"
    code = ("import sys; from skillab.cli import main; code = main(['validate', sys.argv[1]]); "
            "assert 'jsonschema' not in sys.modules, 'jsonschema imported'; sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, str(suite)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
