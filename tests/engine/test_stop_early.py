"""--stop-early: exact curtailment and group-sequential looks, end to end through the CLI."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

from skillab.cli import main
from skillab.scoring.inference import CasePair, integer_scores, sign_flip_p
from skillab.scoring.stopping import (
    GROUP_SEQUENTIAL,
    calls_saved,
    claim,
    curtail,
    group_sequential,
    trend_power,
)

from ..skillgen import grep_case, make_skill

UP, DOWN, TIE = CasePair(1, 0, 1), CasePair(0, 1, 1), CasePair(0, 0, 1)


def test_curtailment_stops_only_when_every_ending_says_the_same():
    """Brute force over every ending of the remaining cases, in order (not just multisets)."""
    rng = random.Random(4)
    for _ in range(60):
        done = [rng.choice((UP, UP, DOWN, TIE)) for _ in range(rng.randint(2, 9))]
        remaining = rng.randint(1, 5)
        endings = {claim(done + list(rest)) for rest in itertools.product((UP, DOWN, TIE), repeat=remaining)}
        assert curtail(done, remaining, 1).stop == (len(endings) == 1)


def test_curtailment_with_runs_and_a_gate():
    done = [CasePair(2, 0, 2)] * 12
    assert claim(done) == "helps"
    assert curtail(done, 1, 2).stop  # 12 strong cases: one more cannot undo it
    # The gate: 12 cases at +100 and 8 to go span 40..100 pts; a 50 pt minimum is not settled.
    assert not curtail(done, 8, 2, min_delta_pts=50).stop
    assert curtail(done, 1, 2, min_delta_pts=50).stop


def test_group_sequential_crosses_its_bound_only_at_a_look():
    # 10 of 40 is no look (the first is at half the cases): ten ups, p = 0.002, do not stop it.
    assert not group_sequential([UP] * 10, 40, runs=1).stop
    assert not group_sequential([UP] * 16 + [TIE] * 5, 40, runs=1).stop  # 21 cases: not a look
    crossed = group_sequential([UP] * 15 + [TIE] * 5, 40, runs=1)  # look 1: p = 6e-5 < 0.0005
    assert crossed.stop and crossed.alpha == GROUP_SEQUENTIAL.bounds[0] and claim([UP] * 15, crossed.alpha) == "helps"
    futile = group_sequential([DOWN] * 3 + [UP] * 3 + [TIE] * 14, 40, runs=1)
    assert futile.stop and "neither a lift nor harm" in futile.reason


def test_harm_is_never_stopped_for_futility():
    """Eight cases down of 20 at look 1 of 40 (p = 0.008, short of the look's bound): harm can
    still be shown, so the run goes on; it used to stop here because the lift pointed away."""
    assert not group_sequential([DOWN] * 8 + [TIE] * 12, 40, runs=1).stop
    assert not group_sequential([DOWN] * 11 + [UP] * 2 + [TIE] * 17, 40, runs=1).stop  # look 2
    # The mirror image, a lift, is treated the same way.
    assert not group_sequential([UP] * 8 + [TIE] * 12, 40, runs=1).stop


def test_the_looks_spend_five_percent_in_all_without_a_normal_approximation():
    """Each look's sign-flip test is exact, so bounds that add up to 0.05 keep false claims at
    or below 5% by the union bound, for any distribution of the cases: the final look decides
    at 0.048, where O'Brien-Fleming's bounds (from a normal approximation) left it 0.043."""
    assert sum(GROUP_SEQUENTIAL.bounds) + GROUP_SEQUENTIAL.final <= 0.05 + 1e-12
    done = [UP] * 25 + [DOWN] * 12  # p = 0.047
    assert 0.043 < sign_flip_p(integer_scores(done))[0] < 0.048
    decision = group_sequential(done, len(done), runs=1)
    assert not decision.stop and claim(done, decision.alpha) == "helps"


def test_a_look_stops_for_a_claim_only_on_strong_evidence():
    """The look at 20 of 40 cases: 12 up, 1 down (p = 0.0034) crossed O'Brien-Fleming's 0.0042
    and ended the run; the look now needs p < 0.0005, so the run goes on to its final bound."""
    pairs = [UP] * 12 + [DOWN] + [TIE] * 7
    assert sign_flip_p(integer_scores(pairs))[0] < 0.0042
    assert not group_sequential(pairs, 40, runs=1).stop


def test_futility_reads_the_runs_seen_not_the_cases():
    """With --adaptive-runs a settled case counts as finished after 2 of its 3 runs: its third
    run is information still to come. At the look at 10 of 20 cases (6 of them settled), one case
    up on every run, one down, two up on one run of 3: the case share (1/2) gave a conditional
    power of 0.025 and stopped for futility; the share of runs seen (24 of 60) leaves more to
    come, and the run goes on."""
    pairs = [CasePair(3, 0, 3), CasePair(0, 3, 3)] + [CasePair(1, 0, 3)] * 2 + [CasePair(0, 0, 2)] * 6
    assert trend_power(pairs, 0.5, 0.043) < 0.05
    assert trend_power(pairs, 24 / 60, GROUP_SEQUENTIAL.final) >= GROUP_SEQUENTIAL.futility[0]
    assert not group_sequential(pairs, 20, runs=3).stop


def test_calls_saved_is_a_plain_count():
    assert calls_saved(40, 14, 3, 2, 1.5) == 26 * 3 * 2 * 1.5


def run_suite(tmp_path: Path, *extra: str, cases: int = 30) -> dict:
    names = [f"c{i:02d}" for i in range(cases)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: {"with": "SKILLED", "without": "plain"} for n in names})
    out = tmp_path / "results.json"
    code = main(["run", str(skill), "--adapter", "mock", "--quiet", "--no-history", "--no-cache",
                 "--concurrency", "1", "--output", str(out), "--markdown", str(tmp_path / "r.md"), *extra])
    assert code == 0
    return json.loads(out.read_text())


def test_curtail_stops_a_clear_lift_and_says_what_it_saved(tmp_path):
    doc = run_suite(tmp_path, "--stop-early", "curtail", "--stop-seed", "7")
    block = doc["stop_early"]
    assert block["design"] == "curtail" and block["seed"] == 7 and block["stopped"]
    ran = block["cases_ran"]
    assert ran < 30 and len({c["case_name"] for c in doc["cases"]}) == ran
    # The cases ran in the recorded order, a prefix of it.
    assert {c["case_name"] for c in doc["cases"]} == set(block["order"][:ran])
    assert block["saved_model_calls"] == (30 - ran) * 2
    assert doc["statistics"]["summary"].endswith("the skill helps beyond noise.")
    text = f"stopped at {ran} of 30 cases: the lift sentence could no longer change"
    assert text in (tmp_path / "r.md").read_text()
    assert f"cover the {ran} cases that ran" in (tmp_path / "r.md").read_text()
    from skillab.core.runlog import RunLog
    from skillab.reports.html import render_html
    from skillab.reports.junit import render_junit

    log = RunLog.from_json(doc)
    assert text in render_html([log]) and text in render_junit([log])
    # The same seed gives the same order.
    again = run_suite(tmp_path / "again", "--stop-early", "curtail", "--stop-seed", "7")
    assert again["stop_early"]["order"] == block["order"]


def test_without_stop_early_every_case_runs(tmp_path):
    doc = run_suite(tmp_path, cases=12)
    assert "stop_early" not in doc and len(doc["cases"]) == 12


def test_group_sequential_run_stops_at_a_look_and_decides_at_its_bound(tmp_path):
    doc = run_suite(tmp_path, "--stop-early", "group-sequential", "--stop-seed", "3", cases=40)
    block = doc["stop_early"]
    assert block["stopped"] and block["cases_ran"] == 20  # look 1: 20 ups, p = 2e-6
    assert block["alpha"] == GROUP_SEQUENTIAL.bounds[0] and "look 1 of 3 crossed its interim bound" in block["reason"]
    assert doc["statistics"]["distinguishable"]


def test_the_rule_stops_on_the_runs_the_statistics_count():
    """A run whose arm never attempted the task is left out of the lift (``is_comparable``): the
    stopping rule left out only errored runs, so it could stop on a lift the report then does
    not show. It now reads the same pass counts the statistics do."""
    from skillab.core.records import ArmRecord, CaseRecord
    from skillab.engine.stop_early import _finished_cases
    from skillab.scoring.statistics import case_pairs

    def record(name: str, run: int, *, attempted: bool = True, outcome: str = "flip_to_pass") -> CaseRecord:
        return CaseRecord(name, outcome, ArmRecord(passed=outcome != "error", errored=outcome == "error"),
                          ArmRecord(passed=False, errored=False, task_attempted=attempted), run_index=run)

    records = [record("a", 0), record("a", 1, attempted=False), record("b", 0, outcome="error"),
               record("b", 1, outcome="error"), record("c", 0)]
    names, pairs, _, _ = case_pairs(records)
    finished = _finished_cases(records, runs=2)
    assert finished == {"a": CasePair(1, 0, 1), "b": CasePair(0, 0, 0)}  # c has one of its two runs
    assert finished["a"] == dict(zip(names, pairs))["a"]


def test_group_sequential_at_high_concurrency_starts_no_case_past_the_look(tmp_path):
    """At --concurrency 8 the arms of the cases after the first look used to be started while the look's
    cases were still running, so the run went past the look and saved less than it said. The
    engine now holds cases past the next look until it is decided: the stop lands on the look."""
    doc = run_suite(tmp_path, "--stop-early", "group-sequential", "--stop-seed", "3", "--concurrency", "8",
                    cases=40)
    block = doc["stop_early"]
    assert block["stopped"] and block["cases_ran"] == 20 and len(doc["cases"]) == 20
    # Measured, not planned: the arms that never started, at the concurrency that ran.
    assert block["arms_planned"] == 80 and block["arms_not_started"] == 40 and block["concurrency"] == 8
    assert block["saved_model_calls"] == 40
    assert block["sentence"] == ("stopped at 20 of 40 cases: look 1 of 3 crossed its interim bound (p < 0.0005); "
                                 "saved an unknown cost (40 model calls): 40 of 80 arms never started at "
                                 "--concurrency 8")  # as docs/scale.md shows it


def test_curtail_at_high_concurrency_reports_the_arms_it_really_saved(tmp_path):
    """Curtailment can stop after any case, so arms in flight finish past the stop: the saving
    counts the arms that never started, whatever cases_ran says."""
    doc = run_suite(tmp_path, "--stop-early", "curtail", "--stop-seed", "7", "--concurrency", "8", cases=80)
    block = doc["stop_early"]
    # Curtailment settles "helps" near 50 of 80 cases; 16 arms at most were in flight then.
    assert block["stopped"] and block["arms_planned"] == 160
    assert 0 < block["arms_not_started"] <= 160 - 2 * len(doc["cases"])
    assert block["saved_model_calls"] == block["arms_not_started"]
