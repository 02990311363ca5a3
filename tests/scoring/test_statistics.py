"""Case-level paired statistics: the sign-flip test, the interval, power, and each sentence's condition."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from scipy.stats import binomtest, fisher_exact
from scipy.stats import t as student_t

from skillab.core.records import ArmRecord, CaseRecord
from skillab.core.wire import to_wire
from skillab.scoring import classify_outcome, paired_statistics
from skillab.scoring.inference import CasePair, sign_flip_p, sign_flip_upper_tail, t_quantile
from skillab.scoring.statistics import case_statistics, fisher_lower_p, mcnemar_exact_p, pooled_statistics
from skillab.session import gate_failures


def rec(case: str, with_passed: bool, without_passed: bool, run: int = 0, *, errored: bool = False,
        attempted: bool = True) -> CaseRecord:
    outcome = classify_outcome(with_passed=with_passed, without_passed=without_passed, errored=errored)
    return CaseRecord(
        case, outcome, ArmRecord(passed=with_passed, errored=errored),
        ArmRecord(passed=without_passed, errored=False, task_attempted=attempted), run_index=run,
    )


PAIRS = {"up": (True, False), "down": (False, True), "pass": (True, True), "fail": (False, False)}


def suite(counts: dict[str, int], runs: int = 1, prefix: str = "c") -> list[CaseRecord]:
    """Cases with the given outcome counts, each repeated identically ``runs`` times."""
    records, i = [], 0
    for kind, count in counts.items():
        for _ in range(count):
            records += [rec(f"{prefix}{i}", *PAIRS[kind], run=r) for r in range(runs)]
            i += 1
    return records


# -- the numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("b", range(0, 31, 3))
@pytest.mark.parametrize("c", range(0, 31, 4))
def test_mcnemar_matches_scipy_binomtest(b, c):
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_sign_flip_p_matches_brute_force_enumeration():
    rng = random.Random(3)
    for _ in range(150):
        scores = [rng.randint(-4, 4) for _ in range(rng.randint(1, 10))]
        total = sum(scores)
        patterns = list(itertools.product((1, -1), repeat=len(scores)))
        sums = [sum(s * x for s, x in zip(signs, scores)) for signs in patterns]
        two_sided = min(1.0, sum(abs(v) >= abs(total) for v in sums) / len(sums)) if total else 1.0
        assert sign_flip_p(scores) == (pytest.approx(two_sided, abs=1e-12), True)
        assert sign_flip_upper_tail(scores, total) == (pytest.approx(sum(v >= total for v in sums) / len(sums)), True)


def test_with_one_run_the_sign_flip_test_is_exact_mcnemar():
    stats = paired_statistics(suite({"up": 9, "down": 2, "pass": 5, "fail": 4}))
    assert stats.p_value == pytest.approx(binomtest(9, 11, 0.5).pvalue)
    assert stats.mcnemar_p == stats.p_value and "exact McNemar" in stats.method


def test_large_suites_fall_back_to_the_normal_approximation_only_when_huge():
    assert sign_flip_p([1] * 120 + [-1] * 80)[1] is True
    p, exact = sign_flip_p([2520, -2520, 1260] * 400)
    assert not exact and 0 < p < 1


@pytest.mark.parametrize("df", [3, 5, 9, 19, 49, 199])
def test_t_quantile_matches_scipy(df):
    assert t_quantile(0.975, df) == pytest.approx(student_t.ppf(0.975, df), rel=2e-3)


def test_fisher_lower_p_matches_scipy():
    for w, o, r in [(0, 10, 10), (2, 8, 10), (0, 5, 5), (3, 3, 5)]:
        expected = fisher_exact([[w, r - w], [o, r - o]], alternative="less").pvalue
        assert fisher_lower_p(w, o, r) == pytest.approx(expected)


# -- the case is the unit --------------------------------------------------------------------------


def test_identical_repeats_add_no_evidence():
    counts = {"up": 4, "down": 1, "pass": 3, "fail": 2}
    once = paired_statistics(suite(counts))
    five = paired_statistics(suite(counts, runs=5))
    assert (five.n_cases, five.n_records) == (10, 50)
    assert five.p_value == once.p_value and five.ci95 == once.ci95
    assert five.mcnemar_p is None and "McNemar" not in five.summary
    # What counting the 50 records as independent pairs would have claimed:
    assert mcnemar_exact_p(20, 5) < 0.05 < five.p_value


def test_help_some_hurt_as_many_is_not_beyond_noise():
    # Half the changed cases go up in every run, half go down: per-record McNemar sees 50 vs 50.
    cases = [CasePair(5, 0, 5)] * 10 + [CasePair(0, 5, 5)] * 10 + [CasePair(2, 2, 5)] * 10
    stats = case_statistics(cases)
    assert stats.lift_pts == 0.0 and stats.p_value == 1.0 and not stats.distinguishable


def test_unequal_runs_weigh_each_case_once():
    records = suite({"up": 2}, runs=1) + suite({"fail": 2}, runs=3, prefix="r")
    stats = paired_statistics(records)
    assert stats.delta_pts == 25.0  # the spec's per-record delta: 2 of 8 records
    assert stats.lift_pts == 50.0  # the case-level lift: 2 of 4 cases


def test_only_records_the_aggregate_keeps_are_counted():
    records = suite({"up": 3, "pass": 2}) + [rec("punt", True, False, attempted=False)]
    stats = paired_statistics(records)
    assert (stats.n_cases, stats.n_records, stats.flip_to_pass) == (5, 5, 3)


def test_interval_is_never_zero_width_and_narrows_with_cases():
    none_changed = paired_statistics(suite({"pass": 5, "fail": 5}))
    assert none_changed.ci95[0] < 0 < none_changed.ci95[1]
    small = paired_statistics(suite({"up": 4, "down": 1, "pass": 3, "fail": 2}))
    large = paired_statistics(suite({"up": 40, "down": 10, "pass": 30, "fail": 20}))
    assert small.lift_pts == large.lift_pts == 30.0
    assert large.ci95[1] - large.ci95[0] < (small.ci95[1] - small.ci95[0]) / 2


# -- each sentence and its condition ---------------------------------------------------------------


def test_beyond_noise_needs_the_test_and_the_interval():
    stats = paired_statistics(suite({"up": 12, "pass": 6, "fail": 2}))
    assert stats.p_value < 0.05 and stats.ci95[0] > 0 and stats.distinguishable
    assert stats.summary.startswith("+60.0 pts (95% CI +")
    assert stats.summary.endswith("the skill helps beyond noise.")
    down = paired_statistics(suite({"down": 12, "pass": 8}), subject="the edit")
    assert down.distinguishable and down.summary.endswith("the edit hurts beyond noise.")
    # Two cases, both up: p = 0.5, so no claim however clean it looks.
    two = paired_statistics(suite({"up": 2}))
    assert two.p_value == 0.5 and not two.distinguishable and "beyond noise" not in two.summary


def test_noise_sentence_carries_power_not_a_claim_of_no_lift():
    stats = paired_statistics(suite({"up": 2, "down": 1, "pass": 4, "fail": 3}), target_lift_pts=10)
    assert not stats.distinguishable and "cannot be told from noise" in stats.summary
    power = stats.power
    assert power.cases_needed > 10 and power.detectable_lift_pts is None
    assert f"about {power.cases_needed} cases would detect +10.0 pts" in stats.summary
    # 10 cases half passing without the skill: even +50 pts (every failure rescued) reaches
    # only 38% power (6+ discordant cases, all up, are needed for p < 0.05).
    assert "no lift the baseline leaves room for is detected at this size" in stats.summary
    # 20 cases, 6 passing without the skill: the baseline's 90% bound leaves room for ~40 pts.
    bigger = paired_statistics(suite({"up": 4, "down": 2, "pass": 4, "fail": 10}), target_lift_pts=10)
    assert 10 < bigger.power.detectable_lift_pts < 50
    assert f"this suite detects lifts of about {bigger.power.detectable_lift_pts:.0f} pts or more" in bigger.summary


def test_no_case_changed_says_so_without_claiming_no_lift():
    stats = paired_statistics(suite({"pass": 5, "fail": 5}))
    assert "no case's result differed between the arms, which does not show there is no lift" in stats.summary


def test_runs_that_flipped_both_ways_are_not_called_unchanged():
    """With several runs a case can flip each way in different runs: its pass rate is the same
    in both arms, but its results did differ, and the report lists both flips."""
    stats = case_statistics([CasePair(1, 1, 2), CasePair(2, 2, 2), CasePair(0, 0, 2)], flips=(1, 1))
    assert "no case's result differed" not in stats.summary
    assert "every case passed as often with the skill as without it" in stats.summary
    assert "which does not show there is no lift" in stats.summary


def test_cases_with_unequal_runs_are_not_given_one_run_count():
    """Errored runs leave cases with fewer comparable runs: the sentence must not round them to one."""
    stats = case_statistics([CasePair(3, 0, 3)] * 2 + [CasePair(1, 0, 1)] * 2, flips=(8, 0))
    assert "4 cases × 1–3 runs" in stats.summary and "× 2 runs" not in stats.summary


def test_a_run_with_no_records_does_not_say_its_cases_errored():
    """An empty shard (more shards than units) or an interrupted start has nothing to measure;
    errored runs are withheld before any sentence, so this one must not blame errors."""
    stats = case_statistics([])
    assert stats.summary.startswith("No comparable records") and "errored" not in stats.summary


def test_power_uses_the_target_and_the_baseline():
    records = suite({"up": 3, "down": 1, "pass": 10, "fail": 6})
    ten = paired_statistics(records, target_lift_pts=10).power
    thirty = paired_statistics(records, target_lift_pts=30).power
    assert thirty.cases_needed < ten.cases_needed
    ceiling = paired_statistics(suite({"pass": 18, "up": 1, "down": 1}), target_lift_pts=30).power
    assert ceiling.cases_needed is None and "is not possible" in ceiling.note


def test_error_dominated_runs_null_every_statistic_and_sentence():
    records = suite({"up": 18, "pass": 2}) + [rec(f"e{i}", False, False, errored=True) for i in range(10)]
    stats = paired_statistics(records)
    assert stats.summary is None and stats.withheld
    assert (stats.delta_pts, stats.lift_pts, stats.ci95, stats.p_value, stats.mcnemar_p) == (None,) * 5
    assert not stats.distinguishable and stats.power is None and not stats.regression


def test_single_case_and_no_records():
    single = paired_statistics(suite({"up": 1}, runs=3))
    assert single.ci95 is None and not single.distinguishable
    assert "a single case cannot tell a lift from noise" in single.summary
    empty = paired_statistics([])
    assert empty.lift_pts is None and "no lift to measure" in empty.summary


# -- the regression claim ("broke N cases") --------------------------------------------------------


def test_one_flip_down_is_changed_within_noise():
    stats = paired_statistics(suite({"down": 1, "up": 1, "pass": 18}), subject="the edit")
    assert not stats.regression and stats.regressed_cases == ()


def test_a_suite_that_leans_down_says_so_but_names_no_case_without_its_own_evidence():
    """One run per case: each drop is one coin toss, however many there are."""
    stats = paired_statistics(suite({"down": 8, "pass": 12}), subject="the edit")
    assert stats.summary.endswith("the edit hurts beyond noise.")
    assert not stats.regression and stats.regressed_cases == ()


def test_only_the_cases_whose_own_runs_show_the_drop_are_named():
    """Two cases broken in all five runs; four others one run down, as noise does."""
    broken = [CasePair(0, 5, 5)] * 2
    noisy = [CasePair(2, 3, 5)] * 4
    names = ["b1", "b2", "n1", "n2", "n3", "n4"] + [f"k{i}" for i in range(14)]
    stats = case_statistics(broken + noisy + [CasePair(5, 5, 5)] * 14, names=names, subject="the edit")
    assert stats.regressed_cases == ("b1", "b2") and stats.regression


def test_one_case_broken_in_every_run_is_beyond_noise_on_its_own():
    cases = [CasePair(0, 10, 10)] + [CasePair(10, 10, 10)] * 3 + [CasePair(10, 0, 10)] * 2
    stats = case_statistics(cases, names=["x", "a", "b", "c", "d", "e"])
    assert stats.regressed_cases == ("x",)
    # The same flip with one run is one coin toss.
    assert not case_statistics([CasePair(0, 1, 1)] + [CasePair(1, 1, 1)] * 5).regression


# -- gates and pooling ------------------------------------------------------------------------------


def gate_doc(delta: float | None, ci: list[float] | None):
    from ..runlogs import lift_statistics, summary_log

    return summary_log(delta_pts=delta, statistics=lift_statistics(delta, tuple(ci) if ci else None))


def test_gate_on_lower_bound_compares_the_interval():
    doc = gate_doc(30.0, [-5.0, 60.0])
    assert gate_failures(doc, (), 10.0) == []
    [reason] = gate_failures(doc, (), 10.0, gate_on="lower-bound")
    assert "lower bound -5.00 pts is below the minimum +10.00" in reason
    assert gate_failures(gate_doc(30.0, [12.0, 48.0]), (), 10.0, gate_on="lower-bound") == []
    assert gate_failures(gate_doc(None, None), (), 10.0, gate_on="lower-bound")


def test_pooled_statistics_treat_every_case_as_one_unit():
    from dataclasses import replace

    from skillab.core.runlog import RunLog

    from ..reports.test_markdown_report import document

    base = RunLog.from_json(document([]))

    def doc(skill: str, records: list[CaseRecord], dominated: bool = False) -> RunLog:
        settings = replace(base.settings, suite=replace(base.settings.suite, skill=skill))
        aggregate = replace(base.summary.aggregate, error_dominated=dominated)
        return replace(base, settings=settings, records=records, summary=replace(base.summary, aggregate=aggregate))

    a = doc("a", suite({"up": 6, "pass": 4}))
    b = doc("b", suite({"up": 3, "fail": 7}, runs=3))
    dead = doc("dead", suite({"down": 10}), dominated=True)
    pooled = pooled_statistics([a, b, dead])
    assert pooled.n_cases == 20 and pooled.lift_pts == 45.0
    assert pooled.ci95[0] > 0 and pooled.distinguishable


def test_to_dict_is_json_ready():
    stats = paired_statistics(suite({"up": 3, "down": 1, "pass": 2}))
    data = json.loads(json.dumps(to_wire(stats)))
    assert data["ci95"] == list(stats.ci95) and data["power"]["target_lift_pts"] == 10.0


def test_an_error_dominated_run_prints_no_statistic_in_any_report(tmp_path, capsys):
    """10 of 30 cases errored: the spec nulls delta_pts, and no report may claim a finding."""
    from skillab.core.runlog import RunLog
    from skillab.reports.markdown import render_markdown
    from skillab.reports.terminal import render_table

    from ..skillgen import answers, grep_case, make_skill

    cases = [grep_case(f"up{i}") for i in range(18)] + [grep_case(f"kept{i}") for i in range(2)]
    cases += [grep_case(f"bad{i}", setup=["exit 3"]) for i in range(10)]
    responses = {f"up{i}": answers("SKILLED", "no") for i in range(18)}
    responses.update({f"kept{i}": answers("SKILLED", "SKILLED") for i in range(2)})
    skill = make_skill(tmp_path, cases, responses=responses)
    out = tmp_path / "r.json"
    from skillab.cli import main

    main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
          "--output", str(out)])
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert doc["error_dominated"] and doc["pass_rate"]["delta_pts"] is None
    stats = doc["statistics"]
    assert stats["summary"] is None and stats["ci95"] is None and stats["p_value"] is None
    for text in (render_table(RunLog.from_json(doc)), render_markdown([RunLog.from_json(doc)])):
        for claim in ("beyond noise", "cannot be told", "evidence", "95% CI +", "would detect",
                      "Rescued by the skill"):
            assert claim not in text
    assert "the lift is withheld" in render_markdown([RunLog.from_json(doc)])


def test_a_lift_the_judge_could_not_reproduce_makes_no_claim_and_passes_no_delta_gate(tmp_path):
    """When the judge disagrees with itself the lift is withheld: the PR comment must not list
    rescued cases or print the delta as a finding, the pooled lift leaves the suite out, and a
    --min-delta-pts gate cannot pass on it (as for an error-dominated run)."""
    from dataclasses import replace

    from skillab.cli import main
    from skillab.core.checks import ConsistencyCheck
    from skillab.core.runlog import RunLog
    from skillab.log.results import document
    from skillab.reports.markdown import pooled_delta_pts, render_markdown
    from skillab.reports.terminal import render_table
    from skillab.scoring.summary import summarize
    from skillab.session.gates import Gates

    from ..results_golden import ROOT

    out = tmp_path / "r.json"
    assert main(["run", str(ROOT / "examples" / "changelog-entry"), "--adapter", "mock", "--no-cache",
                 "--no-history", "--quiet", "--output", str(out)]) == 0
    log = RunLog.from_json(json.loads(out.read_text()))
    check = ConsistencyCheck(12, 6, 3, 0, floor=0.8).block()
    withheld = summarize(replace(log.settings, judge_consistency=check), log.records)
    doc = document(withheld)
    assert doc["statistics"]["withheld"] and doc["pass_rate"]["delta_pts"] == 83.33
    report = render_markdown([withheld])
    assert "Rescued by the skill" not in report and "+83.3" not in report
    assert "the lift is withheld" in report
    assert pooled_delta_pts([withheld]) is None
    # The terminal keeps the raw difference, and says it is not claimed as a lift.
    [line] = [line for line in render_table(withheld).splitlines() if "delta" in line and "with " in line]
    assert "(withheld as a lift)" in line
    for gate_on in ("point", "lower-bound"):
        reasons = Gates(min_delta_pts=50.0, gate_on=gate_on).failures(RunLog.from_json(doc))
        assert len(reasons) == 1 and "withheld" in reasons[0], reasons


def test_boschloo_is_the_exact_unconditional_test_and_never_weaker_than_fisher():
    import math as m

    from skillab.scoring.statistics import boschloo_lower_p

    for w, o, r in [(0, 5, 5), (1, 5, 5), (2, 8, 10), (0, 3, 3), (1, 4, 5), (3, 3, 5)]:
        observed = fisher_lower_p(w, o, r)
        extreme = [(x, y) for x in range(r + 1) for y in range(r + 1) if fisher_lower_p(x, y, r) <= observed * (1 + 1e-9)]
        brute = max(sum(m.comb(r, x) * m.comb(r, y) * q ** (x + y) * (1 - q) ** (2 * r - x - y) for x, y in extreme)
                    for q in (i / 4000 for i in range(1, 4000)))
        assert boschloo_lower_p(w, o, r) == pytest.approx(brute, rel=1e-6)
        assert boschloo_lower_p(w, o, r) <= observed + 1e-12
    # Broken in all five runs: 1/1024, where Fisher's 1/252 could not pass a 20-case BH step.
    assert boschloo_lower_p(0, 5, 5) == pytest.approx(1 / 1024)


def test_the_point_gate_says_what_it_cannot_show_and_how_often_no_effect_passes():
    """--min-delta-pts 5 with the default --gate-on point let a no-effect skill through 26-41% of
    the time at n <= 20 without a word; its line now says so, at this suite's size."""
    from skillab.scoring import power_model
    from skillab.session import Gates

    from ..runlogs import lift_statistics, summary_log

    pairs = [CasePair(1, 0, 1)] * 5 + [CasePair(0, 1, 1)] * 4 + [CasePair(0, 0, 1)] * 11
    stats = case_statistics(pairs)
    doc = summary_log(delta_pts=stats.delta_pts, statistics=stats)
    gates = Gates(min_delta_pts=5.0)
    assert gates.failures(doc) == []  # the verdict stays the point estimate's (+5 pts)
    [note] = gates.notes(doc)
    rate = power_model.null_point_pass_rate(20, 1, stats.power.discordance, 0.05)
    assert 0.26 <= rate <= 0.5
    assert f"a skill with no effect passes it about {rate:.0%} of the time" in note
    assert "20 cases x 1 run" in note and "not that it is beyond noise" in note
    assert "--gate-on lower-bound passes only when the data show at least +5 pts" in note
    assert Gates(min_delta_pts=5.0, gate_on="lower-bound").notes(doc) == []
    assert Gates().notes(doc) == []
    # Without a power block (an older results file) it still says what the gate cannot show.
    old = summary_log(delta_pts=stats.delta_pts, statistics=lift_statistics(stats.delta_pts, (-10.0, 20.0)))
    [note] = gates.notes(old)
    assert "not that it is beyond noise" in note and "passes it about" not in note


def test_the_cli_prints_the_point_gates_note_beside_its_verdict(capsys):
    import argparse

    from skillab.commands.run import gate_exit

    from ..runlogs import summary_log

    pairs = [CasePair(1, 0, 1)] * 5 + [CasePair(0, 1, 1)] * 4 + [CasePair(0, 0, 1)] * 11
    stats = case_statistics(pairs)
    doc = summary_log(delta_pts=stats.delta_pts, statistics=stats)
    args = argparse.Namespace(fail_on_verdict=[], allow_error_verdict=False, min_delta_pts=5.0, gate_on="point",
                              min_trigger_recall=None, max_false_trigger_rate=None)
    assert gate_exit(args, [doc]) == 0
    out = capsys.readouterr()
    assert "gate note: s: --min-delta-pts +5 compares the point estimate" in out.out + out.err
    args.gate_on = "lower-bound"
    assert gate_exit(args, [doc]) == 1
    out = capsys.readouterr()
    assert "gate note" not in out.out + out.err and "lower bound" in out.out + out.err
