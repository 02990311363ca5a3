"""--adaptive-runs end to end: a case whose arms agreed on its first runs gets no more model calls
(counted at the fake model server); the results document, reports, --resume and --stop-early
hold with unequal runs per case."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.runlog import RunLog

from ..fakes.model_server import FakeModelServer, text
from ..skillgen import grep_case, make_skill

BODY = "Always answer with the word SKILLED."
# Per case: what the agent answers with the skill and without it. "same-*" cases agree on
# every run (both pass, both fail); the others differ on every run.
SCRIPT = {"same-pass": ("SKILLED", "SKILLED"), "same-fail": ("plain", "plain"),
          "helps-1": ("SKILLED", "plain"), "helps-2": ("SKILLED", "plain")}


class Model:
    """Answers by case and arm, and counts the model calls per (case, arm)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: Counter[tuple[str, str]] = Counter()

    def __call__(self, req):
        arm = "with" if BODY in req.system_text else "without"
        case = next(name for name in SCRIPT if req.mentions(f"for {name}."))
        with self.lock:
            self.calls[(case, arm)] += 1
        return text(SCRIPT[case][0 if arm == "with" else 1])


@pytest.fixture
def model(monkeypatch):
    model = Model()
    with FakeModelServer(model) as fake:
        fake.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "Adaptive" * 6)
        yield model


def run(tmp_path: Path, *extra: str, name: str = "out") -> tuple[int, dict, str]:
    skill = make_skill(tmp_path, [grep_case(n) for n in SCRIPT], body=BODY)
    out = tmp_path / name / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    code = main(["run", str(skill), "--model", "claude-haiku-4-5", "--adapter", "llm", "--output", str(out),
                 "--no-cache", "--no-history", "--quiet", "--markdown", str(out.parent / "r.md"), *extra])
    return code, json.loads(out.read_text()), (out.parent / "r.md").read_text()


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_agreeing_cases_get_no_more_runs_at_the_model_server(model, tmp_path, concurrency, capsys):
    code, doc, report = run(tmp_path, "--runs", "3", "--adaptive-runs", "--concurrency", concurrency)
    assert code == 0
    # Two runs of each agreeing case, three of the others: counted where the calls land.
    assert model.calls == {("same-pass", "with"): 2, ("same-pass", "without"): 2,
                           ("same-fail", "with"): 2, ("same-fail", "without"): 2,
                           ("helps-1", "with"): 3, ("helps-1", "without"): 3,
                           ("helps-2", "with"): 3, ("helps-2", "without"): 3}
    runs = Counter(c["case_name"] for c in doc["cases"])
    assert runs == {"same-pass": 2, "same-fail": 2, "helps-1": 3, "helps-2": 3}
    block = doc["adaptive_runs"]
    assert block["cases_cut"] == ["same-pass", "same-fail"] and block["settle_after"] == 2
    assert block["arms_planned"] == 24 and block["arms_not_started"] == 4
    assert block["saved_model_calls"] == 4 and block["concurrency"] == int(concurrency)
    assert block["saved_usd"] > 0  # priced at the arms' observed mean cost
    line = (f"adaptive runs: 2 of 4 cases agreed on each of their first 2 of 3 runs and ran no more; "
            f"saved ~${block['saved_usd']:.2f} (4 model calls): 4 of 24 arms never started at --concurrency {concurrency}")
    assert block["sentence"] == line and line in report
    assert "(MEAN over 2–3 runs)" in capsys.readouterr().out
    assert ("Rates are the MEAN over 2–3 independent runs per case (--adaptive-runs gave cases whose "
            "arms agreed fewer)") in report
    # Not interrupted, and the lift is over every case, its runs MEAN-aggregated.
    assert not doc["interrupted"] and doc["statistics"]["n_cases"] == 4


@pytest.fixture
def more_cases():
    """Adds cases to SCRIPT for one test: ``helps`` that differ on every run, ``same`` that agree."""
    added: list[str] = []

    def add(helps: int, same: int) -> None:
        for i in range(helps):
            added.append(f"more-helps-{i}")
            SCRIPT[added[-1]] = ("SKILLED", "plain")
        for i in range(same):
            added.append(f"more-same-{i}")
            SCRIPT[added[-1]] = ("SKILLED", "SKILLED")

    yield add
    for name in added:
        del SCRIPT[name]


@pytest.mark.parametrize("extra", [("--concurrency", "1"), ("--concurrency", "4"),
                                   ("--stop-early", "group-sequential", "--stop-seed", "3")])
