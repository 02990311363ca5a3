"""``--compact-results``: a results document proportional to its verdicts, detail kept beside it.

Large runs (thousands of arms) spend most of ``results.json`` on indentation and on each arm's
transcript and final output. The compact form writes the document unindented with those two
fields moved out, one JSON line per arm, into ``<output stem>.arms.jsonl`` beside it
(format ``skillab.arms/1``, first line a header). Each arm in the document names that file in
``detail``; a line is found again by ``skill``, ``case_name``, ``run_index`` and ``arm``. Every
other field (grades, validator output, usage, statistics) stays in the document.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..atomic import write_json, write_json_lines
from .results import SET_FORMAT

ARMS_FORMAT = "skillab.arms/1"
DETAIL_FIELDS = ("transcript", "final_output")
_ARMS = ("with_skill", "without_skill", "original", "placebo")


def arms_path(output: Path) -> Path:
    return output.with_name(f"{output.stem}.arms.jsonl")


def write_compact(document: dict[str, Any], output: Path) -> Path:
    """Write the detail file, then the compact document (both atomically, both streamed);
    returns the former."""
    detail = arms_path(Path(output))
    suites = document["suites"] if document.get("format") == SET_FORMAT else [document]
    compact_suites = [_without_detail(suite, detail.name) for suite in suites]
    write_json_lines(detail, _detail_lines(suites))
    if document.get("format") == SET_FORMAT:
        write_json(Path(output), {**document, "suites": compact_suites})
    else:
        write_json(Path(output), compact_suites[0])
    return detail


def _without_detail(suite: dict[str, Any], detail_name: str) -> dict[str, Any]:
    # The cases are made one at a time as they are written: a copy of them all would double
    # what a large run holds at its end.
    return {**suite, "cases": (_case_without_detail(record, detail_name)
                               for record in suite.get("cases", []))}


def _case_without_detail(record: dict[str, Any], detail_name: str) -> dict[str, Any]:
    record = dict(record)
    for arm in _ARMS:
        if record.get(arm):
            kept = {k: v for k, v in record[arm].items() if k not in DETAIL_FIELDS}
            record[arm] = {**kept, "detail": detail_name}
    return record


def _detail_lines(suites: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield {"format": ARMS_FORMAT}
    for suite in suites:
        skill = suite["suite"]["skill"]
        for record in suite.get("cases", []):
            for arm in _ARMS:
                if record.get(arm):
                    yield {"skill": skill, "case_name": record["case_name"],
                           "run_index": record["run_index"], "arm": arm,
                           **{k: record[arm].get(k, "") for k in DETAIL_FIELDS}}


def read_detail(path: Path) -> dict[tuple[str, str, int, str], dict[str, str]]:
    """The detail lines of an arms file, by ``(skill, case_name, run_index, arm)``."""
    found = {}
    with Path(path).open(encoding="utf-8") as handle:
        header = json.loads(handle.readline() or "{}")
        if header.get("format") != ARMS_FORMAT:
            raise ValueError(f"{path}: not a skillab arms file (format {header.get('format')!r})")
        for line in handle:
            item = json.loads(line)
            key = (item["skill"], item["case_name"], item["run_index"], item["arm"])
            found[key] = {k: item[k] for k in DETAIL_FIELDS}
    return found
