"""--adaptive-runs' rule: which runs settle a case, and that the lift's test keeps its error rate
when the runs per case depend on agreement (seeded simulation)."""

from __future__ import annotations

import random

from skillab.core.records import ArmRecord, CaseRecord
from skillab.scoring.adaptive_runs import (
    first_runs_settled,
    held_endings,
    held_gate_settled,
    held_runs_settled,
    runs_given,
    settle_after,
)
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


def test_held_runs_run_until_no_ending_of_them_could_change_the_claim():
    """Seeded simulation of the rule the engine runs at --concurrency 1: the held runs of the
    settled cases are released one case at a time while ``held_runs_settled`` says an ending of
    the rest could still change the claim. The claim is then the one every run gives, in every
    suite: skills with and without an effect, 3 and 5 runs, errors that drop runs."""
    rng = random.Random(2037)
    saved = 0
    for i in range(400):
        runs, lift, errors = (3, 5)[i % 2], (0.0, 0.15, 0.3)[i % 3], 0.2 * (i % 4 == 0)
        first = settle_after(runs)
        full, held_pairs, cut = [], [], []
        for case in range(rng.choice((8, 20, 40))):
            p0 = 1 / (1 + pow(2.718281828, -rng.gauss(0, 2)))
            p1 = min(1.0, p0 + lift)
            done = [(rng.random() < p1, rng.random() < p0, rng.random() >= errors) for _ in range(runs)]
            graded = [(w, o) for w, o, kept in done if kept]
            full.append(CasePair(sum(w for w, _ in graded), sum(o for _, o in graded), len(graded)))
            if runs_given((w == o and kept for w, o, kept in done), runs) < runs:
                held_pairs.append(CasePair(sum(w for w, _, _ in done[:first]), sum(o for _, o, _ in done[:first]),
                                           first))
                cut.append(case)
            else:
                held_pairs.append(full[-1])
        pairs, ran = list(held_pairs), 0
        while not held_runs_settled([p for p in pairs if p.runs], len(cut) - ran, runs):
            pairs[cut[ran]] = full[cut[ran]]
            ran += 1
        assert claim([p for p in pairs if p.runs]) == claim([p for p in full if p.runs])
        saved += len(cut) - ran
    assert saved > 0  # and held runs are saved


def test_endings_count_errored_held_runs_and_stay_bounded():
    # 5 runs, settled after 3: a held case ends at 3, 4 or 5 graded runs, moved by 1 of 4, 1 or 2 of 5.
    endings = list(held_endings(1, 5))
    assert sorted((e[0].with_passes, e[0].runs) for e in endings if e) == [(1, 4), (1, 5), (2, 5)]
    assert held_endings(500, 5) is None  # too many to enumerate: the runs are run, not guessed
    assert not held_runs_settled([CasePair(3, 0, 3)] * 5 + [CasePair(2, 2, 2)] * 3, 3, 3)
    assert held_runs_settled([CasePair(3, 0, 3)] * 2 + [CasePair(2, 2, 2)] * 2, 2, 3)  # p >= 0.125 whatever ends


def test_the_gate_settles_only_when_no_ending_of_the_held_runs_moves_it():
    pairs = [CasePair(3, 0, 3)] * 4 + [CasePair(2, 2, 2)] * 4  # lift 50 points, 4 held cases
    assert held_gate_settled(pairs, 4, 3, 30, "point")  # 50 +- 16.7 stays above 30
    assert not held_gate_settled(pairs, 4, 3, 40, "point")
    assert not held_gate_settled(pairs, 4, 3, 30, "lower-bound")  # settles only on a sure fail
    assert held_gate_settled(pairs, 4, 3, 70, "lower-bound")
