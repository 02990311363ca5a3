"""Crafted results documents: ``report``, ``diff``, ``merge`` and ``run --resume`` each end in a
one-line error naming the file (exit 2), never a traceback.

The documents are a real run's, mutated: a top-level list, null or number; ``suites: null`` and
its kin; a 50,000-deep array at the top and in a field; ``Infinity``, ``NaN``, ``1e400`` and a
400-digit integer in numeric fields; wrong types in every kind of field; broken text.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillab.cli import main

from .skillgen import answers, grep_case, make_skill

DEEP = "[" * 50_000 + "]" * 50_000
# Raw JSON tokens a mutation puts in a field (json.dumps would not write them).
RAW = {
    "inf": "Infinity", "-inf": "-Infinity", "nan": "NaN", "big": "1e400", "-big": "-1e400",
    "huge-int": "1" + "0" * 400, "deep": DEEP,
}
# Values each field is replaced with: the raw tokens, and each JSON type.
VALUES: dict[str, Any] = {**{name: f"@@{name}@@" for name in RAW}, "null": None, "string": "x",
                          "list": [], "object": {}, "negative": -1, "float": 0.5, "true": True}
FIELDS = [
    ("runs",), ("total_cases",), ("cases",), ("suite",), ("statistics",), ("usage",), ("verdict",),
    ("format",), ("tool",), ("outcome_counts",), ("timings",),
    ("cases", 0), ("cases", 0, "run_index"), ("cases", 0, "outcome"), ("cases", 0, "with_skill"),
    ("cases", 0, "with_skill", "turns"), ("cases", 0, "with_skill", "usage"),
    ("cases", 0, "with_skill", "usage", "total_tokens"), ("cases", 0, "without_skill", "duration_ms"),
    ("cases", 0, "with_skill", "validator_results"), ("suite", "path"),
]
# Must be refused (exit 2) by every command: nothing of them is a results document.
TEXTS = {
    "empty": "", "null": "null", "list": "[]", "number": "1", "string": '"results"', "truncated": '{"format": ',
    "deep-array": DEEP, "deep-object": '{"a":' * 50_000 + "1" + "}" * 50_000, "nan": "NaN",
    "infinity": "Infinity", "set-null": '{"format": "skillab.results-set/1", "suites": null}',
    "set-object": '{"format": "skillab.results-set/1", "suites": {}}',
    "set-items": '{"format": "skillab.results-set/1", "suites": [null, 1, "x", []]}',
    "set-deep": '{"format": "skillab.results-set/1", "suites": ' + DEEP + "}",
    "format-only": '{"format": "skillab.results/1"}', "format-list": '{"format": []}',
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("crafted")
    skill = make_skill(root, [grep_case("a"), grep_case("b")],
                       responses={"a": answers("SKILLED", "no"), "b": answers("no", "no")})
    paths = {"skill": skill, "results": root / "results.json", "shard": root / "shard.json"}
    for out, extra in ((paths["results"], []), (paths["shard"], ["--shard", "2/2"])):
        assert main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                     "--output", str(out), *extra]) == 0
    return paths


def mutated(base: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for field in FIELDS:
        for value_name, value in VALUES.items():
            doc = copy.deepcopy(base)
            target = doc
            for key in field[:-1]:
                target = target[key]
            target[field[-1]] = value
            text = json.dumps(doc)
            for name, raw in RAW.items():
                text = text.replace(f'"@@{name}@@"', raw)
            yield f"{'.'.join(map(str, field))}={value_name}", text


def crafted(suite: dict[str, Path]) -> list[tuple[str, str]]:
    base = json.loads(suite["results"].read_text())
    cases = list(TEXTS.items()) + [("bad-utf8", "\udcff")]
    every = list(mutated(base))
    # A sample of the field mutations (every field, every value, spread over the ~230 of them).
    return cases + every[::3]


def write(path: Path, text: str) -> Path:
    if text == "\udcff":
        path.write_bytes(b'{"format": "\xff\xfe"}')
    else:
        path.write_text(text)
    return path


COMMANDS = ["report", "diff", "merge", "resume"]


def invoke(command: str, bad: Path, suite: dict[str, Path], tmp_path: Path) -> int:
    if command == "report":
        return main(["report", str(bad)])
    if command == "diff":
        return main(["diff", str(suite["results"]), str(bad)])
    if command == "merge":
        return main(["merge", str(suite["shard"]), str(bad), "--output", str(tmp_path / "merged.json")])
    return main(["run", str(suite["skill"]), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--resume", str(bad), "--output", str(tmp_path / "resumed.json")])


def test_there_are_about_a_hundred_crafted_documents(suite):
    assert 90 <= len(crafted(suite)) <= 120


@pytest.mark.parametrize("command", COMMANDS)
def test_every_crafted_document_is_refused_in_one_line_naming_the_file(command, suite, tmp_path, capsys):
    problems = []
    for name, text in crafted(suite):
        bad = write(tmp_path / f"crafted-{len(problems)}.json", text)
        capsys.readouterr()
        try:
            code = invoke(command, bad, suite, tmp_path)
        except BaseException as exc:  # noqa: BLE001 (what is asserted is that nothing escapes)
            problems.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        err = capsys.readouterr().err
        must_refuse = name in TEXTS or name == "bad-utf8"
        if code not in (0, 1, 2) or (must_refuse and code != 2):
            problems.append(f"{name}: exit {code}: {err[-300:]}")
        elif code == 2 and bad.name not in err:
            problems.append(f"{name}: exit 2 without naming the file: {err[-300:]}")
        elif "Traceback" in err:
            problems.append(f"{name}: traceback: {err[-300:]}")
    assert not problems, f"{len(problems)} crafted documents:\n" + "\n".join(problems)
