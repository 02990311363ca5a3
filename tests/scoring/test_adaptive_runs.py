"""--adaptive-runs' rule: which runs settle a case, and that the lift's test keeps its error rate
when the runs per case depend on agreement (seeded simulation)."""

from __future__ import annotations

import random

from skillab.core.records import ArmRecord, CaseRecord
from skillab.scoring.adaptive_runs import first_runs_settled, runs_given, settle_after
from skillab.scoring.inference import CasePair
from skillab.scoring.stopping import claim


def record(name: str, run: int, with_passed: bool, without_passed: bool, *, errored: bool = False) -> CaseRecord:
    outcome = "error" if errored else "pass_kept" if with_passed and without_passed else "fail_kept" \
        if not (with_passed or without_passed) else "flip_to_pass" if with_passed else "flip_to_fail"
    return CaseRecord(name, outcome, ArmRecord(passed=with_passed, errored=errored),
                      ArmRecord(passed=without_passed, errored=False), run_index=run)


def test_the_rule_reads_the_first_runs_in_order_and_never_settles_on_an_error():
    assert [settle_after(r) for r in (1, 2, 3, 4, 5, 10)] == [1, 2, 2, 3, 3, 6]
    assert first_runs_settled([record("a", 0, True, True), record("a", 1, False, False)], 3) is True
    assert first_runs_settled([record("a", 0, True, True)], 3) is None  # run 2 still running
    # Run 3 finished before run 2 (a resumed document): run 2 is still unknown.
    assert first_runs_settled([record("a", 0, True, True), record("a", 2, True, True)], 3) is None
    assert first_runs_settled([record("a", 0, True, False), record("a", 1, True, True)], 3) is False
    assert first_runs_settled([record("a", 0, True, True), record("a", 1, False, False, errored=True)], 3) is False
    assert first_runs_settled([record("a", 0, True, True), record("a", 1, True, True)], 2) is False  # nothing to cut


def test_the_test_keeps_its_false_claim_rate_with_runs_that_depend_on_agreement():
    """Seeded simulation: skills with no effect (cases of varied difficulty, and the het-null
    where half the cases gain 30 points and half lose 30), 20 cases x 3 runs, arms cut by the
    rule: "beyond noise" no more often than 5% plus two Monte Carlo SE. The full study, with
    power beside the fixed design, is ``benchmarks/adaptive_runs.py``."""
    rng = random.Random(37)
    reps, hits, het_hits, cut = 1500, 0, 0, 0
    for i in range(2 * reps):
        het = i >= reps
        pairs = []
        for _ in range(20):
            p0 = 1 / (1 + pow(2.718281828, -rng.gauss(0, 1.5)))
            p1 = min(1.0, max(0.0, p0 + rng.choice((-0.3, 0.3)))) if het else p0
            runs = [(rng.random() < p1, rng.random() < p0) for _ in range(3)]
            given = runs_given((w == o for w, o in runs), 3)
            cut += 3 - given
            kept = runs[:given]
            pairs.append(CasePair(sum(w for w, _ in kept), sum(o for _, o in kept), given))
        said = claim(pairs) != "noise"
        het_hits += said and het
        hits += said and not het
    se = (0.05 * 0.95 / reps) ** 0.5
    assert hits / reps <= 0.05 + 2 * se and het_hits / reps <= 0.05 + 2 * se
    assert cut / (2 * reps * 20 * 3) > 0.1  # and the rule does cut runs
