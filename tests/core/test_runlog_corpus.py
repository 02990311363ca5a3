"""Every kind of results document a run writes is the JSON form of one typed ``RunLog``, byte for
byte: each example's suite, and the runs that fill in the optional blocks (several runs and
pass@k at once, ``--against`` with trigger trials, crowd mode, a trend from the history, a run
``--stop-early`` cut short, a document of several suites).

The pinned examples (tests/results_golden.py) are held to the same in test_results_summary.py;
compact documents, shards and their merge in test_runlog.py; an interrupted run, a cost-capped
one and a Harbor import where those are made (test_partial_runs.py, test_harbor.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main

from ..results_golden import EXAMPLE_RUNS, MOCK, ROOT, assert_round_trip
from ..skillgen import grep_case, make_skill

MOCK_NO_HISTORY = [m for m in MOCK if m != "--no-history"]
# name -> ``skillab run`` arguments (paths from the repository root), beyond the pinned ones.
RUNS: dict[str, list[str]] = {
    "duplicate-invoices": ["examples/duplicate-invoices", "--no-history"],
    "team-facts-runs3-pass-k": ["examples/team-facts", "--runs", "3", "--pass-k", "2", "--pass-n", "3",
                                "--no-history"],
    "ablation-incident-summary": ["examples/ablation/incident-summary", "--no-history"],
    "changelog-entry-against": ["examples/changelog-entry", "--against", "examples/changelog-entry",
                                "--no-history"],
    "changelog-entry-crowd": ["examples/changelog-entry", "--siblings", "examples", "--no-history"],
    "suite-set": ["examples/changelog-entry", "examples/team-facts", "--no-history"],
}


def documents(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["suites"] if data.get("format") == "skillab.results-set/1" else [data]


def test_every_example_suite_is_in_a_round_trip():
    """A new example is added to the pinned runs or to ``RUNS``, or this fails."""
    runs = [*EXAMPLE_RUNS.values(), *RUNS.values()]
    covered = {(ROOT / arg).resolve() for args in runs for arg in args if arg.startswith("examples/")}
    suites = {p.parent.resolve() for pattern in ("eval.yaml", "task.toml", "task.md", "evals.json", "evals.yaml")
              for p in (ROOT / "examples").rglob(pattern)}
    uncovered = {s for s in suites if not any(s == c or c in s.parents or s in c.parents for c in covered)}
    assert suites and not uncovered, sorted(map(str, uncovered))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_document_is_its_logs_json(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    output = tmp_path / "results.json"
    assert main(["run", *RUNS[name], *MOCK_NO_HISTORY, "--output", str(output)]) in (0, 1)
    docs = documents(output)
    assert docs
    for doc in docs:
        assert_round_trip(doc)
    if name == "changelog-entry-against":
        assert docs[0]["comparison"] and docs[0]["triggers"]["comparison"]
    if name == "changelog-entry-crowd":
        assert docs[0]["triggers"]["crowd"]["siblings"]
    if name == "team-facts-runs3-pass-k":
        assert docs[0]["pass_at_k"] and docs[0]["runs"] == 3


def test_a_trend_against_the_previous_run_round_trips(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    history = tmp_path / "history.jsonl"
    for name in ("first", "second"):
        output = tmp_path / f"{name}.json"
        assert main(["run", "examples/changelog-entry", *MOCK_NO_HISTORY, "--history", str(history),
                     "--output", str(output)]) == 0
        log = assert_round_trip(json.loads(output.read_text(encoding="utf-8")))
    assert log.settings.trend is not None and log.settings.trend.previous is not None
    assert [arm.arm for arm in log.settings.trend.arms] == ["lift", "with_skill", "without_skill"]


def test_a_run_stopped_early_round_trips(tmp_path):
    names = [f"c{i:02d}" for i in range(30)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: {"with": "SKILLED", "without": "plain"} for n in names})
    output = tmp_path / "results.json"
    assert main(["run", str(skill), *MOCK, "--concurrency", "1", "--stop-early", "curtail", "--stop-seed", "7",
                 "--output", str(output)]) == 0
    log = assert_round_trip(json.loads(output.read_text(encoding="utf-8")))
    stop = log.settings.stop_early
    assert stop is not None and stop.stopped and stop.sentence and stop.saved_model_calls
