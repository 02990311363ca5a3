"""--pass-k K: up to K attempts per arm in fresh workspaces, pass when any passes, reported as
pass@k and kept apart from the MEAN over --runs."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.records import ArmRecord
from skillab.core.usage import Usage
from skillab.engine.arm import combine_attempts

from ..fakes.model_server import FakeModelServer, text, tool_call
from ..skillgen import answers, grep_case, make_skill

SKILL_BODY = "Always end your answer with the word DONE."


def attempt(passed: bool, *, errored: bool = False, ms: int = 10, tokens: int = 5, output: str = "") -> ArmRecord:
    return ArmRecord(
        passed=passed, errored=errored, error="503 upstream" if errored else None, duration_ms=ms, turns=1,
        tool_call_count=2, usage=Usage(input_tokens=tokens), final_output=output,
    )


# --- how attempts combine --------------------------------------------------------------------


def test_the_first_passing_attempt_decides_and_every_attempt_is_counted():
    record = combine_attempts([attempt(False, output="a"), attempt(True, ms=30, output="b"),
                               attempt(True, output="c")], k=2)
    assert record.passed and not record.errored and record.error is None
    assert record.final_output == "b"  # the deciding attempt's answer and grades
    assert (record.duration_ms, record.turns, record.tool_call_count, record.total_tokens) == (50, 3, 6, 15)
    summary = record.pass_k
    assert summary.k == 2 and summary.passed_on == 2 and summary.n == 3
    assert [a.passed for a in summary.attempts] == [False, True, True]
    # Chen et al.: 1 - C(n - c, k) / C(n, k) = 1 - C(1, 2) / C(3, 2) = 1; pass@1 = 2/3.
    assert summary.pass_at_k == 1.0 and summary.pass_at_1 == pytest.approx(2 / 3)


def test_the_estimator_is_unbiased_against_brute_force():
    from itertools import combinations

    from skillab.scoring.pass_at_k import pass_at_k

    for n, c, k in [(5, 1, 2), (10, 3, 5), (6, 0, 3), (4, 4, 2), (7, 2, 7)]:
        outcomes = [True] * c + [False] * (n - c)
        subsets = list(combinations(outcomes, k))
        assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


def test_errored_attempts_are_missing_not_an_errored_arm():
    failed = combine_attempts([attempt(False), attempt(False)], k=2)
    assert not failed.passed and not failed.errored and failed.pass_k.passed_on is None
    # One attempt errored: the arm is graded on the other, not turned into an error.
    partly = combine_attempts([attempt(False), attempt(False, errored=True)], k=2)
    assert not partly.errored and not partly.passed
    summary = partly.pass_k
    assert (summary.graded, summary.passes, summary.estimator) == (1, 0, "plug-in")
    all_errored = combine_attempts([attempt(False, errored=True), attempt(False, errored=True)], k=2)
    assert all_errored.errored and all_errored.error == "all 2 attempts errored; first error: 503 upstream"
    rescued = combine_attempts([attempt(False, errored=True), attempt(True)], k=2)
    assert rescued.passed and not rescued.errored and rescued.error is None
    assert rescued.pass_k.attempts[0].error == "503 upstream"


# --- whole runs through the fake model server ------------------------------------------------


SUITE = """\
skill_id: finisher
version: "1.0"
tasks:
  - id: finish
    prompt: Finish the report.
    judge: {type: contains, expected: [DONE]}
