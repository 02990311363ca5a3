"""The results document is a pure summary of the run's settings and its per-case records.

Every example's document, markdown report and JUnit file are pinned (timings and machine facts masked, see tests/results_golden.py),
and reading a document back and summarizing it again gives the same document byte for byte: the
summary a live run writes is the one ``merge`` (and any re-reader) computes. Each document is also
``RunLog.to_json`` of ``RunLog.from_json`` of itself, exactly: the three-arm (``--against``),
pass@k and ``--runs 3`` examples included.
"""

from __future__ import annotations

import json

import pytest

from skillab.core.runlog import RunLog
from skillab.scoring.summary import summarize

from ..results_golden import EXAMPLE_RUNS, GOLDEN, ROOT, mask, rendered, run_example


@pytest.mark.parametrize("name", sorted(EXAMPLE_RUNS))
def test_example_document_matches_its_golden_and_survives_a_round_trip(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = run_example(name, tmp_path / "results.json")
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert mask(doc) == golden, (
        f"{name}: the results document changed; if on purpose, run `python -m tests.results_golden`"
    )
    for suffix, report in rendered(tmp_path / "results.json").items():
        assert report == (GOLDEN / f"{name}{suffix}").read_text(encoding="utf-8"), (
            f"{name}: the {suffix} report changed; if on purpose, run `python -m tests.results_golden`"
        )
    # The document is its run log's JSON form, and the log's summary is a pure function of its
    # settings and records: reading a document back and summarizing it again changes nothing.
    log = RunLog.from_json(doc)
    assert json.dumps(log.to_json(), indent=2) == json.dumps(doc, indent=2)
    again = summarize(log.settings, log.records)
    assert json.dumps(again.to_json(), indent=2) == json.dumps(doc, indent=2)
