"""A results document is the JSON form of one typed ``RunLog``: reading it and writing it back
gives the same document, key for key and in the same order, whatever wrote it (a compact run,
shards and their merge; the examples' runs are held to the same in test_results_summary.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.checks import GraderResult
from skillab.core.records import ArmRecord
from skillab.core.runlog import RunLog
from skillab.log.results import document

from ..results_golden import MOCK, ROOT, assert_round_trip

CHANGELOG = str(ROOT / "examples" / "changelog-entry")
TASKS = str(ROOT / "examples" / "task-suite" / "task_suites" / "commit-message")


def run(tmp_path: Path, name: str, *args: str) -> dict:
    output = tmp_path / f"{name}.json"
    assert main(["run", *args, *MOCK, "--output", str(output)]) in (0, 1)
    return json.loads(output.read_text(encoding="utf-8"))


def test_a_compact_document_round_trips_with_its_detail_left_outside(tmp_path):
    doc = run(tmp_path, "compact", CHANGELOG, "--compact-results")
    log = assert_round_trip(doc)
    arm = log.records[0].with_skill
    assert arm.detail == "compact.arms.jsonl" and arm.final_output == ""


def test_shards_and_their_merge_round_trip(tmp_path):
    parts = [tmp_path / f"part{i}.json" for i in (1, 2)]
    for index, part in enumerate(parts, start=1):
        assert main(["run", TASKS, *MOCK, "--shard", f"{index}/2", "--output", str(part)]) == 0
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, parts), "--no-history", "--output", str(merged)]) in (0, 1)
    for path in (*parts, merged):
        log = assert_round_trip(json.loads(path.read_text(encoding="utf-8")))
    # The format's graders come back typed, not as dicts.
    graders = [g for r in log.records for g in r.with_skill.graders]
    assert graders and all(isinstance(g, GraderResult) for g in graders)
    assert log.settings.shard is None and len(log.records) == log.summary.aggregate.total_cases


def test_an_unknown_arm_detail_is_refused_not_dropped():
    with pytest.raises(ValueError, match="unknown arm detail 'surprise'"):
        ArmRecord.from_dict({"passed": True, "errored": False, "extra": {"surprise": 1}})


def test_the_document_is_redacted_once_when_built_from_the_log(tmp_path):
    doc = run(tmp_path, "plain", CHANGELOG)
    log = RunLog.from_json(doc)
    secret = "sk-live-0123456789abcdef"
    log.records[0].with_skill.final_output = f"the key is {secret}"
    written = document(log, {"SOME_API_KEY": secret})
    assert secret not in json.dumps(written)
    # The log keeps what the agent said; only what is written or shown is masked.
    assert secret in log.records[0].with_skill.final_output


def test_a_block_that_does_not_fit_its_type_is_refused_naming_where(tmp_path):
    """The blocks were dicts taken on trust: a misspelled key or a number written as text rode
    along to every reporter. Now the document is read by its types, and refused by path."""
    doc = run(tmp_path, "plain", CHANGELOG)
    bad = json.loads(json.dumps(doc))
    bad["statistics"]["power"]["runs"] = "one"
    with pytest.raises(ValueError, match=r"statistics\.power\.runs: expected int, got 'one'"):
        RunLog.from_json(bad)
    bad = json.loads(json.dumps(doc))
    bad["triggers"]["metrics"]["recal"] = bad["triggers"]["metrics"].pop("recall")
    with pytest.raises(ValueError, match=r"triggers\.metrics: unknown key 'recal'"):
        RunLog.from_json(bad)
    bad = json.loads(json.dumps(doc))
    del bad["usage"]["total"]
    with pytest.raises(ValueError, match=r"usage: the key 'total' is missing"):
        RunLog.from_json(bad)