def test_held_runs_that_could_change_the_verdict_still_run(model, tmp_path, more_cases, extra):
    """5 cases that help on every run and 5 that agree: after the first 2 runs the lift cannot
    be told from noise (5 cases differ: p = 0.0625), but the agreeing cases' third runs could
    make it "helps" (a 6th differing case: p = 0.03), so they run until that can no longer happen:
    the verdict is the one every run gives. Group-sequential looks find nothing to stop on here,
    and its final bound (0.048) is crossed at a 6th differing case too."""
    more_cases(3, 3)
    code, doc, _ = run(tmp_path, "--runs", "3", "--adaptive-runs", *extra)
    assert code == 0
    _, full, _ = run(tmp_path, "--runs", "3", name="full")
    assert doc["statistics"]["p_value"] == full["statistics"]["p_value"]
    # Until the last held case, an ending of the rest could still reach p < 0.05: every run ran
    # (both documents' calls together: twice every arm).
    assert sum(model.calls.values()) == 2 * 2 * 3 * len(SCRIPT)
    block = doc["adaptive_runs"]
    assert block["cases_cut"] == [] and block["arms_not_started"] == 0
    assert "5 of 10 cases agreed on each of their first 2 of 3 runs; their later runs ran: " \
           "they could have changed the verdict" in block["sentence"]


def test_without_the_switch_every_run_runs(model, tmp_path):
    code, doc, _ = run(tmp_path, "--runs", "3")
    assert code == 0 and sum(model.calls.values()) == 24 and "adaptive_runs" not in doc


def test_the_document_with_unequal_runs_reads_back_and_resumes_without_new_calls(model, tmp_path):
    code, doc, _ = run(tmp_path, "--runs", "3", "--adaptive-runs")
    assert code == 0
    log = RunLog.from_json(doc)
    again = RunLog.from_json(json.loads(json.dumps(log.to_json())))
    assert again.settings.adaptive_runs == log.settings.adaptive_runs
    assert [r.run_index for r in again.records] == [r["run_index"] for r in doc["cases"]]
    # --resume keeps every arm; the cut runs stay cut: no model call at all.
    first = sum(model.calls.values())
    code, resumed, _ = run(tmp_path, "--runs", "3", "--adaptive-runs", "--resume",
                           str(tmp_path / "out" / "results.json"), name="resumed")
    assert code == 0 and sum(model.calls.values()) == first
    assert Counter(c["case_name"] for c in resumed["cases"]) == Counter(c["case_name"] for c in doc["cases"])
    # Resumed without the switch, the plan is every run: only the cut ones run now.
    code, full, _ = run(tmp_path, "--runs", "3", "--resume", str(tmp_path / "out" / "results.json"), name="full")
    assert code == 0 and sum(model.calls.values()) == first + 4 and len(full["cases"]) == 12


def test_with_stop_early_a_settled_case_counts_as_finished(model, tmp_path):
    for i in range(8):
        SCRIPT.setdefault(f"more-{i}", ("SKILLED", "SKILLED") if i % 2 else ("SKILLED", "plain"))
    try:
        code, doc, _ = run(tmp_path, "--runs", "3", "--adaptive-runs", "--stop-early", "curtail",
                           "--stop-seed", "1", "--concurrency", "1")
    finally:
        for i in range(8):
            del SCRIPT[f"more-{i}"]
    assert code == 0
    adaptive, early = doc["adaptive_runs"], doc["stop_early"]
    runs = Counter(c["case_name"] for c in doc["cases"])
    assert adaptive["cases_cut"] and early["cases_ran"] == len(runs)
    # A settled case finished at two runs; the stop's count (if it stopped) and the rule's count
    # share the arms that never started, without overlap, and match the model calls made.
    assert all(runs[name] == 2 for name in adaptive["cases_cut"])
    stopped = early.get("arms_not_started") or 0
    assert stopped + adaptive["arms_not_started"] + 2 * len(doc["cases"]) == 12 * 3 * 2
    assert sum(model.calls.values()) == 2 * len(doc["cases"])


def test_a_settled_case_is_finished_for_the_stopping_rule():
    from skillab.core.records import ArmRecord, CaseRecord
    from skillab.engine.stop_early import _finished_cases
    from skillab.scoring.inference import CasePair

    def record(name: str, run: int, with_passed: bool, without_passed: bool) -> CaseRecord:
        outcome = "flip_to_pass" if with_passed > without_passed else "pass_kept" if with_passed else "fail_kept"
        return CaseRecord(name, outcome, ArmRecord(passed=with_passed, errored=False),
                          ArmRecord(passed=without_passed, errored=False),
                          run_index=run)

    records = [record("agreed", 0, True, True), record("agreed", 1, True, True),
               record("differs", 0, True, False), record("differs", 1, True, True)]
    assert _finished_cases(records, 3) == {}
    assert _finished_cases(records, 3, adaptive=True) == {"agreed": CasePair(2, 2, 2)}


@pytest.mark.parametrize(("extra", "said"), [
    (("--runs", "2"), "--adaptive-runs cuts nothing at --runs 2"),
    (("--runs", "3", "--shard", "1/1"), "--adaptive-runs is off under --shard"),
])
def test_where_it_cannot_cut_every_run_runs_and_the_report_says_why(model, tmp_path, extra, said):
    code, doc, _ = run(tmp_path, "--adaptive-runs", *extra)
    runs = int(extra[1])
    assert code == 0 and sum(model.calls.values()) == 2 * runs * len(SCRIPT)
    assert "adaptive_runs" not in doc and any(w.startswith(said) for w in doc["warnings"])