"""


def write_suite(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(f"---\nname: finisher\ndescription: Ends answers.\n---\n{SKILL_BODY}\n")
    (root / "task_suite.yaml").write_text(SUITE)
    return root


class FlakyModel:
    """Follows the skill when it has it; without it, gets the task right from its second try on.

    Each attempt first checks, with a shell command, that it starts in a fresh workspace."""

    def __init__(self):
        self.lock = threading.Lock()
        self.finished: Counter[str] = Counter()
        self.starts: list[str] = []

    def __call__(self, req):
        arm = "with" if SKILL_BODY in req.system_text else "without"
        if not req.tool_results:
            return tool_call("run_shell", {"command": "test -e marker && echo STALE || echo FRESH; touch marker"})
        with self.lock:
            self.starts.append(req.tool_results[0])
            self.finished[arm] += 1
            tries = self.finished[arm]
        good = arm == "with" or tries % 2 == 0
        return text("Report finished. DONE" if good else "Report finished.")


@pytest.fixture
def flaky(monkeypatch):
    model = FlakyModel()
    with FakeModelServer(model) as fake:
        fake.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "PassAtK" * 6)
        yield model


def run(target: Path, tmp_path: Path, *extra: str) -> tuple[int, dict, str, str]:
    out = tmp_path / "results.json"
    code = main(["run", str(target), "--model", "claude-haiku-4-5", "--output", str(out), "--no-cache",
                 "--no-history", "--quiet", "--concurrency", "1", "--markdown", str(tmp_path / "report.md"),
                 *extra])
    return code, json.loads(out.read_text()), (tmp_path / "report.md").read_text(), str(out)


def test_pass_at_1_and_pass_at_2_tell_different_stories(flaky, tmp_path, capsys):
    suite = write_suite(tmp_path / "finisher")
    code, doc, _, _ = run(suite, tmp_path / "k1")
    assert code == 0 and doc["pass_k"] == 1
    assert doc["cases"][0]["outcome"] == "flip_to_pass"
    assert "pass rate    with 100.0%" in capsys.readouterr().out

    flaky.finished.clear()
    code, doc, report, _ = run(suite, tmp_path / "k2", "--pass-k", "2")
    out = capsys.readouterr().out
    assert code == 0 and doc["pass_k"] == 2 and doc["runs"] == 1
    (record,) = doc["cases"]
    # The baseline fails its first attempt and passes its second: pass@2 counts it.
    assert record["outcome"] == "pass_kept"
    without = record["without_skill"]["extra"]["pass_k"]
    assert without["k"] == 2 and without["passed_on"] == 2
    assert [a["passed"] for a in without["attempts"]] == [False, True]
    assert record["without_skill"]["final_output"] == "Report finished. DONE"
    assert record["with_skill"]["extra"]["pass_k"]["passed_on"] == 1
    assert len(record["with_skill"]["extra"]["pass_k"]["attempts"]) == 2  # no early stop
    assert doc["pass_at_k"]["arms"]["without_skill"] == {"pass_at_k": 1.0, "pass_at_1": 0.5, "cases": 1}
    assert doc["pass_at_k"]["arms"]["with_skill"]["pass_at_1"] == 1.0
    assert "pass@2 rate  with 100.0%   without 100.0%" in out and "· pass@2" in out
    assert "| 100% (pass@2) | 100% (pass@2) |" in report
    assert "pass@2: each arm made every one of its attempts (no early stop)" in report
    assert "unbiased pass@2 from 2 attempts: with 100%, without 100%; pass@1 with 100%, without 50%." in report
    assert "pass@2       with 100.0%   without 100.0%   (unbiased estimate from 2 attempts per arm)   " \
           "pass@1 with 100.0%   without 50.0%" in out
    assert "MEAN" not in report
    assert all("FRESH" in start and "STALE" not in start for start in flaky.starts)


def test_every_attempt_starts_from_a_fresh_workspace(flaky, tmp_path):
    suite = write_suite(tmp_path / "finisher")
    (suite / "task_suite.yaml").write_text(SUITE.replace("[DONE]", "[never-said]"))
    code, doc, _, _ = run(suite, tmp_path / "out", "--pass-k", "3")
    assert code == 1  # every attempt fails: the verdict is fail, which gates by default
    (record,) = doc["cases"]
    for arm in ("with_skill", "without_skill"):
        summary = record[arm]["extra"]["pass_k"]
        assert summary["passed_on"] is None and len(summary["attempts"]) == 3
    assert len(flaky.starts) == 6 and all("FRESH" in s and "STALE" not in s for s in flaky.starts)


def test_runs_and_pass_k_are_labelled_apart(flaky, tmp_path, capsys):
    suite = write_suite(tmp_path / "finisher")
    code, doc, report, _ = run(suite, tmp_path / "out", "--pass-k", "2", "--runs", "2")
    out = capsys.readouterr().out
    assert code == 0 and doc["runs"] == 2 and doc["pass_k"] == 2 and len(doc["cases"]) == 2
    assert "pass@2 rate" in out and "(MEAN over 2 runs)" in out
    assert "pass@2: each arm made every one of its attempts" in report
    assert "Rates are the MEAN over 2 independent runs per case." in report


# --- with the mock adapter: every format, and the baseline cache -----------------------------


def test_pass_k_works_for_eval_yaml_suites_and_scopes_the_baseline_cache(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case("only")], responses={"only": answers("SKILLED", "plain")})
    cache = str(tmp_path / "cache")

    def mock_run(*extra: str) -> dict:
        out = tmp_path / "r.json"
        assert main(["run", str(skill), "--adapter", "mock", "--cache-dir", cache, "--no-history",
                     "--quiet", "--output", str(out), *extra]) == 0, capsys.readouterr().err
        return json.loads(out.read_text())

    first = mock_run("--pass-k", "2")
    assert first["cases"][0]["outcome"] == "flip_to_pass" and first["cache"]["hits"] == 0
    without = first["cases"][0]["without_skill"]["extra"]["pass_k"]
    assert len(without["attempts"]) == 2 and without["passed_on"] is None
    assert mock_run("--pass-k", "2")["cache"]["hits"] == 1
    # A baseline graded over two attempts is not one graded over one.
    assert mock_run("--pass-k", "1")["cache"]["hits"] == 0
    assert mock_run("--pass-k", "3")["cache"]["hits"] == 0
    assert mock_run("--pass-k", "2", "--pass-n", "4")["cache"]["hits"] == 0


def test_pass_n_below_pass_k_is_a_usage_error(capsys):
    assert main(["run", "x", "--adapter", "mock", "--pass-k", "3", "--pass-n", "2"]) == 2
    assert "--pass-n 2 is below --pass-k 3" in capsys.readouterr().err


def test_pass_k_must_be_a_positive_integer(capsys):
    assert main(["run", "x", "--adapter", "mock", "--pass-k", "0"]) == 2
    assert "must be a positive integer" in capsys.readouterr().err


def test_the_rate_over_n_attempts_is_labelled_pass_at_n(tmp_path):
    """With --pass-n 4 above --pass-k 2 an arm passes when any of its 4 attempts does: pass@4."""
    from skillab.core.runlog import RunLog
    from skillab.reports.markdown_view import SuiteView
    from skillab.reports.terminal import rate_label, render_table

    skill = make_skill(tmp_path, [grep_case("one")], responses={"one": answers("SKILLED", "plain")})
    out = tmp_path / "r.json"
    assert main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--pass-k", "2", "--pass-n", "4", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    log = RunLog.from_json(doc)
    assert rate_label(log) == "pass@4 rate"
    assert "pass@2 from 4 attempts" in render_table(log)
    assert SuiteView.from_log(0, log).pass_k == 4
